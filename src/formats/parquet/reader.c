/*
 * Parquet files and batch readers (see parquet.h). pq_file owns the open icd_file and an
 * arena with the decoded footer and schema tree; pq_reader drives one pq_colreader per
 * selected leaf through the row groups and hands out batches of whole rows whose arrays are
 * reused from batch to batch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "formats/parquet/column.h"
#include "formats/parquet/parquet.h"

struct pq_file {
    icd_file *file;
    icd_arena arena;
    pq_file_meta meta;
    pq_schema schema;
    int64_t *rg_first_row; /* num_row_groups + 1 entries */
};

struct pq_reader {
    pq_file *pf;
    size_t batch_rows;
    size_t ncols;
    pq_colreader *cols;
    pq_colbuf *bufs;
    pq_column_batch *colbatch;
    pq_batch batch;
    uint8_t *keep; /* per row group, or NULL = all */
    uint32_t rg;   /* current row group */
    bool rg_open;  /* chunks of `rg` are loaded */
    int64_t rg_rows_left;
    int64_t next_row; /* file row position of the next row */
    bool failed;
    size_t read_budget; /* chunk bytes held at once; 0 = whole chunks */
    pq_pbuf big;        /* pages larger than their column's window */
};

/* --- files --- */

static int validate(pq_file *pf, icd_error *err)
{
    const pq_file_meta *m = &pf->meta;
    const char *loc = pf->file->location;
    pf->rg_first_row = icd_arena_alloc(&pf->arena, (m->num_row_groups + 1) * sizeof(int64_t));
    if (!pf->rg_first_row) return icd_fail_nomem(err);
    int64_t total = 0;
    for (uint32_t g = 0; g < m->num_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        pf->rg_first_row[g] = total;
        if (rg->num_rows > INT64_MAX - total)
            return icd_fail(err, ICD_ECORRUPT, loc, -1,
                            "corrupt Parquet footer: row counts overflow");
        total += rg->num_rows;
        if (rg->num_columns != pf->schema.num_leaves)
            return icd_fail(err, ICD_ECORRUPT, loc, -1,
                            "corrupt Parquet footer: row group %u has %u column chunks, the "
                            "schema %u columns",
                            g, rg->num_columns, pf->schema.num_leaves);
    }
    pf->rg_first_row[m->num_row_groups] = total;
    /* The footer's num_rows is not trusted (some writers leave it 0): row positions come
     * from the row groups. */
    return 0;
}

int pq_file_open_file(icd_file *f, pq_file **out, icd_error *err)
{
    *out = NULL;
    pq_file *pf = calloc(1, sizeof *pf);
    if (!pf) {
        icd_file_close(f);
        return icd_fail_nomem(err);
    }
    pf->file = f;
    int rc = pq_meta_read(f, &pf->arena, &pf->meta, err);
    if (!rc) rc = pq_schema_build(&pf->meta, &pf->arena, &pf->schema, f->location, err);
    if (!rc) rc = validate(pf, err);
    if (rc) {
        pq_file_close(pf);
        return rc;
    }
    *out = pf;
    return 0;
}

int pq_file_open(icd_fileio *io, const char *location, pq_file **out, icd_error *err)
{
    icd_file *f;
    *out = NULL;
    ICD_TRY(icd_file_open(io, location, &f, err));
    return pq_file_open_file(f, out, err);
}

void pq_file_close(pq_file *pf)
{
    if (!pf) return;
    icd_file_close(pf->file);
    icd_arena_free(&pf->arena);
    free(pf);
}

const char *pq_file_location(const pq_file *pf)
{
    return pf->file->location;
}
const pq_file_meta *pq_file_metadata(const pq_file *pf)
{
    return &pf->meta;
}
const pq_schema *pq_file_schema(const pq_file *pf)
{
    return &pf->schema;
}
int64_t pq_file_num_rows(const pq_file *pf)
{
    return pf->meta.num_rows;
}
uint32_t pq_file_num_row_groups(const pq_file *pf)
{
    return pf->meta.num_row_groups;
}

