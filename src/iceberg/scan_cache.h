/*
 * The data manifests' entries of a scan stream, kept between its runs in a compact form.
 * `tasks` runs a stream twice (its totals, then its tasks) and `plan` three times; each
 * run used to read, inflate and decode every data manifest again, which was most of the
 * cost of planning a big table. The first run records each data manifest's entries here
 * (a few varints and the path's suffix per file, its partition tuples once per manifest);
 * later runs rebuild the same entries from them, field for field, without the files.
 *
 * Only what the record can rebuild exactly is recorded: data files without column
 * statistics, equality ids, a referenced data file or a blob range (a stream that keeps
 * statistics for a filter is never recorded). Anything else, or more than the byte limit,
 * turns the cache off and every run reads the manifests as before.
 */
#ifndef ICD_ICE_SCAN_CACHE_H
#define ICD_ICE_SCAN_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/arena.h"
#include "base/error.h"
#include "iceberg/manifest.h"

typedef struct ice_cached_manifest ice_cached_manifest;

typedef struct ice_entry_cache {
    icd_arena arena; /* the records and the partition tuples */
    ice_cached_manifest *m;
    size_t nm, cap_m;
    size_t bytes;
    bool complete; /* a run recorded every data manifest */
    bool off;      /* not recorded (unsupported entries, over the limit, a single run) */
} ice_entry_cache;

void ice_entry_cache_clear(ice_entry_cache *c);
/* Records the entries of the next data manifest of a run (turns the cache off for good
 * when they cannot be recorded; never fails). */
void ice_entry_cache_record(ice_entry_cache *c, const ice_manifest_file *mf,
                            const ice_manifest_entry *e, size_t n);
/* Rebuilds the entries of the k-th recorded manifest (`mf`: the same manifest) into
 * `arena`. */
int ice_entry_cache_replay(const ice_entry_cache *c, size_t k, const ice_manifest_file *mf,
                           icd_arena *arena, ice_manifest_entry **out, size_t *n, icd_error *err);

#endif
