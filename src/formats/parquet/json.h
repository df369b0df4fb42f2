/*
 * Parquet rows as JSON (the `icedruid cat` conventions of design.md §3): record assembly
 * from the definition/repetition levels of a columnar batch, and value formatting driven by
 * the Parquet physical + logical/converted type.
 */
#ifndef ICD_PQ_JSON_H
#define ICD_PQ_JSON_H

#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"
#include "formats/parquet/parquet.h"

typedef struct pq_json_writer pq_json_writer;

/* A writer for batches of the given selected leaves (sorted leaf indexes, as passed to
 * pq_reader_open; count 0 = all). Rows are objects keyed by the top-level fields that have
 * a selected leaf, in schema order. */
int pq_json_writer_new(const pq_schema *s, const int *leaves, size_t count, pq_json_writer **out,
                       icd_error *err);
void pq_json_writer_free(pq_json_writer *w);

/* Starts writing rows of a batch (rows are then written in order). */
void pq_json_begin(pq_json_writer *w, const pq_batch *b);
/* Appends the next row of the batch as one JSON object (no newline). Corrupt levels (leaf
 * columns that disagree) fail with ICD_ECORRUPT. */
int pq_json_row(pq_json_writer *w, icd_buf *out, icd_error *err);
/* Skips the next row (for rows removed by deletes). */
int pq_json_skip_row(pq_json_writer *w, icd_error *err);
/* After the last row: checks that every column was consumed exactly. */
int pq_json_end(pq_json_writer *w, icd_error *err);

/* Appends one leaf value (a non-null entry of a column batch) as JSON. */
void pq_json_value(icd_buf *out, const pq_node *leaf, const pq_column_batch *cb, size_t i);

#endif
