/*
 * The merge-on-read reader (see reader.h). One task is read as:
 *
 *   1. map every output field to a source in the data file (a Parquet leaf, a nested
 *      Parquet group, or a constant: identity partition value / initial-default / null);
 *   2. fetch the task's delete files from the scan-wide cache (loading each once):
 *      position deletes and DVs -> one position set for this data file, equality deletes
 *      -> hash sets of canonical key tuples;
 *   3. for each batch (Parquet: a batch of a row group; Avro: up to 1,024 records of one
 *      container block): the merge-on-read step (reader_mor.c) clears deleted positions
 *      and probes the surviving rows' key tuples; the rows still selected go to the sink.
 *   With a filter, row groups whose statistics exclude it are not read.
 *
 * Values are converted once, by ice_typed_value(), from the file's physical type to the
 * column's Iceberg type. The same conversion feeds both the sink and the equality keys, so
 * a key written as INT64 in a delete file matches an INT32 value in an older data file.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/hash.h"
#include "base/jsonw.h"
#include "formats/avro/container.h"
#include "formats/parquet/parquet.h"
#include "iceberg/adapter.h"
#include "iceberg/deletes/delete_load.h"
#include "iceberg/deletes/eq_key.h"
#include "iceberg/deletes/dv.h"
#include "iceberg/nested.h"
#include "iceberg/literal.h"
#include "iceberg/partition.h"
#include "iceberg/deletes/posset.h"
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

/* An equality key column of the data file: a leaf of the batch, or a constant. */
typedef struct key_col {
    const ice_type *type;
    const pq_node *leaf;
    int batch_col;       /* column in the batch, or -1 for a constant */
    ice_tvalue constant; /* the column's value when the file lacks it */
    int32_t *vidx;       /* per-row value index of the current batch */
    const char *name;    /* the field's name, for range errors */
} key_col;

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

typedef enum src_kind { SRC_LEAF, SRC_NESTED, SRC_CONST } src_kind;

typedef struct out_col {
    const ice_field *field;
    size_t name_len;
    src_kind kind;
    const pq_node *node;
    int batch_col;          /* SRC_LEAF: column in the batch */
    ice_tvalue constant;    /* SRC_CONST */
    const ice_literal *lit; /* SRC_CONST with a nested default */
    ice_nested *nested;     /* SRC_NESTED: struct, list, map or variant */
    int32_t *vidx;
} out_col;

typedef struct eq_probe { /* the key columns of equality delete file mor.eq[e] */
    key_col *cols;
    size_t ncols;
} eq_probe;

typedef struct task_state {
    ice_scan_reader *r;
    const ice_scan_task *task;
    const ice_row_sink *sink;
    ice_read_stats *stats;
    out_col *cols;
    size_t ncols;
    ice_mor mor;  /* the task's deletes */
    eq_probe *eq; /* parallel to mor.eq */
    size_t neq;
    const pq_batch *cur;         /* the batch being filtered (key callback) */
    const icd_avro_value *arecs; /* Avro: the records of the batch being filtered */
    int64_t avro_first;          /* Avro: the file position of arecs[0] */
    int *leaves;                 /* sorted, distinct leaves to read */
    size_t nleaves;
    uint8_t *sel;
    int32_t *vbuf;
    size_t vcap;
    ice_sink_column *scols; /* the sink takes whole batches (ice_row_sink.columns) */
    /* a key value outside its type's range, met by a key callback (which cannot fail):
     * reported after ice_mor_apply */
    int key_rc;
    icd_error key_err;
} task_state;

/* After ice_mor_apply: the first out-of-range key value, if any. */
static int key_failure(task_state *t, icd_error *err)
{
    if (!t->key_rc) return 0;
    *err = t->key_err;
    return t->key_rc;
}

static int add_leaf(task_state *t, int leaf, icd_error *err)
{
    for (size_t i = 0; i < t->nleaves; i++)
        if (t->leaves[i] == leaf) return 0;
    int *nl = realloc(t->leaves, (t->nleaves + 1) * sizeof *nl);
    if (!nl) return icd_fail_nomem(err);
    t->leaves = nl;
    t->leaves[t->nleaves++] = leaf;
    return 0;
}

