/*
 * Partition specs (spec "Partitioning", JSON in Appendix C "Partition Specs"): a spec id
 * and a list of fields, each with source column id(s), a partition field id, a name and a
 * transform. Parsed from the table metadata's `partition-specs` objects, the v1
 * `partition-spec` field array, or a manifest's `partition-spec` key-value metadata.
 *
 * ice_partition_spec_is_unpartitioned() is the rule for global equality deletes: no
 * fields, or only `void` fields.
 */
#ifndef ICD_ICEBERG_PARTITION_H
#define ICD_ICEBERG_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "iceberg/schema.h"
#include "iceberg/transform.h"

struct json_t;

typedef struct ice_partition_field {
    int32_t source_id;         /* the first (usually only) source column id */
    const int32_t *source_ids; /* all source column ids (>= 1) */
    size_t n_source_ids;
    int32_t field_id; /* partition field id (assigned 1000, 1001, ... when absent) */
    const char *name;
    ice_transform transform;
} ice_partition_field;

typedef struct ice_partition_spec {
    int32_t spec_id;
    const ice_partition_field *fields;
    size_t nfields;
    icd_arena *owned_arena; /* set for ice_partition_spec_parse results */
} ice_partition_spec;

/* Parses a spec from JSON: an object {"spec-id", "fields"} or a bare field array (then the
 * spec id is `spec_id_if_array`). Allocates in `arena`; `file` names the file in errors.
 * A field without "field-id" gets 1000 + its position, as the v1 reference writer did. */
int ice_partition_spec_from_json(const struct json_t *j, int32_t spec_id_if_array, icd_arena *arena,
                                 const char *file, ice_partition_spec **out, icd_error *err);
/* Same from JSON text (e.g. a manifest's "partition-spec" metadata); the result owns its
 * memory: free with ice_partition_spec_free. */
int ice_partition_spec_parse(const char *json, size_t len, int32_t spec_id_if_array,
                             const char *file, ice_partition_spec **out, icd_error *err);
void ice_partition_spec_free(ice_partition_spec *spec);

/* True when the spec has no fields or all its fields use the void transform (such a
 * spec's equality deletes are global). */
bool ice_partition_spec_is_unpartitioned(const ice_partition_spec *spec);

/* The field with this partition field id, or NULL. */
const ice_partition_field *ice_partition_spec_field(const ice_partition_spec *spec,
                                                    int32_t field_id);

/* Spec equivalence as the spec defines it: same number of fields and, field by field, the
 * same source ids, transform and name (spec ids are not compared). */
bool ice_partition_spec_equivalent(const ice_partition_spec *a, const ice_partition_spec *b);

/* The spec as JSON: {"spec-id":N,"fields":[{"name","transform","source-id","field-id"}..]}
 * ("source-ids" instead of "source-id" for multi-argument fields). */
void ice_partition_spec_to_json(icd_buf *b, const ice_partition_spec *spec);

#endif
