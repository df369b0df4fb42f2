/*
 * Parquet data files in the one task loop of the merge-on-read reader (reader_internal.h,
 * ice_data_parquet):
 *
 *   bind      every output field gets a source: a Parquet leaf (by field id, else the name
 *             mapping, else Java's positional ids), a nested group assembled by Iceberg
 *             type (nested.h: struct, list, map, variant), or a constant (identity
 *             partition value / initial-default / null)
 *   prepare   equality key columns: leaves of the same batch, or constants when the file
 *             predates the column; row groups whose statistics exclude the reader's filter
 *             are not read
 *   next      a batch of the Parquet reader, with each used leaf's per-row value index
 *   emit      the surviving rows value by value to the sink, or, when the sink takes whole
 *             batches (ice_row_sink.columns) and no column needs assembling, the batch
 *             itself with its value indexes compacted to the surviving rows
 *
 * Values are converted once, by ice_typed_value(), from the file's physical type to the
 * column's Iceberg type. The same conversion feeds both the sink and the equality keys, so
 * a key written as INT64 in a delete file matches an INT32 value in an older data file.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "formats/parquet/parquet.h"
#include "iceberg/adapter.h"
#include "iceberg/literal.h"
#include "iceberg/nested.h"
#include "iceberg/reader_internal.h"
#include "iceberg/tvalue.h"

/* An equality key column of the data file: a leaf of the batch, or a constant. */
typedef struct key_col {
    const ice_type *type;
    const pq_node *leaf;
    int batch_col;       /* column in the batch, or -1 for a constant */
    ice_tvalue constant; /* the column's value when the file lacks it */
    int32_t *vidx;       /* per-row value index of the current batch */
    const char *name;    /* the field's name, for range errors */
    int int_phys;        /* an int or long key stored as INT32 / INT64 (no conversion, no
                            range to check): that physical type, else -1 */
} key_col;

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

/* The state of one Parquet data file being read (ice_rd_task.src). */
typedef struct pq_src {
    pq_file *pf;
    pq_reader *rd;
    const pq_schema *s;
    out_col *cols; /* one per field of the reader */
    size_t ncols;
    eq_probe *eq; /* parallel to the task's mor.eq */
    size_t neq;
    const pq_batch *cur; /* the batch being read */
    int *leaves;         /* sorted, distinct leaves to read */
    size_t nleaves;
    int32_t *vbuf;
    size_t vcap;
    ice_sink_column *scols; /* the sink takes whole batches (ice_row_sink.columns) */
    int64_t *pos;           /* ... and the file positions of a batch's kept rows */
    size_t pos_cap;
    size_t leaves_cap;
} pq_src;

static int add_leaf(pq_src *p, int leaf, icd_error *err)
{
    for (size_t i = 0; i < p->nleaves; i++)
        if (p->leaves[i] == leaf) return 0;
    if (ICD_ARRAY_RESERVE(p->leaves, p->leaves_cap, p->nleaves + 1, 16)) return icd_fail_nomem(err);
    p->leaves[p->nleaves++] = leaf;
    return 0;
}

static int batch_col_of(const pq_src *p, int leaf)
{
    for (size_t i = 0; i < p->nleaves; i++)
        if (p->leaves[i] == leaf) return (int)i;
    return -1;
}