static int batch_col_of(const task_state *t, int leaf)
{
    for (size_t i = 0; i < t->nleaves; i++)
        if (t->leaves[i] == leaf) return (int)i;
    return -1;
}

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

static int map_columns(task_state *t, const pq_schema *s, icd_error *err)
{
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    bool has_ids = ice_pq_schema_has_ids(s);
    t->ncols = r->nfields;
    t->cols = calloc(t->ncols ? t->ncols : 1, sizeof *t->cols);
    if (!t->cols) return icd_fail_nomem(err);
    for (size_t i = 0; i < r->nfields; i++) {
        out_col *c = &t->cols[i];
        const ice_field *f = r->fields[i];
        c->field = f;
        c->name_len = strlen(f->name);
        const pq_node *n = ice_pq_find_node(s, has_ids, r->mapping, f->id);
        if (n && (!has_ids || n->parent == s->root)) {
            c->node = n;
            bool assembled = !ice_type_is_primitive(f->type) || f->type->kind == ICE_T_VARIANT;
            if (n->leaf_index >= 0 && !assembled) {
                if (!ice_leaf_readable_as(n, f->type))
                    return icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                                    "column %s: Parquet %s column '%s' cannot be read as %s",
                                    f->name, pq_type_name(n->physical_type), n->dotted,
                                    ice_type_kind_name(f->type->kind));
                c->kind = SRC_LEAF;
                ICD_TRY(add_leaf(t, n->leaf_index, err));
            } else if (n->leaf_index < 0 && assembled) {
                c->kind = SRC_NESTED;
                ICD_TRY(ice_nested_new(f, s, n, has_ids, r->mapping, df->path, &c->nested, err));
                for (size_t k = 0; k < ice_nested_leaf_count(c->nested); k++)
                    ICD_TRY(add_leaf(t, ice_nested_leaf(c->nested, k), err));
            } else {
                return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                                "column %s (field id %d) is %s in the table but %s in the file",
                                f->name, (int)f->id, ice_type_kind_name(f->type->kind),
                                n->leaf_index >= 0 ? "a primitive" : "a group");
            }
            continue;
        }
        /* Not in the file: identity partition value, initial-default, or null. */
        c->kind = SRC_CONST;
        const ice_literal *l = ice_rd_partition_value(r, df, f->id);
        if (!l) l = f->initial_default;
        c->lit = l;
        if (ice_type_is_primitive(f->type)) c->constant = ice_literal_tvalue(l, f->type);
    }
    return 0;
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

