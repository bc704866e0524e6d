/* Input limits: the header scan both paths run before parsing, and the wording of the limit
 * refusals. A limit is what keeps a small hostile file (1 GiB of NUL bytes gzipped to 5 MB)
 * from costing gigabytes before it is refused: the header is bounded and checked for bytes no
 * CSV header holds, fields are bounded (libcsv would otherwise grow its field buffer to the
 * whole input), and the row count stays within what 32-bit row indices can address. */
#include "engine/load/load_internal.h"
#include "engine/load/load_scan.h"

#include <string.h>

void cs_load_limits_default(csl_limits *lim)
{
    lim->rows = CS_DATASET_MAX_ROWS;
    lim->header = CS_LOAD_MAX_HEADER_BYTES;
    lim->field = CS_LOAD_MAX_FIELD_BYTES;
}

/* A control byte cannot be in a header; tab, CR, LF and a control byte chosen as the delimiter
 * can. DEL counts as a control byte. */
static int bad_header_byte(unsigned char c, char delim)
{
    if (c == '\t' || c == '\r' || c == '\n') return 0;
    if (delim && c == (unsigned char)delim) return 0;
    return c < 0x20 || c == 0x7f;
}

/* 1-based field of position `at` in the header line starting at `ls`: delimiters outside quotes
 * before it, with the delimiter sniffed from the bytes before it when none was given. */
static long field_at(const char *buf, size_t ls, size_t at, const cs_load_options *opt)
{
    char delim = opt->delimiter ? opt->delimiter : cs_load_sniff_delim(buf + ls, at - ls);
    long col = 1;
    int quoted = 0;
    for (size_t i = ls; i < at; i++) {
        if (buf[i] == '"') quoted = !quoted;
        else if (!quoted && buf[i] == delim) col++;
    }
    return col;
}

int cs_load_header_scan(const char *name, const char *buf, size_t len, int eof,
                        const cs_load_options *opt, const csl_limits *lim, size_t *extent,
                        cs_error *err)
{
    const int header = !opt->no_header;
    const size_t cap = lim->header;
    const size_t n = len < cap ? len : cap;
    long line = 1;
    size_t ls = 0;                /* start of the current line */
    int quoted = 0, nonblank = 0;
    const int kind = cs_load_scan_kind(CSL_SCAN_AUTO);
    for (size_t i = 0; i < n; i++) {
        /* ordinary bytes (printable or not ASCII, no quote) a vector at a time: nothing to do
         * but note that the line is not blank. A wide header is almost only these. */
        i = (size_t)(csl_plain_text(kind, buf + i, buf + n, &nonblank) - buf);
        if (i >= n) break;
        unsigned char c = (unsigned char)buf[i];
        if (c == '"') {
            quoted = !quoted;
            nonblank = 1;
            continue;
        }
        if ((c == '\n' || c == '\r') && !quoted) {
            size_t e = i + 1;
            if (c == '\r') {
                if (i + 1 < len && buf[i + 1] == '\n') e = i + 2;
                else if (i + 1 >= len && !eof) return CSL_HEAD_MORE;   /* CR, maybe of a CRLF */
            }
            if (nonblank) {
                *extent = e;
                return CSL_HEAD_OK;
            }
            line++;               /* a blank line before the header */
            ls = e;
            i = e - 1;
            continue;
        }
        if (c == ' ' || c == '\t') continue;
        nonblank = 1;
        if (header && bad_header_byte(c, opt->delimiter)) {
            char pos[512], ex[8];
            long col = field_at(buf, ls, i, opt);
            cs_load_format_pos(pos, sizeof pos, name, line, col);
            cs_load_excerpt(ex, sizeof ex, (const char *)&buf[i], 1);
            cs_error_set(err, CS_EINPUT, line, col,
                         "%scontrol byte %s in the header (not a text CSV file?)", pos, ex);
            return CSL_HEAD_BAD;
        }
    }
    if (len <= cap) {
        if (!eof) return CSL_HEAD_MORE;
        *extent = len;
        return CSL_HEAD_OK;
    }
    if (!header) {                /* a long first data row: libcsv and the field limit judge it */
        *extent = cap;
        return CSL_HEAD_OK;
    }
    char pos[512];
    long col = field_at(buf, ls, cap, opt);
    cs_load_format_pos(pos, sizeof pos, name, line, col);
    cs_error_set(err, CS_EINPUT, line, col, "%sheader longer than %zu bytes (the limit%s)", pos,
                 cap, quoted ? "; a quote is still open there" : "");
    return CSL_HEAD_BAD;
}

cs_status cs_load_field_too_long(cs_error *err, const char *name, long line, long col,
                                 const csl_limits *lim)
{
    char pos[512];
    cs_load_format_pos(pos, sizeof pos, name, line, col);
    return cs_error_set(err, CS_EINPUT, line, col, "%sfield longer than %zu bytes (the limit)",
                        pos, lim->field);
}

cs_status cs_load_too_many_rows(cs_error *err, const char *name, long line, const csl_limits *lim)
{
    char pos[512];
    cs_load_format_pos(pos, sizeof pos, name, line, 1);
    return cs_error_set(err, CS_EINPUT, line, 1, "%smore than %zu data rows (the limit)", pos,
                        lim->rows);
}
