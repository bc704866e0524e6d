/* Status line fitting (see status.h). */
#include "tui/status.h"

#include <stdio.h>
#include <string.h>

#include "chart/cells.h"

enum { FILE_MIN = 8 };

static void append(char *out, size_t size, const char *s)
{
    size_t n = strlen(out);
    if (n + 1 < size) snprintf(out + n, size - n, "%s", s);
}

/* The file name in w columns: head '~' extension (".csv", ".csv.gz" when it fits). */
static void short_file(char *buf, size_t size, const char *file, int w)
{
    int len = ch_text_width(file);
    if (len <= w) { snprintf(buf, size, "%s", file); return; }
    const char *dot = strchr(file, '.');
    int ext = dot ? ch_text_width(dot) : 0;
    if (ext > w / 2) ext = 0;
    int head = w - 1 - ext;
    /* head counts code points: copy that many */
    size_t hb = 0;
    for (int c = 0; file[hb] && c <= head; hb++)
        if (((unsigned char)file[hb] & 0xC0) != 0x80 && ++c > head) break;
    snprintf(buf, size, "%.*s~%s", (int)hb, file, ext ? dot : "");
}

static void build(char *out, size_t size, const char *file, const char *where,
                  const tui_status_part *parts, size_t n, int dropped)
{
    out[0] = 0;
    append(out, size, " ");
    append(out, size, file);
    if (where && where[0]) { append(out, size, " "); append(out, size, where); }
    for (size_t i = 0; i < n; i++) {
        if (!parts[i].text || !parts[i].text[0]) continue;
        if (parts[i].drop > 0 && parts[i].drop <= dropped) continue;
        append(out, size, " | ");
        append(out, size, parts[i].text);
    }
}

void tui_status_fit(char *out, size_t size, int width, const char *file, const char *where,
                    const tui_status_part *parts, size_t n)
{
    if (size == 0) return;
    char name[512];
    snprintf(name, sizeof name, "%s", file);
    build(out, size, name, where, parts, n, 0);
    int over = ch_text_width(out) - width;
    if (over <= 0) return;
    int fw = ch_text_width(file);
    int target = fw - over < FILE_MIN ? FILE_MIN : fw - over;
    if (target < fw) {
        short_file(name, sizeof name, file, target);
        build(out, size, name, where, parts, n, 0);
    }
    int most = 0;
    for (size_t i = 0; i < n; i++) if (parts[i].drop > most) most = parts[i].drop;
    for (int d = 1; d <= most && ch_text_width(out) > width; d++)
        build(out, size, name, where, parts, n, d);
    if (ch_text_width(out) > width && width >= 1) {
        /* cut to width - 1 columns and mark the cut */
        size_t b = 0;
        for (int c = 0; out[b]; b++)
            if (((unsigned char)out[b] & 0xC0) != 0x80 && ++c > width - 1) break;
        out[b] = 0;
        append(out, size, ">");
    }
}