const pq_row_group *pq_file_row_group(const pq_file *pf, uint32_t rg)
{
    return rg < pf->meta.num_row_groups ? &pf->meta.row_groups[rg] : NULL;
}

int64_t pq_file_row_group_first_row(const pq_file *pf, uint32_t rg)
{
    return rg <= pf->meta.num_row_groups ? pf->rg_first_row[rg] : -1;
}

/* --- statistics --- */

static uint64_t le(const char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = (v << 8) | (uint8_t)p[i];
    return v;
}

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Decodes one PLAIN-encoded bound; false when its size does not fit the type. */
static bool decode_bound(const pq_node *leaf, const pq_str *s, pq_stat_value *v)
{
    memset(v, 0, sizeof *v);
    const int k = leaf->eff.kind;
    bool unsig = k == PQ_LT_INTEGER && !leaf->eff.is_signed;
    switch (leaf->physical_type) {
    case PQ_BOOLEAN:
        if (s->len != 1) return false;
        v->kind = PQ_STAT_BOOL;
        v->b = s->ptr[0] != 0;
        return true;
    case PQ_INT32:
        if (s->len != 4) return false;
        if (unsig) {
            v->kind = PQ_STAT_UINT;
            v->u = (uint32_t)le(s->ptr, 4);
        } else {
            v->kind = PQ_STAT_INT;
            v->i = (int32_t)(uint32_t)le(s->ptr, 4);
        }
        return true;
    case PQ_INT64:
        if (s->len != 8) return false;
        if (unsig) {
            v->kind = PQ_STAT_UINT;
            v->u = le(s->ptr, 8);
        } else {
            v->kind = PQ_STAT_INT;
            v->i = (int64_t)le(s->ptr, 8);
        }
        return true;
    case PQ_FLOAT: {
        if (s->len != 4) return false;
        uint32_t u = (uint32_t)le(s->ptr, 4);
        float f;
        memcpy(&f, &u, 4);
        v->kind = PQ_STAT_DOUBLE;
        v->d = f;
        return true;
    }
    case PQ_DOUBLE: {
        if (s->len != 8) return false;
        uint64_t u = le(s->ptr, 8);
        v->kind = PQ_STAT_DOUBLE;
        memcpy(&v->d, &u, 8);
        return true;
    }
    case PQ_BYTE_ARRAY:
    case PQ_FIXED_LEN_BYTE_ARRAY:
        if (k == PQ_LT_FLOAT16) {
            if (s->len != 2) return false;
            v->kind = PQ_STAT_DOUBLE;
            v->d = half_to_double((uint16_t)le(s->ptr, 2));
            return true;
        }
        v->kind = PQ_STAT_BYTES;
        v->bytes.ptr = (const uint8_t *)s->ptr;
        v->bytes.len = s->len;
        return true;
    default:
        return false; /* INT96: no usable order */
    }
}

/* Whether the deprecated signed-order min/max match the column's own order. */
static bool legacy_order_ok(const pq_node *leaf)
{
    switch (leaf->physical_type) {
    case PQ_BOOLEAN:
    case PQ_FLOAT:
    case PQ_DOUBLE:
        return true;
    case PQ_INT32:
    case PQ_INT64:
        return !(leaf->eff.kind == PQ_LT_INTEGER && !leaf->eff.is_signed);
    default:
        return false;
    }
}

