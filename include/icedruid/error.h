/*
 * icedruid public error model (libgit2 / SQLite style).
 *
 * Every fallible function returns an int: 0 (ICD_OK) on success, a negative icd_code on
 * failure, and fills the caller's icd_error with the class, a one-line message, and the
 * file and byte offset the failure concerns (when there is one).
 */
#ifndef ICEDRUID_ERROR_H
#define ICEDRUID_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include "icedruid/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum icd_code {
    ICD_OK = 0,
    ICD_EIO = -1,          /* the operating system or network failed to read/write */
    ICD_ECORRUPT = -2,     /* a file's bytes do not follow its format (truncated, bad magic, ...) */
    ICD_EUNSUPPORTED = -3, /* a valid feature that icedruid does not implement */
    ICD_EINVALID = -4,     /* a bad argument, spec or option from the user */
    ICD_ENOMEM = -5,       /* out of memory */
    ICD_ENOTFOUND = -6,    /* a file, table, snapshot, column ... does not exist */
    ICD_EINTERNAL = -7,    /* a bug in icedruid */
    ICD_ECANCELED = -8,    /* the work was stopped by its caller (e.g. a client disconnected) */
    ICD_ITEROVER = -9      /* an iterator has no more items (not a failure; err is untouched) */
} icd_code;

typedef struct icd_error {
    int code;           /* an icd_code; 0 when no error is recorded */
    int64_t offset;     /* byte offset in `file` the error concerns, or -1 */
    char file[1024];    /* the file (location) concerned, or "" */
    char message[1024]; /* one line, no trailing newline */
} icd_error;

/* Resets `err` to "no error". */
ICD_EXTERN void icd_error_clear(icd_error *err);

/* A short name for an icd_code ("corrupt file", "unsupported", ...). */
ICD_EXTERN const char *icd_code_name(int code);

/* Formats the error as one line: "FILE: at byte N: MESSAGE" (parts that are unset are
 * left out). Returns the length that the full line needs, like snprintf. */
ICD_EXTERN size_t icd_error_format(const icd_error *err, char *buf, size_t size);

/* Warnings: input that is read correctly but deserves a note (e.g. position delete records
 * with a null file_path, which delete nothing, or a delete file whose size differs from its
 * manifest entry when the storage only warns). The library never prints: the handler gets
 * the file concerned ("" when none) and a one-line message. With no handler (the default)
 * warnings are dropped. The handler is process-wide: install it once at start-up, before
 * any other call (the setting is not synchronized); it may then be called from any thread,
 * several at once. fn NULL removes it. */
typedef void (*icd_warn_fn)(void *ctx, const char *file, const char *message);
ICD_EXTERN void icd_set_warn_handler(icd_warn_fn fn, void *ctx);

/* Rewrites the NUL-terminated text in `s` (a buffer of `cap` bytes) in place: the userinfo
 * of every "SCHEME://USERINFO@HOST" becomes "***", so that a password inside a table or
 * endpoint URL is not shown (icd_error_format does it already). The result is cut to
 * cap - 1 bytes if it grew (a one- or two-byte userinfo). Returns 1 when something was
 * redacted, else 0. Thread-safe. */
ICD_EXTERN int icd_redact_userinfo(char *s, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
