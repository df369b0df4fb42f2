/*
 * Iceberg schemas: a struct of named, id-carrying fields (spec "Schemas and Data Types";
 * JSON form in Appendix C), with lookups by field id (an index, binary search), by full
 * name ("a.b.c"; list elements are "x.element", map parts "m.key" / "m.value") and of a
 * field's parent. Readers resolve data-file columns by field id through these lookups.
 *
 * A schema lives in an arena: either the table metadata's (ice_schema_from_json) or its
 * own (ice_schema_parse, e.g. for the schema JSON stored in a manifest's key-value
 * metadata; free it with ice_schema_free).
 */
#ifndef ICD_ICEBERG_SCHEMA_H
#define ICD_ICEBERG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "iceberg/literal.h"
#include "iceberg/types.h"

struct json_t;

/* One indexed field: every field of the tree (struct fields, list elements, map keys and
 * values), with its parent (NULL for top-level columns) and dotted full name. */
typedef struct ice_schema_entry {
    int32_t id;
    const ice_field *field;
    const ice_field *parent;
    const char *full_name;
} ice_schema_entry;

typedef struct ice_schema {
    int32_t schema_id;                   /* 0 when the JSON has none (v1) */
    ice_type root;                       /* kind ICE_T_STRUCT: the top-level columns */
    const int32_t *identifier_field_ids; /* identifier-field-ids, may be empty */
    size_t n_identifier_field_ids;
    /* read-only index, sorted by id (use the functions below) */
    const ice_schema_entry *index;
    size_t n_index;
    icd_arena *owned_arena; /* set for ice_schema_parse results */
} ice_schema;

/* Builds a schema from its JSON object, allocating in `arena`. `file` names the metadata
 * file in error messages (e.g. "schema 1: field 'a.b': missing 'type'"). Duplicate field
 * ids, malformed types and bad defaults are ICD_ECORRUPT. */
int ice_schema_from_json(const struct json_t *j, icd_arena *arena, const char *file,
                         ice_schema **out, icd_error *err);

/* Parses schema JSON text into a schema that owns its memory. */
int ice_schema_parse(const char *json, size_t len, const char *file, ice_schema **out,
                     icd_error *err);
/* Frees a schema from ice_schema_parse (no-op for arena-backed ones and NULL). */
void ice_schema_free(ice_schema *s);

/* The field with this id anywhere in the tree, or NULL. O(log n). */
const ice_field *ice_schema_field(const ice_schema *s, int32_t id);
/* The index entry (field, parent, full name) of an id, or NULL. */
const ice_schema_entry *ice_schema_entry_by_id(const ice_schema *s, int32_t id);
/* The parent field of `id` (struct/list/map field that contains it), NULL for top-level
 * columns and unknown ids. */
const ice_field *ice_schema_parent(const ice_schema *s, int32_t id);
/* The field whose full name is `name` ("a.b.c"), exactly or ignoring ASCII case. With
 * case_sensitive false and several matches, the first in id order wins. */
const ice_field *ice_schema_find(const ice_schema *s, const char *name, bool case_sensitive);

/* The schema as Iceberg JSON (Appendix C). */
void ice_schema_to_json(icd_buf *b, const ice_schema *s);

#endif