static int setup_equality(task_state *t, const pq_schema *s, icd_error *err)
{
    const ice_scan_task *task = t->task;
    bool has_ids = ice_pq_schema_has_ids(s);
    t->eq = calloc(t->mor.neq ? t->mor.neq : 1, sizeof *t->eq);
    if (!t->eq) return icd_fail_nomem(err);
    for (size_t d = 0; d < t->mor.neq; d++) {
        const ice_content_file *df = t->mor.eq[d].df;
        eq_probe *p = &t->eq[t->neq++];
        p->ncols = (size_t)df->nequality_ids;
        p->cols = calloc(p->ncols, sizeof *p->cols);
        if (!p->cols) return icd_fail_nomem(err);
        for (size_t k = 0; k < p->ncols; k++) {
            const ice_field *f;
            ICD_TRY(ice_rd_equality_field(t->r, df, k, &f, err));
            key_col *kc = &p->cols[k];
            kc->type = f->type;
            kc->name = f->name;
            const pq_node *n = ice_pq_find_node(s, has_ids, t->r->mapping, f->id);
            if (!n) { /* the data file predates the column */
                kc->constant = ice_rd_absent_value(t->r, task->data, f);
                kc->batch_col = -1;
                continue;
            }
            if (n->leaf_index < 0 || n->rep_level > 0 || !ice_leaf_readable_as(n, f->type))
                return icd_fail(err, ICD_EUNSUPPORTED, task->data->path, -1,
                                "equality key column %s cannot be read from this file", f->name);
            kc->leaf = n;
            kc->batch_col = n->leaf_index; /* a leaf for now; mapped after sorting */
            ICD_TRY(add_leaf(t, n->leaf_index, err));
        }
    }
    return 0;
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

/* Appends the key of row `row` of the current batch for equality delete file e. */
static void pq_key(void *ctx, size_t e, size_t row, icd_buf *k)
{
    task_state *t = ctx;
    const eq_probe *p = &t->eq[e];
    for (size_t c = 0; c < p->ncols; c++) {
        const key_col *kc = &p->cols[c];
        if (kc->batch_col < 0) {
            ice_key_put(k, &kc->constant);
            continue;
        }
        int32_t vi = kc->vidx[row];
        ice_tvalue v = {0};
        if (vi >= 0 && !t->key_rc)
            t->key_rc = ice_typed_value_checked(kc->type, kc->leaf, &t->cur->columns[kc->batch_col],
                                                (size_t)vi, t->task->data->path, kc->name,
                                                t->cur->first_row + (int64_t)row, &v, &t->key_err);
        ice_key_put(k, &v);
    }
}

/* The surviving rows of batch b (t->sel) to a sink that takes whole batches: each leaf
 * column's value indexes are compacted to the kept rows in place, its values
 * range-checked as the row-by-row path checks them. */
static int emit_columns(task_state *t, const pq_batch *b, icd_error *err)
{
    size_t n = b->num_rows, m = 0;
    const uint8_t *sel = t->sel;
    for (size_t i = 0; i < n; i++)
        m += sel[i] != 0;
    if (!m) return 0;
    for (size_t k = 0; k < t->ncols; k++) {
        out_col *c = &t->cols[k];
        ice_sink_column *sc = &t->scols[k];
        sc->field = c->field;
        if (c->kind != SRC_LEAF) {
            sc->constant = &c->constant;
            continue;
        }
        const pq_column_batch *cb = &b->columns[c->batch_col];
        sc->node = c->node;
        sc->values = cb;
        sc->vidx = c->vidx;
        if (m < n)
            for (size_t i = 0, j = 0; i < n; i++)
                if (sel[i]) c->vidx[j++] = c->vidx[i];
        if (!ice_type_kind_is_timestamp(c->field->type->kind)) continue;
        for (size_t j = 0; j < m; j++) {
            int32_t vi = c->vidx[j];
            if (vi < 0 || ice_typed_value_in_range(c->field->type, c->node, cb, (size_t)vi))
                continue;
            size_t i = 0; /* the batch row of kept row j, for the message */
            for (size_t left = j + 1;; i++)
                if (sel[i] && !--left) break;
            return ice_time_range_error(err, t->task->data->path, c->field->name,
                                        b->first_row + (int64_t)i, c->field->type, c->node, cb,
                                        (size_t)vi);
        }
    }
    ICD_TRY(t->sink->columns(t->sink->ctx, t->scols, t->ncols, m, err));
    t->stats->rows_emitted += m;
    return 0;
}

static int process_batch(task_state *t, const pq_batch *b, icd_error *err)
{
    const ice_row_sink *s = t->sink;
    size_t n = b->num_rows;
    uint8_t *sel = t->sel;

    /* per-row value indexes of every leaf column used */
    size_t need = n * (t->ncols + 1);
    for (size_t e = 0; e < t->neq; e++)
        need += n * t->eq[e].ncols;
    if (need > t->vcap) {
        int32_t *nv = realloc(t->vbuf, need * sizeof *nv);
        if (!nv) return icd_fail_nomem(err);
        t->vbuf = nv;
        t->vcap = need;
    }
    int32_t *vb = t->vbuf;
    for (size_t i = 0; i < t->ncols; i++) {
        out_col *c = &t->cols[i];
        if (c->kind != SRC_LEAF) continue;
        c->vidx = vb;
        vb += n;
        if (ice_pq_fill_vidx(&b->columns[c->batch_col], n, c->vidx))
            return icd_fail(err, ICD_ECORRUPT, t->task->data->path, -1,
                            "column %s: levels do not match the row count", c->field->name);
    }
    for (size_t e = 0; e < t->neq; e++) {
        eq_probe *p = &t->eq[e];
        for (size_t k = 0; k < p->ncols; k++) {
            if (p->cols[k].batch_col < 0) continue;
            p->cols[k].vidx = vb;
            vb += n;
            if (ice_pq_fill_vidx(&b->columns[p->cols[k].batch_col], n, p->cols[k].vidx))
                return icd_fail(err, ICD_ECORRUPT, t->task->data->path, -1,
                                "equality key column: levels do not match the row count");
        }
    }
    /* position deletes, DVs, equality deletes */
    t->cur = b;
    ICD_TRY(ice_mor_apply(&t->mor, (uint64_t)b->first_row, n, sel, pq_key, t, t->stats, err));
    ICD_TRY(key_failure(t, err));
    if (t->scols) return emit_columns(t, b, err);
    /* nested columns walk every row, kept or not */
    for (size_t i = 0; i < t->ncols; i++)
        if (t->cols[i].kind == SRC_NESTED) ice_nested_begin(t->cols[i].nested, b);
    const char *path = t->task->data->path;
    for (size_t i = 0; i < n; i++) {
        if (!sel[i]) {
            for (size_t k = 0; k < t->ncols; k++)
                if (t->cols[k].kind == SRC_NESTED)
                    ICD_TRY(ice_nested_skip_row(t->cols[k].nested, err));
            continue;
        }
        s->begin_row(s->ctx, path, b->first_row + (int64_t)i);
        for (size_t k = 0; k < t->ncols; k++) {
            out_col *c = &t->cols[k];
            s->field(s->ctx, c->field->name, c->name_len);
            switch (c->kind) {
            case SRC_LEAF: {
                int32_t vi = c->vidx[i];
                if (vi < 0) {
                    s->null_value(s->ctx);
                } else {
                    if (!ice_typed_value_in_range(c->field->type, c->node,
                                                  &b->columns[c->batch_col], (size_t)vi))
                        return ice_time_range_error(err, path, c->field->name,
                                                    b->first_row + (int64_t)i, c->field->type,
                                                    c->node, &b->columns[c->batch_col], (size_t)vi);
                    ice_tvalue v = ice_typed_value(c->field->type, c->node,
                                                   &b->columns[c->batch_col], (size_t)vi);
                    ice_emit_tvalue(s, &v, c->field->type);
                }
                break;
            }
            case SRC_NESTED:
                ICD_TRY(ice_nested_row(c->nested, s, err));
                break;
            case SRC_CONST:
                if (ice_type_is_primitive(c->field->type))
                    ice_emit_tvalue(s, &c->constant, c->field->type);
                else
                    ice_emit_literal(s, c->lit, c->field->type);
                break;
            }
        }
        int rc = s->end_row(s->ctx, err);
        if (rc < 0) return rc;
        if (rc > 0)
            t->stats->rows_skipped++;
        else
            t->stats->rows_emitted++;
    }
    for (size_t k = 0; k < t->ncols; k++)
        if (t->cols[k].kind == SRC_NESTED) ICD_TRY(ice_nested_end(t->cols[k].nested, err));
    return 0;
}

static void task_state_free(task_state *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        ice_nested_free(t->cols[i].nested);
    free(t->cols);
    for (size_t e = 0; e < t->neq; e++)
        free(t->eq[e].cols);
    free(t->eq);
    ice_mor_free(&t->mor);
    free(t->leaves);
    free(t->sel);
    free(t->vbuf);
    free(t->scols);
}

/* ---- Parquet row-group pruning --------------------------------------------------------- */

typedef struct rg_prune {
    const ice_scan_reader *r;
    pq_file *pf;
    const pq_schema *s;
    bool has_ids;
    uint32_t rg;
} rg_prune;

/* A statistics value of a leaf as a literal of type t, through the reader's own value
 * conversion (units, promotions); false when not representable. */
static bool stat_literal(const pq_node *leaf, const ice_type *t, const pq_stat_value *sv,
                         ice_literal *out)
{
    pq_column_batch cb;
    memset(&cb, 0, sizeof cb);
    cb.leaf = leaf;
    cb.physical_type = leaf->physical_type;
    cb.num_levels = cb.num_values = 1;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    pq_bytes b;
    switch (leaf->physical_type) {
    case PQ_INT32:
        if (sv->kind != PQ_STAT_INT || sv->i < INT32_MIN || sv->i > INT32_MAX) return false;
        i32 = (int32_t)sv->i;
        cb.values = &i32;
        break;
    case PQ_INT64:
        if (sv->kind != PQ_STAT_INT) return false;
        i64 = sv->i;
        cb.values = &i64;
        break;
    case PQ_FLOAT:
        if (sv->kind != PQ_STAT_DOUBLE) return false;
        f32 = (float)sv->d;
        cb.values = &f32;
        break;
    case PQ_DOUBLE:
        if (sv->kind != PQ_STAT_DOUBLE) return false;
        f64 = sv->d;
        cb.values = &f64;
        break;
    case PQ_BYTE_ARRAY:
        if (sv->kind != PQ_STAT_BYTES) return false;
        b = sv->bytes;
        cb.values = &b;
        break;
    default:
        return false;
    }
    if (!ice_typed_value_in_range(t, leaf, &cb, 0)) return false;
    ice_tvalue v = ice_typed_value(t, leaf, &cb, 0);
    switch (t->kind) {
    case ICE_T_INT:
        if (v.cls != ICE_TV_INT) return false;
        *out = ice_lit_int((int32_t)v.i);
        return true;
    case ICE_T_LONG:
        if (v.cls != ICE_TV_INT) return false;
        *out = ice_lit_long(v.i);
        return true;
    case ICE_T_DATE:
        if (v.cls != ICE_TV_DATE) return false;
        *out = ice_lit_date((int32_t)v.i);
        return true;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        if (v.cls != ICE_TV_TS) return false;
        *out = ice_lit_i64(t->kind, v.i);
        return true;
    case ICE_T_FLOAT:
        if (v.cls != ICE_TV_FLOAT || isnan(v.f)) return false;
        *out = ice_lit_float(v.f);
        return true;
    case ICE_T_DOUBLE:
        if (v.cls != ICE_TV_DOUBLE || isnan(v.d)) return false;
        *out = ice_lit_double(v.d);
        return true;
    case ICE_T_STRING:
        if (v.cls != ICE_TV_STRING) return false;
        *out = ice_lit_string((const char *)v.p, v.n);
        return true;
    default:
        return false;
    }
}

/* The statistics of one predicate's column in the row group being decided: top-level,
 * unrepeated primitive leaves only (a member of a null struct is null without being
 * counted in the member's statistics). */
static bool rg_range(void *ctx, const ice_bound_expr *p, ice_range_stats *out)
{
    const rg_prune *pc = ctx;
    const pq_node *n = ice_pq_find_node(pc->s, pc->has_ids, pc->r->mapping, p->field_id);
    if (!n || n->parent != pc->s->root || n->leaf_index < 0 || n->rep_level > 0 ||
        !ice_type_is_primitive(p->type) || !ice_leaf_readable_as(n, p->type))
        return false;
    pq_column_stats st;
    icd_error tmp;
    if (pq_file_column_stats(pc->pf, pc->rg, (uint32_t)n->leaf_index, &st, &tmp)) return false;
    if (st.has_null_count) {
        out->no_null = st.null_count == 0;
        out->all_null = st.num_values > 0 && st.null_count == st.num_values;
    }
    out->has_lo = st.has_min && stat_literal(n, p->type, &st.min, &out->lo);
    out->has_hi = st.has_max && stat_literal(n, p->type, &st.max, &out->hi);
    return true;
}

/* Skips the row groups whose statistics exclude the reader's filter. */
static int prune_row_groups(task_state *t, pq_file *pf, pq_reader *rd, icd_error *err)
{
    uint32_t n = pq_file_num_row_groups(pf);
    if (!t->r->filter || n == 0) {
        t->stats->row_groups_read += n;
        return 0;
    }
    uint8_t *keep = malloc(n);
    if (!keep) return icd_fail_nomem(err);
    rg_prune pc = {t->r, pf, pq_file_schema(pf), ice_pq_schema_has_ids(pq_file_schema(pf)), 0};
    for (uint32_t g = 0; g < n; g++) {
        pc.rg = g;
        keep[g] = pq_file_row_group(pf, g)->num_rows > 0 &&
                  ice_range_may_match(t->r->filter, rg_range, &pc);
        if (keep[g])
            t->stats->row_groups_read++;
        else
            t->stats->row_groups_skipped++;
    }
    int rc = pq_reader_select_row_groups(rd, keep, n, err);
    free(keep);
    return rc;
}

static int read_parquet_task(task_state *t, icd_error *err)
{
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    pq_file *pf = NULL;
    pq_reader *rd = NULL;
    icd_file *f;
    ICD_TRY(ice_rd_open_entry(r, df, &f, err));
    ICD_TRY(pq_file_open_file(f, &pf, err));
    int rc = ice_rd_check_entry(df, 0, pq_file_num_rows(pf), err);
    const pq_schema *s = pq_file_schema(pf);
    if (rc || (rc = map_columns(t, s, err)) ||
        (rc = ice_mor_init(&t->mor, r, t->task, t->stats, err)) || (rc = setup_equality(t, s, err)))
        goto done;
    icd_sort_ints(t->leaves, t->nleaves);
    for (size_t i = 0; i < t->ncols; i++) {
        out_col *c = &t->cols[i];
        if (c->kind == SRC_LEAF)
            c->batch_col = batch_col_of(t, c->node->leaf_index);
        else if (c->kind == SRC_NESTED)
            for (size_t k = 0; k < ice_nested_leaf_count(c->nested); k++)
                ice_nested_set_batch_column(c->nested, k,
                                            batch_col_of(t, ice_nested_leaf(c->nested, k)));
    }
    for (size_t e = 0; e < t->neq; e++)
        for (size_t k = 0; k < t->eq[e].ncols; k++)
            if (t->eq[e].cols[k].batch_col >= 0)
                t->eq[e].cols[k].batch_col = batch_col_of(t, t->eq[e].cols[k].batch_col);
    /* whole batches to a sink that takes them, when no column needs assembling */
    bool columnar = t->sink->columns != NULL;
    for (size_t i = 0; i < t->ncols && columnar; i++)
        columnar = t->cols[i].kind == SRC_LEAF ||
                   (t->cols[i].kind == SRC_CONST && ice_type_is_primitive(t->cols[i].field->type));
    if (columnar && t->ncols && !(t->scols = calloc(t->ncols, sizeof *t->scols))) {
        rc = icd_fail_nomem(err);
        goto done;
    }
    /* A file with no projected column still has rows: read its smallest column to count
     * them (or, with no columns at all, emit empty rows from the footer's count). */
    if (t->nleaves == 0 && s->num_leaves > 0 && (rc = add_leaf(t, 0, err))) goto done;
    if (t->nleaves == 0) {
        rc = icd_fail(err, ICD_EUNSUPPORTED, df->path, -1, "Parquet file without columns");
        goto done;
    }
    if ((rc = pq_reader_open(pf, t->leaves, t->nleaves, 0, &rd, err)) ||
        (rc = prune_row_groups(t, pf, rd, err)))
        goto done;
    pq_reader_set_read_budget(rd, r->read_budget);
    t->sel = malloc(PQ_DEFAULT_BATCH_ROWS);
    if (!t->sel) {
        rc = icd_fail_nomem(err);
        goto done;
    }
    for (;;) {
        if (atomic_load(&r->canceled)) {
            rc = icd_fail(err, ICD_ECANCELED, df->path, -1, "scan canceled");
            break;
        }
        pq_batch *b;
        if ((rc = pq_reader_next(rd, &b, err)) || !b) break;
        t->stats->decode_bytes = pq_reader_memory_bytes(rd);
        if (b->num_rows > PQ_DEFAULT_BATCH_ROWS) {
            rc = icd_fail(err, ICD_EINTERNAL, df->path, -1, "batch larger than requested");
            break;
        }
        if ((rc = process_batch(t, b, err))) break;
    }
done:
    pq_reader_close(rd);
    pq_file_close(pf);
    return rc;
}

/* ---- Avro data files ------------------------------------------------------------------ */

static void emit_avro(const ice_row_sink *s, const icd_avro_value *v, const ice_type *t);

static void emit_avro(const ice_row_sink *s, const icd_avro_value *v, const ice_type *t)
{
    if (icd_avro_value_is_null(v)) {
        s->null_value(s->ctx);
        return;
    }
    if (ice_type_is_primitive(t)) {
        ice_tvalue tv = ice_avro_tvalue(v, t);
        ice_emit_tvalue(s, &tv, t);
        return;
    }
    if (t->kind == ICE_T_STRUCT) {
        s->struct_begin(s->ctx);
        for (size_t i = 0; i < t->nfields; i++) {
            const ice_field *f = &t->fields[i];
            s->field(s->ctx, f->name, strlen(f->name));
            const icd_avro_value *fv =
                v->type == AVRO_RECORD ? icd_avro_value_field_by_id(v, f->id) : NULL;
            if (fv)
                emit_avro(s, fv, f->type);
            else
                ice_emit_literal(s, f->initial_default, f->type);
        }
        s->struct_end(s->ctx);
    } else if (t->kind == ICE_T_LIST) {
        s->list_begin(s->ctx);
        for (size_t i = 0; v->type == AVRO_ARRAY && i < v->u.list.count; i++)
            emit_avro(s, &v->u.list.items[i], t->element->type);
        s->list_end(s->ctx);
    } else {
        s->map_begin(s->ctx);
        if (v->type == AVRO_MAP) {
            for (size_t i = 0; i < v->u.map.count; i++) {
                s->string(s->ctx, (const char *)v->u.map.keys[i].ptr, v->u.map.keys[i].len);
                emit_avro(s, &v->u.map.values[i], t->value->type);
            }
        } else if (v->type == AVRO_ARRAY) { /* non-string keys: array of {key, value} */
            for (size_t i = 0; i < v->u.list.count; i++) {
                const icd_avro_value *kv = &v->u.list.items[i];
                emit_avro(s, icd_avro_value_field(kv, "key"), t->key->type);
                emit_avro(s, icd_avro_value_field(kv, "value"), t->value->type);
            }
        }
        s->map_end(s->ctx);
    }
}

static bool has_variant(const ice_type *t)
{
    if (t->kind == ICE_T_VARIANT) return true;
    if (t->kind == ICE_T_STRUCT) {
        for (size_t i = 0; i < t->nfields; i++)
            if (has_variant(t->fields[i].type)) return true;
    } else if (t->kind == ICE_T_LIST) {
        return has_variant(t->element->type);
    } else if (t->kind == ICE_T_MAP) {
        return has_variant(t->key->type) || has_variant(t->value->type);
    }
    return false;
}

/* Appends the key of record `row` of the current Avro batch for equality delete file e. */
static void avro_key(void *ctx, size_t e, size_t row, icd_buf *k)
{
    task_state *t = ctx;
    const ice_content_file *del = t->mor.eq[e].df;
    const icd_avro_value *rec = &t->arecs[row];
    for (int32_t c = 0; c < del->nequality_ids; c++) {
        int32_t id = del->equality_ids[c];
        const ice_field *f = ice_rd_schema_field(t->r, id); /* checked by ice_mor_init */
        const icd_avro_value *v = ice_avro_find_id(rec, id);
        char what[96];
        bool bad = v && !ice_avro_ts_in_range(v, f->type, what, sizeof what);
        if (bad && !t->key_rc)
            t->key_rc = ice_time_value_range_error(&t->key_err, t->task->data->path, f->name,
                                                   t->avro_first + (int64_t)row, f->type, what);
        ice_tvalue tv = {0}; /* out of range: no value (the read fails after the batch) */
        if (!bad)
            tv = v ? ice_avro_tvalue(v, f->type) /* else the file predates the column */
                   : ice_rd_absent_value(t->r, t->task->data, f);
        ice_key_put(k, &tv);
    }
}

/* The surviving records of one batch to the sink. */
static int emit_avro_batch(task_state *t, int64_t first, size_t n, icd_error *err)
{
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    const ice_row_sink *s = t->sink;
    for (size_t i = 0; i < n; i++) {
        if (!t->sel[i]) continue;
        const icd_avro_value *rec = &t->arecs[i];
        int64_t pos = first + (int64_t)i;
        s->begin_row(s->ctx, df->path, pos);
        for (size_t k = 0; k < r->nfields; k++) {
            const ice_field *f = r->fields[k];
            s->field(s->ctx, f->name, strlen(f->name));
            const icd_avro_value *v =
                rec->type == AVRO_RECORD ? icd_avro_value_field_by_id(rec, f->id) : NULL;
            char what[96];
            if (v && !ice_avro_ts_in_range(v, f->type, what, sizeof what))
                /* a value out of range: nothing of the row is ended */
                return ice_time_value_range_error(err, df->path, f->name, pos, f->type, what);
            if (v) {
                emit_avro(s, v, f->type);
            } else {
                const ice_literal *l = ice_rd_partition_value(r, df, f->id);
                ice_emit_literal(s, l ? l : f->initial_default, f->type);
            }
        }
        int erc = s->end_row(s->ctx, err);
        if (erc < 0) return erc;
        if (erc > 0)
            t->stats->rows_skipped++;
        else
            t->stats->rows_emitted++;
    }
    return 0;
}

#define AVRO_BATCH_ROWS 1024

/* An Avro data file: records are decoded in batches (never across a container block: the
 * values point into it), each batch goes through the merge-on-read step like a Parquet
 * or ORC batch. */
static int read_avro_task(task_state *t, icd_error *err)
{
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    for (size_t k = 0; k < r->nfields; k++)
        if (has_variant(r->fields[k]->type))
            return icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                            "column %s: variant values in Avro data files are not supported yet",
                            r->fields[k]->name);
    ICD_TRY(ice_mor_init(&t->mor, r, t->task, t->stats, err));
    icd_avro_reader *ar;
    icd_file *file;
    ICD_TRY(ice_rd_open_entry(r, df, &file, err));
    ICD_TRY(icd_avro_reader_open_file(file, true, &ar, err));
    icd_avro_value *recs = malloc(AVRO_BATCH_ROWS * sizeof *recs);
    t->sel = malloc(AVRO_BATCH_ROWS);
    int rc = !recs || !t->sel ? icd_fail_nomem(err) : 0;
    t->arecs = recs;
    icd_arena arena = ICD_ARENA_INIT;
    int64_t pos = 0; /* records read */
    size_t n = 0;
    bool eof = false;
    while (!rc && !eof) {
        if (atomic_load(&r->canceled)) {
            rc = icd_fail(err, ICD_ECANCELED, df->path, -1, "scan canceled");
            break;
        }
        if ((rc = icd_avro_reader_next(ar, &arena, &recs[n], &eof, err))) break;
        if (!eof) n++;
        bool block_done = icd_avro_reader_block_read(ar) >= icd_avro_reader_block_count(ar);
        if (n && (eof || n == AVRO_BATCH_ROWS || block_done)) {
            t->avro_first = pos;
            rc = ice_mor_apply(&t->mor, (uint64_t)pos, n, t->sel, avro_key, t, t->stats, err);
            if (!rc) rc = key_failure(t, err);
            if (!rc) rc = emit_avro_batch(t, pos, n, err);
            pos += (int64_t)n;
            n = 0;
            icd_arena_reset(&arena);
        }
    }
    icd_arena_free(&arena);
    icd_avro_reader_free(ar);
    free(recs);
    t->arecs = NULL;
    if (!rc) rc = ice_rd_check_entry(df, 0, pos, err);
    return rc;
}

int ice_scan_reader_read_task(ice_scan_reader *r, const ice_scan_task *task,
                              const ice_row_sink *sink, ice_read_stats *stats, icd_error *err)
{
    task_state t;
    memset(&t, 0, sizeof t);
    t.r = r;
    t.task = task;
    t.sink = sink;
    t.stats = stats;
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
    int rc;
    if (sink->begin_file) sink->begin_file(sink->ctx, task->data->path, task->data->format);
    switch (task->data->format) {
    case ICE_FORMAT_PARQUET:
        rc = read_parquet_task(&t, err);
        break;
    case ICE_FORMAT_AVRO:
        rc = read_avro_task(&t, err);
        break;
    case ICE_FORMAT_ORC:
        rc = ice_rd_read_orc_task(r, task, sink, stats, err);
        break;
    default:
        rc = icd_fail(err, ICD_EUNSUPPORTED, task->data->path, -1, "data file format is unknown");
    }
    if (dv && !pos_file) stats->rows_deleted_dv += stats->rows_deleted_position - pos_before;
    if (!rc) {
        stats->data_files++;
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
    task_state_free(&t);
    return rc;
}
