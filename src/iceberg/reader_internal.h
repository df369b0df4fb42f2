/*
 * Internals of the merge-on-read reader shared by reader.c (Parquet and Avro data files,
 * the delete cache) and reader_orc.c (ORC data and delete files). Not for use outside
 * src/iceberg/reader*.c.
 */
#ifndef ICD_ICE_READER_INTERNAL_H
#define ICD_ICE_READER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/buf.h"
#include "base/hash.h"
#include "iceberg/deletes/eq_index.h"
#include "iceberg/expr.h"
#include "iceberg/posset.h"
#include "iceberg/reader.h"
#include "iceberg/tvalue.h"

typedef enum cache_kind { C_POS, C_EQ, C_DV } cache_kind;

/* One loaded delete file of the scan-wide cache. */
typedef struct cache_entry {
    cache_kind kind;
    int rc;
    icd_error err;
    icd_map *by_path;     /* C_POS: data file path -> ice_posset* */
    ice_posset **possets; /* C_POS: owned */
    size_t nposset;
    ice_eq_builder *eqb; /* C_EQ: the loader adds the canonical key tuples here */
    ice_eq_index *eq;    /* C_EQ: built from eqb once the file is read */
    ice_posset *dv;      /* C_DV */
    bool loading;        /* being read by one task; others wait on the reader's `loaded` */
    /* Work the tasks waiting for this entry can share while it loads (reading slices
     * of a delete file, building its index): each waiting task runs help(help_ctx) once
     * per help_gen. Guarded by the reader's lock. */
    void (*help)(void *ctx);
    void *help_ctx;
    unsigned help_gen;
    int helpers; /* tasks inside help() */
} cache_entry;

struct ice_scan_reader {
    icd_fileio *io;
    const ice_metadata *md;
    const ice_schema *schema;
    const ice_field **fields;
    size_t nfields;
    const ice_name_mapping *mapping;
    const ice_bound_expr *filter; /* stripe pruning (ORC); NULL = none */
    pthread_mutex_t lock;         /* guards the cache map and entries' `loading`, never held
                                   * while a delete file is read */
    pthread_cond_t loaded;        /* broadcast when an entry finished loading */
    icd_map *cache;               /* key -> cache_entry* */
    cache_entry **entries;
    size_t nentries, cap;
    atomic_bool canceled;
};

/* Canonical key bytes of a typed value (equality deletes): equal Iceberg values give
 * equal bytes whatever physical type or file format they were stored with. */
void ice_rd_key_put(icd_buf *k, const ice_tvalue *v);
void ice_rd_cache_entry_free(cache_entry *e);
/* Offers fn(ctx) to the tasks waiting for entry e (the loader calls it without the lock);
 * unpublish withdraws it and waits until no task is inside fn. */
void ice_rd_publish_help(ice_scan_reader *r, cache_entry *e, void (*fn)(void *), void *ctx);
void ice_rd_unpublish_help(ice_scan_reader *r, cache_entry *e);
/* The Iceberg field of an id in any of the table's schemas, or NULL. */
const ice_field *ice_rd_schema_field(const ice_scan_reader *r, int32_t id);
/* The identity-partition value of field `id` in the data file's partition, or NULL. */
const ice_literal *ice_rd_partition_value(const ice_scan_reader *r, const ice_content_file *df,
                                          int32_t id);
/* Equality key column k of delete file `df`: the table field it names (in any schema),
 * or an error naming the delete file. */
int ice_rd_equality_field(const ice_scan_reader *r, const ice_content_file *df, size_t k,
                          const ice_field **out, icd_error *err);
/* The value every row of data file `data` has in field f when the file predates the
 * column: its identity-partition value, the field's initial-default, or null. */
ice_tvalue ice_rd_absent_value(const ice_scan_reader *r, const ice_content_file *data,
                               const ice_field *f);
/* The loaded form of a delete file (loaded once per scan; tasks that need a file being
 * loaded wait for that file only). */
