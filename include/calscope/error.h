/* calscope engine: error reporting shared by every module.
 *
 * Every fallible engine call takes a `cs_error *` (never NULL) and fills it on failure.
 * The message is complete and user-facing: front ends print it after "calscope: ".
 * For input errors it reads "FILE:LINE:COL: reason" (LINE/COL 1-based; 0 when not applicable).
 * Thread-safety: a cs_error belongs to the caller; engine calls never share one. */
#ifndef CALSCOPE_ERROR_H
#define CALSCOPE_ERROR_H

#include <stddef.h>

typedef enum cs_status {
    CS_OK = 0,
    CS_EINPUT = 3,     /* file unreadable or rejected (exit status 3) */
    CS_EUSAGE = 2,     /* bad settings / expression (exit status 2) */
    CS_ENOMEM = 4,     /* allocation failed */
    CS_ECANCELLED = 5, /* a cancel flag was raised; no result */
    CS_EEMPTY = 6      /* nothing to measure (e.g. a selection kept no rows) */
} cs_status;

typedef struct cs_error {
    cs_status code;
    long line;        /* 1-based physical line of the input, 0 if none */
    long col;         /* 1-based column (field index), 0 if none */
    char msg[1024];   /* full message, e.g. "preds.csv:12:3: probability outside [0,1]: '1.2'" */
} cs_error;

/* Sets err (code, line, col) and formats msg printf-style. Returns code. */
cs_status cs_error_set(cs_error *err, cs_status code, long line, long col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Clears err to CS_OK and an empty message. */
void cs_error_clear(cs_error *err);

#endif
