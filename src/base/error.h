/*
 * Internal helpers over the public icd_error (include/icedruid/error.h).
 */
#ifndef ICD_BASE_ERROR_H
#define ICD_BASE_ERROR_H

#include <stdarg.h>
#include "icedruid/error.h"

#if defined(__GNUC__)
#define ICD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ICD_PRINTF(a, b)
#endif

/* Records an error and returns `code`, so call sites read `return icd_fail(err, ...)`.
 * `file` may be NULL, `offset` -1 when not applicable. `err` may be NULL. */
int icd_fail(icd_error *err, int code, const char *file, int64_t offset, const char *fmt, ...)
    ICD_PRINTF(5, 6);
int icd_failv(icd_error *err, int code, const char *file, int64_t offset, const char *fmt,
              va_list ap);

/* Out of memory, as an error. */
int icd_fail_nomem(icd_error *err);

/* Prepends context to an existing error message: "CONTEXT: old message". Returns err->code. */
int icd_error_wrap(icd_error *err, const char *fmt, ...) ICD_PRINTF(2, 3);
/* Appends context to an existing error message: "old message CONTEXT" (truncated to fit).
 * Returns err->code. */
int icd_error_append(icd_error *err, const char *fmt, ...) ICD_PRINTF(2, 3);

/* Sets the file of an error that has none yet (lower layers often do not know it). */
void icd_error_set_file(icd_error *err, const char *file);

/* A warning to the handler the program installed (icd_set_warn_handler, public:
 * icedruid/error.h); dropped without one. */
void icd_warn(const char *file, const char *fmt, ...) ICD_PRINTF(2, 3);

#define ICD_TRY(expr)                                                                              \
    do {                                                                                           \
        int icd_try_rc_ = (expr);                                                                  \
        if (icd_try_rc_ < 0) return icd_try_rc_;                                                   \
    } while (0)

#endif
