/*
 * Writing the Iceberg read of a data file as Parquet: the layer between the merge-on-read
 * reader (reader.h, which emits typed rows into an ice_row_sink) and the native Parquet
 * writer (formats/parquet/writer.h, which takes leaf columns).
 *
 *   ice_pqw_schema     the Parquet schema of the read schema's fields, by Iceberg's type
 *                      mapping (with field ids on every node):
 *                        boolean BOOLEAN; int INT32; long INT64; float FLOAT; double DOUBLE;
 *                        decimal(P,S) DECIMAL on INT32 (P<=9), INT64 (P<=18), else
 *                        FIXED[minimal bytes]; date INT32 DATE; time INT64 TIME(MICROS)
 *                        (+ TIME_MICROS); timestamp / timestamptz INT64 TIMESTAMP(MICROS,
 *                        isAdjustedToUTC false / true) (+ TIMESTAMP_MICROS, as parquet-mr
 *                        writes both); timestamp_ns / timestamptz_ns TIMESTAMP(NANOS);
 *                        string BYTE_ARRAY STRING; uuid FIXED[16] UUID; fixed[L] FIXED[L];
 *                        binary BYTE_ARRAY; struct group; list 3-level LIST
 *                        (list / element); map MAP (key_value / key / value)
 *                      Required fields are REQUIRED, others OPTIONAL.
 *                      With `mirror` (the original data file's schema), every field found
 *                      there (by field id when the file has ids, else by name under the
 *                      mirrored parent) whose values the file holds in the read type (no
 *                      promotion since the file was written) copies the original element:
 *                      physical type, length, repetition, converted and logical
 *                      annotations, and the group shape of lists and maps (legacy 2-level
 *                      lists, MAP_KEY_VALUE, element/key/value names). A promoted field
 *                      (int->long, float->double, decimal widening, date->timestamp) or a
 *                      field the file lacks takes the mapping above.
 *   ice_pqw_sink       an ice_row_sink that shreds the rows into definition / repetition
 *                      levels and values of the schema's leaves, converting each typed
 *                      value to its leaf's physical form (micros to INT96 or millis,
 *                      decimals to INT32 / INT64 / big-endian bytes of the leaf's width,
 *                      ...), and hands them to the writer every few thousand rows.
 *                      It also takes whole batches (ice_row_sink.columns) of flat
 *                      columns: a column whose data file leaf stores values as the
 *                      written leaf does (same physical type, length and annotation, no
 *                      INT96, no unit finer than the type's, ...) is copied from the
 *                      reader's batch without conversion (pointed at when its values are
 *                      one run); every other column goes value by value through the typed
 *                      conversions above. Both ways write the same bytes for a file
 *                      (tests/iceberg/test_pqw_paths.py).
 *
 * Typical use (one materialized file):
 *     ice_pqw_schema(fields, n, original_schema_or_NULL, &arena, &els, &nels, err);
 *     pq_writer_new(els, nels, &opts, write_cb, ctx, &w, err);
 *     ice_pqw_sink_new(w, fields, n, &ps, err);
 *     ice_scan_reader_read_task(reader, task, ice_pqw_sink_get(ps), &stats, err);
 *     ice_pqw_sink_finish(ps, err);   // hands over the buffered rows
 *     pq_writer_close(w, err);
 *     ice_pqw_sink_free(ps); pq_writer_free(w);
 */
#ifndef ICD_ICE_PQ_WRITE_H
#define ICD_ICE_PQ_WRITE_H

#include <stddef.h>

#include "base/arena.h"
#include "base/error.h"
#include "formats/parquet/schema.h"
#include "formats/parquet/writer.h"
#include "iceberg/row_sink.h"
#include "iceberg/types.h"

/* The element list (root named "table" first) for the top-level fields, allocated in
 * `arena`. `mirror` may be NULL. A field of a type that cannot be written (variant,
 * unknown, geometry, geography) fails with ICD_EUNSUPPORTED naming it. */
int ice_pqw_schema(const ice_field *fields, size_t nfields, const pq_schema *mirror,
                   icd_arena *arena, pq_schema_element **out, size_t *nout, icd_error *err);

typedef struct ice_pqw_sink ice_pqw_sink;

/* A sink writing to `w`, whose schema must have been made by ice_pqw_schema for the same
 * fields (top-level fields in the order the reader emits them). Borrows w and fields. */
int ice_pqw_sink_new(pq_writer *w, const ice_field *fields, size_t nfields, ice_pqw_sink **out,
                     icd_error *err);
/* The row sink to give the reader. end_row fails (stopping the scan) on a value the
 * schema cannot hold: a null in a REQUIRED field, a fixed value of the wrong length, a
 * decimal that does not fit its leaf, or a writer error. */
const ice_row_sink *ice_pqw_sink_get(ice_pqw_sink *s);
/* Writes the rows still buffered in the sink (call before pq_writer_close). */
int ice_pqw_sink_finish(ice_pqw_sink *s, icd_error *err);
/* Rows received so far. */
int64_t ice_pqw_sink_rows(const ice_pqw_sink *s);
void ice_pqw_sink_free(ice_pqw_sink *s);

#endif