/* ice_data_ops.bind */
static int pq_bind(ice_rd_task *t, icd_error *err)
{
    pq_src *p = t->src;
    const pq_schema *s = p->s;
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    bool has_ids = ice_pq_schema_has_ids(s);
    p->ncols = r->nfields;
    p->cols = calloc(p->ncols ? p->ncols : 1, sizeof *p->cols);
    if (!p->cols) return icd_fail_nomem(err);
    for (size_t i = 0; i < r->nfields; i++) {
        out_col *c = &p->cols[i];
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
                ICD_TRY(add_leaf(p, n->leaf_index, err));
            } else if (n->leaf_index < 0 && assembled) {
                c->kind = SRC_NESTED;
                ICD_TRY(ice_nested_new(f, s, n, has_ids, r->mapping, df->path, &c->nested, err));
                for (size_t k = 0; k < ice_nested_leaf_count(c->nested); k++)
                    ICD_TRY(add_leaf(p, ice_nested_leaf(c->nested, k), err));
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

static int setup_equality(ice_rd_task *t, icd_error *err)
{
    pq_src *p = t->src;
    const pq_schema *s = p->s;
    const ice_scan_task *task = t->task;
    bool has_ids = ice_pq_schema_has_ids(s);
    p->eq = calloc(t->mor.neq ? t->mor.neq : 1, sizeof *p->eq);
    if (!p->eq) return icd_fail_nomem(err);
    for (size_t d = 0; d < t->mor.neq; d++) {
        const ice_content_file *df = t->mor.eq[d].df;
        eq_probe *q = &p->eq[p->neq++];
        q->ncols = (size_t)df->nequality_ids;
        q->cols = calloc(q->ncols, sizeof *q->cols);
        if (!q->cols) return icd_fail_nomem(err);
        for (size_t k = 0; k < q->ncols; k++) {
            const ice_field *f;
            ICD_TRY(ice_rd_equality_field(t->r, df, k, &f, err));
            key_col *kc = &q->cols[k];
            kc->type = f->type;
            kc->name = f->name;
            kc->int_phys = -1;
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
            if ((f->type->kind == ICE_T_INT || f->type->kind == ICE_T_LONG) &&
                (n->physical_type == PQ_INT32 || n->physical_type == PQ_INT64))
                kc->int_phys = n->physical_type;
            ICD_TRY(add_leaf(p, n->leaf_index, err));
        }
    }
    return 0;
}

/* Appends the key of row `row` of the current batch for equality delete file e. */
static void pq_key(void *ctx, size_t e, size_t row, icd_buf *k)
{
    ice_rd_task *t = ctx;
    const pq_src *ps = t->src;
    const eq_probe *p = &ps->eq[e];
    for (size_t c = 0; c < p->ncols; c++) {
        const key_col *kc = &p->cols[c];
        if (kc->batch_col < 0) {
            ice_key_put(k, &kc->constant);
            continue;
        }
        int32_t vi = kc->vidx[row];
        if (vi >= 0 && kc->int_phys >= 0) { /* the value as stored is the key's value */
            const void *vals = ps->cur->columns[kc->batch_col].values;
            ice_key_put_int(k, kc->int_phys == PQ_INT64 ? ((const int64_t *)vals)[vi]
                                                        : ((const int32_t *)vals)[vi]);
            continue;
        }
        ice_tvalue v = {0};
        if (vi >= 0 && !t->key_rc)
            t->key_rc = ice_typed_value_checked(
                kc->type, kc->leaf, &ps->cur->columns[kc->batch_col], (size_t)vi,
                t->task->data->path, kc->name, ps->cur->first_row + (int64_t)row, &v, &t->key_err);
        ice_key_put(k, &v);
    }
}

/* The surviving rows of batch b to a sink that takes whole batches: each leaf column's
 * value indexes are compacted to the kept rows in place, its values range-checked as the
 * row-by-row path checks them. */
static int emit_columns(ice_rd_task *t, const pq_batch *b, const uint8_t *sel, icd_error *err)
{
    pq_src *p = t->src;
    size_t n = b->num_rows, m = 0;
    for (size_t i = 0; i < n; i++)
        m += sel[i] != 0;
    if (!m) return 0;
    if (ICD_ARRAY_RESERVE(p->pos, p->pos_cap, m, 1024)) return icd_fail_nomem(err);
    for (size_t i = 0, j = 0; i < n; i++)
        if (sel[i]) p->pos[j++] = b->first_row + (int64_t)i;
    for (size_t k = 0; k < p->ncols; k++) {
        out_col *c = &p->cols[k];
        ice_sink_column *sc = &p->scols[k];
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
    ICD_TRY(t->sink->columns(t->sink->ctx, p->scols, p->ncols, m, p->pos, err));
    t->stats->rows_emitted += m;
    return 0;
}

/* ice_data_ops.next: a batch of the Parquet reader, with the per-row value index of every
 * leaf column used (output and keys). */
static int pq_next(ice_rd_task *t, uint64_t *first_row, size_t *nrows, icd_error *err)
{
    pq_src *p = t->src;
    const char *path = t->task->data->path;
    pq_batch *b;
    ICD_TRY(pq_reader_next(p->rd, &b, err));
    if (!b) return 0;
    t->stats->decode_bytes = pq_reader_memory_bytes(p->rd);
    if (b->num_rows > PQ_DEFAULT_BATCH_ROWS)
        return icd_fail(err, ICD_EINTERNAL, path, -1, "batch larger than requested");
    size_t n = b->num_rows;
    size_t need = n * (p->ncols + 1);
    for (size_t e = 0; e < p->neq; e++)
        need += n * p->eq[e].ncols;
    if (need > p->vcap) {
        int32_t *nv = realloc(p->vbuf, need * sizeof *nv);
        if (!nv) return icd_fail_nomem(err);
        p->vbuf = nv;
        p->vcap = need;
    }
    int32_t *vb = p->vbuf;
    for (size_t i = 0; i < p->ncols; i++) {
        out_col *c = &p->cols[i];
        if (c->kind != SRC_LEAF) continue;
        c->vidx = vb;
        vb += n;
        if (ice_pq_fill_vidx(&b->columns[c->batch_col], n, c->vidx))
            return icd_fail(err, ICD_ECORRUPT, path, -1,
                            "column %s: levels do not match the row count", c->field->name);
    }
    for (size_t e = 0; e < p->neq; e++) {
        eq_probe *q = &p->eq[e];
        for (size_t k = 0; k < q->ncols; k++) {
            if (q->cols[k].batch_col < 0) continue;
            q->cols[k].vidx = vb;
            vb += n;
            if (ice_pq_fill_vidx(&b->columns[q->cols[k].batch_col], n, q->cols[k].vidx))
                return icd_fail(err, ICD_ECORRUPT, path, -1,
                                "equality key column: levels do not match the row count");
        }
    }
    p->cur = b;
    *first_row = (uint64_t)b->first_row;
    *nrows = n;
    return 1;
}

/* ice_data_ops.emit */
static int pq_emit(ice_rd_task *t, const uint8_t *sel, size_t n, icd_error *err)
{
    pq_src *p = t->src;
    const pq_batch *b = p->cur;
    const ice_row_sink *s = t->sink;
    if (p->scols) return emit_columns(t, b, sel, err);
    /* nested columns walk every row, kept or not */
    for (size_t i = 0; i < p->ncols; i++)
        if (p->cols[i].kind == SRC_NESTED) ice_nested_begin(p->cols[i].nested, b);
    const char *path = t->task->data->path;
    for (size_t i = 0; i < n; i++) {
        if (!sel[i]) {
            for (size_t k = 0; k < p->ncols; k++)
                if (p->cols[k].kind == SRC_NESTED)
                    ICD_TRY(ice_nested_skip_row(p->cols[k].nested, err));
            continue;
        }
        s->begin_row(s->ctx, path, b->first_row + (int64_t)i);
        for (size_t k = 0; k < p->ncols; k++) {
            out_col *c = &p->cols[k];
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
        ICD_TRY(ice_rd_end_row(t, err));
    }
    for (size_t k = 0; k < p->ncols; k++)
        if (p->cols[k].kind == SRC_NESTED) ICD_TRY(ice_nested_end(p->cols[k].nested, err));
    return 0;
}

/* ice_data_ops.close */
static void pq_close(ice_rd_task *t)
{
    pq_src *p = t->src;
    if (!p) return;
    for (size_t i = 0; i < p->ncols; i++)
        ice_nested_free(p->cols[i].nested);
    free(p->cols);
    for (size_t e = 0; e < p->neq; e++)
        free(p->eq[e].cols);
    free(p->eq);
    free(p->leaves);
    free(p->vbuf);
    free(p->scols);
    free(p->pos);
    pq_reader_close(p->rd);
    pq_file_close(p->pf);
    free(p);
    t->src = NULL;
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
static int prune_row_groups(ice_rd_task *t, icd_error *err)
{
    pq_src *p = t->src;
    uint32_t n = pq_file_num_row_groups(p->pf);
    if (!t->r->filter || n == 0) {
        t->stats->row_groups_read += n;
        return 0;
    }
    uint8_t *keep = malloc(n);
    if (!keep) return icd_fail_nomem(err);
    rg_prune pc = {t->r, p->pf, p->s, ice_pq_schema_has_ids(p->s), 0};
    for (uint32_t g = 0; g < n; g++) {
        pc.rg = g;
        keep[g] = pq_file_row_group(p->pf, g)->num_rows > 0 &&
                  ice_range_may_match(t->r->filter, rg_range, &pc);
        if (keep[g])
            t->stats->row_groups_read++;
        else
            t->stats->row_groups_skipped++;
    }
    int rc = pq_reader_select_row_groups(p->rd, keep, n, err);
    free(keep);
    return rc;
}

/* ice_data_ops.open */
static int pq_open(ice_rd_task *t, int64_t *num_rows, icd_error *err)
{
    pq_src *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    t->src = p;
    icd_file *f;
    ICD_TRY(ice_rd_open_entry(t->r, t->task->data, &f, err));
    ICD_TRY(pq_file_open_file(f, &p->pf, err));
    p->s = pq_file_schema(p->pf);
    *num_rows = pq_file_num_rows(p->pf);
    return 0;
}

/* ice_data_ops.prepare */
static int pq_prepare(ice_rd_task *t, icd_error *err)
{
    pq_src *p = t->src;
    const ice_content_file *df = t->task->data;
    ICD_TRY(setup_equality(t, err));
    icd_sort_ints(p->leaves, p->nleaves);
    for (size_t i = 0; i < p->ncols; i++) {
        out_col *c = &p->cols[i];
        if (c->kind == SRC_LEAF)
            c->batch_col = batch_col_of(p, c->node->leaf_index);
        else if (c->kind == SRC_NESTED)
            for (size_t k = 0; k < ice_nested_leaf_count(c->nested); k++)
                ice_nested_set_batch_column(c->nested, k,
                                            batch_col_of(p, ice_nested_leaf(c->nested, k)));
    }
    for (size_t e = 0; e < p->neq; e++)
        for (size_t k = 0; k < p->eq[e].ncols; k++)
            if (p->eq[e].cols[k].batch_col >= 0)
                p->eq[e].cols[k].batch_col = batch_col_of(p, p->eq[e].cols[k].batch_col);
    /* whole batches to a sink that takes them, when no column needs assembling */
    bool columnar = t->sink->columns != NULL;
    for (size_t i = 0; i < p->ncols && columnar; i++)
        columnar = p->cols[i].kind == SRC_LEAF ||
                   (p->cols[i].kind == SRC_CONST && ice_type_is_primitive(p->cols[i].field->type));
    if (columnar && p->ncols && !(p->scols = calloc(p->ncols, sizeof *p->scols)))
        return icd_fail_nomem(err);
    /* A file with no projected column still has rows: read its smallest column to count
     * them. */
    if (p->nleaves == 0 && p->s->num_leaves > 0) ICD_TRY(add_leaf(p, 0, err));
    if (p->nleaves == 0)
        return icd_fail(err, ICD_EUNSUPPORTED, df->path, -1, "Parquet file without columns");
    ICD_TRY(pq_reader_open(p->pf, p->leaves, p->nleaves, 0, &p->rd, err));
    ICD_TRY(prune_row_groups(t, err));
    pq_reader_set_read_budget(p->rd, t->r->read_budget);
    return 0;
}

const ice_data_ops ice_data_parquet = {pq_open, pq_bind, pq_prepare, pq_next,
                                       pq_key,  pq_emit, pq_close};
