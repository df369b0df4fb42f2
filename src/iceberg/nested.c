/*
 * Iceberg-typed record assembly (see nested.h).
 *
 * Binding builds a tree of assembly nodes (anode) that mirrors the Iceberg type and points
 * at the Parquet node each part is read from. Every Parquet node under the column gets the
 * index of its first *read* leaf (fc[]), the leaf whose levels answer "is this node null /
 * is the list empty / does the list go on" — the Dremel rules also used by the `cat` JSON
 * writer (formats/parquet/json.c), applied here to only the leaves the Iceberg schema
 * needs:
 *
 *   fld(N)    OPTIONAL node: null when the definition level is below N's (every read leaf
 *             under N then consumes one entry), else val(N)
 *   val(N)    primitive -> next value, converted to the Iceberg type; variant -> the next
 *             metadata/value pair as JSON; struct -> its Iceberg fields in schema order
 *             (missing ones from initial-default); list/map -> items while the next entry's
 *             repetition level equals the repeated node's
 *
 * A struct whose Iceberg fields are all missing from the file still needs its own nulls: one
 * leaf under it is read for presence only ("hidden"), and its entries are passed over with
 * skip_instance, which also skips whole deleted rows: an instance of a node at a repetition
 * depth P is its first entry plus every following entry whose repetition level is > P.
 * Levels that disagree between leaves are reported, never read out of bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/arena.h"
#include "formats/parquet/variant.h"
#include "iceberg/nested.h"
#include "iceberg/tvalue.h"

typedef enum akind { A_CONST, A_LEAF, A_VARIANT, A_STRUCT, A_LIST, A_MAP } akind;

typedef struct anode anode;
struct anode {
    akind kind;
    const ice_field *f;
    const pq_node *pn; /* NULL for A_CONST */
    int col, col2;     /* A_LEAF: leaf; A_VARIANT: metadata, value (leaf index, then local) */
    anode *kids;       /* struct: one per Iceberg field; list: element; map: key, value */
    size_t nkids;
    const pq_node *hidden; /* struct read for presence only: the child holding that leaf */
    size_t name_len;
};

typedef struct leaf_state {
    const pq_node *leaf;
    const pq_column_batch *cb;
    const uint32_t *def, *rep;
    size_t n, nv, lv, vi;
    uint32_t max_def;
    int batch_col;
} leaf_state;

struct ice_nested {
    icd_arena arena;
    const pq_schema *s;
    const pq_node *top;
    const ice_field *field;
    const char *file;
    anode root;
    int *leaves; /* read leaves, ascending */
    size_t nleaves, leaves_cap;
    int *col_of_leaf; /* schema leaf index -> local column, -1 when not read */
    int *fc;          /* schema node index -> first local column read under it, -1 */
    leaf_state *ls;
    const pq_batch *b;
    size_t row;
    icd_buf json; /* variant rendering */
};

/* ---- binding -------------------------------------------------------------------------- */

typedef struct bind_ctx {
    ice_nested *x;
    bool has_ids;
    icd_error *err;
} bind_ctx;

static int add_leaf(bind_ctx *c, int leaf)
{
    ice_nested *x = c->x;
    for (size_t i = 0; i < x->nleaves; i++)
        if (x->leaves[i] == leaf) return 0;
    if (ICD_ARRAY_RESERVE(x->leaves, x->leaves_cap, x->nleaves + 1, 8))
        return icd_fail_nomem(c->err);
    x->leaves[x->nleaves++] = leaf;
    return 0;
}

static int mismatch(bind_ctx *c, const ice_field *f, const pq_node *pn, const char *why)
{
    return icd_fail(c->err, ICD_ECORRUPT, c->x->file, -1,
                    "column %s: field %s (id %d, %s) cannot be read from Parquet '%s': %s",
                    c->x->field->name, f->name, (int)f->id, ice_type_kind_name(f->type->kind),
                    pn->dotted, why);
}

/* The mapping entry for field id `id` among `m`'s fields, or NULL. */
static const ice_mapped_field *mapped(const ice_name_mapping *m, int32_t id)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (m->fields[i].has_field_id && m->fields[i].field_id == id) return &m->fields[i];
    return NULL;
}

static const pq_node *child_named(const pq_node *pn, const char *name)
{
    for (uint32_t i = 0; i < pn->num_children; i++)
        if (!strcmp(pn->children[i]->name, name)) return pn->children[i];
    return NULL;
}

