/*
 * ice_eq_set: the keys of one equality delete file (canonical key bytes, eq_key.h), built
 * once by the loader and probed by every task the file applies to. The narrow interface
 * of the equality-delete index: build from keys, then probe one key or a batch of keys.
 * Implemented by the compact index of deletes/eq_index.h.
 *
 * Keys are added by one thread; the index is built by that thread, optionally helped by
 * others (ice_eq_set_help); once built, the probes take a const set and may run from any
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
/* Moves the keys of `from` into `into` and frees `from`: the tasks that load one delete
 * file's units on several threads each fill their own set. Both made with the same
 * `expected`, neither sealed; `from` is freed on failure too. */
int ice_eq_set_merge(ice_eq_set *into, ice_eq_set *from, icd_error *err);
/* After the last ice_eq_set_add, before the first probe: builds the index (a set never
 * finished probes as empty). Fails when out of memory. */
int ice_eq_set_finish(ice_eq_set *s, icd_error *err);

/* The same build with other threads helping (the delete cache's waiting tasks):
 *   owner:   ice_eq_set_seal, publish the set, ice_eq_set_build,
 *            wait until no helper is in ice_eq_set_help, ice_eq_set_finish;
 *   helpers: ice_eq_set_help (any number of threads, between seal and finish).
 * ice_eq_set_finish after ice_eq_set_build returns build's result and frees the builder. */
void ice_eq_set_seal(ice_eq_set *s);
void ice_eq_set_help(ice_eq_set *s);
int ice_eq_set_build(ice_eq_set *s, icd_error *err);
/* Keys in the set (distinct; 0 before ice_eq_set_finish). */
size_t ice_eq_set_count(const ice_eq_set *s);
bool ice_eq_set_contains(const ice_eq_set *s, const void *key, size_t len);
/* Batch probe: key i is keys[offs[i] .. offs[i + 1]). For every i with sel[i] != 0 whose key
 * is in the set, sel[i] is set to 0; returns how many were cleared. */
size_t ice_eq_set_remove_batch(const ice_eq_set *s, const uint8_t *keys, const uint32_t *offs,
                               size_t n, uint8_t *sel);

#endif
