/* Text fitting shared by the dashboard and the report: word wrapping and the shortest names
 * that still tell a set of names apart. Pure functions: no curses, no globals, any thread. */
#ifndef CALSCOPE_CHART_WORDS_H
#define CALSCOPE_CHART_WORDS_H

#include <stddef.h>

/* Word-wraps `text` to lines of at most `width` columns (code points) into out, lines ending
 * in '\n' (the text's own newlines are kept; trailing spaces dropped). A line breaks at the
 * last space that fits; a word longer than a line (a long path) breaks after its last '/', '_',
 * '-', ',' or ':' that fits, and only failing that at the width. Returns the number of lines;
 * out is truncated (still NUL-terminated) when `size` is too small. width < 1 counts as 1. */
int ch_wrap(const char *text, int width, char *out, size_t size);

/* The shortest distinguishing names of n names in at most `width` columns (width >= 4): a name
 * that fits is kept whole. A longer one with a method part (from its last '+', "+ets") keeps
 * that part whole, the file's name cut before it, when that tells it apart from every other
 * name ("digits_logreg.c~+ets" beside "digits_logreg.csv+ms", not "digits_logreg.csv+e~",
 * which names no method). Otherwise it is cut to its head plus '~' ("digits_logreg~") when
 * the head tells it apart from every other name, else to head '~' tail keeping the end that
 * differs, from a separator (+ . _ - /) when one is near ("breast_canc~+platt"), else around
 * the first place it differs ("~ncer_a_lr~").
 * out[i] receives name i (out_size bytes each, NUL-terminated). Names that are equal in full
 * stay equal. ASCII names are expected (one byte = one column). */
void ch_short_names(const char *const *names, size_t n, int width, char **out, size_t out_size);

#endif
