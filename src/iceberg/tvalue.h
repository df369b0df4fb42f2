/*
 * Typed values of the merge-on-read reader: one value of an Iceberg primitive type,
 * converted once from the data file's physical type (or from a literal: partition values,
 * initial-defaults) and handed to an ice_row_sink. Promotions (int->long, float->double,
 * decimal widening, date->timestamp) and time-unit changes happen here, so that top-level
 * columns, values inside structs/lists/maps and equality-delete keys all convert alike.
 */
#ifndef ICD_ICE_TVALUE_H
#define ICD_ICE_TVALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "formats/parquet/parquet.h"
#include "iceberg/literal.h"
#include "iceberg/row_sink.h"
#include "iceberg/types.h"

typedef enum ice_tv_class {
    ICE_TV_NULL,
    ICE_TV_BOOL,
    ICE_TV_INT,   /* int, long */
    ICE_TV_FLOAT, /* float (kept as float for output) */
    ICE_TV_DOUBLE,
    ICE_TV_DEC64, /* decimal, unscaled in i */
    ICE_TV_DECBE, /* decimal, unscaled big-endian bytes */
    ICE_TV_DATE,
    ICE_TV_TIME, /* micros of day */
    ICE_TV_TS,   /* timestamp in the type's unit (micros or nanos) */
    ICE_TV_STRING,
    ICE_TV_UUID,
    ICE_TV_BINARY /* binary and fixed */
} ice_tv_class;

typedef struct ice_tvalue {
    ice_tv_class cls;
    union { /* by class: i (BOOL, INT, DEC64, DATE, TIME, TS), f (FLOAT), d (DOUBLE) */
        int64_t i;
        double d;
        float f;
    };
    const uint8_t *p; /* STRING, UUID, BINARY, DECBE; TS: an INT96's stored 12 bytes */
    size_t n;
} ice_tvalue; /* 32 bytes: a batch holds one per row and column */

/* A cell of a reader batch may hold a value outside its type's int64 range, which is never
 * a value: it is marked (class ICE_TV_NULL, n SIZE_MAX) and reported as an error when a
 * surviving row or a probed key uses it. */
static inline void ice_tv_mark_out_of_range(ice_tvalue *v)
{
    *v = (ice_tvalue){.cls = ICE_TV_NULL, .n = SIZE_MAX};
}
static inline bool ice_tv_is_out_of_range(const ice_tvalue *v)
{
    return v->cls == ICE_TV_NULL && v->n == SIZE_MAX;
}

/* INT96 (nanos of day + Julian day, as Spark and Impala write timestamps) as a timestamp with
 * `digits` fraction digits (6: micros, 9: nanos), exactly (flooring nanos to micros); false
 * when the instant lies outside the int64 range of that unit (nanos: years 1677-2262;
 * micros: about +-292,000 years). Never a wrapped value. */
bool ice_int96_to_time(const pq_int96 *v, int digits, int64_t *out);
/* A time value in the Parquet unit (PQ_UNIT_*) rescaled to 6 (micros) or 9 (nanos)
 * digits, flooring when precision is dropped. */
int64_t ice_rescale_time(int64_t v, int unit, int target_digits);
bool ice_is_utc_type(ice_type_kind k);
/* Fraction digits of a timestamp kind: 9 for the _ns kinds, else 6. */
int ice_ts_digits(ice_type_kind k);

/* Can a Parquet leaf be read as Iceberg primitive type t? */
bool ice_leaf_readable_as(const pq_node *leaf, const ice_type *t);
/* Value vi (an index into the dense non-null values) of a column batch, as type t
 * (the leaf must be readable as t). */
ice_tvalue ice_typed_value(const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                           size_t vi);
/* The values of n rows of a column batch as type t, row i's from vidx[i] (-1: null), into
 * out[0..n). A value outside the type's int64 range is marked (out[i].cls ICE_TV_NULL and
 * out[i].n SIZE_MAX, see reader_internal.h) and makes the result 1; else 0. */
int ice_typed_values(const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                     const int32_t *vidx, size_t n, ice_tvalue *out);
/* False when value vi cannot be represented as type t: a timestamp outside the type's
 * int64 range (INT96 far from 1970, a huge date promoted to timestamp, milliseconds or
 * microseconds scaled up). Readers check this before ice_typed_value and report
 * ice_time_range_error (ice_typed_value would give 0, never a wrapped value). */
bool ice_typed_value_in_range(const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                              size_t vi);
/* The error for such a value: "column C, row R: INT96 timestamp (Julian day J) is outside
 * the range of Iceberg type T (int64 ...)" (row < 0: unknown, left out). Returns
 * ICD_EUNSUPPORTED. */
int ice_time_range_error(icd_error *err, const char *file, const char *column, int64_t row,
                         const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                         size_t vi);
/* ice_typed_value with that check: an out-of-range value is ice_time_range_error (column
 * and row named, as for data values), never a value - for equality-delete keys on both
 * sides (delete file rows and the data rows probed), where a wrong key deletes wrong rows. */
int ice_typed_value_checked(const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                            size_t vi, const char *file, const char *column, int64_t row,
                            ice_tvalue *out, icd_error *err);
/* The same error for a value `what` describes ("timestamp 123 (milliseconds)"), for the
 * Avro and ORC readers. */
int ice_time_value_range_error(icd_error *err, const char *file, const char *column, int64_t row,
                               const ice_type *t, const char *what);
/* A literal (NULL or a null literal give ICE_TV_NULL) as a typed value of type t. */
ice_tvalue ice_literal_tvalue(const ice_literal *l, const ice_type *t);

void ice_emit_tvalue(const ice_row_sink *s, const ice_tvalue *v, const ice_type *t);
/* A literal of any type (nested ones walk their items), or null. */
void ice_emit_literal(const ice_row_sink *s, const ice_literal *l, const ice_type *t);

#endif
