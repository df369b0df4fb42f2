/*
 * Iceberg-typed record assembly for one top-level struct, list, map or variant column of a
 * Parquet data file (used by the merge-on-read reader).
 *
 * ice_nested_new binds the column's Iceberg type tree to the file's Parquet node tree:
 *   struct children   by field id (files with ids), else through the table's name mapping,
 *                     else by name; a child the file lacks reads as its initial-default
 *                     (or null); Parquet children that are no longer in the schema are not
 *                     read at all
 *   list element      the LIST group's element (3-level and legacy 2-level forms, or a bare
 *                     repeated field); map key / value: the MAP group's key and value
 *   primitives        converted with the same typed-value rules as top-level columns
 *                     (promotions, INT96 / TIMESTAMP_MILLIS to the Iceberg unit)
 *   variant           a group of `metadata` and `value` binaries, decoded to JSON
 *                     (formats/parquet/variant.h) and handed to the sink's raw_json;
 *                     shredded variants (a `typed_value` child) are refused
 * and lists the Parquet leaves it reads. Per batch, ice_nested_row assembles the next row's
 * value from the definition/repetition levels of those leaves and emits it through the
 * sink's struct/list/map callbacks; deleted rows are skipped without assembly.
 */
#ifndef ICD_ICE_NESTED_H
#define ICD_ICE_NESTED_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "formats/parquet/parquet.h"
#include "iceberg/metadata.h"
#include "iceberg/row_sink.h"
#include "iceberg/types.h"

typedef struct ice_nested ice_nested;

/* Binds field `f` to Parquet node `n` of schema `s`. `has_ids`: the file carries field
 * ids; otherwise `mapping` (the table's name mapping, or NULL) resolves names. `file`
 * names the data file in messages (borrowed). A type mismatch fails with ICD_ECORRUPT /
 * ICD_EUNSUPPORTED naming the column. */
int ice_nested_new(const ice_field *f, const pq_schema *s, const pq_node *n, bool has_ids,
                   const ice_name_mapping *mapping, const char *file, ice_nested **out,
                   icd_error *err);
void ice_nested_free(ice_nested *x);

/* The leaves (column indexes of the file) it reads, ascending. */
size_t ice_nested_leaf_count(const ice_nested *x);
int ice_nested_leaf(const ice_nested *x, size_t i);
/* Where leaf i (in the order above) is in the reader's batches. */
void ice_nested_set_batch_column(ice_nested *x, size_t i, int batch_col);

/* Starts a batch; then one call per batch row, in order: ice_nested_row emits the row's
 * value (null, object, array, map entries, variant JSON), ice_nested_skip_row passes over
 * it; ice_nested_end checks that every level and value of the batch was used. Corrupt
 * levels or variant bytes fail with ICD_ECORRUPT naming the column and the row. */
void ice_nested_begin(ice_nested *x, const pq_batch *b);
int ice_nested_row(ice_nested *x, const ice_row_sink *s, icd_error *err);
int ice_nested_skip_row(ice_nested *x, icd_error *err);
int ice_nested_end(ice_nested *x, icd_error *err);

#endif
