/*
 * Loading a delete file into the scan-wide cache, written once for every file format
 * (delete_load.h): the file is read through the format adapter (adapter.h), its records
 * go through the one set of rules of delete_cache.h (posload, eqload). A position or
 * equality delete file is read in its units by every task waiting for it (pos_job and
 * eq_job below).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/adapter.h"
#include "iceberg/deletes/delete_load.h"

static const ice_type T_STRING = {.kind = ICE_T_STRING};
static const ice_type T_LONG = {.kind = ICE_T_LONG};

/* Opens df (its size checked against the entry) through the adapter; its footer's row
 * count, where the format has one, is checked before anything is read. */
static int open_adapter(const ice_delete_load_ctx *c, const ice_content_file *df,
                        const ice_adapter_col *cols, size_t ncols, bool check_rows,
                        ice_adapter **out, size_t *missing, icd_error *err)
{
    icd_file *f;
    ICD_TRY(ice_delete_open_entry(c->io, df, &f, err));
    ice_adapter_opts o = {.file = f,
                          .path = df->path,
                          .format = df->format,
                          .cols = cols,
                          .ncols = ncols,
                          .schema = c->schema,
                          .mapping = c->mapping};
    ICD_TRY(ice_adapter_open(out, &o, missing, err));
    int64_t rows = ice_adapter_num_rows(*out);
    int rc = check_rows && rows >= 0 ? ice_delete_check_entry(df, 0, rows, false, err) : 0;
    if (rc) {
        ice_adapter_close(*out);
        *out = NULL;
    }
    return rc;
}

/* A job over nunits units, shared with the waiting tasks through `help`. */
static void job_init(ice_load_job *j, size_t nunits, void (*help)(ice_load_job *))
{
    j->nunits = nunits;
    j->help = help;
    atomic_init(&j->next, 0);
    atomic_init(&j->failed, false);
}

/* The next unit of j for the calling task, in file order; false when none is left or a
 * unit failed (no later unit is claimed then). */
static bool claim_unit(ice_load_job *j, size_t *u)
{
    if (atomic_load(&j->failed)) return false;
    *u = atomic_fetch_add(&j->next, 1);
    return *u < j->nunits;
}

/* Loading a position delete file in units (Parquet row groups, ORC stripes), shared like
 * an equality delete file's (eq_job below): each unit's records go through the one set of
 * rules (ice_rd_posload) into an entry of the unit's own; once every unit is read, the
 * loader joins them in file order -- the order across each boundary checked, the runs of
 * a data file that spans units united -- and finishes the file as a reading in one pass
 * does. A file of one unit, or loaded outside the cache, is the same with one reader. */
typedef struct pos_unit {
    cache_entry *e; /* C_POS: the unit's runs */
    int64_t records, null_paths;
    bool any;                               /* a record with a file_path was accepted */
    int64_t first_pos, first_row, last_pos; /* of the accepted records */
    int rc;
    icd_error err;
} pos_unit;

typedef struct pos_job {
    ice_load_job base;
    const ice_delete_load_ctx *c;
    const ice_content_file *df;
    pos_unit *units;
} pos_job;

static const ice_adapter_col POS_COLS[2] = {
    {ICE_FIELD_DELETE_FILE_PATH, &T_STRING, "file_path", "file_path"},
    {ICE_FIELD_DELETE_POS, &T_LONG, "pos", "pos"}};

