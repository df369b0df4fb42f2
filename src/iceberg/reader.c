/*
 * The merge-on-read reader (see reader.h): the scan reader, the task's shared helpers,
 * and the one task loop every data file goes through, whatever its format:
 *
 *   open the file (its row count checked against the manifest entry before any row is
 *   read) -> bind the read schema's fields to its columns -> fetch the task's delete
 *   files from the scan-wide cache (ice_mor_init: position deletes and DVs -> one position
 *   set of this data file; equality deletes -> key sets) -> bind the key columns and open
 *   the format's reader, pruning row groups / stripes by the filter -> for each batch:
 *   the merge-on-read step (reader_mor.c: clear the deleted positions, probe the
 *   surviving rows' canonical keys) and the surviving rows to the sink.
 *
 * The formats supply only binding and decoding into the format-neutral batch
 * (ice_data_ops, ice_vbatch): data_parquet.c, data_orc.c, data_avro.c. The keys and the
 * emission, row by row or as whole batches, are written once, here and in reader_mor.c.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/bigmem.h"
#include "iceberg/deletes/delete_load.h"
#include "iceberg/deletes/dv.h"
#include "iceberg/deletes/posset.h"
#include "iceberg/literal.h"
#include "iceberg/partition.h"
#include "iceberg/reader.h"
#include "iceberg/reader_internal.h"
#include "iceberg/tvalue.h"

/* ======================================================================================
 * The scan-wide delete cache.
 * ==================================================================================== */

/* The Iceberg field of a field id in any of the table's schemas (dropped columns still
 * key old equality deletes). */
const ice_field *ice_rd_schema_field(const ice_scan_reader *r, int32_t id)
{
    return ice_metadata_field_any(r->md, r->schema, id);
}

static int load_entry(void *ctx, const ice_content_file *df, cache_entry *e, icd_error *err)
{
    const ice_scan_reader *r = ctx;
    ice_delete_load_ctx c = {r->io, r->md, r->schema, r->mapping};
    return ice_delete_load(&c, df, e, err);
}

int ice_rd_get_entry(ice_scan_reader *r, const ice_content_file *df, const cache_entry **out,
                     bool *loaded, icd_error *err)
{
    return ice_delete_cache_get(r->deletes, df, load_entry, r, out, loaded, err);
}

/* ======================================================================================
 * Reader setup.
 * ==================================================================================== */

int ice_scan_reader_new(icd_fileio *io, const ice_metadata *md, const ice_schema *schema,
                        const char *const *columns, size_t ncolumns, ice_scan_reader **out,
                        icd_error *err)
{
    *out = NULL;
    ice_scan_reader *r = calloc(1, sizeof *r);
    if (!r) return icd_fail_nomem(err);
    r->io = io;
    r->md = md;
    r->schema = schema;
    atomic_init(&r->canceled, false);
    int rc = ice_delete_cache_new(&r->deletes, err);
    if (rc) goto fail;
    const ice_type *root = &schema->root;
    size_t n = ncolumns ? ncolumns : root->nfields;
    r->fields = calloc(n ? n : 1, sizeof *r->fields);
    if (!r->fields) {
        rc = icd_fail_nomem(err);
        goto fail;
    }
    if (!ncolumns) {
        for (size_t i = 0; i < root->nfields; i++)
            r->fields[r->nfields++] = &root->fields[i];
    } else {
        /* output in schema order, whatever order the names were given in */
        for (size_t i = 0; i < ncolumns; i++) {
            bool found = false;
            for (size_t k = 0; k < root->nfields; k++)
                if (!strcmp(root->fields[k].name, columns[i])) found = true;
            if (!found) {
                rc = icd_fail(err, ICD_ENOTFOUND, NULL, -1,
                              "column '%s' is not in the table schema", columns[i]);
                goto fail;
            }
        }
        for (size_t k = 0; k < root->nfields; k++)
            for (size_t i = 0; i < ncolumns; i++)
                if (!strcmp(root->fields[k].name, columns[i])) {
                    r->fields[r->nfields++] = &root->fields[k];
                    break;
                }
    }
    for (size_t i = 0; i < r->nfields; i++)
        if ((rc = ice_type_check_readable(r->fields[i]->type, r->fields[i]->name, err))) goto fail;
    if (ice_metadata_property(md, "schema.name-mapping.default")) {
        icd_error tmp;
        if (ice_metadata_name_mapping(md, &r->mapping, &tmp)) r->mapping = NULL;
    }
    *out = r;
    return 0;
fail:
    ice_scan_reader_free(r);
    return rc;
}

