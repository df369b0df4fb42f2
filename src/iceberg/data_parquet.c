/*
 * Parquet data files in the one task loop of the merge-on-read reader (reader_internal.h,
 * ice_data_parquet), decoded into the format-neutral batch (vbatch.h):
 *
 *   bind      every output field gets a column: a Parquet leaf (by field id, else the name
 *             mapping, else Java's positional ids) read as VALUES, a nested group
 *             assembled by Iceberg type (nested.h: struct, list, map, variant) read through
 *             a NESTED cursor, or a CONST (identity partition value / initial-default / null)
 *   prepare   equality key columns: leaves of the same batch (VALUES), or constants when
 *             the file predates the column; row groups whose statistics exclude the
 *             reader's filter are not read
 *   next      a batch of the Parquet reader: each VALUES column's typed values, through
 *             its leaf's per-row value indexes (ice_typed_values)
 *
 * Values are converted once, by ice_typed_values(), from the file's physical type to the
 * column's Iceberg type. The same conversion feeds both the sink and the equality keys, so
 * a key written as INT64 in a delete file matches an INT32 value in an older data file.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/bigmem.h"
#include "formats/parquet/parquet.h"
#include "iceberg/adapter.h"
#include "iceberg/literal.h"
#include "iceberg/nested.h"
#include "iceberg/reader_internal.h"
#include "iceberg/tvalue.h"

/* A leaf of the file read as a VALUES column of the batch (an output field or an equality
 * key column; ice_vcol.impl). */
typedef struct leaf_col {
    const ice_field *field;
    const pq_node *node;
    int batch_col; /* the leaf until the leaves are sorted, then its column in the batch */
    int32_t *vidx; /* per-row value index of the current batch (-1: null) */
} leaf_col;

/* An output field assembled from several leaves (ice_vcol.impl of a NESTED column). */
typedef struct nested_col {
    ice_nested *nested;
    size_t next_row; /* the next row of the batch the walk is at */
} nested_col;

