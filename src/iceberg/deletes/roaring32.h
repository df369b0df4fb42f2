/*
 * The 32-bit Roaring "portable" serialization (RoaringFormatSpec), read in place: a
 * validating parser that indexes the containers of a serialized bitmap, and the queries
 * the merge-on-read hot path needs (range filter over a batch, count, membership, listing)
 * run directly on those bytes. ice_posset keeps frozen sets in this form; deletion
 * vectors arrive in it. Nothing here allocates except the container index.
 *
 * Layout: cookie 12346 + 32-bit container count (offset header always present), or
 * cookie 12347 | (count - 1) << 16 + run-flag bitset (offset header when count >= 4);
 * then per container (16-bit key, cardinality - 1); then the optional 32-bit offsets; then
 * the containers: runs (16-bit count, then (start, length - 1) pairs), arrays of
 * cardinality <= 4096 (sorted 16-bit values) or 8 KiB bitmaps. All little-endian.
 */
#ifndef ICE_ROARING32_H
#define ICE_ROARING32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { ICE_R32_ARRAY = 1, ICE_R32_BITMAP = 2, ICE_R32_RUN = 3 };

typedef struct ice_r32_container {
    uint32_t off;  /* data offset from the start of the serialized bitmap */
    uint32_t card; /* 1..65536 */
    uint16_t key;  /* high 16 bits of the values */
    uint8_t type;  /* ICE_R32_* */
    uint16_t n;    /* array: values; run: runs (bitmap: unused) */
} ice_r32_container;

typedef struct ice_r32 {
    const uint8_t *buf; /* the serialized bitmap */
    size_t size;        /* its bytes */
    uint64_t card;
    bool has_runs;
    ice_r32_container *c; /* malloc'd index, sorted by key */
    size_t n;
} ice_r32;

/* Why a parse failed: a message and the offset (from the bitmap's first byte). */
typedef struct ice_r32_error {
    char msg[160];
    size_t at;
    bool nomem;
} ice_r32_error;

/*
 * Validates the serialized bitmap at p (at most `avail` bytes; it may be followed by other
 * data) and fills `r` (r->c is malloc'd; free with ice_r32_release). Checks: cookie,
 * container count, sizes within `avail`, keys strictly increasing, offsets equal to the
 * real positions, array values strictly increasing, bitmap popcounts equal to the stated
 * cardinality, runs sorted, non-overlapping, within 65535 and summing to the cardinality.
 * Returns 0, or -1 with `e` filled.
 */
int ice_r32_parse(const uint8_t *p, size_t avail, ice_r32 *r, ice_r32_error *e);
void ice_r32_release(ice_r32 *r);

bool ice_r32_contains(const ice_r32 *r, uint32_t v);

/*
 * Visits the values in [a, b) (b <= 2^32): with sel != NULL sets sel[v - a + off] = 0,
 * with words != NULL clears bit (v - a + off) of words; returns how many values lie in the
 * range. Both NULL = count only.
 */
uint64_t ice_r32_filter(const ice_r32 *r, uint64_t a, uint64_t b, uint64_t off, uint8_t *sel,
                        uint64_t *words);

/* Copies up to `max` values >= from into out (as base | value); returns how many. */
size_t ice_r32_list(const ice_r32 *r, uint32_t from, uint64_t base, uint64_t *out, size_t max);

#endif
