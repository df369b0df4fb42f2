/*
 * Record assembly and JSON values for Parquet batches (see json.h).
 *
 * Each selected leaf column of a batch has a cursor over its level entries and one over its
 * dense values. Writing a row walks the schema tree top-down; at each node the first
 * selected leaf below it answers "is this node null / is the list empty / does the list go
 * on", and every leaf below the node is then advanced consistently:
 *
 *   field(N)   handles N's own repetition: REPEATED -> array of value(N) (an unannotated
 *              repeated field is a list of required elements), OPTIONAL -> null when the
 *              definition level is below N's, else value(N)
 *   value(N)   primitive -> the leaf's next value; struct -> object of field(child);
 *              LIST -> array of elements, MAP -> array of {"key","value"}; a list/map goes
 *              on while the next entry's repetition level equals its repeated node's
 *
 * Leaves that disagree with the one consulted (corrupt levels) are detected and reported,
 * never read out of bounds. Unnested top-level columns take a fast path; when every
 * selected leaf is one (a flat schema, the usual data file), whole rows take flat_row.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/datetime.h"
#include "base/jsonw.h"
#include "formats/parquet/json.h"

enum fmt {
    F_BOOL,
    F_I32,
    F_U32,
    F_I64,
    F_U64,
    F_FLOAT,
    F_DOUBLE,
    F_F16,
    F_DEC32,
    F_DEC64,
    F_DECBYTES,
    F_DATE,
    F_TIME32,
    F_TIME64,
    F_TS,
    F_INT96,
    F_STRING,
    F_UUID,
    F_BASE64
};

typedef struct leaf_state {
    const pq_node *leaf;
    const pq_column_batch *cb;
    const uint32_t *def, *rep;
    size_t n;      /* level entries */
    size_t nv;     /* values */
    size_t lv, vi; /* cursors */
    uint32_t max_def;
    int fmt; /* enum fmt */
} leaf_state;

typedef struct node_info {
    int sel;                   /* selected leaves under the node */
    int first_col;             /* batch column of the first selected leaf */
    uint32_t key_off, key_len; /* "name": in keys */
} node_info;

/* A flat row's key with its separator ("{\"id\":" or ",\"id\":"), padded so that it is
 * copied as one fixed-size move; longer keys are appended from `keys`. */
enum { FLAT_KEY = 32 };
typedef struct flat_key {
    char text[FLAT_KEY];
    uint32_t len; /* 0: does not fit, use the node's key in `keys` */
} flat_key;

struct pq_json_writer {
    const pq_schema *s;
    int *col_of_leaf;
    leaf_state *ls;
    size_t ncols;
    node_info *ni;
    icd_buf keys;
    const pq_node **top;
    size_t ntop;
    const pq_batch *b;
    size_t row;
    const char *location;
    bool flat;        /* every selected leaf is a top-level primitive column */
    flat_key *fkeys;  /* per column, when flat */
    size_t flat_rows; /* when flat: rows every column has level entries for */
};

static int unit_digits(int unit)
{
    return unit == PQ_UNIT_MILLIS ? 3 : unit == PQ_UNIT_NANOS ? 9 : 6;
}