/* The Parquet child of struct node pn holding Iceberg field f. */
static const pq_node *find_child(bind_ctx *c, const pq_node *pn, const ice_field *f,
                                 const ice_name_mapping *m)
{
    if (c->has_ids) {
        for (uint32_t i = 0; i < pn->num_children; i++)
            if (pn->children[i]->has_field_id && pn->children[i]->field_id == f->id)
                return pn->children[i];
        return NULL;
    }
    if (m) {
        const ice_mapped_field *e = mapped(m, f->id);
        for (size_t k = 0; e && k < e->n_names; k++) {
            const pq_node *ch = child_named(pn, e->names[k]);
            if (ch) return ch;
        }
        return NULL;
    }
    return child_named(pn, f->name);
}

static const ice_name_mapping *sub_mapping(const ice_name_mapping *m, int32_t id, const char *name)
{
    const ice_mapped_field *e = mapped(m, id);
    if (!e) e = ice_name_mapping_find(m, name);
    return e ? e->fields : NULL;
}

static int bind(bind_ctx *c, anode *a, const ice_field *f, const pq_node *pn,
                const ice_name_mapping *m, bool as_element);

static int bind_variant(bind_ctx *c, anode *a, const ice_field *f, const pq_node *pn)
{
    if (pn->leaf_index >= 0 || pn->kind != PQ_NODE_STRUCT)
        return mismatch(c, f, pn, "a variant must be a group of metadata and value");
    if (child_named(pn, "typed_value"))
        return icd_fail(c->err, ICD_EUNSUPPORTED, c->x->file, -1,
                        "column %s: shredded variant '%s' (typed_value) is not supported yet",
                        c->x->field->name, pn->dotted);
    const pq_node *md = child_named(pn, "metadata"), *v = child_named(pn, "value");
    if (!md || !v || md->leaf_index < 0 || v->leaf_index < 0 ||
        md->physical_type != PQ_BYTE_ARRAY || v->physical_type != PQ_BYTE_ARRAY ||
        md->repetition == PQ_REPEATED || v->repetition == PQ_REPEATED)
        return mismatch(c, f, pn, "a variant group needs binary metadata and value fields");
    a->kind = A_VARIANT;
    a->col = md->leaf_index;
    a->col2 = v->leaf_index;
    ICD_TRY(add_leaf(c, md->leaf_index));
    return add_leaf(c, v->leaf_index);
}

/* The leaf read for presence of struct pn: one with no repetition below pn if possible. */
static int bind_presence(bind_ctx *c, anode *a, const pq_node *pn)
{
    if (pn->num_children == 0 || pn->num_leaves == 0)
        return icd_fail(c->err, ICD_ECORRUPT, c->x->file, -1, "column %s: group '%s' has no leaves",
                        c->x->field->name, pn->dotted);
    const pq_schema *s = c->x->s;
    int pick = pn->first_leaf;
    for (int i = 0; i < pn->num_leaves; i++)
        if (s->leaves[pn->first_leaf + i]->rep_level == pn->rep_level) {
            pick = pn->first_leaf + i;
            break;
        }
    for (uint32_t i = 0; i < pn->num_children; i++) {
        const pq_node *ch = pn->children[i];
        if (pick >= ch->first_leaf && pick < ch->first_leaf + ch->num_leaves) a->hidden = ch;
    }
    return add_leaf(c, pick);
}

static int bind_struct(bind_ctx *c, anode *a, const ice_field *f, const pq_node *pn,
                       const ice_name_mapping *m)
{
    const ice_type *t = f->type;
    if (pn->leaf_index >= 0 || pn->kind != PQ_NODE_STRUCT)
        return mismatch(c, f, pn, "not a plain group");
    a->kind = A_STRUCT;
    a->nkids = t->nfields;
    a->kids = icd_arena_calloc(&c->x->arena, (t->nfields ? t->nfields : 1) * sizeof *a->kids);
    if (!a->kids) return icd_fail_nomem(c->err);
    bool any = false;
    for (size_t i = 0; i < t->nfields; i++) {
        const ice_field *cf = &t->fields[i];
        const pq_node *ch = find_child(c, pn, cf, m);
        ICD_TRY(bind(c, &a->kids[i], cf, ch, sub_mapping(m, cf->id, cf->name), false));
        any |= ch != NULL;
    }
    return any ? 0 : bind_presence(c, a, pn);
}

