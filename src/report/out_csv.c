/* `--format csv`: a header row and one row per reported file; a metric that is not available
 * is an empty field. Rejected files have no row (their error is on stderr). */
#include "report/rep.h"

#include <math.h>
#include <string.h>

/* RFC 4180: quote a field holding the delimiter, a quote or a line break. */
static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) { fputs(s, out); return; }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void rep_out_csv(FILE *out, const rep_opts *o, const rep_file *files, size_t n)
{
    (void)o;
    fputs("path,rows,classes,rejected,selected", out);
    for (int m = 0; m < REP_M_COUNT; m++) fprintf(out, ",%s", rep_metric_names[m]);
    fputs("\n", out);
    for (size_t i = 0; i < n; i++) {
        const rep_file *f = &files[i];
        if (!f->loaded || f->usage_error) continue;
        csv_field(out, f->path);
        fprintf(out, ",%zu,%zu,%zu,%zu", f->rows, f->classes, f->sum.rows_rejected, f->selected);
        for (int m = 0; m < REP_M_COUNT; m++) {
            double v = f->evaluated ? rep_metric_value(&f->res, m) : NAN;
            if (isfinite(v)) fprintf(out, ",%.17g", v);
            else fputc(',', out);
        }
        fputc('\n', out);
    }
}