static int leaf_fmt(const pq_node *n)
{
    const pq_logical_type *e = &n->eff;
    switch (n->physical_type) {
    case PQ_BOOLEAN:
        return F_BOOL;
    case PQ_INT32:
        switch (e->kind) {
        case PQ_LT_DECIMAL:
            return F_DEC32;
        case PQ_LT_DATE:
            return F_DATE;
        case PQ_LT_TIME:
            return F_TIME32;
        case PQ_LT_INTEGER:
            return e->is_signed ? F_I32 : F_U32;
        default:
            return F_I32;
        }
    case PQ_INT64:
        switch (e->kind) {
        case PQ_LT_DECIMAL:
            return F_DEC64;
        case PQ_LT_TIME:
            return F_TIME64;
        case PQ_LT_TIMESTAMP:
            return F_TS;
        case PQ_LT_INTEGER:
            return e->is_signed ? F_I64 : F_U64;
        default:
            return F_I64;
        }
    case PQ_INT96:
        return F_INT96;
    case PQ_FLOAT:
        return F_FLOAT;
    case PQ_DOUBLE:
        return F_DOUBLE;
    case PQ_BYTE_ARRAY:
        switch (e->kind) {
        case PQ_LT_STRING:
        case PQ_LT_ENUM:
        case PQ_LT_JSON:
            return F_STRING;
        case PQ_LT_DECIMAL:
            return F_DECBYTES;
        default:
            return F_BASE64;
        }
    default: /* FIXED_LEN_BYTE_ARRAY */
        switch (e->kind) {
        case PQ_LT_DECIMAL:
            return F_DECBYTES;
        case PQ_LT_UUID:
            return n->type_length == 16 ? F_UUID : F_BASE64;
        case PQ_LT_FLOAT16:
            return n->type_length == 2 ? F_F16 : F_BASE64;
        case PQ_LT_STRING:
        case PQ_LT_ENUM:
        case PQ_LT_JSON:
            return F_STRING;
        default:
            return F_BASE64;
        }
    }
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

static void put_int96(icd_buf *out, const pq_int96 *x)
{
    uint64_t nanos = icd_load_le64(x->b);
    uint32_t jd = icd_load_le32(x->b + 8);
    const int64_t day = 86400LL * 1000000000LL;
    int64_t ns = (int64_t)nanos;
    int64_t days = (int64_t)jd - 2440588 + icd_floordiv(ns, day);
    ns = icd_floormod(ns, day);
    icd_buf_putc(out, '"');
    icd_fmt_timestamp(out, days, ns, 9, false);
    icd_buf_putc(out, '"');
}

/* Narrows an integer to the annotated width (INT(8/16/32)), as Arrow and DuckDB do. */
static int64_t narrow_signed(int64_t v, int bits)
{
    switch (bits) {
    case 8:
        return (int8_t)v;
    case 16:
        return (int16_t)v;
    case 32:
        return (int32_t)v;
    default:
        return v;
    }
}

static uint64_t narrow_unsigned(uint64_t v, int bits)
{
    switch (bits) {
    case 8:
        return (uint8_t)v;
    case 16:
        return (uint16_t)v;
    case 32:
        return (uint32_t)v;
    default:
        return v;
    }
}

static void put_value(icd_buf *out, const pq_node *leaf, int fmt, const void *values, size_t i)
{
    const pq_logical_type *e = &leaf->eff;
    switch (fmt) {
    case F_BOOL:
        if (((const uint8_t *)values)[i])
            icd_buf_append(out, "true", 4);
        else
            icd_buf_append(out, "false", 5);
        return;
    case F_I32: {
        int64_t v = ((const int32_t *)values)[i];
        if (e->kind == PQ_LT_INTEGER) v = narrow_signed(v, e->bit_width);
        icd_json_i64(out, v);
        return;
    }
    case F_U32:
        icd_json_u64(out, narrow_unsigned((uint32_t)((const int32_t *)values)[i], e->bit_width));
        return;
    case F_I64: {
        int64_t v = ((const int64_t *)values)[i];
        if (e->kind == PQ_LT_INTEGER) v = narrow_signed(v, e->bit_width);
        icd_json_i64(out, v);
        return;
    }
    case F_U64:
        icd_json_u64(out, narrow_unsigned((uint64_t)((const int64_t *)values)[i], e->bit_width));
        return;
    case F_FLOAT:
        icd_json_float(out, ((const float *)values)[i]);
        return;
    case F_DOUBLE:
        icd_json_double(out, ((const double *)values)[i]);
        return;
    case F_F16: {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        icd_json_double(out, half_to_double((uint16_t)(b->ptr[0] | b->ptr[1] << 8)));
        return;
    }
    case F_DEC32:
        icd_json_decimal_i64(out, ((const int32_t *)values)[i], e->scale);
        return;
    case F_DEC64:
        icd_json_decimal_i64(out, ((const int64_t *)values)[i], e->scale);
        return;
    case F_DECBYTES: {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        icd_json_decimal_be(out, b->ptr, b->len, e->scale);
        return;
    }
    case F_DATE:
        icd_json_date(out, ((const int32_t *)values)[i]);
        return;
    case F_TIME32:
        icd_json_time(out, ((const int32_t *)values)[i], unit_digits(e->unit));
        return;
    case F_TIME64:
        icd_json_time(out, ((const int64_t *)values)[i], unit_digits(e->unit));
        return;
    case F_TS:
        icd_json_timestamp(out, ((const int64_t *)values)[i], unit_digits(e->unit), e->utc);
        return;
    case F_INT96:
        put_int96(out, &((const pq_int96 *)values)[i]);
        return;
    case F_STRING: {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        icd_json_str(out, (const char *)b->ptr, b->len);
        return;
    }
    case F_UUID:
        icd_json_uuid(out, ((const pq_bytes *)values)[i].ptr);
        return;
    default: {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        icd_json_base64(out, b->ptr, b->len);
        return;
    }
    }
}

void pq_json_value(icd_buf *out, const pq_node *leaf, const pq_column_batch *cb, size_t i)
{
    put_value(out, leaf, leaf_fmt(leaf), cb->values, i);
}

/* --- writer setup --- */

static int mark_node(pq_json_writer *w, const pq_node *n)
{
    node_info *ni = &w->ni[n - w->s->nodes];
    ni->sel = 0;
    ni->first_col = -1;
    for (int i = 0; i < n->num_leaves; i++) {
        int c = w->col_of_leaf[n->first_leaf + i];
        if (c >= 0) {
            if (ni->first_col < 0) ni->first_col = c;
            ni->sel++;
        }
    }
    ni->key_off = (uint32_t)w->keys.len;
    icd_json_str(&w->keys, n->name, strlen(n->name));
    icd_buf_putc(&w->keys, ':');
    ni->key_len = (uint32_t)(w->keys.len - ni->key_off);
    for (uint32_t i = 0; i < n->num_children; i++)
        ICD_TRY(mark_node(w, n->children[i]));
    return 0;
}

/* Flat schemas: with every top-level field a primitive column, the top nodes are the
 * columns in order (leaf order is schema order), and each row is one entry of each. */
static int setup_flat(pq_json_writer *w)
{
    if (w->ncols == 0 || w->ntop != w->ncols) return 0;
    for (size_t t = 0; t < w->ntop; t++) {
        const pq_node *n = w->top[t];
        if (n->kind != PQ_NODE_PRIMITIVE || n->rep_level != 0 || w->ls[t].leaf != n) return 0;
    }
    w->fkeys = calloc(w->ncols + 1, sizeof *w->fkeys);
    if (!w->fkeys) return -1;
    for (size_t t = 0; t < w->ntop; t++) {
        const node_info *ni = &w->ni[w->top[t] - w->s->nodes];
        flat_key *k = &w->fkeys[t];
        if (ni->key_len + 1 <= FLAT_KEY) {
            k->text[0] = t ? ',' : '{';
            memcpy(k->text + 1, w->keys.data + ni->key_off, ni->key_len);
            k->len = ni->key_len + 1;
        }
    }
    w->flat = true;
    return 0;
}

int pq_json_writer_new(const pq_schema *s, const int *leaves, size_t count, pq_json_writer **out,
                       icd_error *err)
{
    *out = NULL;
    pq_json_writer *w = calloc(1, sizeof *w);
    if (!w) return icd_fail_nomem(err);
    w->s = s;
    if (count == 0) count = s->num_leaves;
    w->ncols = count;
    w->col_of_leaf = malloc((s->num_leaves + 1) * sizeof *w->col_of_leaf);
    w->ls = calloc(count + 1, sizeof *w->ls);
    w->ni = calloc(s->num_nodes, sizeof *w->ni);
    w->top = calloc(s->root->num_children + 1, sizeof *w->top);
    if (!w->col_of_leaf || !w->ls || !w->ni || !w->top) {
        pq_json_writer_free(w);
        return icd_fail_nomem(err);
    }
    for (uint32_t i = 0; i < s->num_leaves; i++)
        w->col_of_leaf[i] = -1;
    for (size_t i = 0; i < count; i++) {
        int li = leaves ? leaves[i] : (int)i;
        if (li < 0 || (uint32_t)li >= s->num_leaves) {
            pq_json_writer_free(w);
            return icd_fail(err, ICD_EINVALID, NULL, -1, "invalid leaf %d", li);
        }
        w->col_of_leaf[li] = (int)i;
        const pq_node *leaf = s->leaves[li];
        w->ls[i].leaf = leaf;
        w->ls[i].max_def = (uint32_t)leaf->def_level;
        w->ls[i].fmt = leaf_fmt(leaf);
        if (leaf->eff.kind == PQ_LT_DECIMAL && (leaf->eff.scale < 0 || leaf->eff.scale > 1000)) {
            pq_json_writer_free(w);
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "column '%s' has an invalid DECIMAL scale %d", leaf->dotted,
                            (int)leaf->eff.scale);
        }
    }
    mark_node(w, s->root);
    if (!icd_buf_ok(&w->keys)) {
        pq_json_writer_free(w);
        return icd_fail_nomem(err);
    }
    for (uint32_t i = 0; i < s->root->num_children; i++) {
        const pq_node *c = s->root->children[i];
        if (w->ni[c - s->nodes].sel) w->top[w->ntop++] = c;
    }
    if (setup_flat(w)) {
        pq_json_writer_free(w);
        return icd_fail_nomem(err);
    }
    *out = w;
    return 0;
}