int pq_file_column_stats(const pq_file *pf, uint32_t rg, uint32_t leaf_idx, pq_column_stats *out,
                         icd_error *err)
{
    memset(out, 0, sizeof *out);
    if (rg >= pf->meta.num_row_groups || leaf_idx >= pf->schema.num_leaves)
        return icd_fail(err, ICD_EINVALID, pf->file->location, -1, "no column %u in row group %u",
                        leaf_idx, rg);
    const pq_node *leaf = pf->schema.leaves[leaf_idx];
    const pq_column_meta *m = &pf->meta.row_groups[rg].columns[leaf_idx].meta;
    const pq_statistics *s = &m->stats;
    out->num_values = m->num_values;
    if (!s->present) return 0;
    out->has_null_count = s->has_null_count;
    out->null_count = s->null_count;
    out->has_nan_count = s->has_nan_count;
    out->nan_count = s->nan_count;
    int order =
        leaf_idx < pf->meta.num_column_orders ? pf->meta.column_orders[leaf_idx] : PQ_ORDER_UNKNOWN;
    bool order_ok = order == PQ_ORDER_TYPE_DEFINED ||
                    (order == PQ_ORDER_IEEE754 &&
                     (leaf->physical_type == PQ_FLOAT || leaf->physical_type == PQ_DOUBLE ||
                      leaf->eff.kind == PQ_LT_FLOAT16));
    if (leaf->physical_type == PQ_INT96) order_ok = false;
    const pq_str *mn = NULL, *mx = NULL;
    if (order_ok && (s->min_value.ptr || s->max_value.ptr)) {
        mn = s->min_value.ptr ? &s->min_value : NULL;
        mx = s->max_value.ptr ? &s->max_value : NULL;
        out->min_exact = s->has_is_min_value_exact && s->is_min_value_exact;
        out->max_exact = s->has_is_max_value_exact && s->is_max_value_exact;
    } else if (legacy_order_ok(leaf) && leaf->eff.kind != PQ_LT_FLOAT16) {
        mn = s->min.ptr ? &s->min : NULL;
        mx = s->max.ptr ? &s->max : NULL;
    }
    if (mn) out->has_min = decode_bound(leaf, mn, &out->min);
    if (mx) out->has_max = decode_bound(leaf, mx, &out->max);
    if (out->has_min && out->min.kind == PQ_STAT_DOUBLE) {
        if (isnan(out->min.d))
            out->has_min = false;
        else if (out->min.d == 0)
            out->min.d = -0.0;
    }
    if (out->has_max && out->max.kind == PQ_STAT_DOUBLE) {
        if (isnan(out->max.d))
            out->has_max = false;
        else if (out->max.d == 0)
            out->max.d = 0.0;
    }
    return 0;
}

/* --- selection --- */

static int add_leaves(const pq_node *n, uint8_t *mark)
{
    for (int i = 0; i < n->num_leaves; i++)
        mark[n->first_leaf + i] = 1;
    return 0;
}

int pq_file_select(const pq_file *pf, const pq_selection *sel, int **leaves, size_t *count,
                   icd_error *err)
{
    const pq_schema *s = &pf->schema;
    *leaves = NULL;
    *count = 0;
    uint8_t *mark = calloc(s->num_leaves + 1, 1);
    if (!mark) return icd_fail_nomem(err);
    bool any = sel && (sel->num_paths || sel->num_field_ids);
    int rc = 0;
    if (!any) memset(mark, 1, s->num_leaves);
    for (size_t i = 0; any && i < sel->num_paths; i++) {
        const pq_node *n = pq_schema_find_path(s, sel->paths[i]);
        if (!n) {
            rc = icd_fail(err, ICD_ENOTFOUND, pf->file->location, -1,
                          "no column '%s' in the Parquet schema", sel->paths[i]);
            break;
        }
        add_leaves(n, mark);
    }
    for (size_t i = 0; !rc && any && i < sel->num_field_ids; i++) {
        const pq_node *n = pq_schema_find_field_id(s, sel->field_ids[i]);
        if (!n) {
            rc = icd_fail(err, ICD_ENOTFOUND, pf->file->location, -1,
                          "no field id %d in the Parquet schema", (int)sel->field_ids[i]);
            break;
        }
        add_leaves(n, mark);
    }
    if (!rc) {
        size_t n = 0;
        for (uint32_t i = 0; i < s->num_leaves; i++)
            n += mark[i];
        int *v = malloc((n ? n : 1) * sizeof *v);
        if (!v) {
            rc = icd_fail_nomem(err);
        } else {
            size_t k = 0;
            for (uint32_t i = 0; i < s->num_leaves; i++)
                if (mark[i]) v[k++] = (int)i;
            *leaves = v;
            *count = n;
        }
    }
    free(mark);
    return rc;
}