static int bind(bind_ctx *c, anode *a, const ice_field *f, const pq_node *pn,
                const ice_name_mapping *m, bool as_element)
{
    const ice_type *t = f->type;
    a->f = f;
    a->pn = pn;
    a->name_len = strlen(f->name);
    if (!pn) {
        a->kind = A_CONST;
        return 0;
    }
    if (pn->repetition == PQ_REPEATED && !as_element && t->kind != ICE_T_LIST)
        return mismatch(c, f, pn, "a repeated field can only be a list");
    switch (t->kind) {
    case ICE_T_VARIANT:
        return bind_variant(c, a, f, pn);
    case ICE_T_STRUCT:
        return bind_struct(c, a, f, pn, m);
    case ICE_T_LIST: {
        const pq_node *el;
        if (pn->kind == PQ_NODE_LIST && pn->leaf_index < 0)
            el = pn->element_is_repeated ? pn->repeated : pn->element;
        else if (pn->repetition == PQ_REPEATED && !as_element)
            el = pn; /* a bare repeated field: a list of required elements */
        else
            return mismatch(c, f, pn, "not a list");
        if (!el) return mismatch(c, f, pn, "a list without an element");
        a->kind = A_LIST;
        a->nkids = 1;
        a->kids = icd_arena_calloc(&c->x->arena, sizeof *a->kids);
        if (!a->kids) return icd_fail_nomem(c->err);
        return bind(c, &a->kids[0], t->element, el, sub_mapping(m, t->element->id, "element"),
                    el == pn || el->repetition == PQ_REPEATED);
    }
    case ICE_T_MAP:
        if (pn->kind != PQ_NODE_MAP || pn->leaf_index >= 0 || !pn->key)
            return mismatch(c, f, pn, "not a map");
        a->kind = A_MAP;
        a->nkids = 2;
        a->kids = icd_arena_calloc(&c->x->arena, 2 * sizeof *a->kids);
        if (!a->kids) return icd_fail_nomem(c->err);
        ICD_TRY(bind(c, &a->kids[0], t->key, pn->key, sub_mapping(m, t->key->id, "key"), false));
        return bind(c, &a->kids[1], t->value, pn->value, sub_mapping(m, t->value->id, "value"),
                    false);
    default:
        if (pn->leaf_index < 0) return mismatch(c, f, pn, "a group where a primitive was expected");
        if (!ice_leaf_readable_as(pn, t))
            return icd_fail(c->err, ICD_EUNSUPPORTED, c->x->file, -1,
                            "column %s: Parquet %s column '%s' cannot be read as %s",
                            c->x->field->name, pq_type_name(pn->physical_type), pn->dotted,
                            ice_type_kind_name(t->kind));
        a->kind = A_LEAF;
        a->col = pn->leaf_index;
        return add_leaf(c, pn->leaf_index);
    }
}

/* Every Parquet node the walk consults has a read leaf under it. */
static bool all_bound(const ice_nested *x, const anode *a)
{
    if (a->pn) {
        if (x->fc[a->pn - x->s->nodes] < 0) return false;
        if (a->kind == A_MAP && x->fc[a->pn->repeated - x->s->nodes] < 0) return false;
        if (a->kind == A_LIST && a->pn->kind == PQ_NODE_LIST &&
            x->fc[a->pn->repeated - x->s->nodes] < 0)
            return false;
    }
    for (size_t i = 0; i < a->nkids; i++)
        if (!all_bound(x, &a->kids[i])) return false;
    return true;
}

/* Leaf indexes in the tree -> local columns. */
static void localise(ice_nested *x, anode *a)
{
    if (a->kind == A_LEAF) {
        a->col = x->col_of_leaf[a->col];
    } else if (a->kind == A_VARIANT) {
        a->col = x->col_of_leaf[a->col];
        a->col2 = x->col_of_leaf[a->col2];
    }
    for (size_t i = 0; i < a->nkids; i++)
        localise(x, &a->kids[i]);
}