/* The state of one Parquet data file being read (ice_rd_task.src). */
typedef struct pq_src {
    pq_file *pf;
    pq_reader *rd;
    const pq_schema *s;
    leaf_col *outleaves; /* per output column: its leaf (VALUES) */
    nested_col *nested;  /* per output column: its assembly (NESTED) */
    leaf_col *keyleaves; /* per key column: its leaf (VALUES) */
    const pq_batch *cur; /* the batch being read */
    int *leaves;         /* sorted, distinct leaves to read */
    size_t nleaves;
    int32_t *vbuf;
    size_t vcap;
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

/* ice_vcol.range_error of a leaf column */
static int leaf_range_error(ice_rd_task *t, const ice_vcol *c, size_t row, icd_error *err)
{
    const pq_src *p = t->src;
    const leaf_col *lc = c->impl;
    const pq_column_batch *cb = &p->cur->columns[lc->batch_col];
    return ice_time_range_error(err, t->task->data->path, lc->field->name,
                                p->cur->first_row + (int64_t)row, lc->field->type, lc->node, cb,
                                (size_t)lc->vidx[row]);
}

/* A VALUES column of leaf n (added to the leaves to read). */
static int leaf_column(pq_src *p, ice_vcol *c, leaf_col *lc, const ice_field *f, const pq_node *n,
                       icd_error *err)
{
    *lc = (leaf_col){.field = f, .node = n, .batch_col = n->leaf_index};
    c->kind = ICE_VCOL_VALUES;
    c->impl = lc;
    c->range_error = leaf_range_error;
    return add_leaf(p, n->leaf_index, err);
}

/* ice_vcol.nested_row: the walk skips the rows not asked for */
static int nested_row(ice_rd_task *t, ice_vcol *c, size_t row, icd_error *err)
{
    nested_col *nc = c->impl;
    for (; nc->next_row < row; nc->next_row++)
        ICD_TRY(ice_nested_skip_row(nc->nested, err));
    nc->next_row++;
    return ice_nested_row(nc->nested, t->sink, err);
}

/* ice_vcol.nested_done */
static int nested_done(ice_rd_task *t, ice_vcol *c, icd_error *err)
{
    nested_col *nc = c->impl;
    for (; nc->next_row < t->batch.nrows; nc->next_row++)
        ICD_TRY(ice_nested_skip_row(nc->nested, err));
    return ice_nested_end(nc->nested, err);
}

/* ice_data_ops.bind */
static int pq_bind(ice_rd_task *t, icd_error *err)
{
    pq_src *p = t->src;
    const pq_schema *s = p->s;
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    bool has_ids = ice_pq_schema_has_ids(s);
    size_t nf = t->batch.ncols ? t->batch.ncols : 1;
    p->nested = calloc(nf, sizeof *p->nested);
    p->outleaves = calloc(nf, sizeof *p->outleaves);
    if (!p->nested || !p->outleaves) return icd_fail_nomem(err);
    for (size_t i = 0; i < t->batch.ncols; i++) {
        ice_vcol *c = &t->batch.cols[i];
        const ice_field *f = c->field;
        const pq_node *n = ice_pq_find_node(s, has_ids, r->mapping, f->id);
        if (n && (!has_ids || n->parent == s->root)) {
            bool assembled = !ice_type_is_primitive(f->type) || f->type->kind == ICE_T_VARIANT;
            if (n->leaf_index >= 0 && !assembled) {
                if (!ice_leaf_readable_as(n, f->type))
                    return icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                                    "column %s: Parquet %s column '%s' cannot be read as %s",
                                    f->name, pq_type_name(n->physical_type), n->dotted,
                                    ice_type_kind_name(f->type->kind));
                ICD_TRY(leaf_column(p, c, &p->outleaves[i], f, n, err));
            } else if (n->leaf_index < 0 && assembled) {
                nested_col *nc = &p->nested[i];
                c->kind = ICE_VCOL_NESTED;
                c->impl = nc;
                c->nested_row = nested_row;
                c->nested_done = nested_done;
                ICD_TRY(ice_nested_new(f, s, n, has_ids, r->mapping, df->path, &nc->nested, err));
                for (size_t k = 0; k < ice_nested_leaf_count(nc->nested); k++)
                    ICD_TRY(add_leaf(p, ice_nested_leaf(nc->nested, k), err));
            } else {
                return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                                "column %s (field id %d) is %s in the table but %s in the file",
                                f->name, (int)f->id, ice_type_kind_name(f->type->kind),
                                n->leaf_index >= 0 ? "a primitive" : "a group");
            }
            continue;
        }
        /* Not in the file: identity partition value, initial-default, or null. */
        c->kind = ICE_VCOL_CONST;
        const ice_literal *l = ice_rd_partition_value(r, df, f->id);
        if (!l) l = f->initial_default;
        c->lit = l;
        if (ice_type_is_primitive(f->type)) c->constant = ice_literal_tvalue(l, f->type);
    }
    return 0;
}

/* The key columns of the task's equality delete files: leaves of the same batch, or
 * constants when the file predates the column. */
static int setup_equality(ice_rd_task *t, icd_error *err)
{
    pq_src *p = t->src;
    const pq_schema *s = p->s;
    const ice_content_file *data = t->task->data;
    bool has_ids = ice_pq_schema_has_ids(s);
    p->keyleaves = calloc(t->nkcols ? t->nkcols : 1, sizeof *p->keyleaves);
    if (!p->keyleaves) return icd_fail_nomem(err);
    for (size_t j = 0; j < t->nkcols; j++) {
        ice_vcol *kc = &t->kcols[j];
        const ice_field *f = kc->field;
        const pq_node *n = ice_pq_find_node(s, has_ids, t->r->mapping, f->id);
        if (!n) { /* the data file predates the column */
            kc->kind = ICE_VCOL_CONST;
            kc->constant = ice_rd_absent_value(t->r, data, f);
            continue;
        }
        if (n->leaf_index < 0 || n->rep_level > 0 || !ice_leaf_readable_as(n, f->type))
            return icd_fail(err, ICD_EUNSUPPORTED, data->path, -1,
                            "equality key column %s cannot be read from this file", f->name);
        ICD_TRY(leaf_column(p, kc, &p->keyleaves[j], f, n, err));
    }
    return 0;
}

/* ice_data_ops.next: a batch of the Parquet reader, every VALUES column's cells filled
 * from its leaf through the per-row value indexes. */