void ice_scan_reader_free(ice_scan_reader *r)
{
    if (!r) return;
    ice_delete_cache_free(r->deletes);
    free(r->fields);
    free(r);
}

size_t ice_scan_reader_field_count(const ice_scan_reader *r)
{
    return r->nfields;
}
const ice_field *ice_scan_reader_field(const ice_scan_reader *r, size_t i)
{
    return r->fields[i];
}
void ice_scan_reader_cancel(ice_scan_reader *r)
{
    atomic_store(&r->canceled, true);
}
void ice_scan_reader_set_read_budget(ice_scan_reader *r, size_t bytes)
{
    r->read_budget = bytes;
}

void ice_scan_reader_set_filter(ice_scan_reader *r, const ice_bound_expr *filter)
{
    r->filter = filter;
}

void ice_read_stats_add(ice_read_stats *into, const ice_read_stats *from)
{
    into->data_files += from->data_files;
    into->rows_read += from->rows_read;
    into->rows_deleted_position += from->rows_deleted_position;
    into->rows_deleted_dv += from->rows_deleted_dv;
    into->rows_deleted_equality += from->rows_deleted_equality;
    into->rows_emitted += from->rows_emitted;
    into->rows_skipped += from->rows_skipped;
    into->delete_files_loaded += from->delete_files_loaded;
    into->row_groups_read += from->row_groups_read;
    into->row_groups_skipped += from->row_groups_skipped;
    if (from->decode_bytes > into->decode_bytes) into->decode_bytes = from->decode_bytes;
}

/* ======================================================================================
 * One task.
 * ==================================================================================== */

/* The identity-partition value of field id in the data file's partition, if any. */
const ice_literal *ice_rd_partition_value(const ice_scan_reader *r, const ice_content_file *df,
                                          int32_t id)
{
    const ice_partition_spec *spec = ice_metadata_spec(r->md, df->spec_id);
    if (!spec || !df->partition) return NULL;
    for (size_t i = 0; i < spec->nfields && (int32_t)i < df->npartition; i++)
        if (spec->fields[i].source_id == id && spec->fields[i].transform.kind == ICE_TR_IDENTITY)
            return &df->partition[i];
    return NULL;
}

int ice_rd_equality_field(const ice_scan_reader *r, const ice_content_file *df, size_t k,
                          const ice_field **out, icd_error *err)
{
    int32_t id = df->equality_ids[k];
    *out = ice_rd_schema_field(r, id);
    if (!*out)
        return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                        "equality field id %d is in no schema of the table", (int)id);
    return 0;
}

ice_tvalue ice_rd_absent_value(const ice_scan_reader *r, const ice_content_file *data,
                               const ice_field *f)
{
    const ice_literal *l = ice_rd_partition_value(r, data, f->id);
    return ice_literal_tvalue(l ? l : f->initial_default, f->type);
}

int ice_rd_task_positions(ice_scan_reader *r, const ice_scan_task *task, ice_read_stats *stats,
                          const ice_posset **pos, ice_posset **pos_owned, icd_error *err)
{
    const ice_content_file *data = task->data;
    const ice_posset *sets[64];
    size_t nsets = 0;
    for (size_t d = 0; d < task->ndeletes; d++) {
        const ice_content_file *df = task->deletes[d];
        if (df->content != ICE_CONTENT_POSITION_DELETES) continue;
        const cache_entry *e;
        bool loaded = false;
        ICD_TRY(ice_rd_get_entry(r, df, &e, &loaded, err));
        if (loaded) stats->delete_files_loaded++;
        const ice_posset *ps = NULL;
        if (e->kind == C_DV) {
            ps = e->dv;
        } else {
            ps = ice_delete_entry_positions(e, data->path, strlen(data->path));
        }
        if (!ps || ice_posset_is_empty(ps)) continue;
        if (nsets == sizeof sets / sizeof sets[0]) { /* fold into one owned set */
            if (!*pos_owned) ICD_TRY(ice_posset_new(pos_owned, err));
            for (size_t i = 0; i < nsets; i++)
                ICD_TRY(ice_posset_union(*pos_owned, sets[i], err));
            nsets = 0;
        }
        sets[nsets++] = ps;
    }
    if (nsets == 1 && !*pos_owned) {
        *pos = sets[0];
        return 0;
    }
    if (nsets == 0 && !*pos_owned) return 0;
    if (!*pos_owned) ICD_TRY(ice_posset_new(pos_owned, err));
    for (size_t i = 0; i < nsets; i++)
        ICD_TRY(ice_posset_union(*pos_owned, sets[i], err));
    ICD_TRY(ice_posset_freeze(*pos_owned, err));
    *pos = *pos_owned;
    return 0;
}

