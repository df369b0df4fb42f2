/*
 * Avro schemas: the writer schema of a container file, parsed from its JSON (the header's
 * `avro.schema`) into a tree of icd_avro_schema nodes that the datum decoder walks. Named
 * types (record, enum, fixed) may be referenced by name or fullname, so the tree can be a
 * graph (a recursive record points back at itself). Every node lives in the arena of its
 * icd_avro_schema_doc and dies with it.
 */
#ifndef ICD_AVRO_SCHEMA_H
#define ICD_AVRO_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/error.h"

typedef enum icd_avro_type {
    AVRO_NULL,
    AVRO_BOOLEAN,
    AVRO_INT,
    AVRO_LONG,
    AVRO_FLOAT,
    AVRO_DOUBLE,
    AVRO_BYTES,
    AVRO_STRING,
    AVRO_RECORD,
    AVRO_ENUM,
    AVRO_ARRAY,
    AVRO_MAP,
    AVRO_UNION,
    AVRO_FIXED
} icd_avro_type;

/* Logical types we interpret. An unknown or misplaced logicalType is ignored, as the spec
 * asks (the value is then read as its underlying type). */
typedef enum icd_avro_logical {
    AVRO_LT_NONE,
    AVRO_LT_DECIMAL,          /* bytes or fixed; precision, scale */
    AVRO_LT_UUID,             /* string or fixed(16) */
    AVRO_LT_DATE,             /* int: days since 1970-01-01 */
    AVRO_LT_TIME_MILLIS,      /* int */
    AVRO_LT_TIME_MICROS,      /* long */
    AVRO_LT_TIMESTAMP_MILLIS, /* long; `utc` says whether adjusted to UTC */
    AVRO_LT_TIMESTAMP_MICROS,
    AVRO_LT_TIMESTAMP_NANOS
} icd_avro_logical;

typedef struct icd_avro_schema icd_avro_schema;

typedef struct icd_avro_field {
    const char *name;
    icd_avro_schema *type;
    const json_t *default_value; /* borrowed from the doc's JSON; NULL when absent */
    const json_t *attrs;         /* the field's whole JSON object (extra attributes) */
    int32_t field_id;            /* Iceberg "field-id"; valid when has_field_id */
    bool has_field_id;
} icd_avro_field;

/* The steps of icd_avro_schema.skip_ops: a varint (int, long, enum), a length-prefixed
 * value (string, bytes), or the 1, 4 or 8 bytes of a boolean, float or double. */
enum {
    AVRO_SKIP_VARINT = 1,
    AVRO_SKIP_STRING,
    AVRO_SKIP_BYTES,
    AVRO_SKIP_BOOLEAN,
    AVRO_SKIP_FLOAT,
    AVRO_SKIP_DOUBLE
};
#define AVRO_SKIP_OPS_MAX 8

struct icd_avro_schema {
    icd_avro_type type;
    icd_avro_logical logical;
    bool utc;             /* timestamps: adjusted to UTC (timestamp-*, or adjust-to-utc) */
    int precision, scale; /* decimal */
    const char *name;     /* fullname of a named type (record, enum, fixed), else NULL */
    const json_t *attrs;  /* the node's JSON object, or NULL for a bare type name */

    /* record */
    icd_avro_field *fields;
    size_t nfields;
    /* enum */
    const char **symbols;
    size_t nsymbols;
    /* array items / map values */
    icd_avro_schema *items;
    /* union */
    icd_avro_schema **branches;
    size_t nbranches;
    int null_branch; /* index of the "null" branch, or -1 */
    /* fixed */
    size_t size;

    /* Iceberg ids on arrays (element-id) and maps (key-id, value-id); -1 when absent. */
    int32_t element_id, key_id, value_id;

    /* Decoding aids, computed once after parsing: the least number of bytes one value
     * occupies (bounds item counts taken from a file), and the exact width when every
     * value has the same size (lets skipping jump over arrays of such values), or -1. */
    size_t min_size;
    int64_t fixed_width;
    /* A value that is a flat run of primitives (an int, a string, a record of an int key
     * and a long value, ...): the steps that skip it, so arrays and maps of such values
     * are skipped in one tight loop instead of one recursive call per value. nskip_ops is
     * -1 when the value has unions, arrays, maps or more than AVRO_SKIP_OPS_MAX steps. */
    uint8_t skip_ops[AVRO_SKIP_OPS_MAX];
    int nskip_ops;
    int skip_ops_depth;    /* how many record levels the value nests (what icd_avro_skip's
                            * depth limit counts) */
    bool skip_all_varints; /* nskip_ops > 0 and every step is a varint */
    int visiting_;         /* internal: 0 new, 1 on the path, 2 sized */
};

typedef struct icd_avro_schema_doc {
    /* holders: readers that parsed the same text share one doc (see icd_avro_schema_parse) */
    _Atomic size_t refs;
    icd_arena arena;
    json_t *json; /* owned; field defaults and attrs point into it */
    icd_avro_schema *root;
    /* named types, for references by name */
    icd_avro_schema **named;
    size_t nnamed, named_cap;
} icd_avro_schema_doc;

/* Parses a schema from JSON text. Errors are ICD_ECORRUPT (the file's schema is bad) with
 * one line saying what is wrong and where in the schema ("field 'x' of record 'r': ...").
 * The doc is read-only once parsed: the text last parsed and its doc are kept (one of
 * each, for the process), and a parse of the same text hands out that doc again -- a
 * table's manifests mostly share one schema, whose JSON parse cost as much as a few
 * thousand of their entries. Each *out is freed with icd_avro_schema_doc_free. */
int icd_avro_schema_parse(const char *json, size_t len, icd_avro_schema_doc **out, icd_error *err);
void icd_avro_schema_doc_free(icd_avro_schema_doc *doc);

/* Index of a record field by name / by Iceberg field id; -1 when the record has none. */
int icd_avro_schema_field_index(const icd_avro_schema *rec, const char *name);
int icd_avro_schema_field_index_by_id(const icd_avro_schema *rec, int32_t field_id);

/* "null", "record", ... */
const char *icd_avro_type_name(icd_avro_type t);

/* Deepest nesting of schema JSON accepted. */
#define AVRO_MAX_SCHEMA_DEPTH 64

#endif
