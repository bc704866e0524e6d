/* calscope engine: showing user text (file names, selections, field contents) on a terminal.
 *
 * One rule for every place calscope echoes text it did not write: a byte a terminal could take
 * as a control is shown as \xNN. That is every C0 control and DEL, the C1 controls U+0080..U+009F
 * (both bytes of their UTF-8 form), and every byte that is not part of valid UTF-8 (a Latin-1
 * 0x9b is CSI on an 8-bit terminal). Printable UTF-8 is kept; a backslash is kept as is. */
#ifndef CALSCOPE_TEXT_H
#define CALSCOPE_TEXT_H

#include <stddef.h>
#include <stdio.h>

enum { CS_TEXT_KEEP_NEWLINES = 1 };   /* keep '\n' (multi-line messages) */

/* Writes the first len bytes of s, escaped, into buf (cap > 0; always NUL-terminated). Stops
 * before an escape or a character that does not fit whole. Returns the length written.
 * flags: 0 or CS_TEXT_KEEP_NEWLINES. Pure; any thread. */
size_t cs_text_escape(char *buf, size_t cap, const char *s, size_t len, unsigned flags);

/* Copies p[0..len) into buf as a quoted-safe excerpt for a message: at most ~40 bytes, control
 * bytes as \xNN, characters that cannot be seen or look like a plain space (no-break space,
 * zero-width marks, the byte-order mark, ...) as \uXXXX, "..." when cut (never inside a UTF-8
 * sequence). Pure; any thread. (Named for
 * the loader, its first user; the class map quotes names with it too.) */
void cs_load_excerpt(char *buf, size_t cap, const char *p, size_t len);

/* Writes v with its digits grouped by threes, "1,234,567", into buf (cap > 0; always
 * NUL-terminated, cut short when cap is too small: 27 bytes hold any 64-bit value). Returns
 * buf. Pure; any thread. */
char *cs_text_count(char *buf, size_t cap, unsigned long long v);

/* Machine formats keep every string valid UTF-8 under one rule, in one place: valid UTF-8 is
 * written as it is, and a byte that is not part of valid UTF-8 stands for the character of
 * its Latin-1 reading (0xff -> U+00FF, 0xe9 -> U+00E9 e-acute). Why that and not the terminal's
 * \xNN: the decoded string holds one character per byte and no escape syntax of calscope's own
 * (a name that really contains the text "\xff" is not mistaken for the byte), and a file named
 * in Latin-1, the usual source of such bytes, reads as its author wrote it. It is a reading, not
 * an encoding: U+00FF written in valid UTF-8 reads the same as the stray byte 0xff. */

/* Writes s (NUL-terminated) to out as a JSON string, quotes included: the rule above, with a
 * stray byte written \u00XX; '"' and '\\' escaped; \n \r \t, the other C0 controls and
 * DEL as \u00XX (RFC 8259 requires the controls). Any thread; out is the caller's. */
void cs_text_json(FILE *out, const char *s);

/* Writes the first len bytes of s to out under the rule above, a stray byte as the UTF-8 form
 * (two bytes) of its Latin-1 character; nothing else changes (CSV quoting is the caller's).
 * Any thread; out is the caller's. */
void cs_text_utf8(FILE *out, const char *s, size_t len);

#endif
