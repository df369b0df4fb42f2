/*
 * Iceberg table metadata (spec "Table Metadata", JSON in Appendix C): the root of every
 * read. A catalog names a metadata file; ice_metadata_load parses it (v1, v2 or v3;
 * gzip-compressed or not) into an opaque ice_metadata, and the planner asks it for the
 * format version, location, schemas and partition specs by id, the snapshot to read
 * (current, by id, by ref, as of a time: ice_metadata_select_snapshot), that snapshot's
 * manifest list, sequence number and schema, table properties and the name mapping.
 *
 * Everything returned points into the ice_metadata and lives until ice_metadata_free.
 */
#ifndef ICD_ICEBERG_METADATA_H
#define ICD_ICEBERG_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"
#include "iceberg/partition.h"
#include "iceberg/schema.h"
#include "iceberg/transform.h"
#include "io/fileio.h"

typedef struct ice_metadata ice_metadata;

typedef struct ice_property {
    const char *key;
    const char *value;
} ice_property;

typedef struct ice_snapshot {
    int64_t snapshot_id;
    bool has_parent;
    int64_t parent_snapshot_id;
    int64_t sequence_number; /* 0 in v1 */
    int64_t timestamp_ms;
    /* The manifest list location; NULL for a v1 snapshot that lists its manifests inline
     * (then `manifests` holds their locations). */
    const char *manifest_list;
    const char *const *manifests;
    size_t n_manifests;
    const char *operation; /* summary "operation" (append, replace, overwrite, delete) or NULL */
    const ice_property *summary; /* every summary entry, "operation" included */
    size_t n_summary;
    bool has_schema_id;
    int32_t schema_id;
    bool has_first_row_id; /* v3 row lineage */
    int64_t first_row_id;
    bool has_added_rows;
    int64_t added_rows;
    const char *key_id; /* v3 encryption, or NULL */
} ice_snapshot;

typedef enum ice_ref_type { ICE_REF_BRANCH, ICE_REF_TAG } ice_ref_type;

typedef struct ice_ref {
    const char *name;
    int64_t snapshot_id;
    ice_ref_type type;
    bool has_min_snapshots_to_keep;
    int32_t min_snapshots_to_keep;
    bool has_max_snapshot_age_ms;
    int64_t max_snapshot_age_ms;
    bool has_max_ref_age_ms;
    int64_t max_ref_age_ms;
} ice_ref;

typedef struct ice_snapshot_log_entry {
    int64_t timestamp_ms;
    int64_t snapshot_id;
} ice_snapshot_log_entry;

typedef struct ice_metadata_log_entry {
    int64_t timestamp_ms;
    const char *metadata_file;
} ice_metadata_log_entry;

typedef struct ice_sort_field {
    ice_transform transform;
    const int32_t *source_ids;
    size_t n_source_ids;
    bool descending;
    bool nulls_first;
} ice_sort_field;

typedef struct ice_sort_order {
    int32_t order_id;
    const ice_sort_field *fields;
    size_t nfields;
} ice_sort_order;

typedef struct ice_encryption_key {
    const char *key_id;
    const char *encrypted_key_metadata; /* base64 text as stored, or NULL */
    const char *encrypted_by_id;        /* or NULL */
} ice_encryption_key;

/* Name mapping (spec "Column Projection", serialization in Appendix C): fallback field
 * ids for data files written without them, by column name at each nesting level. */
typedef struct ice_name_mapping ice_name_mapping;
typedef struct ice_mapped_field {
    bool has_field_id;
    int32_t field_id;
    const char *const *names; /* 0 or more names (aliases) of the field */
    size_t n_names;
    const ice_name_mapping *fields; /* child mappings (struct fields, "element", "key",
                                       "value"), or NULL */
} ice_mapped_field;
struct ice_name_mapping {
    const ice_mapped_field *fields;
    size_t n;
};