void pq_json_writer_free(pq_json_writer *w)
{
    if (!w) return;
    free(w->col_of_leaf);
    free(w->ls);
    free(w->ni);
    free(w->top);
    free(w->fkeys);
    icd_buf_free(&w->keys);
    free(w);
}

void pq_json_begin(pq_json_writer *w, const pq_batch *b)
{
    w->b = b;
    w->row = 0;
    size_t n = b->num_columns < w->ncols ? b->num_columns : w->ncols;
    for (size_t i = 0; i < n; i++) {
        leaf_state *ls = &w->ls[i];
        ls->cb = &b->columns[i];
        ls->def = ls->cb->def;
        ls->rep = ls->cb->rep;
        ls->n = ls->cb->num_levels;
        ls->nv = ls->cb->num_values;
        ls->lv = ls->vi = 0;
    }
    w->flat_rows = b->num_columns < w->ncols ? 0 : b->num_rows;
    for (size_t i = 0; i < n; i++)
        if (w->ls[i].n < w->flat_rows) w->flat_rows = w->ls[i].n;
}

/* --- record assembly --- */

static int bad(pq_json_writer *w, icd_error *err, const char *what)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, -1, "corrupt Parquet levels in row %lld: %s",
                    (long long)(w->b->first_row + (int64_t)w->row), what);
}

