/* Status line fitting (see status.h). */
#include "tui/status.h"

#include <stdio.h>
#include <string.h>

#include "chart/cells.h"
#include "chart/words.h"

enum { FILE_MIN = 8 };

static void append(char *out, size_t size, const char *s)
{
    size_t n = strlen(out);
    if (n + 1 < size) snprintf(out + n, size - n, "%s", s);
}

/* Bytes of the first `cols` code points of s. */
static size_t head_bytes(const char *s, int cols)
{
    size_t b = 0;
    for (int c = 0; s[b]; b++)
        if (((unsigned char)s[b] & 0xC0) != 0x80 && ++c > cols) break;
    return b;
}

/* Whether name has the head's hb bytes and ends with ext (so "head~ext" could be it). */
static int could_be(const char *name, const char *head, size_t hb, const char *ext)
{
    size_t ln = strlen(name), le = strlen(ext);
    return ln >= hb + le && strncmp(name, head, hb) == 0 && strcmp(name + ln - le, ext) == 0;
}

/* Active file's name in w columns: whole when it fits; head '~' extension (".csv", ".csv.gz"
 * when it fits) when no other file could be read so; else the shortest distinguishing form. */
static void short_file(char *buf, size_t size, const tui_status_in *in, int w)
{
    const char *file = in->files[in->active];
    int len = ch_text_width(file);
    if (len <= w) { snprintf(buf, size, "%s", file); return; }
    const char *dot = strchr(file, '.');
    int ext = dot ? ch_text_width(dot) : 0;
    if (ext > w / 2) ext = 0;
    size_t hb = head_bytes(file, w - 1 - ext);
    const char *tail = ext ? dot : "";
    int clash = 0;
    for (size_t i = 0; i < in->n_files && !clash; i++)
        clash = i != in->active && strcmp(in->files[i], file) != 0 && could_be(in->files[i], file, hb, tail);
    if (!clash) { snprintf(buf, size, "%.*s~%s", (int)hb, file, tail); return; }
    char forms[TUI_STATUS_MAX_FILES][256];
    char *dst[TUI_STATUS_MAX_FILES];
    size_t n = in->n_files < TUI_STATUS_MAX_FILES ? in->n_files : TUI_STATUS_MAX_FILES;
    for (size_t i = 0; i < n; i++) dst[i] = forms[i];
    ch_short_names(in->files, n, w, dst, sizeof forms[0]);
    snprintf(buf, size, "%s", in->active < n ? forms[in->active] : file);
}

static void build(char *out, size_t size, const char *file, const tui_status_in *in, int dropped)
{
    out[0] = 0;
    append(out, size, " ");
    append(out, size, file);
    if (in->where && in->where[0]) { append(out, size, " "); append(out, size, in->where); }
    for (size_t i = 0; i < in->n; i++) {
        const tui_status_part *p = &in->parts[i];
        if (!p->text || !p->text[0]) continue;
        if (p->drop > 0 && p->drop <= dropped) continue;
        append(out, size, " | ");
        append(out, size, p->text);
    }
}

void tui_status_fit(char *out, size_t size, int width, const tui_status_in *in)
{
    if (size == 0) return;
    const char *file = in->active < in->n_files ? in->files[in->active] : "-";
    char name[512];
    snprintf(name, sizeof name, "%s", file);
    build(out, size, name, in, 0);
    int over = ch_text_width(out) - width;
    if (over <= 0) return;
    int fw = ch_text_width(file);
    int target = fw - over < FILE_MIN ? FILE_MIN : fw - over;
    if (target < fw && in->active < in->n_files) {
        short_file(name, sizeof name, in, target);
        build(out, size, name, in, 0);
    }
    int most = 0;
    for (size_t i = 0; i < in->n; i++) if (in->parts[i].drop > most) most = in->parts[i].drop;
    for (int d = 1; d <= most && ch_text_width(out) > width; d++)
        build(out, size, name, in, d);
    int cw = ch_text_width(in->cut);
    if (ch_text_width(out) > width && width >= cw) {
        out[head_bytes(out, width - cw)] = 0;   /* cut, and mark the cut */
        append(out, size, in->cut);
    }
}
