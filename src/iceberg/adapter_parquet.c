/*
 * The Parquet format adapter (adapter.h): requested columns are leaves found by field id
 * (in files without ids: by the name mapping, else by name), read with pq_reader in its
 * batches (never across a row group) and converted by ice_typed_value_checked, the
 * conversion of the Parquet data path.
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "formats/parquet/parquet.h"
#include "iceberg/adapter.h"

bool ice_pq_schema_has_ids(const pq_schema *s)
{
    for (uint32_t i = 0; i < s->num_nodes; i++)
        if (s->nodes[i].has_field_id) return true;
    return false;
}

const pq_node *ice_pq_find_node(const pq_schema *s, bool has_ids, const ice_name_mapping *mapping,
                                int32_t id)
{
    if (has_ids) return pq_schema_find_field_id(s, id);
    if (mapping) {
        for (size_t i = 0; i < mapping->n; i++) {
            const ice_mapped_field *m = &mapping->fields[i];
            if (!m->has_field_id || m->field_id != id) continue;
            for (size_t k = 0; k < m->n_names; k++)
                for (uint32_t c = 0; c < s->root->num_children; c++)
                    if (!strcmp(s->root->children[c]->name, m->names[k]))
                        return s->root->children[c];
        }
        return NULL;
    }
    /* Java's addFallbackIds: top-level columns numbered 1, 2, ... in file order */
    if (id >= 1 && (uint32_t)id <= s->root->num_children) return s->root->children[id - 1];
    return NULL;
}

int ice_pq_fill_vidx(const pq_column_batch *cb, size_t nrows, int32_t *vidx)
{
    int maxdef = cb->leaf->def_level;
    if (cb->rep || cb->num_levels != nrows) return -1;
    int32_t vi = 0;
    if (!cb->def) {
        for (size_t i = 0; i < nrows; i++)
            vidx[i] = vi++;
    } else {
        for (size_t i = 0; i < nrows; i++)
            vidx[i] = (int)cb->def[i] == maxdef ? vi++ : -1;
    }
    return (size_t)vi == cb->num_values ? 0 : -1;
}

typedef struct pq_adapter {
    pq_file *pf;
    pq_reader *rd;
    const pq_node **leaf; /* per requested column */
    size_t *batch_col;    /* per requested column: its column in the reader's batches */
    int *leaves;          /* the reader's leaves (distinct, sorted) */
    size_t nleaves;
    int32_t *vidx; /* one batch of value indexes */
    size_t vcap;
} pq_adapter;

static void pq_free(pq_adapter *p)
{
    if (!p) return;
    pq_reader_close(p->rd);
    pq_file_close(p->pf);
    free((void *)p->leaf);
    free(p->batch_col);
    free(p->leaves);
    free(p->vidx);
    free(p);
}

static void pq_close(ice_adapter *a)
{
    pq_free(a->impl);
}

static int pq_next(ice_adapter *a, icd_error *err)
{
    pq_adapter *p = a->impl;
    pq_batch *b;
    if (!p->rd) return icd_fail(err, ICD_EINTERNAL, a->path, -1, "no reader (a failed restart)");
    ICD_TRY(pq_reader_next(p->rd, &b, err));
    if (!b) return 0;
    size_t n = b->num_rows;
    ICD_TRY(ice_adapter_reserve(a, n, err));
    if (n > p->vcap) {
        int32_t *nv = realloc(p->vidx, n * sizeof *nv);
        if (!nv) return icd_fail_nomem(err);
        p->vidx = nv;
        p->vcap = n;
    }
    for (size_t c = 0; c < a->ncols; c++) {
        const ice_adapter_col *col = &a->cols[c];
        const pq_column_batch *cb = &b->columns[p->batch_col[c]];
        if (ice_pq_fill_vidx(cb, n, p->vidx))
            return icd_fail(err, ICD_ECORRUPT, a->path, -1,
                            "column %s: inconsistent definition levels in row group %u", col->name,
                            (unsigned)b->row_group);
        ice_tvalue *out = a->vals[c];
        if (!ice_typed_values(col->type, p->leaf[c], cb, p->vidx, n, out)) continue;
        for (size_t i = 0; i < n; i++) /* a value out of range: the error of the first */
            if (ice_tv_is_out_of_range(&out[i]))
                return ice_typed_value_checked(col->type, p->leaf[c], cb, (size_t)p->vidx[i],
                                               a->path, col->name, b->first_row + (int64_t)i,
                                               &out[i], err);
    }
    a->batch.first_row = b->first_row;
    a->batch.nrows = n;
    return 0;
}

