/*
 * Growable byte buffer (see buf.h). Growth doubles, so appends are amortised O(1).
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/buf.h"

bool icd_buf_grow(icd_buf *b, size_t extra)
{
    if (b->oom) return false;
    if (b->len + extra <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void icd_buf_vprintf(icd_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof small) {
        icd_buf_append(b, small, (size_t)n);
    } else if (icd_buf_grow(b, (size_t)n + 1)) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void icd_buf_printf(icd_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    icd_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void icd_buf_free(icd_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

char *icd_buf_detach(icd_buf *b)
{
    if (b->oom) {
        icd_buf_free(b);
        return NULL;
    }
    if (!b->data && !icd_buf_grow(b, 1)) return NULL;
    b->data[b->len] = '\0';
    char *p = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}