/* Parses name-mapping JSON (a list of field mappings) into `arena`. */
int ice_name_mapping_parse(const char *json, size_t len, icd_arena *arena, const char *file,
                           const ice_name_mapping **out, icd_error *err);
/* The mapping at this level that lists `name` among its names (exact match), or NULL. */
const ice_mapped_field *ice_name_mapping_find(const ice_name_mapping *m, const char *name);

/* ---- loading ------------------------------------------------------------------------- */

/* Parses metadata JSON from memory; gzip data (magic 1f 8b) is decompressed first.
 * `location` names the file in error messages and is kept (ice_metadata_file). Missing
 * required fields are ICD_ECORRUPT naming the field; format versions above 3 are
 * ICD_EUNSUPPORTED. Unknown fields are ignored. */
int ice_metadata_parse(const char *json, size_t len, const char *location, ice_metadata **out,
                       icd_error *err);
/* Reads the metadata file at `location` through `io` (remapping applies) and parses it. */
int ice_metadata_load(icd_fileio *io, const char *location, ice_metadata **out, icd_error *err);
void ice_metadata_free(ice_metadata *md);

/* ---- table-level fields -------------------------------------------------------------- */

const char *ice_metadata_file(const ice_metadata *md);
/* For a file of the table that was not found: when the metadata file was found outside the
 * table's `location` (a table copied or mounted elsewhere), appends to err's message that
 * the locations differ and the --remap that reads them where the table was found. */
void ice_metadata_hint_moved(const ice_metadata *md, icd_error *err);
/* Up to `max` snapshot ids of the table, newest first, as "a, b, c" (and "... (N in all)"):
 * for "no such snapshot" errors. */
void ice_metadata_format_snapshot_ids(const ice_metadata *md, size_t max, char *out, size_t n);
int ice_metadata_format_version(const ice_metadata *md);
const char *ice_metadata_table_uuid(const ice_metadata *md); /* NULL when absent (v1) */
const char *ice_metadata_location(const ice_metadata *md);
int64_t ice_metadata_last_sequence_number(const ice_metadata *md); /* 0 for v1 */
int64_t ice_metadata_last_updated_ms(const ice_metadata *md);
int32_t ice_metadata_last_column_id(const ice_metadata *md);
int32_t ice_metadata_last_partition_id(const ice_metadata *md);
/* v3 next-row-id: false when absent. */
bool ice_metadata_next_row_id(const ice_metadata *md, int64_t *out);

/* Schemas: all of them in file order, one by id (NULL if none), the current one. */
size_t ice_metadata_schema_count(const ice_metadata *md);
const ice_schema *ice_metadata_schema_at(const ice_metadata *md, size_t i);
const ice_schema *ice_metadata_schema(const ice_metadata *md, int32_t schema_id);
const ice_schema *ice_metadata_current_schema(const ice_metadata *md);
/* The field of id `id` in schema `first` (may be NULL), else in any of the table's
 * schemas (a dropped column still keys old equality deletes); NULL when in none. */
const ice_field *ice_metadata_field_any(const ice_metadata *md, const ice_schema *first,
                                        int32_t id);

/* Partition specs: all, by id (NULL if none), the default one. */
size_t ice_metadata_spec_count(const ice_metadata *md);
const ice_partition_spec *ice_metadata_spec_at(const ice_metadata *md, size_t i);
const ice_partition_spec *ice_metadata_spec(const ice_metadata *md, int32_t spec_id);
const ice_partition_spec *ice_metadata_default_spec(const ice_metadata *md);

/* Sort orders (kept for inspection; reads do not need them). */
size_t ice_metadata_sort_order_count(const ice_metadata *md);
const ice_sort_order *ice_metadata_sort_order_at(const ice_metadata *md, size_t i);
int32_t ice_metadata_default_sort_order_id(const ice_metadata *md);

/* Table properties, in file order; ice_metadata_property gives NULL when absent. */
size_t ice_metadata_property_count(const ice_metadata *md);
const ice_property *ice_metadata_property_at(const ice_metadata *md, size_t i);
const char *ice_metadata_property(const ice_metadata *md, const char *key);

