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
    icd_map *keys;  /* C_EQ: canonical key tuples */
    ice_posset *dv; /* C_DV */
    bool loading;   /* being read by one task; others wait on the reader's `loaded` */
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
/* Adds a deleted position of data file `path` to a C_POS entry (by_path must exist). */
int ice_rd_pos_insert(cache_entry *e, const char *path, size_t len, int64_t pos, icd_error *err);
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
