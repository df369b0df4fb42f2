/*
 * ice_eq_index: the set of equality-delete keys a scan probes once per data row.
 *
 * Keys are opaque byte strings (the canonical key encoding of the reader: equal Iceberg
 * values give equal bytes; a null key column is part of those bytes, so null matches
 * null). The index only needs equal keys to be equal bytes.
 *
 * Building: keys of one or more delete files go into a builder (ice_eq_builder_add, in
 * any order, duplicates allowed), which hashes each key once (XXH3-64) and appends it to
 * one of P hash partitions (P from the expected key count, at most 1024). Sealing fixes
 * the set; then each partition is built on its own (a table sized for its keys, built in
 * cache), so any number of threads can build partitions at once
 * (ice_eq_builder_help) while the owner waits for the last one (ice_eq_builder_finish).
 *
 * Layout of a partition (one allocation):
 *   - a blocked Bloom filter (32-byte blocks, 8 bits per key, one bit in each 32-bit word
 *     of the block: one cache line per probe) when the index is big enough for the table
 *     to miss the caches: rows that match no key never touch the table;
 *   - the fixed-width table: when (nearly) every key has the same length L (8..16 bytes)
 *     and the same first L-8 bytes (a single long/int/date/timestamp/double key column),
 *     the last 8 bytes of each key are stored inline in an 8-byte slot (open addressing,
 *     linear probing, load <= 0.5): about 16 bytes per key;
 *   - the generic table for every other key: 8-byte slots (32 hash bits | arena offset)
 *     over one arena of interned keys (varint length + bytes), each key stored once.
 * Probing a key: partition from the hash's top bits, Bloom block, then the slot.
 * ice_eq_index_remove_batch probes a batch of keys in groups, prefetching the Bloom
 * blocks, then the slots of the keys that passed, before touching them.
 */
#ifndef ICD_ICE_DELETES_EQ_INDEX_H
#define ICD_ICE_DELETES_EQ_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct ice_eq_builder ice_eq_builder;
typedef struct ice_eq_index ice_eq_index;

/* The hash of a key, as the index uses it (XXH3-64 of the bytes). */
uint64_t ice_eq_hash(const void *key, size_t len);

/* A builder for about `expected` keys (a hint: 0 = few; it only sets the partition
 * count, any number of keys can be added). */
int ice_eq_builder_new(ice_eq_builder **out, size_t expected, icd_error *err);
/* Adds one key (a copy is kept). Fails only when out of memory or when the key is longer
 * than 1 GiB. Not thread-safe: one producer per builder. */
int ice_eq_builder_add(ice_eq_builder *b, const void *key, size_t len, icd_error *err);
/* Keys added so far, duplicates included. */
size_t ice_eq_builder_added(const ice_eq_builder *b);
/* Moves every key of `from` into `into` (then frees `from`): loaders reading parts of a
 * delete file on several threads each fill their own builder. Both must have been created
 * with the same `expected` and neither sealed. */
int ice_eq_builder_merge(ice_eq_builder *into, ice_eq_builder *from, icd_error *err);

/* No more keys: decides the layout. After it, ice_eq_builder_help may run on any number
 * of threads at once, and ice_eq_builder_finish on the owner's. */
void ice_eq_builder_seal(ice_eq_builder *b);
/* Builds partitions nobody has claimed yet, until none is left; returns without waiting
 * for partitions other threads are building. Only after ice_eq_builder_seal; safe until
 * ice_eq_builder_free (a no-op once everything is claimed). */
void ice_eq_builder_help(ice_eq_builder *b);
/* Seals if needed, helps, waits for the partitions other threads are building and moves
 * the result into *out. Fails when a partition failed (out of memory, a partition over
 * 4 GiB of key bytes). Call it once. */
int ice_eq_builder_finish(ice_eq_builder *b, ice_eq_index **out, icd_error *err);
/* Frees the builder (not the index it produced). No other thread may be in
 * ice_eq_builder_help. */
void ice_eq_builder_free(ice_eq_builder *b);

/* Whether `key` (with hash = ice_eq_hash(key, len)) is in the index. */
bool ice_eq_index_contains(const ice_eq_index *ix, const void *key, size_t len, uint64_t hash);
/* Batch probe: the n keys are keys[offs[i] .. offs[i+1]). For every i with sel[i] != 0
 * whose key is in the index, sets sel[i] = 0. Returns how many it cleared. Rows with
 * sel[i] == 0 are not looked at (their key may be empty). */
size_t ice_eq_index_remove_batch(const ice_eq_index *ix, const uint8_t *keys, const uint32_t *offs,
                                 size_t n, uint8_t *sel);
/* Distinct keys. */
size_t ice_eq_index_count(const ice_eq_index *ix);
/* Bytes held (tables, filters, arenas), for stats and the benchmark. */
size_t ice_eq_index_memory(const ice_eq_index *ix);
void ice_eq_index_free(ice_eq_index *ix);

#endif
