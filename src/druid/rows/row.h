/*
 * Druid input rows from Iceberg values: a small visitor API, independent of the file
 * reader, that writes one JSON object per row with Druid's conversion rules, plus the
 * parse-exception accounting of tuningConfig.maxParseExceptions.
 *
 * A row is written as {"__time": MILLIS, <every column of the row, in the order given>}:
 *   boolean → true/false            int, long → number
 *   float, double → Java's Float/Double.toString text ("1.0E7", NaN, Infinity: read by
 *                   the json inputFormat with ALLOW_NON_NUMERIC_NUMBERS)
 *   decimal(P,S) → JSON number with its exact digits ("123.40")
 *   date → "YYYY-MM-DD"             time → Java LocalTime text ("14:30", "14:30:05.123")
 *   timestamp[tz][_ns] → epoch millis number (floor)
 *   string → string                 uuid → canonical string
 *   fixed, binary → base64 string   struct → object    list → array
 *   map → object whose keys are the keys' string forms (Java String.valueOf of the
 *         converted key: numbers as Java prints them, timestamps as millis, ...)
 * __time comes from the row's timestamp column through the timestampSpec (timestamp.h);
 * the timestamp column itself stays in the row (Druid excludes it from dimensions by
 * name; a rewritten spec reading __time must exclude it: dr_spec_rewrite_exclusions).
 * A source column named "__time" is dropped: the computed __time replaces it.
 *
 * Usage per row:
 *   dr_row_begin(w, position);
 *   dr_row_field(w, "id", 2); dr_row_long(w, 7);
 *   dr_row_field(w, "tags", 4); dr_row_list_begin(w); dr_row_string(w, "a", 1); dr_row_list_end(w);
 *   dr_row_field(w, "attrs", 5); dr_row_map_begin(w); dr_row_string(w, "k", 1);   <- key
 *                                dr_row_long(w, 1);                              <- value
 *                                dr_row_map_end(w);
 *   rc = dr_row_end(w, &out, err);
 * Value calls never fail; misuse or out-of-memory is reported by dr_row_end.
 */
#ifndef ICD_DRUID_ROW_H
#define ICD_DRUID_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "druid/rows/timestamp.h"

typedef struct dr_row_writer dr_row_writer;

/* Whose reader the values imitate: the v1 path has Druid read the data file with the
 * spec's inputFormat, so the served rows of the same file must give the same values. */
typedef enum dr_row_dialect {
    DR_ROW_GENERIC, /* the rules above (rows not from a data file of a known format) */
    /* Druid's ParquetGroupConverter: date -> epoch millis (a long); timestamp micros ->
     * millis truncated toward zero; timestamp nanos -> the raw long; time -> the raw long
     * of micros; decimal on INT32/INT64 -> the unscaled integer, on FIXED/BINARY of at
     * most 8 bytes -> unscaled / 10^scale as a double; uuid -> bytes (base64) */
    DR_ROW_PARQUET,
    /* Druid's ORC reader (OrcStructConverter.convertPrimitive): date -> a Joda DateTime at
     * midnight UTC (its text "2024-01-02T00:00:00.000Z"); decimal -> HiveDecimal's double;
     * timestamp -> epoch millis (floor); Iceberg time (an ORC long) -> the raw long of
     * micros; uuid (ORC binary) -> bytes (base64) */
    DR_ROW_ORC,
    /* Druid's Avro reader (a GenericRecord without logical-type conversions, then
     * AvroFlattenerMaker.transformValue): date -> the raw int of days; timestamp -> the
     * raw long in the file's unit (micros, nanos); time -> the raw long of micros;
     * decimal -> the fixed's bytes and uuid (fixed[16]) -> bytes (base64); nulls inside
     * lists are dropped */
    DR_ROW_AVRO
} dr_row_dialect;

/* `ts` is borrowed and must outlive the writer. */
int dr_row_writer_new(dr_row_writer **out, const dr_timestamp_spec *ts, icd_error *err);
void dr_row_writer_free(dr_row_writer *w);
/* The data file the following rows come from (copied; for parse-exception messages). It
 * does not choose the dialect: a name tells nothing about a file's format. */
int dr_row_set_source(dr_row_writer *w, const char *file, icd_error *err);

/* inputFormat.binaryAsString: binary and fixed values (and Parquet uuids) become UTF-8
 * strings instead of base64. */
void dr_row_set_binary_as_string(dr_row_writer *w, bool on);
/* The timestamp column still gives __time but is left out of the row (the rewritten spec
 * reads __time; see dr_spec_timestamp_column_shipped). */
void dr_row_set_omit_timestamp_column(dr_row_writer *w, bool on);
/* Whose reader the following rows' values imitate: the reader of the data file's format
 * (the manifest entry's file_format, never the file's name; dr_dialect_of_format in
 * druid_sink.h). GENERIC until set. */