int ice_rd_batch_begin(ice_rd_task *t, size_t n, icd_error *err)
{
    size_t ncols = t->batch.ncols + t->nkcols;
    if (ncols && n > SIZE_MAX / sizeof(ice_tvalue) / ncols) return icd_fail_nomem(err);
    if (ncols * n > t->cells_cap) { /* (a buffer reused batch after batch: icd_bigbuf) */
        ice_tvalue *nc = icd_bigbuf_realloc(t->cells, ncols * n * sizeof *nc);
        if (!nc) return icd_fail_nomem(err);
        t->cells = nc;
        t->cells_cap = ncols * n;
    }
    for (size_t k = 0; k < ncols; k++) {
        ice_vcol *c = ice_rd_col(t, k);
        if (c->kind != ICE_VCOL_VALUES) continue;
        c->v = t->cells + k * n;
        c->out_of_range = false;
    }
    return 0;
}

/* The batch's columns, one per field of the reader, with their field (before bind). */
static int alloc_columns(ice_rd_task *t, icd_error *err)
{
    ice_scan_reader *r = t->r;
    t->batch.cols = calloc(r->nfields ? r->nfields : 1, sizeof *t->batch.cols);
    if (!t->batch.cols) return icd_fail_nomem(err);
    t->batch.ncols = r->nfields;
    for (size_t k = 0; k < r->nfields; k++) {
        t->batch.cols[k].field = r->fields[k];
        t->batch.cols[k].name_len = strlen(r->fields[k]->name);
    }
    return 0;
}

/* The key columns of every equality delete file of the task, with their field (before
 * prepare): keys[e] is the first of mor.eq[e], in equality_ids order. */
static int alloc_keys(ice_rd_task *t, icd_error *err)
{
    size_t nk = 0;
    for (size_t e = 0; e < t->mor.neq; e++)
        nk += (size_t)t->mor.eq[e].df->nequality_ids;
    t->kcols = calloc(nk ? nk : 1, sizeof *t->kcols);
    t->batch.keys = calloc(t->mor.neq ? t->mor.neq : 1, sizeof *t->batch.keys);
    if (!t->kcols || !t->batch.keys) return icd_fail_nomem(err);
    t->nkcols = nk;
    ice_vcol *kc = t->kcols;
    for (size_t e = 0; e < t->mor.neq; e++) {
        const ice_content_file *df = t->mor.eq[e].df;
        t->batch.keys[e] = kc;
        for (size_t k = 0; k < (size_t)df->nequality_ids; k++, kc++) {
            const ice_field *f;
            ICD_TRY(ice_rd_equality_field(t->r, df, k, &f, err));
            kc->field = f;
            kc->name_len = strlen(f->name);
        }
    }
    return 0;
}

/* The surviving rows of the batch, row by row through the sink's typed callbacks. */
static int emit_rows(ice_rd_task *t, const uint8_t *sel, icd_error *err)
{
    ice_vbatch *b = &t->batch;
    const ice_row_sink *s = t->sink;
    const char *path = t->task->data->path;
    for (size_t i = 0; i < b->nrows; i++) {
        if (!sel[i]) continue;
        s->begin_row(s->ctx, path, b->first_row + (int64_t)i);
        for (size_t k = 0; k < b->ncols; k++) {
            ice_vcol *c = &b->cols[k];
            s->field(s->ctx, c->field->name, c->name_len);
            switch (c->kind) {
            case ICE_VCOL_VALUES:
                if (c->out_of_range && ice_tv_is_out_of_range(&c->v[i]))
                    return c->range_error(t, c, i, err); /* (the row is not ended) */
                ice_emit_tvalue(s, &c->v[i], c->field->type);
                break;
            case ICE_VCOL_CONST:
                if (ice_type_is_primitive(c->field->type))
                    ice_emit_tvalue(s, &c->constant, c->field->type);
                else
                    ice_emit_literal(s, c->lit, c->field->type);
                break;
            case ICE_VCOL_NESTED:
                ICD_TRY(c->nested_row(t, c, i, err));
                break;
            }
        }
        ICD_TRY(ice_rd_end_row(t, err));
    }
    return 0;
}