int ice_rd_get_entry(ice_scan_reader *r, const ice_content_file *df, const cache_entry **out,
                     bool *loaded, icd_error *err);
/* The one check of a file against the manifest entry that describes it (data files,
 * delete files, DVs): `size` bytes (0 = not checked) and `rows` rows or records (-1 = not
 * checked) must be the entry's file_size_in_bytes and record_count. A mismatch (a file
 * truncated, replaced or appended to) is an error naming the file. */
int ice_rd_check_entry(const ice_content_file *df, uint64_t size, int64_t rows, icd_error *err);
/* Opens the file of a manifest entry and checks the size of delete files. */
int ice_rd_open_entry(ice_scan_reader *r, const ice_content_file *df, icd_file **out,
                      icd_error *err);

/* Loading a position delete file (Parquet, ORC, Avro: one copy of the rules). Records
 * are fed in file order; each must lie inside the file_path and pos bounds of the entry
 * and follow the spec's order (file_path, then pos). A record with a null file_path
 * names no data file: it is counted and skipped (one warning per file at the end). */
typedef struct ice_rd_posload {
    cache_entry *e;
    const ice_content_file *df;
    const ice_col_stats *path_st, *pos_st;
    icd_buf path;    /* file_path of the current run (copied: batch buffers are reused) */
    ice_posset *cur; /* its position set; NULL before the first record */
    int64_t last_pos;
    uint64_t *run; /* positions of `cur` not added yet (added in runs) */
    size_t nrun, runcap;
    int64_t records, null_paths;
} ice_rd_posload;

int ice_rd_posload_init(ice_rd_posload *pl, cache_entry *e, const ice_content_file *df,
                        icd_error *err);
/* One record; `row` (its row number in the file) is for messages. */
int ice_rd_posload_add(ice_rd_posload *pl, const void *path, size_t len, int64_t pos, int64_t row,
                       icd_error *err);
/* A record whose file_path is null (its pos is ignored). */
void ice_rd_posload_null_path(ice_rd_posload *pl);
/* Flushes, freezes the position sets, checks the record count against the entry and
 * warns about null file_paths. */
int ice_rd_posload_finish(ice_rd_posload *pl, icd_error *err);
void ice_rd_posload_free(ice_rd_posload *pl);

/* Equality-delete key bounds: a key value outside the lower/upper bound the manifest
 * recorded for its column is an error (a corrupt delete file). Types whose bounds can
 * be compared without decoding (int/long/date, string, binary) are checked; others
 * pass. `v` is key column k of df; nulls[k] counts its nulls (ice_rd_check_nulls). */
int ice_rd_check_key_bounds(const ice_content_file *df, size_t k, const ice_tvalue *v, int64_t row,
                            int64_t *nulls, icd_error *err);
/* The number of nulls of a column of a delete file against the entry's null_value_counts
 * (a flipped definition level turns a key or a file_path into null). */
int ice_rd_check_nulls(const ice_content_file *df, int32_t field_id, int64_t nulls, icd_error *err);

/* The position set of the task's data file from its position deletes and DVs: *pos is
 * NULL when nothing is deleted; *pos_owned (free it) when several sets were merged. */
int ice_rd_task_positions(ice_scan_reader *r, const ice_scan_task *task, ice_read_stats *stats,
                          const ice_posset **pos, ice_posset **pos_owned, icd_error *err);

/* ---- reader_orc.c ---- */

/* Reads an ORC position or equality delete file into a cache entry (kind already set). */
int ice_rd_read_delete_orc(ice_scan_reader *r, const ice_content_file *df, cache_entry *e,
                           icd_error *err);
/* Reads one task whose data file is ORC. */
int ice_rd_read_orc_task(ice_scan_reader *r, const ice_scan_task *task, const ice_row_sink *sink,
                         ice_read_stats *stats, icd_error *err);

#endif