/* --- readers --- */

int pq_reader_open(pq_file *pf, const int *leaves, size_t count, size_t batch_rows, pq_reader **out,
                   icd_error *err)
{
    *out = NULL;
    const pq_schema *s = &pf->schema;
    if (count == 0) count = s->num_leaves;
    pq_reader *r = calloc(1, sizeof *r);
    if (!r) return icd_fail_nomem(err);
    r->pf = pf;
    r->batch_rows = batch_rows ? batch_rows : PQ_DEFAULT_BATCH_ROWS;
    r->ncols = count;
    r->cols = calloc(count ? count : 1, sizeof *r->cols);
    r->bufs = calloc(count ? count : 1, sizeof *r->bufs);
    r->colbatch = calloc(count ? count : 1, sizeof *r->colbatch);
    if (!r->cols || !r->bufs || !r->colbatch) {
        pq_reader_close(r);
        return icd_fail_nomem(err);
    }
    for (size_t i = 0; i < count; i++) {
        int li = leaves ? leaves[i] : (int)i;
        if (li < 0 || (uint32_t)li >= s->num_leaves || (i && leaves && leaves[i - 1] >= li)) {
            pq_reader_close(r);
            return icd_fail(err, ICD_EINVALID, pf->file->location, -1,
                            "invalid column selection (leaf %d)", li);
        }
        pq_colreader_init(&r->cols[i], pf->file, s->leaves[li]);
        r->colbatch[i].leaf = s->leaves[li];
        r->colbatch[i].physical_type = s->leaves[li]->physical_type;
    }
    r->batch.columns = r->colbatch;
    r->batch.num_columns = count;
    *out = r;
    return 0;
}

int pq_reader_select_row_groups(pq_reader *r, const uint8_t *keep, size_t n, icd_error *err)
{
    uint32_t ng = r->pf->meta.num_row_groups;
    if (n != ng)
        return icd_fail(err, ICD_EINVALID, r->pf->file->location, -1,
                        "row group selection of %zu entries for %u row groups", n, ng);
    free(r->keep);
    r->keep = malloc(ng ? ng : 1);
    if (!r->keep) return icd_fail_nomem(err);
    if (ng) memcpy(r->keep, keep, ng);
    return 0;
}

void pq_reader_set_read_budget(pq_reader *r, size_t bytes)
{
    r->read_budget = bytes;
}

size_t pq_reader_read_bytes(const pq_reader *r)
{
    size_t n = r->big.cap;
    for (size_t i = 0; i < r->ncols; i++)
        n += pq_colreader_window_bytes(&r->cols[i]);
    return n;
}

size_t pq_reader_memory_bytes(const pq_reader *r)
{
    size_t n = r->big.cap;
    for (size_t i = 0; i < r->ncols; i++) {
        const pq_colreader *c = &r->cols[i];
        const pq_colbuf *b = &r->bufs[i];
        n += pq_colreader_memory_bytes(c) + b->vals_cap * c->value_size;
        if (c->max_def) n += b->lvl_cap * sizeof *b->def;
        if (c->max_rep) n += b->lvl_cap * sizeof *b->rep;
    }
    return n;
}

/* A chunk's share of the read budget: in proportion to its size, so a large column reads
 * as many pages per request as a small one, at least PQ_MIN_WINDOW. */
#define PQ_MIN_WINDOW (16 * 1024)

static size_t chunk_bytes(const pq_column_chunk *cc)
{
    int64_t n = cc->meta.total_compressed_size;
    return n > 0 ? (size_t)n : 0;
}