/* The records of unit u (selected on a) into its entry. */
static int read_pos_unit(pos_job *j, ice_adapter *a, size_t u, icd_error *err)
{
    pos_unit *pu = &j->units[u];
    if (!(pu->e = calloc(1, sizeof *pu->e))) return icd_fail_nomem(err);
    pu->e->kind = C_POS;
    ice_rd_posload pl;
    int rc = ice_rd_posload_init(&pl, pu->e, j->df, err);
    if (!rc) rc = ice_adapter_select_units(a, u, 1, err);
    while (!rc) {
        const ice_vbatch *b;
        if ((rc = ice_adapter_next(a, &b, err)) || !b) break;
        const ice_tvalue *path = b->cols[0].v, *pos = b->cols[1].v;
        for (size_t i = 0; i < b->nrows && !rc; i++) {
            int64_t row = b->first_row + (int64_t)i;
            if (path[i].cls == ICE_TV_NULL) {
                ice_rd_posload_null_path(&pl);
            } else if (pos[i].cls == ICE_TV_NULL) {
                rc = icd_fail(err, ICD_ECORRUPT, j->df->path, -1, "row %lld has a null pos",
                              (long long)row);
            } else {
                rc = ice_rd_posload_add(&pl, path[i].p, path[i].n, pos[i].i, row, err);
                if (!rc && !pu->any) {
                    pu->any = true;
                    pu->first_pos = pos[i].i;
                    pu->first_row = row;
                }
            }
        }
    }
    if (!rc) rc = ice_rd_posload_flush(&pl, err);
    pu->records = pl.records;
    pu->null_paths = pl.null_paths;
    pu->last_pos = pl.last_pos;
    ice_rd_posload_free(&pl);
    return rc;
}

/* One task's share: claims units until none is left (or one failed), reading them
 * through `a` (the loader's adapter), or through an adapter of its own when `a` is NULL. */
static void pos_share(pos_job *j, ice_adapter *a)
{
    bool own = !a;
    size_t u;
    while (claim_unit(&j->base, &u)) {
        pos_unit *pu = &j->units[u];
        icd_error_clear(&pu->err);
        int rc = a ? 0 : open_adapter(j->c, j->df, POS_COLS, 2, false, &a, NULL, &pu->err);
        if (!rc) rc = read_pos_unit(j, a, u, &pu->err);
        if (rc) {
            pu->rc = rc;
            atomic_store(&j->base.failed, true);
        }
    }
    if (own) ice_adapter_close(a);
}

static void pos_help(ice_load_job *base)
{
    pos_share((pos_job *)base, NULL);
}

/* Joins the units' entries into e in file order and finishes the file. The first error in
 * file order is reported: a unit's, or a boundary's when the unit's first record was
 * accepted on its own but comes before the record it follows (a reading in one pass fails
 * at that record, after its own checks). */
static int join_units(pos_job *j, cache_entry *e, icd_error *err)
{
    ice_rd_posload all;
    ICD_TRY(ice_rd_posload_init(&all, e, j->df, err));
    int64_t last_pos = 0;
    int rc = 0;
    for (size_t u = 0; u < j->base.nunits && !rc; u++) {
        pos_unit *pu = &j->units[u];
        if (pu->e && (pu->any || !pu->rc))
            rc = ice_rd_posload_join(e, last_pos, pu->e, pu->first_pos, pu->first_row, j->df, err);
        if (!rc && pu->rc) {
            rc = pu->rc;
            *err = pu->err;
        }
        if (!rc && !pu->e) rc = icd_fail(err, ICD_EINTERNAL, j->df->path, -1, "unit not read");
        all.records += pu->records;
        all.null_paths += pu->null_paths;
        if (pu->any) last_pos = pu->last_pos;
    }
    if (!rc) rc = ice_rd_posload_finish(&all, err);
    ice_rd_posload_free(&all);
    return rc;
}

