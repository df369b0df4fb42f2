/*
 * icd_ptr_text: the text written for an object, kept by the object's address, so that
 * text written many times (a delete file's JSON, once per data file it applies to) is
 * formatted once and then copied. Open addressing on the address; the texts back to back
 * in one buffer, within a byte limit beyond which nothing more is kept (callers then
 * format as before: the output is the same either way).
 */
#ifndef ICD_BASE_PTRTEXT_H
#define ICD_BASE_PTRTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* The byte limit both users (tasks, plan --spec) give it: delete files' JSON texts. */
#define ICD_PTR_TEXT_MAX ((size_t)64 << 20)

typedef struct icd_ptr_text_slot {
    const void *key;
    uint32_t off, len;
} icd_ptr_text_slot;

typedef struct icd_ptr_text {
    icd_ptr_text_slot *slot; /* mask + 1 of them; NULL until the first add */
    size_t mask, n;
    icd_buf text;
    size_t max_bytes; /* the most text kept (at most 4 GiB) */
    bool off;         /* nothing more is kept (the limit, or out of memory) */
} icd_ptr_text;

void icd_ptr_text_init(icd_ptr_text *c, size_t max_bytes);
void icd_ptr_text_free(icd_ptr_text *c);

static inline size_t icd_ptr_text_hash(const void *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15u;
    return (size_t)(h ^ (h >> 29));
}

/* The slot of the text kept for `key`, or NULL when there is none (valid until the next
 * add). */
static inline const icd_ptr_text_slot *icd_ptr_text_find(const icd_ptr_text *c, const void *key)
{
    if (!c->slot) return NULL;
    for (size_t i = icd_ptr_text_hash(key) & c->mask;; i = (i + 1) & c->mask) {
        const icd_ptr_text_slot *s = &c->slot[i];
        if (s->key == key) return s;
        if (!s->key) return NULL;
    }
}

/* Appends the text kept for `key` to b; false when there is none. */
static inline bool icd_ptr_text_append(const icd_ptr_text *c, icd_buf *b, const void *key)
{
    const icd_ptr_text_slot *s = icd_ptr_text_find(c, key);
    if (s) icd_buf_append(b, c->text.data + s->off, s->len);
    return s != NULL;
}

/* Keeps text[0, n) for `key` (not already kept), unless over the limit. */
void icd_ptr_text_add(icd_ptr_text *c, const void *key, const char *text, size_t n);

/* Appends the text kept for `key` to b, or writes it with write(b, key) and keeps it. */
static inline void icd_ptr_text_put(icd_ptr_text *c, icd_buf *b, const void *key,
                                    void (*write)(icd_buf *b, const void *key))
{
    if (icd_ptr_text_append(c, b, key)) return;
    size_t at = b->len;
    write(b, key);
    if (icd_buf_ok(b)) icd_ptr_text_add(c, key, b->data + at, b->len - at);
}

#endif
