/*
 * The scan-wide delete cache and the rules of loading a delete file, written once for
 * every file format.
 *
 *   cache        every delete file (or DV blob) of a scan is loaded once, by the first
 *                task that needs it, without holding the scan-wide lock: tasks that need a
 *                file being loaded wait for that file only; a failed load is remembered
 *                and reported to every task that needs the file (never skipped)
 *   entry        the loaded form: C_POS one position set per data file the file
 *                references, kept in the file's file_path order (the spec's order, which
 *                the loader checks) so a data file's set is found by binary search; no
 *                hash map and no fixed-size pages, memory proportional to the content
 *                (a delete file that references one data file holds one set and one
 *                path); C_EQ the key set (eq_set.h); C_DV one position set
 *   checks       a file against its manifest entry (size, record count, null counts, the
 *                bounds of file_path / pos / equality keys): a mismatch is an error naming
 *                the delete file
 *   posload      position delete records, in file order, from any format's loader
 *
 * The format-specific readers (Parquet, ORC, Avro) feed records in; everything about what
 * a record means is here.
 */
#ifndef ICD_ICE_DELETES_DELETE_CACHE_H
#define ICD_ICE_DELETES_DELETE_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hash.h"
#include "iceberg/content_file.h"
#include "iceberg/deletes/eq_set.h"
#include "iceberg/deletes/posset.h"
#include "iceberg/tvalue.h"
#include "iceberg/vbatch.h"
#include "io/fileio.h"

typedef enum cache_kind { C_POS, C_EQ, C_DV } cache_kind;

typedef struct ice_delete_cache ice_delete_cache;

/* Work on a delete file being loaded that the tasks waiting for that file share: the
 * file's units (ice_adapter_num_units), claimed one at a time. The loader publishes it on
 * the file's entry (ice_delete_job_share); a task that needs the file calls `help` while
 * units are left to claim, instead of waiting idle. */
typedef struct ice_load_job {
    size_t nunits;
    atomic_size_t next;                   /* the next unit to claim */
    atomic_bool failed;                   /* a unit failed: no later unit is claimed */
    void (*help)(struct ice_load_job *j); /* a waiting task's share of the work */
    unsigned active;                      /* tasks inside help (under the cache's lock) */
    bool closed;                          /* no task may enter help (under the cache's lock) */
} ice_load_job;

/* One loaded delete file of the scan-wide cache. */
typedef struct cache_entry {
    cache_kind kind;
    int rc;
    icd_error *err; /* the load's error when rc != 0 (NULL: out of memory) */
    /* C_POS: possets[i] holds the positions of the data file whose location key is
     * paths[path_off[i] .. path_off[i + 1]); sorted by that key */
    ice_posset **possets;
    size_t *path_off; /* nposset + 1 entries */
    icd_buf paths;
    size_t nposset, posset_cap, path_off_cap;
    ice_eq_set *keys;        /* C_EQ: canonical key tuples */
    ice_posset *dv;          /* C_DV */
    bool loading;            /* being read by one task; others wait on the cache's `loaded` */
    bool building;           /* C_EQ, still loading: keys sealed, waiting tasks may help build */
    unsigned helpers;        /* tasks inside ice_eq_set_help on `keys` */
    ice_delete_cache *cache; /* the cache holding the entry */
    ice_load_job *job;       /* while loading: work the waiting tasks share, or NULL */
} cache_entry;

/* Publishes j on e (being loaded by the caller): tasks waiting for e help with it. */
void ice_delete_job_share(cache_entry *e, ice_load_job *j);
/* Lets no more tasks into j->help and waits until those inside have left; j may then be
 * freed. */
void ice_delete_job_close(cache_entry *e);

/* The position set of data file `path` in a C_POS entry, or NULL. */
const ice_posset *ice_delete_entry_positions(const cache_entry *e, const char *path, size_t len);
/* Bytes held by an entry's structures (for tests and benchmarks). */
size_t ice_delete_entry_memory(const cache_entry *e);
void ice_delete_entry_free(cache_entry *e);

/* Reads delete file df into e (e->kind still to set); `ctx` is the loader's. */
typedef int (*ice_delete_loader)(void *ctx, const ice_content_file *df, cache_entry *e,
                                 icd_error *err);

int ice_delete_cache_new(ice_delete_cache **out, icd_error *err);
void ice_delete_cache_free(ice_delete_cache *c);
/* The loaded form of df, loading it with `load` on first use (*loaded = true then). */
int ice_delete_cache_get(ice_delete_cache *c, const ice_content_file *df, ice_delete_loader load,
                         void *ctx, const cache_entry **out, bool *loaded, icd_error *err);

