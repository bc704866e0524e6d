/* calscope engine: showing user text (file names, selections, field contents) on a terminal.
 *
 * One rule for every place calscope echoes text it did not write: a byte a terminal could take
 * as a control is shown as \xNN. That is every C0 control and DEL, the C1 controls U+0080..U+009F
 * (both bytes of their UTF-8 form), and every byte that is not part of valid UTF-8 (a Latin-1
 * 0x9b is CSI on an 8-bit terminal). Printable UTF-8 is kept; a backslash is kept as is. */
#ifndef CALSCOPE_TEXT_H
#define CALSCOPE_TEXT_H

#include <stddef.h>

enum { CS_TEXT_KEEP_NEWLINES = 1 };   /* keep '\n' (multi-line messages) */

/* Writes the first len bytes of s, escaped, into buf (cap > 0; always NUL-terminated). Stops
 * before an escape or a character that does not fit whole. Returns the length written.
 * flags: 0 or CS_TEXT_KEEP_NEWLINES. Pure; any thread. */
size_t cs_text_escape(char *buf, size_t cap, const char *s, size_t len, unsigned flags);

/* Copies p[0..len) into buf as a quoted-safe excerpt for a message: at most ~40 bytes, control
 * bytes as \xNN, "..." when cut (never inside a UTF-8 sequence). Pure; any thread. (Named for
 * the loader, its first user; the class map quotes names with it too.) */
void cs_load_excerpt(char *buf, size_t cap, const char *p, size_t len);

#endif