void dr_row_set_dialect(dr_row_writer *w, dr_row_dialect d);
/* The dialect of the current source file (dr_row_set_dialect). */
dr_row_dialect dr_row_current_dialect(const dr_row_writer *w);

/* Starts a row; `position` is its row number in the data file (0-based). */
void dr_row_begin(dr_row_writer *w, int64_t position);
/* Names the next value: a top-level column or a struct field. */
void dr_row_field(dr_row_writer *w, const char *name, size_t n);
/* A top-level column whose value is read but left out of the row (it still gives __time
 * when it is the timestamp column). */
void dr_row_field_discard(dr_row_writer *w, const char *name, size_t n);

void dr_row_null(dr_row_writer *w);
void dr_row_bool(dr_row_writer *w, bool v);
void dr_row_long(dr_row_writer *w, int64_t v); /* int and long */
void dr_row_float(dr_row_writer *w, float v);
void dr_row_double(dr_row_writer *w, double v);
/* Unscaled value as big-endian two's complement bytes (Iceberg's decimal encoding). */
void dr_row_decimal(dr_row_writer *w, const uint8_t *be, size_t n, int scale);
void dr_row_decimal_i64(dr_row_writer *w, int64_t unscaled, int scale);
void dr_row_date(dr_row_writer *w, int32_t days);
void dr_row_time(dr_row_writer *w, int64_t micros_of_day);
/* `unit_digits`: 6 = microseconds, 9 = nanoseconds. `utc` (timestamptz) does not change
 * the value: both are instants in epoch units. */
void dr_row_timestamp(dr_row_writer *w, int64_t v, int unit_digits, bool utc);
/* A timestamp stored as a Parquet INT96 (v: the instant in unit_digits). Druid's Parquet
 * reader (ParquetGroupConverter.convertInt96BinaryToTimestamp) gives
 * (julian_day - 2440588) * 86400000 + nanos_of_day / 1000000 in Java long arithmetic:
 * millis floored for a valid time of day, where TIMESTAMP_MICROS truncates toward zero;
 * the other dialects take v. */
void dr_row_timestamp_int96(dr_row_writer *w, int64_t v, int unit_digits, bool utc,
                            int32_t julian_day, int64_t nanos_of_day);
void dr_row_string(dr_row_writer *w, const char *s, size_t n);
void dr_row_uuid(dr_row_writer *w, const uint8_t uuid[16]);
void dr_row_binary(dr_row_writer *w, const uint8_t *p, size_t n);
void dr_row_struct_begin(dr_row_writer *w);
void dr_row_struct_end(dr_row_writer *w);
void dr_row_list_begin(dr_row_writer *w);
void dr_row_list_end(dr_row_writer *w);
/* Inside a map, values alternate: key, value, key, value ... */
void dr_row_map_begin(dr_row_writer *w);
void dr_row_map_end(dr_row_writer *w);

/* Finishes the row and appends its JSON object (no newline) to `out`.
 * ICD_EINVALID: the row is unparseable (its timestamp); nothing is appended, and `err`
 *   holds "FILE: row N: Timestamp[...] is unparseable! (...)" — hand it to
 *   dr_parse_exceptions_add. ICD_EINTERNAL: the visitor calls were unbalanced.
 *   ICD_ENOMEM: out of memory. */
int dr_row_end(dr_row_writer *w, icd_buf *out, icd_error *err);
/* Finishes the row without writing it: its __time (`*ms`) and the kind of value the
 * timestamp column gave Druid's parser (`*kind`, may be NULL; DR_TSV_NULL when absent or
 * null). Errors as dr_row_end. Lets `diff` take __time by the same rules as `read`. */
int dr_row_end_time(dr_row_writer *w, int64_t *ms, dr_tsv_kind *kind, icd_error *err);

/* Parse-exception accounting (tuningConfig.maxParseExceptions). */
typedef struct dr_parse_exceptions {
    int64_t max;    /* more than this many unparseable rows fails the read */
    int64_t count;  /* unparseable rows so far */
    icd_error last; /* the most recent one */
} dr_parse_exceptions;

void dr_parse_exceptions_init(dr_parse_exceptions *pe, int64_t max);
/* Counts one unparseable row. 0 while the count is within the limit (skip the row);
 * ICD_EINVALID "Max parse exceptions[MAX] exceeded; last: ..." once it is exceeded. */
int dr_parse_exceptions_add(dr_parse_exceptions *pe, const icd_error *row_err, icd_error *err);

/* Java LocalTime.toString of a time of day in microseconds. */
void dr_fmt_local_time(icd_buf *b, int64_t micros_of_day);
/* Java BigDecimal.toString of an unscaled big-endian value and a scale >= 0. */
void dr_fmt_big_decimal(icd_buf *b, const uint8_t *be, size_t n, int scale);

#endif