/* The parsed `schema.name-mapping.default` property: *out is NULL when the table has
 * none; an unparsable mapping is an ICD_ECORRUPT error here (not at load time, so tables
 * whose files carry field ids still read). */
int ice_metadata_name_mapping(const ice_metadata *md, const ice_name_mapping **out, icd_error *err);

/* Snapshots in file order; by id (NULL if none); the current one (NULL: the table has no
 * current snapshot, which is valid and reads as empty). */
size_t ice_metadata_snapshot_count(const ice_metadata *md);
const ice_snapshot *ice_metadata_snapshot_at(const ice_metadata *md, size_t i);
const ice_snapshot *ice_metadata_snapshot(const ice_metadata *md, int64_t snapshot_id);
const ice_snapshot *ice_metadata_current_snapshot(const ice_metadata *md);

/* Refs (branches and tags). A table with a current snapshot always has "main" (added
 * when the file has no refs). */
size_t ice_metadata_ref_count(const ice_metadata *md);
const ice_ref *ice_metadata_ref_at(const ice_metadata *md, size_t i);
const ice_ref *ice_metadata_ref(const ice_metadata *md, const char *name);

/* snapshot-log (false from has_snapshot_log when the field is absent) and metadata-log. */
bool ice_metadata_has_snapshot_log(const ice_metadata *md);
size_t ice_metadata_snapshot_log_count(const ice_metadata *md);
const ice_snapshot_log_entry *ice_metadata_snapshot_log_at(const ice_metadata *md, size_t i);
size_t ice_metadata_metadata_log_count(const ice_metadata *md);
const ice_metadata_log_entry *ice_metadata_metadata_log_at(const ice_metadata *md, size_t i);

size_t ice_metadata_encryption_key_count(const ice_metadata *md);
const ice_encryption_key *ice_metadata_encryption_key_at(const ice_metadata *md, size_t i);

/* ---- snapshot selection (snapshot.c) ------------------------------------------------- */

typedef enum ice_snapshot_select_kind {
    ICE_SELECT_CURRENT, /* current-snapshot-id (may give no snapshot) */
    ICE_SELECT_ID,      /* snapshot_id */
    ICE_SELECT_REF,     /* ref: a branch or tag name */
    ICE_SELECT_AS_OF    /* timestamp_ms: what was current at that time */
} ice_snapshot_select_kind;

typedef struct ice_snapshot_selector {
    ice_snapshot_select_kind kind;
    int64_t snapshot_id;
    const char *ref;
    int64_t timestamp_ms;
} ice_snapshot_selector;

/* Chooses the snapshot to read. *out is NULL only for ICE_SELECT_CURRENT on a table
 * without a current snapshot. Unknown ids or refs are ICD_ENOTFOUND; a time before the
 * first snapshot-log entry is ICD_ENOTFOUND "no snapshot at or before <time>". */
int ice_metadata_select_snapshot(const ice_metadata *md, const ice_snapshot_selector *sel,
                                 const ice_snapshot **out, icd_error *err);

/* The schema a read uses, given how it selected its snapshot `snap` (what
 * ice_metadata_select_snapshot returned for `sel`); Java's rule (SnapshotScan.useSnapshot /
 * useRef / asOfTime, SnapshotUtil.schemaFor), which pyiceberg and Spark follow:
 *   - the current state, or the head of a branch: the table's current schema, so a column
 *     added, dropped, renamed or promoted since the last write is seen;
 *   - a snapshot by id, by time, or a tag: that snapshot's schema-id (the current schema
 *     for snapshots written before schema ids existed).
 * A snapshot schema-id that names no schema is ICD_ECORRUPT. The one place a read's
 * schema is chosen: the planner calls it, everything else asks the plan. */
int ice_metadata_read_schema(const ice_metadata *md, const ice_snapshot_selector *sel,
                             const ice_snapshot *snap, const ice_schema **out, icd_error *err);

#endif
