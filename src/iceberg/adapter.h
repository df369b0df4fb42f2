/*
 * The format adapter: one interface over Parquet, ORC and Avro files that gives primitive
 * columns, chosen by Iceberg field id, as batches of Iceberg-typed values (ice_tvalue)
 * with the file row position of each batch.
 *
 *   open    binds each requested column to the file: by the field id the file stores
 *           (Parquet field_id, ORC iceberg.id, Avro field-id), else through the table's
 *           name mapping, else by name (Parquet: the column's name at the top level; ORC:
 *           the names of the read schema; never Java's positional ids, which are for
 *           data files, not for a file holding some of the columns); a column may also name a
 *           top-level column to fall back to by name (position deletes' file_path and
 *           pos). Columns may sit inside structs (a null struct reads as a null value),
 *           never inside lists or maps. Each column's stored type must be readable as the
 *           requested Iceberg type (promotions as for data files).
 *   next    the next batch: for every requested column one value per row, converted
 *           once to the Iceberg type (the conversions the data paths use: tvalue.c for
 *           Parquet, ice_orc_tvalue, ice_avro_tvalue); a timestamp outside its type's
 *           int64 range is an error naming the column and the row, never a value
 *   close   frees everything
 *
 * The delete loaders (deletes/delete_load.c) are written once over this interface, so a
 * delete file of any format is read by the same rules.
 *
 * A batch and the bytes its values point to stay valid until the next
 * ice_adapter_next or ice_adapter_close. Memory: one batch of the format's reader (a row
 * group's column chunks for Parquet, a stripe's streams for ORC, at most
 * ICE_ADAPTER_AVRO_BATCH records for Avro) plus the typed values of one batch.
 */
#ifndef ICD_ICE_ADAPTER_H
#define ICD_ICE_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "iceberg/content_file.h"
#include "iceberg/metadata.h"
#include "iceberg/schema.h"
#include "iceberg/tvalue.h"
#include "iceberg/vbatch.h"
#include "io/fileio.h"

/* One requested column. */
typedef struct ice_adapter_col {
    int32_t field_id;
    const ice_type *type;      /* the Iceberg type to read it as (primitive) */
    const char *name;          /* for messages */
    const char *fallback_name; /* a top-level column read when no column holds the id;
                                * NULL: none */
} ice_adapter_col;

typedef struct ice_adapter_opts {
    icd_file *file;   /* taken over by the adapter (closed by it, also on failure) */
    const char *path; /* the file's location, for messages */
    ice_file_format format;
    const ice_adapter_col *cols;
    size_t ncols;
    const ice_schema *schema;        /* the read schema (ORC files without ids), or NULL */
    const ice_name_mapping *mapping; /* schema.name-mapping.default, or NULL */
} ice_adapter_opts;

/* A batch (vbatch.h, the data files' batch): nrows rows starting at file row position
 * first_row; column c (a VALUES column) holds row i's value in cols[c].v[i] (class
 * ICE_TV_NULL for null). A value out of its type's range fails the batch at once: every
 * row of a delete file counts. */

typedef struct ice_adapter ice_adapter;

/* Opens the file and binds the columns. Errors name the file: ICD_ENOTFOUND when a
 * column is in the file under no id, mapping or name (*missing, when not NULL, is then its
 * index in cols), ICD_EUNSUPPORTED when one is stored inside a list or map or as a type
 * not readable as the requested one, ICD_ECORRUPT for a damaged file. */
int ice_adapter_open(ice_adapter **out, const ice_adapter_opts *o, size_t *missing, icd_error *err);
/* Rows in the file by its footer / stripes (-1: not known before reading, Avro). */
int64_t ice_adapter_num_rows(const ice_adapter *a);
/* The pieces a file can be read in independently, in file order: Parquet row groups, ORC
 * stripes; an Avro file is one unit. */
