/*
 * Manifest lists and manifests (spec "Manifest Lists", "Manifests"): the Avro files that
 * list, per snapshot, every data and delete file. Reading applies the spec's inheritance
 * rules, so every ice_content_file comes out with its data and file sequence numbers and
 * snapshot id set, and only live entries (ADDED, EXISTING) are returned.
 */
#ifndef ICD_ICE_MANIFEST_H
#define ICD_ICE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"
#include "iceberg/content_file.h"
#include "iceberg/literal.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

/* Summary of one partition field over a manifest's files (manifest list "partitions"). */
typedef struct ice_field_summary {
    int8_t contains_null; /* 1, 0, or -1 when unknown */
    int8_t contains_nan;  /* 1, 0, or -1 when unknown */
    bool has_lower, has_upper;
    const uint8_t *lower; /* single-value binary serialization */
    const uint8_t *upper;
    uint32_t lower_len, upper_len;
} ice_field_summary;

/* One entry of a manifest list. */
typedef struct ice_manifest_file {
    const char *path;
    int64_t length;
    int32_t spec_id;
    ice_content content; /* ICE_CONTENT_DATA for data manifests; deletes otherwise */
    bool is_delete_manifest;
    int64_t sequence_number;     /* the manifest's own (inherited by ADDED entries) */
    int64_t min_sequence_number; /* smallest data sequence number of its live files */
    int64_t added_snapshot_id;
    int64_t added_files, existing_files, deleted_files; /* -1 when unknown */
    int64_t added_rows, existing_rows, deleted_rows;    /* -1 when unknown */
    const ice_field_summary *partitions;
    int32_t npartitions;
    bool has_partitions;
    int64_t first_row_id; /* -1 when absent */
} ice_manifest_file;

/* Reads a snapshot's manifests: its manifest list, or (v1) its inline manifest paths, whose
 * spec ids then come from each manifest's own metadata. Allocates in `arena`. */
int ice_manifest_list_read(icd_fileio *io, const ice_metadata *md, const ice_snapshot *snap,
                           icd_arena *arena, ice_manifest_file **out, size_t *n, icd_error *err);

/* What to keep of each entry. Column statistics cost memory per file: skip them when the
 * caller prunes by nothing but partitions. */
typedef struct ice_manifest_read_opts {
    bool keep_stats;   /* value/null/nan counts and bounds of every column */
    bool keep_deleted; /* also return DELETED entries (for diffs); normally false */
    /* read every entry through the generic Avro value tree instead of the manifest-entry
     * decoder (manifest_fast.h); for tests that compare the two */
    bool generic_decoder;
} ice_manifest_read_opts;

/* A manifest's entries, with their status (0 existing, 1 added, 2 deleted). */
typedef struct ice_manifest_entry {
    int status;
    ice_content_file file;
} ice_manifest_entry;

/* Reads the entries of one manifest into `arena` (live ones unless keep_deleted).
 * Sequence numbers and snapshot ids are inherited from `mf`; partition tuples are typed by
 * the manifest's partition schema and keyed canonically (int-like values widened to 64
 * bits, decimals normalised, NaN canonical). */
int ice_manifest_read(icd_fileio *io, const ice_metadata *md, const ice_manifest_file *mf,
                      const ice_manifest_read_opts *opts, icd_arena *arena,
                      ice_manifest_entry **out, size_t *n, icd_error *err);

/* The same two readers over an already open Avro container (fuzzing, in-memory files). */
struct icd_avro_reader;
int ice_manifest_list_read_from(struct icd_avro_reader *r, const char *path, icd_arena *arena,
                                ice_manifest_file **out, size_t *n, icd_error *err);
int ice_manifest_read_from(struct icd_avro_reader *r, const ice_metadata *md,
                           const ice_manifest_file *mf, const ice_manifest_read_opts *opts,
                           icd_arena *arena, ice_manifest_entry **out, size_t *n, icd_error *err);

#endif
