/*
 * Iceberg data types (spec "Schemas and Data Types", JSON form in Appendix C).
 *
 * A type is a tree: primitives are leaves; struct, list and map hold child fields, each
 * with its own field id. Every type of the v3 spec parses, including `unknown`,
 * `variant`, `geometry` and `geography`, so that any table's metadata loads; whether a
 * column of a type can be *read* is a separate question (ice_type_check_readable).
 *
 * Types, fields and default values of a schema live in the arena of whoever parsed them
 * (the table metadata, or a standalone ice_schema); they are read-only afterwards.
 */
#ifndef ICD_ICEBERG_TYPES_H
#define ICD_ICEBERG_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"

typedef enum ice_type_kind {
    ICE_T_BOOLEAN,
    ICE_T_INT,
    ICE_T_LONG,
    ICE_T_FLOAT,
    ICE_T_DOUBLE,
    ICE_T_DECIMAL,
    ICE_T_DATE,
    ICE_T_TIME,
    ICE_T_TIMESTAMP,
    ICE_T_TIMESTAMPTZ,
    ICE_T_TIMESTAMP_NS,
    ICE_T_TIMESTAMPTZ_NS,
    ICE_T_STRING,
    ICE_T_UUID,
    ICE_T_FIXED,
    ICE_T_BINARY,
    ICE_T_STRUCT,
    ICE_T_LIST,
    ICE_T_MAP,
    /* v3 types. `variant` is read (rendered as JSON); the others parse but cannot be read
     * by icedruid (yet). */
    ICE_T_UNKNOWN,
    ICE_T_VARIANT,
    ICE_T_GEOMETRY,
    ICE_T_GEOGRAPHY
} ice_type_kind;

typedef struct ice_field ice_field;
typedef struct ice_literal ice_literal;

typedef struct ice_type {
    ice_type_kind kind;
    int32_t precision;  /* decimal */
    int32_t scale;      /* decimal */
    int32_t length;     /* fixed */
    const char *params; /* geometry / geography: the text between the parentheses, or NULL */
    /* struct: its fields, in order */
    ice_field *fields;
    size_t nfields;
    /* list: element; map: key and value (fields with id, name "element"/"key"/"value") */
    ice_field *element;
    ice_field *key;
    ice_field *value;
} ice_type;

struct ice_field {
    int32_t id;
    const char *name;
    bool required;
    const char *doc; /* NULL when absent */
    ice_type *type;
    const ice_literal *initial_default; /* NULL when absent (JSON null gives a null literal) */
    const ice_literal *write_default;
};

/* The spec's name of a kind ("int", "timestamptz", "decimal", "struct", ...). */
const char *ice_type_kind_name(ice_type_kind kind);

static inline bool ice_type_is_primitive(const ice_type *t)
{
    return t->kind != ICE_T_STRUCT && t->kind != ICE_T_LIST && t->kind != ICE_T_MAP;
}
static inline bool ice_type_is_nested(const ice_type *t)
{
    return !ice_type_is_primitive(t);
}
/* timestamp, timestamptz and their nanosecond forms. */
static inline bool ice_type_kind_is_timestamp(ice_type_kind k)
{
    return k == ICE_T_TIMESTAMP || k == ICE_T_TIMESTAMPTZ || k == ICE_T_TIMESTAMP_NS ||
           k == ICE_T_TIMESTAMPTZ_NS;
}

/* True for kinds icedruid cannot read values of: unknown, geometry, geography. */
bool ice_type_kind_is_unreadable(ice_type_kind kind);

/* Checks that values of `t` (and every type nested in it) can be read. On failure returns
 * ICD_EUNSUPPORTED naming `column` and the offending type. */
int ice_type_check_readable(const ice_type *t, const char *column, icd_error *err);

/* Parses a primitive type name ("int", "decimal(9, 2)", "fixed[16]", "geography(srid:4326,
 * spherical)"...). Returns ICD_ECORRUPT for an unknown name. `params` of geo types point
 * into the arena. */
int ice_type_parse_primitive(const char *name, icd_arena *arena, ice_type *out, icd_error *err);

/* The type's text: "decimal(9,2)", "fixed[16]", "struct", "list", "map", ... */
void ice_type_format(icd_buf *b, const ice_type *t);

/* The type as Iceberg JSON (Appendix C), defaults included. */
void ice_type_to_json(icd_buf *b, const ice_type *t);
/* A struct field as Iceberg JSON: {"id":..,"name":..,"required":..,"type":..,...}. */
void ice_field_to_json(icd_buf *b, const ice_field *f);

#endif