static int pq_next(ice_rd_task *t, icd_error *err)
{
    pq_src *p = t->src;
    const char *path = t->task->data->path;
    pq_batch *b;
    ICD_TRY(pq_reader_next(p->rd, &b, err));
    if (!b) return 0;
    t->stats->decode_bytes = pq_reader_memory_bytes(p->rd);
    if (b->num_rows > PQ_DEFAULT_BATCH_ROWS)
        return icd_fail(err, ICD_EINTERNAL, path, -1, "batch larger than requested");
    size_t n = b->num_rows, nl = t->batch.ncols + t->nkcols;
    if (n * nl > p->vcap) {
        int32_t *nv = icd_bigbuf_realloc(p->vbuf, n * nl * sizeof *nv);
        if (!nv) return icd_fail_nomem(err);
        p->vbuf = nv;
        p->vcap = n * nl;
    }
    ICD_TRY(ice_rd_batch_begin(t, n, err));
    p->cur = b;
    for (size_t k = 0; k < nl; k++) {
        ice_vcol *c = ice_rd_col(t, k);
        if (c->kind == ICE_VCOL_NESTED) {
            nested_col *nc = c->impl;
            ice_nested_begin(nc->nested, b);
            nc->next_row = 0;
        }
        if (c->kind != ICE_VCOL_VALUES) continue;
        leaf_col *lc = c->impl;
        const pq_column_batch *cb = &b->columns[lc->batch_col];
        lc->vidx = p->vbuf + k * n;
        if (ice_pq_fill_vidx(cb, n, lc->vidx))
            return icd_fail(err, ICD_ECORRUPT, path, -1,
                            "column %s: levels do not match the row count", lc->field->name);
        c->out_of_range = ice_typed_values(lc->field->type, lc->node, cb, lc->vidx, n, c->v);
    }
    t->batch.first_row = b->first_row;
    t->batch.nrows = n;
    return 1;
}

/* ice_data_ops.close */
static void pq_close(ice_rd_task *t)
{
    pq_src *p = t->src;
    if (!p) return;
    for (size_t i = 0; p->nested && i < t->batch.ncols; i++)
        ice_nested_free(p->nested[i].nested);
    free(p->nested);
    free(p->outleaves);
    free(p->keyleaves);
    free(p->leaves);
    icd_bigbuf_free(p->vbuf);
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
/* The row groups of the task's part (all of them for a whole read), then those the
 * reader's filter cannot rule out. */
static int prune_row_groups(ice_rd_task *t, icd_error *err)
{
    pq_src *p = t->src;
    uint32_t n = pq_file_num_row_groups(p->pf);
    size_t lo, hi;
    ice_rd_part_units(t, n, &lo, &hi);
    bool whole = lo == 0 && hi == n;
    if ((!t->r->filter && whole) || n == 0) {
        t->stats->row_groups_read += n;
        return 0;
    }
    uint8_t *keep = malloc(n);
    if (!keep) return icd_fail_nomem(err);
    rg_prune pc = {t->r, p->pf, p->s, ice_pq_schema_has_ids(p->s), 0};
    for (uint32_t g = 0; g < n; g++) {
        pc.rg = g;
        keep[g] = 0;
        if (g < lo || g >= hi) continue; /* another part's */
        keep[g] = !t->r->filter || (pq_file_row_group(p->pf, g)->num_rows > 0 &&
                                    ice_range_may_match(t->r->filter, rg_range, &pc));
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
    for (size_t k = 0; k < t->batch.ncols + t->nkcols; k++) {
        ice_vcol *c = ice_rd_col(t, k);
        if (c->kind == ICE_VCOL_VALUES) {
            leaf_col *lc = c->impl;
            lc->batch_col = batch_col_of(p, lc->batch_col);
        } else if (c->kind == ICE_VCOL_NESTED) {
            ice_nested *x = ((nested_col *)c->impl)->nested;
            for (size_t i = 0; i < ice_nested_leaf_count(x); i++)
                ice_nested_set_batch_column(x, i, batch_col_of(p, ice_nested_leaf(x, i)));
        }
    }
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

const ice_data_ops ice_data_parquet = {pq_open, pq_bind, pq_prepare, pq_next, pq_close};
