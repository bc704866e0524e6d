/* Placeholder until the selection parser lands: only the empty selection is accepted. */
#include "calscope/select.h"

#include <stdlib.h>

struct cs_select { int all; };

cs_select *cs_select_compile(const char *expr, const cs_dataset *d, cs_error *err)
{
    (void)d;
    for (const char *c = expr; c && *c; c++)
        if (*c != ' ' && *c != '\t') {
            cs_error_set(err, CS_EUSAGE, 0, 1, "selection: not supported yet");
            return NULL;
        }
    cs_select *s = malloc(sizeof *s);
    if (!s) { cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory"); return NULL; }
    s->all = 1;
    return s;
}

int cs_select_match(const cs_select *s, const cs_dataset *d, size_t row)
{
    (void)d; (void)row;
    return s->all;
}

size_t cs_select_filter(const cs_select *s, const cs_dataset *d, const uint32_t *rows, size_t n,
                        uint32_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (cs_select_match(s, d, rows[i])) out[m++] = rows[i];
    return m;
}

void cs_select_free(cs_select *s) { free(s); }