size_t ice_adapter_num_units(const ice_adapter *a);
/* Reads only units [first, first + count) from here on: ice_adapter_next then gives their
 * rows (with their file row positions) and ends after them. May be called again after
 * that end for other units (several tasks that load one delete file share its units this
 * way, each through its own adapter). */
int ice_adapter_select_units(ice_adapter *a, size_t first, size_t count, icd_error *err);
/* The next batch, or *out == NULL after the last one. */
int ice_adapter_next(ice_adapter *a, const ice_vbatch **out, icd_error *err);
void ice_adapter_close(ice_adapter *a);

#define ICE_ADAPTER_AVRO_BATCH 1024

/* ---- for the format implementations (adapter_*.c, data_orc.c) ---- */

/* What every implementation provides. */
typedef struct ice_adapter_ops {
    int (*next)(ice_adapter *a, icd_error *err); /* fills a->batch; nrows 0 at the end */
    void (*close)(ice_adapter *a);
    /* restarts reading at units [first, first + count) (checked against num_units);
     * NULL for formats of one unit */
    int (*select_units)(ice_adapter *a, size_t first, size_t count, icd_error *err);
} ice_adapter_ops;

struct ice_adapter {
    const ice_adapter_ops *ops;
    void *impl;
    const char *path;
    const ice_adapter_col *cols;
    size_t ncols;
    int64_t num_rows;
    size_t num_units;
    bool started;      /* ice_adapter_next was called */
    ice_tvalue **vals; /* ncols arrays of cap values */
    size_t cap;
    ice_vcol *vcols; /* the batch's columns (VALUES over vals) */
    ice_vbatch batch;
};

/* Makes room for n rows in every column's value array. */
int ice_adapter_reserve(ice_adapter *a, size_t n, icd_error *err);
/* The ICD_ENOTFOUND error of open for column k. */
int ice_adapter_missing(const ice_adapter_opts *o, size_t k, size_t *missing, icd_error *err);

int ice_adapter_open_parquet(ice_adapter *a, const ice_adapter_opts *o, size_t *missing,
                             icd_error *err);
int ice_adapter_open_avro(ice_adapter *a, const ice_adapter_opts *o, size_t *missing,
                          icd_error *err);
int ice_adapter_open_orc(ice_adapter *a, const ice_adapter_opts *o, size_t *missing,
                         icd_error *err);

/* ---- binding and value conversions shared with the data paths ---- */

/* Does any node of a Parquet schema carry a field id? */
bool ice_pq_schema_has_ids(const pq_schema *s);
/* The Parquet node of field `id`: by id (files with ids, at any depth), else by the name
 * mapping (top-level), else by Java's fallback of positional ids for top-level columns. */
const pq_node *ice_pq_find_node(const pq_schema *s, bool has_ids, const ice_name_mapping *mapping,
                                int32_t id);
/* For an unrepeated leaf's batch: vidx[i] = the index of row i's value among the dense
 * values, or -1 for null (a null enclosing struct included). -1 when the levels do not
 * match the row count. */
int ice_pq_fill_vidx(const pq_column_batch *cb, size_t nrows, int32_t *vidx);

struct icd_avro_value;
/* An Avro value (of a type readable as t: ice_avro_readable_as) as Iceberg type t. */
ice_tvalue ice_avro_tvalue(const struct icd_avro_value *v, const ice_type *t);
/* Can this (non-null) Avro value be read as Iceberg primitive type t? */
bool ice_avro_readable_as(const struct icd_avro_value *v, const ice_type *t);
/* The value of field `id` in an Avro record, looking into nested records (equality keys
 * may sit inside structs); NULL when absent, or when a struct on the way is null. */
const struct icd_avro_value *ice_avro_find_id(const struct icd_avro_value *rec, int32_t id);
/* Whether an Avro value of a timestamp type fits type t's int64 unit (a date promoted to
 * timestamp, or millis/micros scaled up, can overflow); *what describes it when not. */
bool ice_avro_ts_in_range(const struct icd_avro_value *v, const ice_type *t, char *what, size_t n);

#endif
