/* icd_ptr_text (see ptrtext.h). */
#include <stdlib.h>
#include <string.h>

#include "base/ptrtext.h"

void icd_ptr_text_init(icd_ptr_text *c, size_t max_bytes)
{
    memset(c, 0, sizeof *c);
    c->text = (icd_buf)ICD_BUF_INIT;
    c->max_bytes = max_bytes < UINT32_MAX ? max_bytes : UINT32_MAX;
}

void icd_ptr_text_free(icd_ptr_text *c)
{
    free(c->slot);
    icd_buf_free(&c->text);
    memset(c, 0, sizeof *c);
    c->off = true;
}

static bool grow(icd_ptr_text *c)
{
    size_t cap = c->slot ? (c->mask + 1) * 2 : 1024;
    icd_ptr_text_slot *v = calloc(cap, sizeof *v);
    if (!v) return false;
    for (size_t i = 0; c->slot && i <= c->mask; i++) {
        if (!c->slot[i].key) continue;
        size_t h = icd_ptr_text_hash(c->slot[i].key) & (cap - 1);
        while (v[h].key)
            h = (h + 1) & (cap - 1);
        v[h] = c->slot[i];
    }
    free(c->slot);
    c->slot = v;
    c->mask = cap - 1;
    return true;
}

void icd_ptr_text_add(icd_ptr_text *c, const void *key, const char *text, size_t n)
{
    if (c->off || !key) return;
    size_t off = c->text.len;
    if (off + n > c->max_bytes || ((c->n + 1) * 2 > (c->slot ? c->mask + 1 : 0) && !grow(c))) {
        c->off = true;
        return;
    }
    icd_buf_append(&c->text, text, n);
    if (!icd_buf_ok(&c->text)) {
        c->off = true;
        return;
    }
    size_t i = icd_ptr_text_hash(key) & c->mask;
    while (c->slot[i].key && c->slot[i].key != key)
        i = (i + 1) & c->mask;
    if (c->slot[i].key) return; /* (already kept: the first text stays) */
    c->slot[i] = (icd_ptr_text_slot){key, (uint32_t)off, (uint32_t)n};
    c->n++;
}