/* Can the sink take this file's batches whole: no column needs walking? */
static bool whole_batches(const ice_rd_task *t)
{
    if (!t->sink->columns || !t->batch.ncols) return false; /* (no columns: rows one by one) */
    for (size_t k = 0; k < t->batch.ncols; k++) {
        const ice_vcol *c = &t->batch.cols[k];
        if (c->kind == ICE_VCOL_NESTED) return false;
        if (c->kind == ICE_VCOL_CONST && !ice_type_is_primitive(c->field->type)) return false;
    }
    return true;
}

/* The surviving rows of the batch to a sink that takes whole batches: the kept rows'
 * indexes and positions, every column's values as they are; out-of-range values of kept
 * rows fail as they do row by row. */
static int emit_columns(ice_rd_task *t, const uint8_t *sel, icd_error *err)
{
    ice_vbatch *b = &t->batch;
    size_t n = b->nrows, m = 0;
    for (size_t i = 0; i < n; i++)
        m += sel[i] != 0;
    if (!m) return 0;
    if (ICD_ARRAY_RESERVE(t->rows, t->rows_cap, m, 1024) ||
        ICD_ARRAY_RESERVE(t->pos, t->pos_cap, m, 1024))
        return icd_fail_nomem(err);
    for (size_t i = 0, j = 0; i < n; i++)
        if (sel[i]) {
            t->rows[j] = (uint32_t)i;
            t->pos[j++] = b->first_row + (int64_t)i;
        }
    for (size_t k = 0; k < b->ncols; k++) {
        const ice_vcol *c = &b->cols[k];
        ice_sink_column *sc = &t->scols[k];
        sc->field = c->field;
        sc->values = c->kind == ICE_VCOL_VALUES ? c->v : NULL;
        sc->constant = c->kind == ICE_VCOL_CONST ? &c->constant : NULL;
        if (!c->out_of_range) continue;
        for (size_t j = 0; j < m; j++)
            if (ice_tv_is_out_of_range(&c->v[t->rows[j]]))
                return c->range_error(t, c, t->rows[j], err);
    }
    ICD_TRY(t->sink->columns(t->sink->ctx, t->scols, b->ncols, m, t->rows, t->pos, err));
    t->stats->rows_emitted += m;
    return 0;
}

/* The one task loop of every format (reader_internal.h). */
static int read_loop(ice_rd_task *t, const ice_data_ops *ops, uint8_t **sel, size_t *selcap,
                     icd_error *err)
{
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    int64_t num_rows = -1;
    ICD_TRY(ops->open(t, &num_rows, err));
    if (num_rows >= 0) ICD_TRY(ice_rd_check_rows(df, num_rows, err));
    ICD_TRY(alloc_columns(t, err));
    ICD_TRY(ops->bind(t, err));
    ICD_TRY(ice_mor_init(&t->mor, r, t->task, t->stats, err));
    ICD_TRY(alloc_keys(t, err));
    ICD_TRY(ops->prepare(t, err));
    bool whole = whole_batches(t);
    if (whole && !(t->scols = calloc(t->batch.ncols ? t->batch.ncols : 1, sizeof *t->scols)))
        return icd_fail_nomem(err);
    ice_vbatch *b = &t->batch;
    uint64_t rows = 0;
    for (;;) {
        if (atomic_load(&r->canceled))
            return icd_fail(err, ICD_ECANCELED, df->path, -1, "scan canceled");
        int rc = ops->next(t, err);
        if (rc < 0) return rc;
        if (rc == 0) break;
        size_t n = b->nrows;
        if (n > *selcap) {
            uint8_t *ns = realloc(*sel, n);
            if (!ns) return icd_fail_nomem(err);
            *sel = ns;
            *selcap = n;
        }
        ICD_TRY(ice_mor_apply(t, *sel, err));
        ICD_TRY(whole ? emit_columns(t, *sel, err) : emit_rows(t, *sel, err));
        for (size_t k = 0; k < b->ncols; k++)
            if (b->cols[k].kind == ICE_VCOL_NESTED && b->cols[k].nested_done)
                ICD_TRY(b->cols[k].nested_done(t, &b->cols[k], err));
        rows += n;
    }
    /* a format that tells its row count only by reading every row */
    if (num_rows < 0) ICD_TRY(ice_rd_check_rows(df, (int64_t)rows, err));
    return 0;
}