static inline node_info *info(pq_json_writer *w, const pq_node *n)
{
    return &w->ni[n - w->s->nodes];
}

/* Definition level of the next entry of the node's first selected leaf. */
static int peek_def(pq_json_writer *w, const pq_node *n, uint32_t *d, icd_error *err)
{
    leaf_state *ls = &w->ls[info(w, n)->first_col];
    if (ls->lv >= ls->n) return bad(w, err, "a column ran out of levels");
    *d = ls->def ? ls->def[ls->lv] : ls->max_def;
    return 0;
}

/* Whether the next entry continues the repeated node `r` (repetition level == r's). */
static bool continues(pq_json_writer *w, const pq_node *r)
{
    leaf_state *ls = &w->ls[info(w, r)->first_col];
    return ls->lv < ls->n && ls->rep && ls->rep[ls->lv] == (uint32_t)r->rep_level;
}

/* Every selected leaf under n consumes one entry that is null/empty above `below`
 * (its definition level must be < below). */
static int skip_entry(pq_json_writer *w, const pq_node *n, uint32_t below, icd_error *err)
{
    for (int i = 0; i < n->num_leaves; i++) {
        int c = w->col_of_leaf[n->first_leaf + i];
        if (c < 0) continue;
        leaf_state *ls = &w->ls[c];
        if (ls->lv >= ls->n) return bad(w, err, "a column ran out of levels");
        uint32_t d = ls->def ? ls->def[ls->lv] : ls->max_def;
        if (d >= below) return bad(w, err, "columns of one group disagree on a null");
        ls->lv++;
    }
    return 0;
}

/* Checks that every selected leaf under r is at an entry continuing r. */
static int check_continue(pq_json_writer *w, const pq_node *r, icd_error *err)
{
    for (int i = 0; i < r->num_leaves; i++) {
        int c = w->col_of_leaf[r->first_leaf + i];
        if (c < 0) continue;
        leaf_state *ls = &w->ls[c];
        if (ls->lv >= ls->n || !ls->rep || ls->rep[ls->lv] != (uint32_t)r->rep_level)
            return bad(w, err, "columns of one list disagree on its length");
    }
    return 0;
}