/* The one check of a file against the manifest entry that describes it (data files,
 * delete files, DVs): `size` bytes (0 = not checked) and `rows` rows or records (-1 = not
 * checked) must be the entry's file_size_in_bytes and record_count. A mismatch (a file
 * truncated, replaced or appended to) is an error naming the file; a size mismatch only a
 * warning when size_warns (icd_fileio_set_size_mismatch_warns) and the rows agree. */
int ice_delete_check_entry(const ice_content_file *df, uint64_t size, int64_t rows, bool size_warns,
                           icd_error *err);
/* Opens the file of a manifest entry and checks the size of delete files. */
int ice_delete_open_entry(icd_fileio *io, const ice_content_file *df, icd_file **out,
                          icd_error *err);
/* Reads a deletion vector into e (kind C_DV). */
int ice_delete_read_dv(icd_fileio *io, const ice_content_file *df, cache_entry *e, icd_error *err);

/* Loading a position delete file (Parquet, ORC, Avro: one copy of the rules). Records
 * are fed in file order; each must lie inside the file_path and pos bounds of the entry
 * and follow the spec's order (file_path, then pos). A record with a null file_path
 * names no data file: it is counted and skipped (one warning per file at the end). */
typedef struct ice_rd_posload {
    cache_entry *e;
    const ice_content_file *df;
    /* the manifest entry's bounds, as location keys and numbers (NULL / false: none) */
    const char *path_lo, *path_hi;
    size_t path_lo_len, path_hi_len;
    bool has_pos_lo, has_pos_hi;
    int64_t pos_lo, pos_hi;
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
/* Adds the records given so far to the entry's position sets (ice_rd_posload_finish does
 * it too): for a unit of the file loaded into an entry of its own. */
int ice_rd_posload_flush(ice_rd_posload *pl, icd_error *err);
/* Appends the runs of C_POS entry `from`, the records that follow e's in the file, to e:
 * the runs move over, or are united with e's last one when they hold the same data file.
 * `from`'s first record (its pos first_pos, at row first_row) must not come before e's
 * last one (last_pos) in the spec's order (file_path, then pos). */
int ice_rd_posload_join(cache_entry *e, int64_t last_pos, cache_entry *from, int64_t first_pos,
                        int64_t first_row, const ice_content_file *df, icd_error *err);
/* Flushes, freezes the position sets, checks the record count against the entry and
 * warns about null file_paths. */
int ice_rd_posload_finish(ice_rd_posload *pl, icd_error *err);
void ice_rd_posload_free(ice_rd_posload *pl);

/* Loading an equality delete file (Parquet, ORC, Avro: one copy of the rules). Batches of
 * records, their key columns in equality_ids order, go through ice_rd_eqload_batch: each
 * value is checked against the entry's bounds (ice_rd_check_key_bounds' rule) and nulls
 * are counted; the record's canonical key (eq_key.h) goes to the loader's key set. A file
 * may be loaded in parts (its units, on several threads, each into its own set);
 * ice_rd_eqload_check then checks the record count and the null counts of all parts
 * against the entry. */
typedef struct ice_rd_eqload {
    ice_eq_set *set;
    const ice_content_file *df;
    size_t nk;                /* key columns */
    const ice_col_stats **st; /* per key column: the entry's metrics, or NULL */
    int64_t *nulls;           /* per key column */
    int64_t records;
    icd_buf key;
} ice_rd_eqload;

int ice_rd_eqload_init(ice_rd_eqload *el, ice_eq_set *set, const ice_content_file *df,
                       icd_error *err);
/* The records of a batch whose columns are the key columns (in key order). */
int ice_rd_eqload_batch(ice_rd_eqload *el, const ice_vbatch *b, icd_error *err);
/* The whole file's records and per-key-column null counts against its entry. */
int ice_rd_eqload_check(const ice_content_file *df, int64_t records, const int64_t *nulls,
                        icd_error *err);
void ice_rd_eqload_free(ice_rd_eqload *el);

/* Equality-delete key bounds: a key value outside the lower/upper bound the manifest
 * recorded for its column is an error (a corrupt delete file). Types whose bounds can
 * be compared without decoding (int/long/date, string, binary) are checked; others
 * pass. `v` is key column k of df; nulls[k] counts its nulls (ice_rd_check_nulls). */
int ice_rd_check_key_bounds(const ice_content_file *df, size_t k, const ice_tvalue *v, int64_t row,
                            int64_t *nulls, icd_error *err);
/* The number of nulls of a column of a delete file against the entry's null_value_counts
 * (a flipped definition level turns a key or a file_path into null). */
int ice_rd_check_nulls(const ice_content_file *df, int32_t field_id, int64_t nulls, icd_error *err);

#endif