static int load_positions(const ice_delete_load_ctx *c, const ice_content_file *df, cache_entry *e,
                          icd_error *err)
{
    ice_adapter *a;
    size_t missing = SIZE_MAX; /* set when a column is missing (not when the file is) */
    int rc = open_adapter(c, df, POS_COLS, 2, true, &a, &missing, err);
    if (rc == ICD_ENOTFOUND && missing != SIZE_MAX)
        return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                        "position delete file lacks the file_path (string) and pos (long) columns");
    if (rc) return rc;
    pos_job j = {.c = c, .df = df};
    job_init(&j.base, ice_adapter_num_units(a), pos_help);
    if (!(j.units = calloc(j.base.nunits ? j.base.nunits : 1, sizeof *j.units))) {
        ice_adapter_close(a);
        return icd_fail_nomem(err);
    }
    bool shared = e->cache && j.base.nunits > 1;
    if (shared) ice_delete_job_share(e, &j.base);
    pos_share(&j, a);
    if (shared) ice_delete_job_close(e); /* every helper is done with its units */
    ice_adapter_close(a);
    rc = join_units(&j, e, err);
    for (size_t u = 0; u < j.base.nunits; u++)
        ice_delete_entry_free(j.units[u].e);
    free(j.units);
    return rc;
}

/* Loading an equality delete file in units (Parquet row groups, ORC stripes): the loader
 * reads them in order, and tasks waiting for the same file claim units too (the cache's
 * ice_load_job), each into its own key set; the sets are merged as each task leaves.
 * The error reported is the one of the first failing unit in file order -- the error a
 * reading in one pass reports -- since units are claimed in order and a failure stops
 * only the claiming of later ones. */
typedef struct eq_job {
    ice_load_job base;
    const ice_delete_load_ctx *c;
    const ice_content_file *df;
    const ice_adapter_col *cols;
    size_t nk;
    size_t expected; /* the key sets' size hint (all must match to merge) */
    cache_entry *e;
    pthread_mutex_t mu; /* guards what follows */
    int64_t records;
    int64_t *nulls; /* per key column */
    int rc;
    size_t err_unit; /* the unit of rc's error */
    icd_error err;
} eq_job;

/* The keys of the batches of `a` (its selected units) into el. */
static int read_keys(ice_adapter *a, ice_rd_eqload *el, icd_error *err)
{
    int rc = 0;
    while (!rc) {
        const ice_vbatch *b;
        if ((rc = ice_adapter_next(a, &b, err)) || !b) break;
        rc = ice_rd_eqload_batch(el, b, err);
    }
    return rc;
}

/* One task's share: claims units until none is left (or one failed), reading them
 * through `a` (the loader's adapter), or through an adapter of its own when `a` is NULL;
 * then hands its keys and counts to the job. */
static void eq_share(eq_job *j, ice_adapter *a)
{
    bool own = !a;
    ice_eq_set *set = NULL;
    ice_rd_eqload el;
    icd_error err;
    icd_error_clear(&err);
    int rc = ice_rd_eqload_init(&el, NULL, j->df, &err);
    size_t unit = 0;
    bool any = false;
    size_t u;
    while (!rc && claim_unit(&j->base, &u)) {
        unit = u;
        any = true;
        if (!a) rc = open_adapter(j->c, j->df, j->cols, j->nk, false, &a, NULL, &err);
        if (!rc && !set) { /* this participant's key set, on its first unit */
            rc = ice_eq_set_new(&set, j->expected, &err);
            el.set = set;
        }
        if (!rc) rc = ice_adapter_select_units(a, u, 1, &err);
        if (!rc) rc = read_keys(a, &el, &err);
        if (rc) atomic_store(&j->base.failed, true);
    }
    pthread_mutex_lock(&j->mu);
    if (!rc && set) {
        rc = ice_eq_set_merge(j->e->keys, set, &err);
        set = NULL;
        unit = 0; /* (out of memory: before any unit's error) */
    }
    if (rc) {
        if (!j->rc || unit < j->err_unit) {
            j->rc = rc;
            j->err = err;
            j->err_unit = unit;
        }
        atomic_store(&j->base.failed, true);
    } else if (any) {
        j->records += el.records;
        for (size_t k = 0; k < j->nk; k++)
            j->nulls[k] += el.nulls[k];
    }
    pthread_mutex_unlock(&j->mu);
    ice_eq_set_free(set);
    ice_rd_eqload_free(&el);
    if (own) ice_adapter_close(a);
}

