/*
 * icd_buf: the one growable byte buffer of the code base (like Redis' sds or libgit2's
 * git_str). Appends never fail loudly: an allocation failure sets `oom` and later appends
 * become no-ops, so hot loops (the JSON row writer) need no check per call; check
 * icd_buf_ok() once when the buffer is consumed.
 */
#ifndef ICD_BASE_BUF_H
#define ICD_BASE_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"

typedef struct icd_buf {
    char *data;
    size_t len;
    size_t cap;
    bool oom;
} icd_buf;

#define ICD_BUF_INIT                                                                               \
    {                                                                                              \
        NULL, 0, 0, false                                                                          \
    }

/* Makes room for `extra` more bytes; false on allocation failure (and sets oom). */
bool icd_buf_grow(icd_buf *b, size_t extra);

static inline void icd_buf_append(icd_buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap && !icd_buf_grow(b, n + 1)) return;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* icd_buf_append for the small fixed widths of binary values (1, 4, 8 bytes): the copy
 * becomes a single move instead of a memcpy call (the Parquet writer's hot loops). */
static inline void icd_buf_append_small(icd_buf *b, const void *p, size_t n)
{
    switch (n) {
    case 1:
        icd_buf_append(b, p, 1);
        break;
    case 4:
        icd_buf_append(b, p, 4);
        break;
    case 8:
        icd_buf_append(b, p, 8);
        break;
    default:
        icd_buf_append(b, p, n);
    }
}

static inline void icd_buf_putc(icd_buf *b, char c)
{
    if (b->len + 2 > b->cap && !icd_buf_grow(b, 2)) return;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

static inline void icd_buf_puts(icd_buf *b, const char *s)
{
    icd_buf_append(b, s, strlen(s));
}

void icd_buf_printf(icd_buf *b, const char *fmt, ...) ICD_PRINTF(2, 3);
void icd_buf_vprintf(icd_buf *b, const char *fmt, va_list ap);

static inline bool icd_buf_ok(const icd_buf *b)
{
    return !b->oom;
}
static inline void icd_buf_clear(icd_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}
void icd_buf_free(icd_buf *b);

/* Hands the NUL-terminated contents to the caller (who frees them) and resets the buffer.
 * Returns NULL when an append failed. */
char *icd_buf_detach(icd_buf *b);

#endif
