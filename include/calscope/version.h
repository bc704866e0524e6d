/* calscope version, printed by `calscope --version` and `calscope report --version`. */
#ifndef CALSCOPE_VERSION_H
#define CALSCOPE_VERSION_H

#define CALSCOPE_VERSION "0.1.0"

#endif
