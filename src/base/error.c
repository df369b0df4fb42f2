/*
 * The error object every layer fills (see include/icedruid/error.h): a class, one line of
 * message, and the file + byte offset it concerns. Only cli/ prints errors.
 */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/redact.h"
#include "icedruid/icedruid.h"

const char *icd_version(void)
{
    return ICEDRUID_VERSION;
}

void icd_error_clear(icd_error *err)
{
    if (!err) return;
    err->code = 0;
    err->offset = -1;
    err->file[0] = '\0';
    err->message[0] = '\0';
}

const char *icd_code_name(int code)
{
    switch (code) {
    case ICD_OK:
        return "ok";
    case ICD_EIO:
        return "I/O error";
    case ICD_ECORRUPT:
        return "corrupt file";
    case ICD_EUNSUPPORTED:
        return "unsupported";
    case ICD_EINVALID:
        return "invalid input";
    case ICD_ENOMEM:
        return "out of memory";
    case ICD_ENOTFOUND:
        return "not found";
    case ICD_EINTERNAL:
        return "internal error";
    case ICD_ECANCELED:
        return "canceled";
    case ICD_ITEROVER:
        return "end of iteration";
    default:
        return "error";
    }
}

/* One line: newlines (from foreign messages, or names read from a file) become spaces. */
static void one_line(char *s)
{
    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

int icd_failv(icd_error *err, int code, const char *file, int64_t offset, const char *fmt,
              va_list ap)
{
    if (!err) return code;
    err->code = code;
    err->offset = offset;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    one_line(err->file);
    one_line(err->message);
    /* never a password inside a URL in an error line */
    icd_redact_userinfo(err->file, sizeof err->file);
    icd_redact_userinfo(err->message, sizeof err->message);
    return code;
}

int icd_fail(icd_error *err, int code, const char *file, int64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    icd_failv(err, code, file, offset, fmt, ap);
    va_end(ap);
    return code;
}

int icd_fail_nomem(icd_error *err)
{
    return icd_fail(err, ICD_ENOMEM, NULL, -1, "out of memory");
}

int icd_error_wrap(icd_error *err, const char *fmt, ...)
{
    if (!err) return ICD_EINTERNAL;
    char prefix[512], old[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    size_t n = strlen(prefix);
    if (n > sizeof err->message - 3) n = sizeof err->message - 3;
    memcpy(err->message, prefix, n);
    memcpy(err->message + n, ": ", 2);
    size_t rest = strlen(old);
    if (rest > sizeof err->message - n - 3) rest = sizeof err->message - n - 3;
    memcpy(err->message + n + 2, old, rest);
    err->message[n + 2 + rest] = '\0';
    one_line(err->message); /* (a prefix may name what a file holds: a field, a key) */
    icd_redact_userinfo(err->message, sizeof err->message);
    return err->code;
}

int icd_error_append(icd_error *err, const char *fmt, ...)
{
    if (!err) return ICD_EINTERNAL;
    size_t n = strlen(err->message);
    if (n + 1 < sizeof err->message) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message + n, sizeof err->message - n, fmt, ap);
        va_end(ap);
        one_line(err->message);
        icd_redact_userinfo(err->message, sizeof err->message);
    }
    return err->code;
}

void icd_error_set_file(icd_error *err, const char *file)
{
    if (err && file && !err->file[0]) {
        snprintf(err->file, sizeof err->file, "%s", file);
        one_line(err->file);
        icd_redact_userinfo(err->file, sizeof err->file);
    }
}

size_t icd_error_format(const icd_error *err, char *buf, size_t size)
{
    char off[48] = "";
    if (err->offset >= 0) snprintf(off, sizeof off, "at byte %lld: ", (long long)err->offset);
    int n = snprintf(buf, size, "%s%s%s%s", err->file, err->file[0] ? ": " : "", off,
                     err->message[0] ? err->message : icd_code_name(err->code));
    /* an error filled by hand (not through icd_fail) is redacted here too */
    if (size) icd_redact_userinfo(buf, size);
    return n < 0 ? 0 : (size_t)n;
}

static icd_warn_fn warn_fn;
static void *warn_ctx;

void icd_set_warn_handler(icd_warn_fn fn, void *ctx)
{
    warn_fn = fn;
    warn_ctx = ctx;
}

void icd_warn(const char *file, const char *fmt, ...)
{
    if (!warn_fn) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    one_line(msg);
    warn_fn(warn_ctx, file ? file : "", msg);
}
