/*
 * The manifest-entry decoder (internal to the manifest reader, manifest.c): reads the Avro
 * binary of a manifest's `manifest_entry` records straight into a flat ice_raw_entry,
 * without the generic icd_avro_value tree per record. The writer schema is resolved once
 * per manifest file into a small program (per record field: what to read and where to put
 * it, or skip it by its encoded size); manifest.c then applies to the raw entry exactly
 * the rules it applies to a decoded tree (inheritance, checks, partition keys, stats).
 *
 * The program reads what the generic path decodes with the same checks and the same error
 * messages and positions (decode.h "primitives"), and skips what that path skips. A writer
 * schema with anything the program does not handle (a kept field of an unexpected type, a
 * union of more than null and one type, an Avro map of stats, ...) compiles to nothing:
 * the file is then read the generic way.
 */
#ifndef ICD_ICE_MANIFEST_FAST_H
#define ICD_ICE_MANIFEST_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"
#include "formats/avro/decode.h"
#include "iceberg/content_file.h"
#include "iceberg/literal.h"
#include "iceberg/partition.h"

/* The integer fields of an entry (of manifest_entry, then of data_file). */
enum {
    MR_STATUS,
    MR_SNAPSHOT_ID,
    MR_SEQUENCE_NUMBER,
    MR_FILE_SEQUENCE_NUMBER,
    MR_CONTENT,
    MR_RECORD_COUNT,
    MR_FILE_SIZE,
    MR_CONTENT_OFFSET,
    MR_CONTENT_SIZE,
    MR_SORT_ORDER_ID,
    MR_FIRST_ROW_ID,
    MR_NLONGS
};

/* One pair of a column-statistics map: a count (null or i64) or a bound (bytes). */
typedef struct ice_raw_kv {
    int32_t id;
    bool null;
    int64_t i64;
    const uint8_t *ptr;
    size_t len;
} ice_raw_kv;

typedef struct ice_raw_stats {
    bool present; /* the map is there and not null */
    ice_raw_kv *kv;
    size_t n;
} ice_raw_stats;

/* What the generic path would see of one entry; bytes point into the block. A value is
 * set only when its flag (has[k], has_path, has_ref, has_partition, has_eq, a map's
 * `present`) says it is there: the decoder clears only the flags. */
typedef struct ice_raw_entry {
    bool has[MR_NLONGS]; /* present, not null (an int or a long) */
    int64_t v[MR_NLONGS];
    bool has_data_file;
    bool has_path, has_ref;
    const uint8_t *path, *ref;
    size_t path_len, ref_len;
    ice_file_format format;   /* ICE_FORMAT_UNKNOWN when absent, null or unknown */
    bool has_partition;       /* a partition record */
    const ice_literal *pvals; /* the spec's fields, in spec order (bytes in the block) */
    bool has_eq;
    const int32_t *eq;
    size_t neq;
    ice_raw_stats stats[5]; /* value, null and nan counts, lower and upper bounds */
} ice_raw_entry;

typedef struct ice_mfast ice_mfast;

/* Compiles the program for a manifest's writer schema `root`, reading the stats maps that
 * stat_read[w] says, partition values for `spec`. *out = NULL (and 0) when the schema has
 * something the program does not handle: read the file the generic way. */
int ice_mfast_compile(const icd_avro_schema *root, const ice_partition_spec *spec,
                      const bool stat_read[5], ice_mfast **out, icd_error *err);
void ice_mfast_free(ice_mfast *m);

/* Spec field i has no field in the writer's partition record (the generic path fails on
 * the first such field once it has a partition record): its index, or -1. */
int ice_mfast_missing_partition_field(const ice_mfast *m);

/* Decodes one record at the cursor into `e`, arrays (equality ids, stats pairs, partition
 * values) in `scratch`. Errors are the decoder's (offset in the cursor's buffer). */
int ice_mfast_decode(const ice_mfast *m, icd_avro_cursor *c, icd_arena *scratch, ice_raw_entry *e,
                     icd_error *err);

/* The Iceberg type an Avro partition value stands for (shared with manifest.c). */
ice_type_kind ice_avro_partition_kind(const icd_avro_schema *s);
/* A file format by name (case-insensitive), ICE_FORMAT_UNKNOWN for anything else. */
ice_file_format ice_file_format_from_name(const char *s, size_t n);

#endif
