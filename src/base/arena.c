/*
 * Bump allocator (see arena.h). Chunks grow with the request size; a reset keeps the
 * largest chunk so a steady-state reader (one row group after another) stops calling
 * malloc.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"

/* Requests from this size up that do not fit the current chunk get their own chunk. */
#define ICD_ARENA_LARGE (64u << 10)

struct icd_arena_chunk {
    icd_arena_chunk *next;
    size_t size;
    size_t used;
    _Alignas(16) unsigned char data[];
};

/* n bytes at a multiple of `align` (16, or 1 for strings) of the current chunk, or of a
 * new one. */
static void *take(icd_arena *a, size_t n, size_t align)
{
    icd_arena_chunk *c = a->head;
    if (c) {
        size_t at = (c->used + align - 1) & ~(align - 1);
        if (at <= c->size && c->size - at >= n) {
            c->used = at + n;
            return c->data + at;
        }
    }
    if (a->large_own_chunks && c && n >= ICD_ARENA_LARGE) {
        /* A large block that does not fit gets a chunk of its own behind the current one,
         * which keeps serving the small allocations: doubling the chunk for it would leave
         * most of the old chunk and of the new one unused (a manifest's entry array). */
        if (n > SIZE_MAX - sizeof *c) return NULL;
        icd_arena_chunk *nc = malloc(sizeof *nc + n);
        if (!nc) return NULL;
        nc->size = n;
        nc->used = n;
        nc->next = c->next;
        c->next = nc;
        a->total += n;
        return nc->data;
    }
    size_t size = a->chunk_size ? a->chunk_size : 64 * 1024;
    /* kept arenas stop doubling at 256 KiB: the unused tail of the last chunk is at most
     * that, where doubling left up to half of a manifest's strings unused */
    size_t max = a->large_own_chunks ? (size_t)1 << 18 : (size_t)1 << 26;
    if (c && c->size * 2 > size && c->size < max) size = c->size * 2;
    if (size < n) size = n;
    if (size > SIZE_MAX - sizeof *c) return NULL;
    icd_arena_chunk *nc = malloc(sizeof *nc + size);
    if (!nc) return NULL;
    nc->size = size;
    nc->used = n;
    nc->next = c;
    a->head = nc;
    a->total += size;
    return nc->data;
}

void *icd_arena_alloc(icd_arena *a, size_t n)
{
    if (n > SIZE_MAX - 15) return NULL;
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    return take(a, n, 16);
}

void *icd_arena_calloc(icd_arena *a, size_t n)
{
    void *p = icd_arena_alloc(a, n);
    if (p) memset(p, 0, n);
    return p;
}

char *icd_arena_strndup(icd_arena *a, const char *s, size_t n)
{
    char *p = n < SIZE_MAX ? take(a, n + 1, 1) : NULL; /* (strings need no alignment) */
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *icd_arena_stralloc(icd_arena *a, size_t n)
{
    return n < SIZE_MAX ? take(a, n + 1, 1) : NULL;
}

char *icd_arena_strdup(icd_arena *a, const char *s)
{
    return icd_arena_strndup(a, s, strlen(s));
}

void icd_arena_reset(icd_arena *a)
{
    icd_arena_chunk *keep = NULL, *c = a->head;
    while (c) {
        icd_arena_chunk *next = c->next;
        if (!keep || c->size > keep->size) {
            if (keep) free(keep);
            keep = c;
        } else {
            free(c);
        }
        c = next;
    }
    if (keep) {
        keep->used = 0;
        keep->next = NULL;
    }
    a->head = keep;
    a->total = keep ? keep->size : 0;
}

void icd_arena_free(icd_arena *a)
{
    icd_arena_chunk *c = a->head;
    while (c) {
        icd_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->total = 0;
}
