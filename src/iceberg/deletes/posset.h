/*
 * ice_posset: the set of deleted row positions of ONE data file. The delete loader fills
 * it from position delete files (ice_posset_add_many with the file's sorted `pos` values)
 * and/or one deletion vector (ice_dv_*), and the merge-on-read reader asks it, once per
 * batch, to clear the selection of the deleted rows (ice_posset_apply).
 *
 * Positions are 64-bit (Iceberg `pos` is a non-negative long): the high 32 bits pick a
 * 32-bit Roaring bitmap that holds the low 32 bits, exactly the layout of a deletion
 * vector. Memory is proportional to the deleted positions (Roaring containers), never to
 * the data file's row count.
 *
 * Two forms per high key: while a set is built, a mutable CRoaring bitmap; once
 * ice_posset_freeze has run (or when it came from a deletion vector), the compact
 * portable serialization read in place by roaring32.c, whose batch filter is several times
 * faster than going through CRoaring 0.2.66's iterators and range counts. Queries work on
 * both forms; adding to a frozen set thaws the keys it touches. Build with one thread,
 * freeze, then query from any number of threads (the query functions take a const set).
 */
#ifndef ICE_POSSET_H
#define ICE_POSSET_H

#include <roaring/roaring.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct ice_posset ice_posset;

int ice_posset_new(ice_posset **out, icd_error *err);
void ice_posset_free(ice_posset *s);

/* Adds one position. */
int ice_posset_add(ice_posset *s, uint64_t pos, icd_error *err);
/* Adds n positions in any order; fastest when sorted (the order of position delete
 * files), as consecutive positions with the same high 32 bits go to Roaring in bulk. */
int ice_posset_add_many(ice_posset *s, const uint64_t *pos, size_t n, icd_error *err);
/* Adds every position of [lo, hi). */
int ice_posset_add_range(ice_posset *s, uint64_t lo, uint64_t hi, icd_error *err);
/* dst |= src. */
int ice_posset_union(ice_posset *dst, const ice_posset *src, icd_error *err);
/* Adds the positions (key << 32) | v for every v of `bm`, taking ownership of `bm` (it is
 * freed here on failure too). Used by the deletion-vector decoder. */
int ice_posset_adopt32(ice_posset *s, uint32_t key, roaring_bitmap_t *bm, icd_error *err);
/* Adds a portable 32-bit Roaring bitmap under `key`, taking ownership of `bytes` (malloc'd,
 * `size` bytes, already validated by ice_r32_parse into `r`, whose index is taken too).
 * Used by the deletion-vector decoder; freed here on failure too. */
struct ice_r32;
int ice_posset_adopt_portable(ice_posset *s, uint32_t key, uint8_t *bytes, struct ice_r32 *r,
                              icd_error *err);
/* Converts every key to the read-optimised form (call once the set is complete). */
int ice_posset_freeze(ice_posset *s, icd_error *err);

uint64_t ice_posset_cardinality(const ice_posset *s);
static inline bool ice_posset_is_empty(const ice_posset *s)
{
    return ice_posset_cardinality(s) == 0;
}
bool ice_posset_contains(const ice_posset *s, uint64_t pos);
/* Number of deleted positions in [lo, hi). */
uint64_t ice_posset_count_range(const ice_posset *s, uint64_t lo, uint64_t hi);
/* Copies the smallest positions >= `from`, up to `max` of them, into `out`; returns how
 * many (for `inspect` and tests). */
size_t ice_posset_list(const ice_posset *s, uint64_t from, uint64_t *out, size_t max);

/*
 * The hot path. The batch holds the rows at file positions [first, first + n); for each
 * deleted position p in that range, selection[p - first] is set to 0 (other bytes are left
 * as they are: selection bytes are 1 = keep, 0 = drop, shared with the other delete kinds
 * and filters). Returns the number of deleted positions in the range (whether or not
 * their byte was already 0).
 *
 * Cost (frozen set): a binary search over the high keys and over the 64K-row containers;
 * then arrays are binary-searched and walked, runs become memsets, and bitmap containers
 * are walked a 64-bit word at a time (empty words skipped, full words one 64-byte memset).
 * A batch with no deletes costs a few comparisons, a fully deleted one a memset or two.
 * A set still being built (not frozen) answers the same through CRoaring, more slowly.
 */
size_t ice_posset_apply(const ice_posset *s, uint64_t first, size_t n, uint8_t *selection);
/* The same over a bitmap selection: bit (i % 64) of words[i / 64] is row first + i,
 * cleared for deleted rows. */
size_t ice_posset_apply_bits(const ice_posset *s, uint64_t first, size_t n, uint64_t *words);

#endif
