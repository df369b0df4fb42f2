/*
 * icd_arena: a bump allocator for data that lives and dies together (one row group's
 * decoded values, one manifest's entries). Freed all at once with icd_arena_reset/free.
 */
#ifndef ICD_BASE_ARENA_H
#define ICD_BASE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct icd_arena_chunk icd_arena_chunk;

typedef struct icd_arena {
    icd_arena_chunk *head;
    size_t chunk_size; /* default size of a new chunk */
    size_t total;      /* bytes held in chunks */
    /* Large requests (64 KiB and up) that do not fit the current chunk get a chunk of
     * their own instead of a doubled one: for arenas that are filled once and kept (a
     * manifest's entries), where the doubling would leave much of both chunks unused.
     * Arenas reset and refilled in a loop keep the default (one chunk that grows to fit
     * the whole cycle). */
    bool large_own_chunks;
} icd_arena;

#define ICD_ARENA_INIT                                                                             \
    {                                                                                              \
        NULL, 0, 0, false                                                                          \
    }

/* Returns `n` bytes aligned to 16, or NULL when out of memory. */
void *icd_arena_alloc(icd_arena *a, size_t n);
void *icd_arena_calloc(icd_arena *a, size_t n);
/* Strings are packed without alignment (a million paths of a plan). */
char *icd_arena_strndup(icd_arena *a, const char *s, size_t n);
/* Room for a string of n bytes and its NUL, packed the same way (the caller fills it). */
char *icd_arena_stralloc(icd_arena *a, size_t n);
char *icd_arena_strdup(icd_arena *a, const char *s);
/* Releases every allocation but keeps one chunk for reuse. */
void icd_arena_reset(icd_arena *a);
void icd_arena_free(icd_arena *a);

#endif
