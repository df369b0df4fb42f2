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
#include "iceberg/literal.h"
#include "iceberg/types.h"

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
    ICE_EXPR_NOT_NULL,
    /* Only produced by binding (the negation of EQ when NOT is pushed down); an unbound
     * tree may use it too. */
    ICE_EXPR_NOT_EQ
} ice_expr_op;

/* The literal of a comparison, as the filter gave it; binding converts it to the column's
 * type (Iceberg's Literal.to rules: text parsed per type, timestamps to dates by flooring,
 * ...). */
typedef enum ice_expr_value_kind {
    ICE_VALUE_STRING,          /* text, e.g. "2024-01-01" or "42" */
    ICE_VALUE_LONG,            /* an integer */
    ICE_VALUE_DOUBLE,          /* a floating-point number */
    ICE_VALUE_BOOL,            /* true / false */
    ICE_VALUE_TIMESTAMP_MICROS /* an instant: microseconds since the epoch, UTC */
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

/* ---- bound expressions --------------------------------------------------------------- */

struct ice_schema;
struct ice_partition_spec;
struct ice_manifest_file;
struct ice_content_file;
struct ice_field;

/* An expression bound to a schema: NOT is pushed down (De Morgan, negated comparisons),
 * constants are folded (TRUE/FALSE only ever appear as the whole tree), every literal has
 * the column's type. The same node type carries partition predicates produced by
 * projection; then `field_id` is the partition field id, `pos` its position in the spec
 * (the index into a partition tuple and into a manifest's field summaries) and `type` the
 * partition field's result type. */
typedef struct ice_bound_expr ice_bound_expr;
struct ice_bound_expr {
    ice_expr_op op; /* never ICE_EXPR_NOT */
    const ice_bound_expr *left, *right;
    int32_t field_id;
    int32_t pos;      /* partition predicates: position in the spec; else -1 */
    const char *name; /* column full name / partition field name (messages) */
    const struct ice_type *type;
    struct ice_literal lit; /* comparisons: the value, of kind type->kind */
};

/* Binds `e` to schema `s` (names resolve as full dotted names through structs, exactly or
 * ignoring ASCII case). Literals convert to the column type as Iceberg's Literal.to does,
 * and text additionally parses as numbers and booleans. Values beyond an int/float
 * column's range fold the comparison to TRUE or FALSE. Errors are ICD_EINVALID naming the
 * column and the value. Allocates in `a`. */
int ice_expr_bind(const ice_expr *e, const struct ice_schema *s, bool case_sensitive, icd_arena *a,
                  ice_bound_expr **out, icd_error *err);

/* Projects a bound expression through partition spec `spec` onto partition predicates:
 * inclusive (true for a partition that may hold a matching row) or strict (true only for
 * a partition whose rows all match). Column predicates without a usable partition field
 * become TRUE (inclusive) or FALSE (strict). `s` is the schema the expression is bound to
 * (source column types). */
int ice_expr_project(const ice_bound_expr *e, const struct ice_partition_spec *spec,
                     const struct ice_schema *s, bool strict, icd_arena *a,
                     const ice_bound_expr **out, icd_error *err);

/* Can a manifest with these partition summaries hold a match of partition predicate
 * `proj` (an inclusive projection through the manifest's spec)? Missing summaries or
 * bounds are unknown: may match. Corrupt bounds are ICD_ECORRUPT naming the manifest. */
int ice_manifest_may_match(const ice_bound_expr *proj, const struct ice_manifest_file *mf,
                           bool *out, icd_error *err);

/* Evaluates partition predicate `proj` on a file's partition tuple. Inclusive use:
 * unknowns (incomparable values) count as true; `strict` makes them false. */
bool ice_partition_eval(const ice_bound_expr *proj, const struct ice_content_file *f, bool strict);

/* InclusiveMetricsEvaluator: can file `f` hold a row matching bound expression `e`, given
 * its record count, value/null/NaN counts and lower/upper bounds? Bounds decode by the
 * column's current type (narrower encodings of promoted types accepted). Corrupt bounds
 * are ICD_ECORRUPT naming the manifest. */
int ice_metrics_may_match(const ice_bound_expr *e, const struct ice_content_file *f, bool *out,
                          icd_error *err);

/* What a part of a file (a Parquet row group, an ORC stripe) records about one column:
 * bounds as literals of the predicate's type, and what is known of its nulls. */
typedef struct ice_range_stats {
    bool has_lo, has_hi;
    struct ice_literal lo, hi;
    bool all_null; /* known: every value is null */
    bool no_null;  /* known: no value is null */
} ice_range_stats;
/* The statistics of predicate p's column in the part; false when nothing is known (the
 * column is absent or a constant there, or has no usable statistics). */
typedef bool (*ice_range_fn)(void *ctx, const ice_bound_expr *p, ice_range_stats *out);
/* Can a row of the part match `e` (inclusive: unknown = may match)? One evaluator for
 * row-group and stripe pruning of every format. */
bool ice_range_may_match(const ice_bound_expr *e, ice_range_fn fn, void *ctx);

/* The residual of `e` on a file of spec `spec` (ResidualEvaluator): each predicate that a
 * strict projection proves for the file's partition becomes TRUE, each that an inclusive
 * projection refutes becomes FALSE, the rest stay. TRUE = the partition decides the
 * filter. */
int ice_expr_residual(const ice_bound_expr *e, const struct ice_partition_spec *spec,
                      const struct ice_schema *s, const struct ice_content_file *f, icd_arena *a,
                      const ice_bound_expr **out, icd_error *err);

/* Decodes a bound in the single-value binary serialization (spec Appendix D) as type `t`.
 * Promoted types accept the narrower encodings (int bounds for long, float for double,
 * date for timestamps). Returns false when the length does not fit the type; `*out`
 * points into `p` for byte types. Types without a binary form (nested) give false. */
bool ice_bound_decode(const struct ice_type *t, const uint8_t *p, uint32_t n,
                      struct ice_literal *out);

/* Renders expressions for messages, e.g. (ts >= "2024-01-01T00:00:00.000000+00:00" and
 * region == "eu"). */
void ice_expr_to_text(icd_buf *b, const ice_expr *e);
void ice_bound_expr_to_text(icd_buf *b, const ice_bound_expr *e);

/* Constant trees and tests (shared by binding, projection and evaluation). */
const ice_bound_expr *ice_bound_true(void);
const ice_bound_expr *ice_bound_false(void);

#endif