static int read_data_file(ice_rd_task *t, const ice_data_ops *ops, icd_error *err)
{
    uint8_t *sel = NULL;
    size_t selcap = 0;
    int rc = read_loop(t, ops, &sel, &selcap, err);
    ops->close(t);
    free(sel);
    icd_bigbuf_free(t->cells);
    free(t->batch.cols);
    free(t->batch.keys);
    free(t->kcols);
    free(t->scols);
    free(t->rows);
    free(t->pos);
    return rc;
}

int ice_scan_reader_read_task(ice_scan_reader *r, const ice_scan_task *task,
                              const ice_row_sink *sink, ice_read_stats *stats, icd_error *err)
{
    return ice_scan_reader_read_task_part(r, task, 0, 1, sink, stats, err);
}

int ice_scan_reader_read_task_part(ice_scan_reader *r, const ice_scan_task *task, unsigned part,
                                   unsigned nparts, const ice_row_sink *sink, ice_read_stats *stats,
                                   icd_error *err)
{
    if (nparts > 1 && task->data->format == ICE_FORMAT_AVRO) {
        if (part > 0) return 0; /* (not split: part 0 reads the whole file) */
        nparts = 1;
    }
    if (nparts > 1 && part >= nparts)
        return icd_fail(err, ICD_EINVALID, task->data->path, -1, "part %u of %u", part, nparts);
    ice_rd_task t;
    memset(&t, 0, sizeof t);
    t.r = r;
    t.task = task;
    t.sink = sink;
    t.stats = stats;
    t.part = nparts > 1 ? part : 0;
    t.nparts = nparts > 1 ? nparts : 1;
    /* Rows removed by position are attributed to deletion vectors when every position
     * delete of the task is a DV (v3: a DV replaces the position delete files of its data
     * file); a task that mixes both counts them as position deletes. */
    uint64_t pos_before = stats->rows_deleted_position;
    bool dv = false, pos_file = false;
    for (size_t d = 0; d < task->ndeletes; d++) {
        if (task->deletes[d]->content != ICE_CONTENT_POSITION_DELETES) continue;
        if (ice_is_dv(task->deletes[d]))
            dv = true;
        else
            pos_file = true;
    }
    if (sink->begin_file) sink->begin_file(sink->ctx, task->data->path, task->data->format);
    int rc;
    switch (task->data->format) {
    case ICE_FORMAT_PARQUET:
        rc = read_data_file(&t, &ice_data_parquet, err);
        break;
    case ICE_FORMAT_AVRO:
        rc = read_data_file(&t, &ice_data_avro, err);
        break;
    case ICE_FORMAT_ORC:
        rc = read_data_file(&t, &ice_data_orc, err);
        break;
    default:
        rc = icd_fail(err, ICD_EUNSUPPORTED, task->data->path, -1, "data file format is unknown");
    }
    if (dv && !pos_file) stats->rows_deleted_dv += stats->rows_deleted_position - pos_before;
    if (!rc) {
        if (t.part == 0) stats->data_files++;
    } else {
        /* a file that is not there, or that disagrees with its manifest entry (counts,
         * bounds, equality ids): name the manifest that lists it, which may be the damaged one */
        const ice_content_file *cf = !strcmp(err->file, task->data->path) ? task->data : NULL;
        for (size_t d = 0; !cf && d < task->ndeletes; d++)
            if (!strcmp(err->file, task->deletes[d]->path)) cf = task->deletes[d];
        if (!cf) cf = task->data;
        bool about_entry = err->code == ICD_ENOTFOUND || strstr(err->message, "manifest entry") ||
                           strstr(err->message, "equality field id") ||
                           strstr(err->message, "the value of field");
        if (about_entry && cf->manifest_path && !strstr(err->message, cf->manifest_path))
            icd_error_append(err, " (listed in manifest %s)", cf->manifest_path);
        icd_error_set_file(err, task->data->path);
    }
    ice_mor_free(&t.mor);
    return rc;
}
