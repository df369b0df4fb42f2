/*
 * The format-neutral batch of the merge-on-read reader: what every format's data source
 * (reader_internal.h, data_*.c) decodes a data file into, and what the format adapters
 * (adapter.h) give for delete files: rows at consecutive file positions, one column per
 * requested field, each value an Iceberg-typed value (ice_tvalue) converted once from the
 * file's stored type by the rules of tvalue.h.
 */
#ifndef ICD_ICE_VBATCH_H
#define ICD_ICE_VBATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "iceberg/literal.h"
#include "iceberg/schema.h"
#include "iceberg/tvalue.h"

/* Every format's data source decodes a batch into the same shape: one column per field of
 * the read schema (and one per equality key column of each equality delete file), each
 *
 *   VALUES  the batch's values row by row as Iceberg-typed values (ice_tvalue, class
 *           ICE_TV_NULL for a null), converted once from the stored type: a primitive
 *           column of the file, also one inside structs (a null struct reads as null)
 *   CONST   the same value in every row: an identity-partition value, an initial-default
 *           or null, for a field the file lacks (lit: a nested type's literal)
 *   NESTED  a struct, list, map or variant column, read through a cursor that emits one
 *           row's value to the sink (rows asked in increasing order within a batch; the
 *           rows not asked for are skipped; `done` ends the batch)
 *
 * A value outside its type's int64 range (a timestamp scaled up, a far INT96) is never
 * a value: its cell is marked (ice_tv_mark_out_of_range) and the column's range_error
 * gives the error naming the column and the row when a surviving row or a probed key
 * uses it. Deleted rows never fail.
 *
 * The task loop (reader.c) applies the deletes to this batch (ice_mor_apply with the
 * one key encoder over the key columns) and hands the survivors to the sink: row by row
 * through the typed callbacks, or, when the sink takes whole batches and no column is
 * nested, as columns (ice_row_sink.columns). */

typedef struct ice_rd_task ice_rd_task; /* reader_internal.h */
typedef struct ice_vcol ice_vcol;

typedef enum ice_vcol_kind { ICE_VCOL_VALUES, ICE_VCOL_CONST, ICE_VCOL_NESTED } ice_vcol_kind;

struct ice_vcol {
    ice_vcol_kind kind;
    const ice_field *field; /* the read schema's field, or the equality key's field */
    size_t name_len;
    ice_tvalue *v;          /* VALUES: nrows values of the current batch */
    bool out_of_range;      /* VALUES: some value of the batch is marked out of range */
    ice_tvalue constant;    /* CONST of a primitive type */
    const ice_literal *lit; /* CONST of a nested type (NULL: null) */
    /* NESTED: emits row `row` of the current batch to t->sink */
    int (*nested_row)(ice_rd_task *t, ice_vcol *c, size_t row, icd_error *err);
    /* NESTED (may be NULL): the batch is done */
    int (*nested_done)(ice_rd_task *t, ice_vcol *c, icd_error *err);
    /* VALUES: the error of the out-of-range value in row `row` */
    int (*range_error)(ice_rd_task *t, const ice_vcol *c, size_t row, icd_error *err);
    void *impl; /* the format's state of the column */
};

typedef struct ice_vbatch {
    int64_t first_row; /* the file position of row 0 */
    size_t nrows;
    ice_vcol *cols; /* data files: one per field of the reader, in order; format adapters:
                     * one VALUES column per requested column */
    size_t ncols;
    ice_vcol **keys; /* data files: keys[e] are the key columns of the task's e-th equality
                      * delete file (ice_mor.eq[e]), in equality_ids order */
} ice_vbatch;

#endif
