/*
 * ice_row_sink: where the merge-on-read reader puts surviving rows, one typed value at a
 * time, already converted to the Iceberg type of its column (timestamps in the Iceberg
 * unit, promotions applied). `scan` plugs in a JSON writer following design.md §3
 * (scan_json.c); Druid's `read` plugs in the Druid input-row writer.
 */
#ifndef ICD_ICE_ROW_SINK_H
#define ICD_ICE_ROW_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "iceberg/content_file.h"

struct ice_field;
struct ice_tvalue;

/* One column of a batch handed to ice_row_sink.columns: a primitive field of the read
 * schema, either the batch's typed values (row rows[i] of `values` for kept row i) or one
 * constant (partition value, initial-default or null). */
typedef struct ice_sink_column {
    const struct ice_field *field;
    const struct ice_tvalue *values; /* NULL for a constant */
    const struct ice_tvalue *constant;
} ice_sink_column;

typedef struct ice_row_sink {
    void *ctx;
    /* A row begins: its data file and 0-based position in it (for messages). */
    void (*begin_row)(void *ctx, const char *file, int64_t pos);
    void (*field)(void *ctx, const char *name, size_t n);
    void (*null_value)(void *ctx);
    void (*boolean)(void *ctx, bool v);
    void (*i64)(void *ctx, int64_t v); /* int, long */
    void (*f32)(void *ctx, float v);
    void (*f64)(void *ctx, double v);
    void (*decimal_i64)(void *ctx, int64_t unscaled, int scale);
    void (*decimal_be)(void *ctx, const uint8_t *be, size_t n, int scale);
    void (*date)(void *ctx, int32_t days);
    void (*time)(void *ctx, int64_t micros_of_day);
    /* unit_digits 6 (micros) or 9 (nanos); utc for timestamptz */
    void (*timestamp)(void *ctx, int64_t v, int unit_digits, bool utc);
    void (*string)(void *ctx, const char *s, size_t n);
    void (*uuid)(void *ctx, const uint8_t v[16]);
    void (*binary)(void *ctx, const uint8_t *p, size_t n); /* binary and fixed */
    void (*struct_begin)(void *ctx);
    void (*struct_end)(void *ctx);
    void (*list_begin)(void *ctx);
    void (*list_end)(void *ctx);
    void (*map_begin)(void *ctx); /* then key, value, key, value, ... */
    void (*map_end)(void *ctx);
    /* A value already rendered as one JSON value in the §3 conventions: a `variant` (its
     * objects, arrays and primitives as formats/parquet/variant.h describes). `scan` prints
     * it as is; a Druid sink should embed the same JSON (a variant has no Iceberg type to
     * apply Druid's conversions to). */
    void (*raw_json)(void *ctx, const char *json, size_t n);
    /* The row is complete. A failure stops the scan (e.g. too many parse errors). A
     * positive return skips the row without failing (e.g. a counted parse exception). */
    int (*end_row)(void *ctx, icd_error *err);
    /* Optional (may be NULL): the reader starts a task's data file, whose format is the
     * manifest entry's file_format (the Iceberg rule; a file's name tells nothing). */
    void (*begin_file)(void *ctx, const char *path, ice_file_format format);
    /* Optional (may be NULL: timestamp() is called): a timestamp stored as a Parquet INT96,
     * with the stored Julian day and nanoseconds of the day; v is the same instant in the
     * column's unit. Druid's Parquet reader converts INT96 by its own rule. */
    void (*timestamp_int96)(void *ctx, int64_t v, int unit_digits, bool utc, int32_t julian_day,
                            int64_t nanos_of_day);
    /* Optional (may be NULL: rows are emitted one by one): `nrows` surviving rows of a
     * batch at once, column by column, in place of begin_row ... end_row for each, whatever
     * the file's format. The reader uses it when every column of the read schema is
     * primitive (none nested, no nested default). Kept row i is row rows[i] of each
     * column's values, at position positions[i] in the data file; values are typed and
     * range-checked as for row-by-row emission. Rows cannot be skipped; a failure stops
     * the scan. */
    int (*columns)(void *ctx, const ice_sink_column *cols, size_t ncols, size_t nrows,
                   const uint32_t *rows, const int64_t *positions, icd_error *err);
} ice_row_sink;

#endif