static int open_row_group(pq_reader *r, icd_error *err)
{
    const pq_row_group *g = &r->pf->meta.row_groups[r->rg];
    size_t total = 0;
    for (size_t i = 0; i < r->ncols; i++) {
        size_t n = chunk_bytes(&g->columns[r->cols[i].leaf->leaf_index]);
        total = n > SIZE_MAX - total ? SIZE_MAX : total + n;
    }
    bool whole = r->read_budget == 0 || total <= r->read_budget;
    if (!whole && r->big.cap > r->read_budget) { /* a large page of an earlier row group */
        icd_bigbuf_free(r->big.data);
        r->big.data = NULL;
        r->big.cap = 0;
    }
    for (size_t i = 0; i < r->ncols; i++) {
        int li = r->cols[i].leaf->leaf_index;
        size_t window = 0;
        if (!whole) {
            double share = (double)chunk_bytes(&g->columns[li]) / (double)total;
            window = (size_t)((double)r->read_budget * share);
            if (window < PQ_MIN_WINDOW) window = PQ_MIN_WINDOW;
        }
        ICD_TRY(pq_colreader_start(&r->cols[i], &g->columns[li], r->rg, window, &r->big, err));
    }
    r->rg_open = true;
    r->rg_rows_left = g->num_rows;
    r->next_row = r->pf->rg_first_row[r->rg];
    return 0;
}

static int close_row_group(pq_reader *r, icd_error *err)
{
    for (size_t i = 0; i < r->ncols; i++)
        ICD_TRY(pq_colreader_check_end(&r->cols[i], err));
    r->rg_open = false;
    r->rg++;
    return 0;
}

int pq_reader_next(pq_reader *r, pq_batch **out, icd_error *err)
{
    *out = NULL;
    if (r->failed)
        return icd_fail(err, ICD_EINVALID, r->pf->file->location, -1, "reader used after an error");
    for (size_t i = 0; i < r->ncols; i++)
        pq_colreader_release(&r->cols[i]);
    int rc = 0;
    uint32_t ng = r->pf->meta.num_row_groups;
    for (;;) {
        if (r->rg_open && r->rg_rows_left == 0) {
            if ((rc = close_row_group(r, err))) break;
        }
        if (!r->rg_open) {
            while (r->rg < ng &&
                   ((r->keep && !r->keep[r->rg]) || r->pf->meta.row_groups[r->rg].num_rows == 0))
                r->rg++;
            if (r->rg >= ng) return 0;
            if ((rc = open_row_group(r, err))) break;
            if (r->rg_rows_left == 0) continue;
        }
        size_t rows = r->batch_rows;
        if ((int64_t)rows > r->rg_rows_left) rows = (size_t)r->rg_rows_left;
        for (size_t i = 0; i < r->ncols && !rc; i++) {
            pq_colbuf *b = &r->bufs[i];
            rc = pq_colreader_read_rows(&r->cols[i], rows, b, err);
            pq_column_batch *cb = &r->colbatch[i];
            cb->num_levels = b->lvl_len;
            cb->def = cb->leaf->def_level ? b->def_view : NULL;
            cb->rep = cb->leaf->rep_level ? b->rep_view : NULL;
            cb->num_values = b->vals_len;
            cb->values = b->vals_view;
        }
        if (rc) break;
        r->batch.first_row = r->next_row;
        r->batch.num_rows = rows;
        r->batch.row_group = r->rg;
        r->next_row += (int64_t)rows;
        r->rg_rows_left -= (int64_t)rows;
        if (r->ncols == 0 && rows == 0) continue;
        *out = &r->batch;
        return 0;
    }
    r->failed = true;
    return rc;
}

void pq_reader_close(pq_reader *r)
{
    if (!r) return;
    for (size_t i = 0; r->cols && i < r->ncols; i++)
        pq_colreader_free(&r->cols[i]);
    for (size_t i = 0; r->bufs && i < r->ncols; i++) {
        icd_bigbuf_free(r->bufs[i].def);
        icd_bigbuf_free(r->bufs[i].rep);
        icd_bigbuf_free(r->bufs[i].vals);
    }
    free(r->cols);
    free(r->bufs);
    free(r->colbatch);
    free(r->keep);
    icd_bigbuf_free(r->big.data);
    free(r);
}
