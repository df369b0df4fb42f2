/*
 * ice_eq_set: the keys of one equality delete file (canonical key bytes, eq_key.h), built
 * once by the loader and probed by every task the file applies to. The narrow interface
 * of the equality-delete index: build from keys, then probe one key or a batch of keys.
 * Today a hash set (base/hash.h); the compact index (deletes/eq_index.h) replaces the
 * implementation behind these calls.
 *
 * Build with one thread; once built, the probes take a const set and may run from any
 * number of threads.
 */
#ifndef ICD_ICE_DELETES_EQ_SET_H
#define ICD_ICE_DELETES_EQ_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct ice_eq_set ice_eq_set;

/* A set for about `expected` keys (a hint). */
int ice_eq_set_new(ice_eq_set **out, size_t expected, icd_error *err);
void ice_eq_set_free(ice_eq_set *s);
/* Adds a key (copied); duplicates count once. */
int ice_eq_set_add(ice_eq_set *s, const void *key, size_t len, icd_error *err);
/* Keys in the set (distinct). */
size_t ice_eq_set_count(const ice_eq_set *s);
bool ice_eq_set_contains(const ice_eq_set *s, const void *key, size_t len);
/* Batch probe: key i is keys[offs[i] .. offs[i + 1]). For every i with sel[i] != 0 whose key
 * is in the set, sel[i] is set to 0; returns how many were cleared. */
size_t ice_eq_set_remove_batch(const ice_eq_set *s, const uint8_t *keys, const uint32_t *offs,
                               size_t n, uint8_t *sel);

#endif