int ice_nested_new(const ice_field *f, const pq_schema *s, const pq_node *n, bool has_ids,
                   const ice_name_mapping *mapping, const char *file, ice_nested **out,
                   icd_error *err)
{
    *out = NULL;
    ice_nested *x = calloc(1, sizeof *x);
    if (!x) return icd_fail_nomem(err);
    x->arena = (icd_arena)ICD_ARENA_INIT;
    x->json = (icd_buf)ICD_BUF_INIT;
    x->s = s;
    x->top = n;
    x->field = f;
    x->file = file;
    bind_ctx c = {.x = x, .has_ids = has_ids, .err = err};
    int rc = bind(&c, &x->root, f, n, has_ids ? NULL : sub_mapping(mapping, f->id, f->name), false);
    if (!rc && x->nleaves == 0)
        rc = icd_fail(err, ICD_EINTERNAL, file, -1, "column %s: nothing to read", f->name);
    if (rc) {
        ice_nested_free(x);
        return rc;
    }
    icd_sort_ints(x->leaves, x->nleaves);
    x->col_of_leaf = malloc((s->num_leaves + 1) * sizeof *x->col_of_leaf);
    x->fc = malloc((s->num_nodes + 1) * sizeof *x->fc);
    x->ls = calloc(x->nleaves, sizeof *x->ls);
    if (!x->col_of_leaf || !x->fc || !x->ls) {
        ice_nested_free(x);
        return icd_fail_nomem(err);
    }
    for (uint32_t i = 0; i < s->num_leaves; i++)
        x->col_of_leaf[i] = -1;
    for (size_t i = 0; i < x->nleaves; i++) {
        x->col_of_leaf[x->leaves[i]] = (int)i;
        x->ls[i].leaf = s->leaves[x->leaves[i]];
        x->ls[i].max_def = (uint32_t)x->ls[i].leaf->def_level;
        x->ls[i].batch_col = -1;
    }
    for (uint32_t i = 0; i < s->num_nodes; i++) {
        const pq_node *pn = &s->nodes[i];
        x->fc[i] = -1;
        for (int k = 0; k < pn->num_leaves; k++)
            if (x->col_of_leaf[pn->first_leaf + k] >= 0) {
                x->fc[i] = x->col_of_leaf[pn->first_leaf + k];
                break;
            }
    }
    localise(x, &x->root);
    if (!all_bound(x, &x->root)) {
        ice_nested_free(x);
        return icd_fail(err, ICD_ECORRUPT, file, -1,
                        "column %s: a Parquet group of the column has no columns", f->name);
    }
    *out = x;
    return 0;
}

void ice_nested_free(ice_nested *x)
{
    if (!x) return;
    icd_arena_free(&x->arena);
    icd_buf_free(&x->json);
    free(x->leaves);
    free(x->col_of_leaf);
    free(x->fc);
    free(x->ls);
    free(x);
}

size_t ice_nested_leaf_count(const ice_nested *x)
{
    return x->nleaves;
}
int ice_nested_leaf(const ice_nested *x, size_t i)
{
    return x->leaves[i];
}
void ice_nested_set_batch_column(ice_nested *x, size_t i, int batch_col)
{
    x->ls[i].batch_col = batch_col;
}

void ice_nested_begin(ice_nested *x, const pq_batch *b)
{
    x->b = b;
    x->row = 0;
    for (size_t i = 0; i < x->nleaves; i++) {
        leaf_state *ls = &x->ls[i];
        ls->cb = &b->columns[ls->batch_col];
        ls->def = ls->cb->def;
        ls->rep = ls->cb->rep;
        ls->n = ls->cb->num_levels;
        ls->nv = ls->cb->num_values;
        ls->lv = ls->vi = 0;
    }
}

/* ---- assembly ------------------------------------------------------------------------- */

static int bad(ice_nested *x, icd_error *err, const char *what)
{
    return icd_fail(err, ICD_ECORRUPT, x->file, -1,
                    "column %s: corrupt Parquet levels in row %lld: %s", x->field->name,
                    (long long)(x->b->first_row + (int64_t)x->row), what);
}

static inline leaf_state *first_ls(ice_nested *x, const pq_node *pn)
{
    return &x->ls[x->fc[pn - x->s->nodes]];
}

static inline uint32_t def_at(const leaf_state *ls)
{
    return ls->def ? ls->def[ls->lv] : ls->max_def;
}

static int peek_def(ice_nested *x, const pq_node *pn, uint32_t *d, icd_error *err)
{
    leaf_state *ls = first_ls(x, pn);
    if (ls->lv >= ls->n) return bad(x, err, "a column ran out of levels");
    *d = def_at(ls);
    return 0;
}

static bool continues(ice_nested *x, const pq_node *r)
{
    leaf_state *ls = first_ls(x, r);
    return ls->lv < ls->n && ls->rep && ls->rep[ls->lv] == (uint32_t)r->rep_level;
}

