/*
 * The Druid row sink: an ice_row_sink (what the merge-on-read reader pushes values into)
 * that writes Druid input rows through dr_row_writer (row.h), one NDJSON line per
 * surviving row, with parse exceptions and cancellation handled per row.
 *
 * Nested Parquet columns reach a sink already rendered as JSON in the `scan` conventions
 * (raw_json: decimals as strings, timestamps as ISO text, maps as [{key, value}]); the
 * sink parses that JSON and replays it through the typed dr_row_* calls guided by the
 * column's Iceberg type, so nested values follow the same Druid rules as top-level ones
 * (timestamps -> millis, decimals -> numbers, maps -> objects with string keys).
 */
#ifndef ICD_DRUID_DRUID_SINK_H
#define ICD_DRUID_DRUID_SINK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "druid/rows/row.h"
#include "iceberg/reader.h"
#include "iceberg/row_sink.h"

/* The Druid reader whose values rows of a data file in `format` must give (the manifest
 * entry's file_format decides, as Iceberg's readers do; unknown: GENERIC). */
dr_row_dialect dr_dialect_of_format(ice_file_format format);

typedef struct dr_sink {
    dr_row_writer *w;
    icd_buf *out; /* rows are appended here, each followed by '\n' */
    const ice_scan_reader *reader;
    /* Called after each row was appended (e.g. to flush `out` when large); non-zero
     * stops the read. May be NULL. */
    int (*on_row)(void *ctx, icd_buf *out, icd_error *err);
    /* Called for each unparseable row with its error ("FILE: row N: Timestamp[...] is
     * unparseable! ..."): return 0 to skip the row, or an error to stop the read.
     * NULL: every parse exception stops the read. */
    int (*on_parse_exception)(void *ctx, const icd_error *row_err, icd_error *err);
    void *ctx;
    /* Set by another thread to stop this read at the next row (ICD_ECANCELED). */
    const atomic_bool *cancel;
    /* Columns Druid's Parquet reader does not discover in schemaless mode (it discovers
     * primitive columns only; Druid's json reader would discover lists of primitives): left
     * out of rows of Parquet files (dr_spec_parquet_undiscovered). Borrowed; may be NULL. */
    const char *const *parquet_drop;
    size_t n_parquet_drop;
    /* The same for Druid's ORC and Avro readers (dr_spec_undiscovered), for rows of ORC and
     * Avro files. Borrowed; may be NULL. */
    const char *const *orc_drop;
    size_t n_orc_drop;
    const char *const *avro_drop;
    size_t n_avro_drop;
    uint64_t rows;             /* rows written */
    uint64_t parse_exceptions; /* rows skipped */
    /* internal */
    char *cur_file;
    size_t next_field;
    const ice_type *cur_type;
    int depth;
    int raw_fail;
    icd_error raw_err;
} dr_sink;

/* `ts` (borrowed) is the spec's timestampSpec; `reader` gives the columns' types. */
int dr_sink_init(dr_sink *s, const dr_timestamp_spec *ts, const ice_scan_reader *reader,
                 icd_buf *out, icd_error *err);
void dr_sink_clear(dr_sink *s);
/* The ice_row_sink to hand to ice_scan_reader_read_task (valid while `s` lives). */
void dr_sink_row_sink(dr_sink *s, ice_row_sink *rs);

#endif
