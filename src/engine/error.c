#include "calscope/error.h"

#include <stdarg.h>
#include <stdio.h>

cs_status cs_error_set(cs_error *err, cs_status code, long line, long col, const char *fmt, ...)
{
    va_list ap;
    err->code = code;
    err->line = line;
    err->col = col;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

void cs_error_clear(cs_error *err)
{
    err->code = CS_OK;
    err->line = 0;
    err->col = 0;
    err->msg[0] = '\0';
}
