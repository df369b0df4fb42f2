/*
 * icd_map: the one hash table of the code base (like Redis' dict). Keys are byte strings
 * (ptr, len) copied into storage the map owns; values are a uint64 (or a pointer stored
 * through icd_map_from_ptr / icd_map_to_ptr). Used for equality-delete key tuples
 * (millions of keys), partition tuples and file paths in the planner.
 *
 * Hashing is the caller's: every call takes the key's 64-bit hash, so a caller that builds
 * key tuples can hash once and probe several maps, or reuse a hash it already has. Use
 * icd_hash_bytes (XXH3-64) unless there is a reason not to; the map only needs the hash to
 * be the same for equal keys and well mixed in all 64 bits.
 *
 * Layout (compact, cache-friendly): an open-addressing index of 8-byte slots
 * (32-bit hash tag | 32-bit entry number, linear probing, load <= 3/4) over a dense,
 * paged entry array {key pointer, length, low hash bits, value} in insertion order, and
 * the key bytes packed into chunks; pages and chunks start small and double, so a map's
 * memory follows its content (a one-key map holds about 1 KiB). Pointers to keys and to values stay
 * valid until the map is freed (pages and chunks never move). There is no removal: the users build
 * a set once and probe it.
 */
#ifndef ICD_BASE_HASH_H
#define ICD_BASE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>

#include "base/error.h"

/* XXH3-64 of a byte string: the hash every icd_map user should pass. */
uint64_t icd_hash_bytes(const void *p, size_t n);
/* Mixes a 64-bit integer into a well-distributed hash (for integer keys). */
uint64_t icd_hash_u64(uint64_t v);

/* A hash of short keys, inlined: up to 16 bytes are read as two (overlapping) words and
 * folded through two 64x64->128-bit multiplications, every input bit reaching all 64
 * output bits (17 to 32 bytes: four words, folded pairwise first); longer keys go to
 * icd_hash_bytes. Not the same values as icd_hash_bytes:
 * for in-memory indexes whose keys are mostly short (equality-delete keys), never for
 * anything stored. */
static inline uint64_t icd_hash_fold(uint64_t a, uint64_t b)
{
    unsigned __int128 r = (unsigned __int128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t icd_hash_short(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t a, b;
    if (n >= 8 && n <= 16) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        a = x;
        b = y;
    } else if (n > 0 && n < 4) {
        a = (uint64_t)s[0] << 16 | (uint64_t)s[n / 2] << 8 | s[n - 1];
        b = 0;
    } else if (n == 0) {
        a = b = 0;
    } else if (n > 16 && n <= 32) { /* (string keys: a tag, a length and the bytes) */
        uint64_t c, d;
        memcpy(&a, s, 8);
        memcpy(&b, s + 8, 8);
        memcpy(&c, s + n - 16, 8);
        memcpy(&d, s + n - 8, 8);
        a = icd_hash_fold(a ^ 0x8ebc6af09c88c6e3ULL, b ^ 0x589965cc75374cc3ULL ^ n);
        b = icd_hash_fold(c ^ 0x1d8e4e27c47d124fULL, d ^ 0x3c79ac492ba7b653ULL);
    } else {
        return icd_hash_bytes(p, n);
    }
    uint64_t h = icd_hash_fold(a ^ 0x9e3779b97f4a7c15ULL, b ^ 0xd6e8feb86659fd93ULL ^ n);
    return icd_hash_fold(h ^ 0xa0761d6478bd642fULL, 0xe7037ed1a0b428dbULL ^ n);
}

typedef struct icd_map icd_map;

/* A new empty map sized for about `expected` keys (0 = small). */
int icd_map_new(icd_map **out, size_t expected, icd_error *err);
void icd_map_free(icd_map *m);

/* The value of `key`, or NULL when absent. The pointer stays valid until icd_map_free. */
uint64_t *icd_map_find(const icd_map *m, const void *key, size_t len, uint64_t hash);
static inline bool icd_map_contains(const icd_map *m, const void *key, size_t len, uint64_t hash)
{
    return icd_map_find(m, key, len, hash) != NULL;
}

/* Finds `key` or inserts it with value 0. `*value` points at its value (stable until the
 * map is freed); `*inserted` (may be NULL) says whether the key is new. Fails only when out
 * of memory or when the map would exceed 2^32-1 keys or a key 4 GiB. */
int icd_map_upsert(icd_map *m, const void *key, size_t len, uint64_t hash, uint64_t **value,
                   bool *inserted, icd_error *err);
/* Sets key → value (inserting or overwriting). */
int icd_map_put(icd_map *m, const void *key, size_t len, uint64_t hash, uint64_t value,
                icd_error *err);

/* Number of keys. */
size_t icd_map_count(const icd_map *m);

/* Iteration in insertion order: entry i in [0, icd_map_count). */
typedef struct icd_map_item {
    const uint8_t *key;
    size_t len;
    uint64_t *value;
} icd_map_item;
icd_map_item icd_map_at(const icd_map *m, size_t i);

/* Bytes held by the map (index, entries, key storage), for stats and memory limits. */
size_t icd_map_memory(const icd_map *m);

static inline uint64_t icd_map_from_ptr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}
static inline void *icd_map_to_ptr(uint64_t v)
{
    return (void *)(uintptr_t)v;
}

#endif