static const pq_node *top_level(const pq_schema *s, const char *name)
{
    for (uint32_t c = 0; c < s->root->num_children; c++)
        if (!strcmp(s->root->children[c]->name, name)) return s->root->children[c];
    return NULL;
}

/* A new reader over the same leaves that keeps row groups [first, first + count). */
static int pq_select_units(ice_adapter *a, size_t first, size_t count, icd_error *err)
{
    pq_adapter *p = a->impl;
    size_t n = a->num_units;
    uint8_t *keep = calloc(n ? n : 1, 1);
    if (!keep) return icd_fail_nomem(err);
    for (size_t u = first; u < first + count; u++)
        keep[u] = 1;
    pq_reader_close(p->rd);
    p->rd = NULL;
    int rc = pq_reader_open(p->pf, p->leaves, p->nleaves, 0, &p->rd, err);
    if (!rc) rc = pq_reader_select_row_groups(p->rd, keep, n, err);
    free(keep);
    return rc;
}

static const ice_adapter_ops PQ_OPS = {pq_next, pq_close, pq_select_units};

int ice_adapter_open_parquet(ice_adapter *a, const ice_adapter_opts *o, size_t *missing,
                             icd_error *err)
{
    size_t nc = o->ncols ? o->ncols : 1;
    pq_adapter *p = calloc(1, sizeof *p);
    int *leaves = calloc(nc, sizeof *leaves);
    if (p) {
        p->leaf = calloc(nc, sizeof *p->leaf);
        p->batch_col = calloc(nc, sizeof *p->batch_col);
    }
    int rc = 0;
    if (!p || !leaves || !p->leaf || !p->batch_col) {
        icd_file_close(o->file);
        rc = icd_fail_nomem(err);
        goto fail;
    }
    if ((rc = pq_file_open_file(o->file, &p->pf, err))) goto fail;
    const pq_schema *s = pq_file_schema(p->pf);
    bool has_ids = ice_pq_schema_has_ids(s);
    for (size_t c = 0; c < o->ncols; c++) {
        const ice_adapter_col *col = &o->cols[c];
        const pq_node *n;
        if (has_ids || o->mapping)
            n = ice_pq_find_node(s, has_ids, o->mapping, col->field_id);
        else /* no ids, no mapping: by name (positional ids are for data files only) */
            n = top_level(s, col->name);
        if (!n && col->fallback_name) n = top_level(s, col->fallback_name);
        if (!n) {
            rc = ice_adapter_missing(o, c, missing, err);
            goto fail;
        }
        if (n->leaf_index < 0 || n->rep_level > 0) {
            rc = icd_fail(err, ICD_EUNSUPPORTED, o->path, -1,
                          "column %s: Parquet column '%s' is %s, not a primitive outside lists "
                          "and maps",
                          col->name, n->dotted, n->leaf_index < 0 ? "a group" : "repeated");
            goto fail;
        }
        if (!ice_leaf_readable_as(n, col->type)) {
            rc = icd_fail(err, ICD_EUNSUPPORTED, o->path, -1,
                          "column %s: Parquet %s column '%s' cannot be read as %s", col->name,
                          pq_type_name(n->physical_type), n->dotted,
                          ice_type_kind_name(col->type->kind));
            goto fail;
        }
        p->leaf[c] = n;
        leaves[c] = n->leaf_index;
    }
    /* the reader's batches hold each selected leaf once, in leaf order */
    icd_sort_ints(leaves, o->ncols);
    size_t nuniq = 0;
    for (size_t i = 0; i < o->ncols; i++)
        if (!nuniq || leaves[nuniq - 1] != leaves[i]) leaves[nuniq++] = leaves[i];
    for (size_t c = 0; c < o->ncols; c++)
        for (size_t j = 0; j < nuniq; j++)
            if (leaves[j] == p->leaf[c]->leaf_index) p->batch_col[c] = j;
    if ((rc = pq_reader_open(p->pf, leaves, nuniq, 0, &p->rd, err))) goto fail;
    p->leaves = leaves;
    p->nleaves = nuniq;
    a->num_rows = pq_file_num_rows(p->pf);
    a->num_units = pq_file_num_row_groups(p->pf);
    a->impl = p;
    a->ops = &PQ_OPS;
    return 0;
fail:
    free(leaves);
    pq_free(p);
    return rc;
}