/* Every read leaf under pn consumes one entry that is null/empty above `below`. */
static int skip_null(ice_nested *x, const pq_node *pn, uint32_t below, icd_error *err)
{
    for (int i = 0; i < pn->num_leaves; i++) {
        int c = x->col_of_leaf[pn->first_leaf + i];
        if (c < 0) continue;
        leaf_state *ls = &x->ls[c];
        if (ls->lv >= ls->n) return bad(x, err, "a column ran out of levels");
        if (def_at(ls) >= below) return bad(x, err, "columns of one group disagree on a null");
        ls->lv++;
    }
    return 0;
}

/* Every read leaf under pn passes over one instance of pn at repetition depth `depth`. */
static int skip_instance(ice_nested *x, const pq_node *pn, uint32_t depth, icd_error *err)
{
    for (int i = 0; i < pn->num_leaves; i++) {
        int c = x->col_of_leaf[pn->first_leaf + i];
        if (c < 0) continue;
        leaf_state *ls = &x->ls[c];
        if (ls->lv >= ls->n) return bad(x, err, "a column ran out of levels");
        do {
            if (def_at(ls) == ls->max_def && ls->vi++ >= ls->nv)
                return bad(x, err, "a column ran out of values");
            ls->lv++;
        } while (ls->lv < ls->n && ls->rep && ls->rep[ls->lv] > depth);
    }
    return 0;
}

static int check_continue(ice_nested *x, const pq_node *r, icd_error *err)
{
    for (int i = 0; i < r->num_leaves; i++) {
        int c = x->col_of_leaf[r->first_leaf + i];
        if (c < 0) continue;
        leaf_state *ls = &x->ls[c];
        if (ls->lv >= ls->n || !ls->rep || ls->rep[ls->lv] != (uint32_t)r->rep_level)
            return bad(x, err, "columns of one list disagree on its length");
    }
    return 0;
}

/* The next value of a leaf that must be present; its index in the dense values. */
static int take(ice_nested *x, int col, size_t *vi, icd_error *err)
{
    leaf_state *ls = &x->ls[col];
    if (ls->lv >= ls->n) return bad(x, err, "a column ran out of levels");
    if (def_at(ls) != ls->max_def) return bad(x, err, "a required value is missing");
    if (ls->vi >= ls->nv) return bad(x, err, "a column ran out of values");
    *vi = ls->vi++;
    ls->lv++;
    return 0;
}

static int variant_value(ice_nested *x, const anode *a, const ice_row_sink *s, icd_error *err)
{
    size_t mi, vi;
    ICD_TRY(take(x, a->col, &mi, err));
    leaf_state *vs = &x->ls[a->col2];
    if (vs->leaf->repetition == PQ_OPTIONAL && vs->lv < vs->n && def_at(vs) != vs->max_def) {
        /* a shredding writer's optional value that is null: no variant value */
        vs->lv++;
        s->null_value(s->ctx);
        return 0;
    }
    ICD_TRY(take(x, a->col2, &vi, err));
    const pq_bytes *m = &((const pq_bytes *)x->ls[a->col].cb->values)[mi];
    const pq_bytes *v = &((const pq_bytes *)vs->cb->values)[vi];
    icd_buf_clear(&x->json);
    int rc = pq_variant_to_json(&x->json, m->ptr, m->len, v->ptr, v->len, err);
    if (rc) {
        icd_error_wrap(err, "column %s: corrupt variant in row %lld", x->field->name,
                       (long long)(x->b->first_row + (int64_t)x->row));
        icd_error_set_file(err, x->file);
        return rc;
    }
    s->raw_json(s->ctx, x->json.data, x->json.len);
    return 0;
}

static int fld(ice_nested *x, const anode *a, const ice_row_sink *s, icd_error *err);

static int items(ice_nested *x, const anode *a, const pq_node *r, const ice_row_sink *s,
                 icd_error *err)
{
    bool map = a->kind == A_MAP;
    uint32_t d;
    ICD_TRY(peek_def(x, r, &d, err));
    if (map)
        s->map_begin(s->ctx);
    else
        s->list_begin(s->ctx);
    if (d < (uint32_t)r->def_level) { /* empty */
        ICD_TRY(skip_null(x, r, (uint32_t)r->def_level, err));
    } else {
        for (bool first = true;; first = false) {
            if (!first) ICD_TRY(check_continue(x, r, err));
            ICD_TRY(fld(x, &a->kids[0], s, err));
            if (map) ICD_TRY(fld(x, &a->kids[1], s, err));
            if (!continues(x, r)) break;
        }
    }
    if (map)
        s->map_end(s->ctx);
    else
        s->list_end(s->ctx);
    return 0;
}