static void eq_help(ice_load_job *base)
{
    eq_share((eq_job *)base, NULL);
}

static int load_equality(const ice_delete_load_ctx *c, const ice_content_file *df, cache_entry *e,
                         icd_error *err)
{
    size_t nk = df->nequality_ids > 0 ? (size_t)df->nequality_ids : 0;
    if (!nk)
        return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                        "equality delete file without equality_ids");
    ice_adapter_col *cols = calloc(nk, sizeof *cols);
    if (!cols) return icd_fail_nomem(err);
    int rc = 0;
    for (size_t k = 0; k < nk && !rc; k++) {
        int32_t id = df->equality_ids[k];
        const ice_field *f = ice_metadata_field_any(c->md, c->schema, id);
        if (!f)
            rc = icd_fail(err, ICD_ECORRUPT, df->path, -1,
                          "equality field id %d is in no schema of the table", (int)id);
        else if (!ice_type_is_primitive(f->type))
            rc = icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                          "equality field %s (id %d) is a %s, not a primitive", f->name, (int)id,
                          ice_type_kind_name(f->type->kind));
        else
            cols[k] = (ice_adapter_col){id, f->type, f->name, NULL};
    }
    ice_adapter *a = NULL;
    size_t missing = SIZE_MAX; /* set when a column is missing (not when the file is) */
    if (!rc) rc = open_adapter(c, df, cols, nk, true, &a, &missing, err);
    if (rc == ICD_ENOTFOUND && missing != SIZE_MAX)
        rc = icd_fail(err, ICD_ECORRUPT, df->path, -1,
                      "equality delete file lacks a column for field id %d (%s)",
                      (int)cols[missing].field_id, cols[missing].name);
    eq_job j = {.c = c, .df = df, .cols = cols, .nk = nk, .e = e};
    j.expected = (size_t)(df->record_count > 0 ? df->record_count : 16);
    if (!rc) rc = ice_eq_set_new(&e->keys, j.expected, err);
    if (!rc && !(j.nulls = calloc(nk, sizeof *j.nulls))) rc = icd_fail_nomem(err);
    if (!rc) {
        job_init(&j.base, ice_adapter_num_units(a), eq_help);
        pthread_mutex_init(&j.mu, NULL);
        icd_error_clear(&j.err);
        bool shared = e->cache && j.base.nunits > 1;
        if (shared) ice_delete_job_share(e, &j.base);
        eq_share(&j, a);
        if (shared) ice_delete_job_close(e); /* every helper has handed its keys over */
        pthread_mutex_destroy(&j.mu);
        rc = j.rc;
        if (rc) *err = j.err;
        /* rows decoded (the footer's count too) and null counts, of the whole file */
        if (!rc) rc = ice_rd_eqload_check(df, j.records, j.nulls, err);
    }
    free(j.nulls);
    ice_adapter_close(a);
    free(cols);
    return rc;
}

int ice_delete_load(const ice_delete_load_ctx *c, const ice_content_file *df, cache_entry *e,
                    icd_error *err)
{
    if (ice_is_dv(df)) {
        e->kind = C_DV;
        return ice_delete_read_dv(c->io, df, e, err);
    }
    if (df->format != ICE_FORMAT_PARQUET && df->format != ICE_FORMAT_AVRO &&
        df->format != ICE_FORMAT_ORC)
        return icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                        "%s delete files in %s format are not supported yet",
                        df->content == ICE_CONTENT_EQUALITY_DELETES ? "equality" : "position",
                        ice_file_format_name(df->format));
    if (df->content == ICE_CONTENT_POSITION_DELETES) {
        e->kind = C_POS;
        return load_positions(c, df, e, err);
    }
    e->kind = C_EQ;
    return load_equality(c, df, e, err);
}
