/* `calscope reduce`: segmentation volumes to a statistics file, and --merge of such files.
 * Single-threaded entry (the reduction itself runs on worker threads). */
#ifndef CALSCOPE_REDUCE_CMD_H
#define CALSCOPE_REDUCE_CMD_H

/* argv[0] is "reduce". Returns the exit status: 0, 2 usage, 3 input, 130 interrupted. */
int reduce_main(int argc, char **argv);

#endif
