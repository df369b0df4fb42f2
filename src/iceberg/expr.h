/*
 * Row filters for scan planning (Iceberg "expressions"): an unbound tree over column
 * names, as Druid's icebergFilter produces it, bound to a schema, then evaluated
 * inclusively (can any row of this manifest / file match?) and strictly (do all rows of
 * this partition match, i.e. is no residual left?).
 */
#ifndef ICD_ICE_EXPR_H
#define ICD_ICE_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"

typedef enum ice_expr_op {
    ICE_EXPR_TRUE,
    ICE_EXPR_FALSE,
    ICE_EXPR_AND,
    ICE_EXPR_OR,
    ICE_EXPR_NOT,
    ICE_EXPR_EQ,
    ICE_EXPR_LT,
    ICE_EXPR_LE,
    ICE_EXPR_GT,
    ICE_EXPR_GE,
    ICE_EXPR_IS_NULL,
    ICE_EXPR_NOT_NULL
} ice_expr_op;

/* The literal of a comparison, as the filter gave it; binding converts it to the column's
 * type (Iceberg's Literal.to rules: text parsed per type, timestamps to dates by flooring,
 * ...). */
typedef enum ice_expr_value_kind {
    ICE_VALUE_STRING,           /* text, e.g. "2024-01-01" or "42" */
    ICE_VALUE_LONG,             /* an integer */
    ICE_VALUE_DOUBLE,           /* a floating-point number */
    ICE_VALUE_BOOL,             /* true / false */
    ICE_VALUE_TIMESTAMP_MICROS  /* an instant: microseconds since the epoch, UTC */
} ice_expr_value_kind;

typedef struct ice_expr_value {
    ice_expr_value_kind kind;
    const char *str; /* ICE_VALUE_STRING */
    int64_t i64;     /* ICE_VALUE_LONG, ICE_VALUE_TIMESTAMP_MICROS */
    double f64;      /* ICE_VALUE_DOUBLE */
    bool b;          /* ICE_VALUE_BOOL */
} ice_expr_value;

typedef struct ice_expr ice_expr;
struct ice_expr {
    ice_expr_op op;
    const ice_expr *left;  /* and/or; not */
    const ice_expr *right; /* and/or */
    const char *column;    /* comparisons, null tests */
    ice_expr_value value;  /* comparisons */
};

#endif