static int field(pq_json_writer *w, const pq_node *n, icd_buf *out, icd_error *err);
static int value(pq_json_writer *w, const pq_node *n, icd_buf *out, icd_error *err);

static int leaf_value(pq_json_writer *w, const pq_node *n, icd_buf *out, icd_error *err)
{
    leaf_state *ls = &w->ls[info(w, n)->first_col];
    if (ls->lv >= ls->n) return bad(w, err, "a column ran out of levels");
    if (ls->def && ls->def[ls->lv] != ls->max_def)
        return bad(w, err, "a required value is missing");
    if (ls->vi >= ls->nv) return bad(w, err, "a column ran out of values");
    if (out) put_value(out, n, ls->fmt, ls->cb->values, ls->vi);
    ls->vi++;
    ls->lv++;
    return 0;
}

static void put_key(pq_json_writer *w, const pq_node *n, icd_buf *out)
{
    node_info *ni = info(w, n);
    icd_buf_append(out, w->keys.data + ni->key_off, ni->key_len);
}

static int struct_value(pq_json_writer *w, const pq_node *n, icd_buf *out, icd_error *err)
{
    if (out) icd_buf_putc(out, '{');
    bool first = true;
    for (uint32_t i = 0; i < n->num_children; i++) {
        const pq_node *c = n->children[i];
        if (!info(w, c)->sel) continue;
        if (out) {
            if (!first) icd_buf_putc(out, ',');
            put_key(w, c, out);
        }
        first = false;
        ICD_TRY(field(w, c, out, err));
    }
    if (out) icd_buf_putc(out, '}');
    return 0;
}

/* Elements of a list or map whose repeated node is `r` (its value is present). */
static int repeated_items(pq_json_writer *w, const pq_node *list, const pq_node *r, icd_buf *out,
                          icd_error *err)
{
    uint32_t d;
    ICD_TRY(peek_def(w, r, &d, err));
    if (out) icd_buf_putc(out, '[');
    if (d < (uint32_t)r->def_level) { /* empty */
        ICD_TRY(skip_entry(w, r, (uint32_t)r->def_level, err));
        if (out) icd_buf_putc(out, ']');
        return 0;
    }
    for (bool first = true;; first = false) {
        if (!first) {
            ICD_TRY(check_continue(w, r, err));
            if (out) icd_buf_putc(out, ',');
        }
        if (!list) {
            ICD_TRY(value(w, r, out, err)); /* unannotated repeated field */
        } else if (list->kind == PQ_NODE_LIST) {
            if (list->element_is_repeated)
                ICD_TRY(value(w, r, out, err));
            else
                ICD_TRY(field(w, list->element, out, err));
        } else { /* MAP */
            if (out) icd_buf_append(out, "{\"key\":", 7);
            if (info(w, list->key)->sel) {
                ICD_TRY(field(w, list->key, out, err));
            } else if (out) {
                icd_buf_append(out, "null", 4);
            }
            if (!list->value) {
                if (out) icd_buf_append(out, ",\"value\":null", 13);
            } else if (info(w, list->value)->sel) {
                if (out) icd_buf_append(out, ",\"value\":", 9);
                ICD_TRY(field(w, list->value, out, err));
            }
            if (out) icd_buf_putc(out, '}');
        }
        if (!continues(w, r)) break;
    }
    if (out) icd_buf_putc(out, ']');
    return 0;
}

/* The value of node n (its own repetition already handled). */
static int value(pq_json_writer *w, const pq_node *n, icd_buf *out, icd_error *err)
{
    switch (n->kind) {
    case PQ_NODE_PRIMITIVE:
        return leaf_value(w, n, out, err);
    case PQ_NODE_LIST:
    case PQ_NODE_MAP:
        return repeated_items(w, n, n->repeated, out, err);
    default:
        return struct_value(w, n, out, err);
    }
}

static int field(pq_json_writer *w, const pq_node *n, icd_buf *out, icd_error *err)
{
    if (n->repetition == PQ_REPEATED) {
        return repeated_items(w, NULL, n, out, err);
    }
    if (n->repetition == PQ_OPTIONAL) {
        uint32_t d;
        ICD_TRY(peek_def(w, n, &d, err));
        if (d < (uint32_t)n->def_level) {
            ICD_TRY(skip_entry(w, n, (uint32_t)n->def_level, err));
            if (out) icd_buf_append(out, "null", 4);
            return 0;
        }
    }
    return value(w, n, out, err);
}