static int val(ice_nested *x, const anode *a, const ice_row_sink *s, icd_error *err)
{
    const pq_node *pn = a->pn;
    switch (a->kind) {
    case A_LEAF: {
        size_t vi;
        ICD_TRY(take(x, a->col, &vi, err));
        if (!ice_typed_value_in_range(a->f->type, pn, x->ls[a->col].cb, vi)) {
            /* the column as "leaf (in top)" and the row of the file, as for top-level values */
            char col[256];
            if (a->f == x->field)
                snprintf(col, sizeof col, "%s", a->f->name);
            else
                snprintf(col, sizeof col, "%s (in %s)", a->f->name, x->field->name);
            return ice_time_range_error(err, x->file, col, x->b->first_row + (int64_t)x->row,
                                        a->f->type, pn, x->ls[a->col].cb, vi);
        }
        ice_tvalue v = ice_typed_value(a->f->type, pn, x->ls[a->col].cb, vi);
        ice_emit_tvalue(s, &v, a->f->type);
        return 0;
    }
    case A_VARIANT:
        return variant_value(x, a, s, err);
    case A_STRUCT:
        s->struct_begin(s->ctx);
        for (size_t i = 0; i < a->nkids; i++) {
            s->field(s->ctx, a->kids[i].f->name, a->kids[i].name_len);
            ICD_TRY(fld(x, &a->kids[i], s, err));
        }
        if (a->hidden) ICD_TRY(skip_instance(x, a->hidden, (uint32_t)pn->rep_level, err));
        s->struct_end(s->ctx);
        return 0;
    case A_LIST:
        return items(x, a, pn->kind == PQ_NODE_LIST ? pn->repeated : pn, s, err);
    case A_MAP:
        return items(x, a, pn->repeated, s, err);
    default:
        return 0;
    }
}

/* Field a, its own nullability first. A list element that is the repeated node itself
 * (legacy 2-level lists, bare repeated fields) has no nullability of its own. */
static int fld(ice_nested *x, const anode *a, const ice_row_sink *s, icd_error *err)
{
    if (a->kind == A_CONST) {
        ice_emit_literal(s, a->f->initial_default, a->f->type);
        return 0;
    }
    const pq_node *pn = a->pn;
    if (pn->repetition == PQ_OPTIONAL) {
        uint32_t d;
        ICD_TRY(peek_def(x, pn, &d, err));
        if (d < (uint32_t)pn->def_level) {
            ICD_TRY(skip_null(x, pn, (uint32_t)pn->def_level, err));
            s->null_value(s->ctx);
            return 0;
        }
    }
    return val(x, a, s, err);
}

static int row_start(ice_nested *x, icd_error *err)
{
    if (x->row >= x->b->num_rows)
        return icd_fail(err, ICD_EINTERNAL, x->file, -1, "no more rows in the batch");
    for (size_t i = 0; i < x->nleaves; i++) {
        leaf_state *ls = &x->ls[i];
        if (ls->lv >= ls->n) return bad(x, err, "a column has fewer rows than the batch");
        if (ls->rep && ls->rep[ls->lv] != 0)
            return bad(x, err, "a row does not start at repetition level 0");
    }
    return 0;
}

int ice_nested_row(ice_nested *x, const ice_row_sink *s, icd_error *err)
{
    ICD_TRY(row_start(x, err));
    ICD_TRY(fld(x, &x->root, s, err));
    x->row++;
    return 0;
}

int ice_nested_skip_row(ice_nested *x, icd_error *err)
{
    ICD_TRY(row_start(x, err));
    ICD_TRY(skip_instance(x, x->top, 0, err));
    x->row++;
    return 0;
}

int ice_nested_end(ice_nested *x, icd_error *err)
{
    for (size_t i = 0; i < x->nleaves; i++) {
        leaf_state *ls = &x->ls[i];
        if (ls->lv != ls->n || ls->vi != ls->nv)
            return bad(x, err, "a column has more levels or values than its rows use");
    }
    return 0;
}