/* Every selected leaf must start the row at repetition level 0. */
static int check_row_start(pq_json_writer *w, icd_error *err)
{
    for (size_t i = 0; i < w->ncols; i++) {
        leaf_state *ls = &w->ls[i];
        if (ls->lv >= ls->n) return bad(w, err, "a column has fewer rows than the batch");
        if (ls->rep && ls->rep[ls->lv] != 0)
            return bad(w, err, "a row does not start at repetition level 0");
    }
    return 0;
}

/* Writes the key of flat column t with its separator. */
static inline void flat_put_key(pq_json_writer *w, size_t t, icd_buf *out)
{
    const flat_key *k = &w->fkeys[t];
    if (!k->len) {
        icd_buf_putc(out, t ? ',' : '{');
        put_key(w, w->top[t], out);
        return;
    }
    if (out->len + FLAT_KEY + 1 > out->cap && !icd_buf_grow(out, FLAT_KEY + 1)) return;
    memcpy(out->data + out->len, k->text, FLAT_KEY);
    out->len += k->len;
    out->data[out->len] = '\0';
}

/* row() for flat schemas: each column holds one level entry per row, so the entries of
 * row r are entry r of every column (check_row_start's checks reduce to r < flat_rows). */
static int flat_row(pq_json_writer *w, icd_buf *out, icd_error *err)
{
    if (w->row >= w->flat_rows) return bad(w, err, "a column has fewer rows than the batch");
    for (size_t t = 0; t < w->ncols; t++) {
        leaf_state *ls = &w->ls[t];
        bool present = !ls->def || ls->def[ls->lv] == ls->max_def;
        ls->lv++;
        if (out) flat_put_key(w, t, out);
        if (!present) {
            if (out) icd_buf_append(out, "null", 4);
            continue;
        }
        if (ls->vi >= ls->nv) return bad(w, err, "a column ran out of values");
        if (out) put_value(out, ls->leaf, ls->fmt, ls->cb->values, ls->vi);
        ls->vi++;
    }
    if (out) icd_buf_putc(out, '}');
    w->row++;
    return 0;
}

static int row(pq_json_writer *w, icd_buf *out, icd_error *err)
{
    if (w->row >= w->b->num_rows)
        return icd_fail(err, ICD_EINTERNAL, NULL, -1, "no more rows in the batch");
    if (w->flat) return flat_row(w, out, err);
    ICD_TRY(check_row_start(w, err));
    if (out) icd_buf_putc(out, '{');
    for (size_t t = 0; t < w->ntop; t++) {
        const pq_node *n = w->top[t];
        if (out) {
            if (t) icd_buf_putc(out, ',');
            put_key(w, n, out);
        }
        if (n->kind == PQ_NODE_PRIMITIVE && n->rep_level == 0) {
            /* fast path: one entry per row */
            leaf_state *ls = &w->ls[info(w, n)->first_col];
            if (ls->def && ls->def[ls->lv] != ls->max_def) {
                if (out) icd_buf_append(out, "null", 4);
            } else {
                if (ls->vi >= ls->nv) return bad(w, err, "a column ran out of values");
                if (out) put_value(out, n, ls->fmt, ls->cb->values, ls->vi);
                ls->vi++;
            }
            ls->lv++;
            continue;
        }
        ICD_TRY(field(w, n, out, err));
    }
    if (out) icd_buf_putc(out, '}');
    w->row++;
    return 0;
}

int pq_json_row(pq_json_writer *w, icd_buf *out, icd_error *err)
{
    return row(w, out, err);
}
int pq_json_skip_row(pq_json_writer *w, icd_error *err)
{
    return row(w, NULL, err);
}

int pq_json_end(pq_json_writer *w, icd_error *err)
{
    for (size_t i = 0; i < w->ncols; i++) {
        leaf_state *ls = &w->ls[i];
        if (ls->lv != ls->n || ls->vi != ls->nv)
            return bad(w, err, "a column has more levels or values than its rows use");
    }
    return 0;
}
