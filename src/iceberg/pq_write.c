/*
 * Iceberg read -> Parquet (see pq_write.h): the schema mapping (with the mirroring of an
 * original data file's schema) and the row sink that shreds the reader's typed rows into
 * the writer's leaf columns.
 *
 * Shredding follows the Dremel rules over the writer's schema tree: the sink keeps a
 * stack of frames (the top-level row, then every open struct, list or map); each value
 * callback goes to the field the frame points at (struct: the last `field` callback; list:
 * the element; map: key and value alternately) with the frame's repetition level for the
 * first item of a list/map and the repeated node's level for the following ones. A value
 * appends (max definition level, rep, value) to its leaf; a null appends the node's own
 * "absent" level to every leaf under it; an empty list/map appends the list group's
 * level. Rows are buffered per leaf and handed to pq_writer_write_batch every
 * ICE_PQW_BATCH_ROWS rows (or sooner when the buffered values grow large).
 *
 * Whole batches (on_columns) skip the per-value dispatch: each reader batch becomes one
 * pq_writer_write_batch call, with the copied columns' values gathered from the reader's
 * typed values and the converted ones shredded as above with the frame pointed at their
 * field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/buf.h"
#include "iceberg/pq_write.h"
#include "iceberg/tvalue.h"

#define ICE_PQW_BATCH_ROWS 4096
#define ICE_PQW_BATCH_BYTES ((size_t)8 << 20)

/* ---------------------------------------------------------------- schema */

typedef struct sbuild {
    pq_schema_element *els;
    size_t n, cap;
    icd_arena *arena;
    const pq_schema *mirror;
    bool mirror_ids; /* the mirrored file carries field ids */
    icd_error *err;
} sbuild;

static pq_schema_element *new_el(sbuild *b)
{
    if (ICD_ARRAY_RESERVE(b->els, b->cap, b->n + 1, 32)) return NULL;
    pq_schema_element *e = &b->els[b->n++];
    memset(e, 0, sizeof *e);
    e->converted = PQ_CONV_NONE;
    return e;
}

static void set_name(pq_schema_element *e, const char *name)
{
    e->name.ptr = name;
    e->name.len = (uint32_t)strlen(name);
}

/* The original node of a field among `parent`'s children: by id when the file has ids,
 * else by name. */
static const pq_node *mirror_child(const sbuild *b, const pq_node *parent, const ice_field *f)
{
    if (!parent || parent->kind != PQ_NODE_STRUCT) return NULL;
    for (uint32_t i = 0; i < parent->num_children; i++) {
        const pq_node *c = parent->children[i];
        if (b->mirror_ids ? c->has_field_id && c->field_id == f->id : !strcmp(c->name, f->name))
            return c;
    }
    return NULL;
}

/* Does the original leaf hold values of type t as they are (no promotion since)? */
static bool leaf_mirrors(const pq_node *n, const ice_type *t)
{
    if (n->physical_type < 0) return false;
    int p = n->physical_type;
    const pq_logical_type *e = &n->eff;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        return p == PQ_BOOLEAN;
    case ICE_T_INT:
        return p == PQ_INT32 && (e->kind == PQ_LT_NONE ||
                                 (e->kind == PQ_LT_INTEGER && (e->is_signed || e->bit_width < 32)));
    case ICE_T_LONG:
        return p == PQ_INT64 &&
               (e->kind == PQ_LT_NONE || (e->kind == PQ_LT_INTEGER && e->is_signed));
    case ICE_T_FLOAT:
        return p == PQ_FLOAT;
    case ICE_T_DOUBLE:
        return p == PQ_DOUBLE;
    case ICE_T_DECIMAL:
        return e->kind == PQ_LT_DECIMAL && e->precision == t->precision && e->scale == t->scale &&
               (p == PQ_INT32 || p == PQ_INT64 || p == PQ_FIXED_LEN_BYTE_ARRAY ||
                p == PQ_BYTE_ARRAY);
    case ICE_T_DATE:
        return p == PQ_INT32 && e->kind == PQ_LT_DATE;
    case ICE_T_TIME: /* micros only: Druid reads a time as its raw stored number */
        return e->kind == PQ_LT_TIME && p == PQ_INT64 && e->unit == PQ_UNIT_MICROS;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        return p == PQ_INT96 || (p == PQ_INT64 && e->kind == PQ_LT_TIMESTAMP);
    case ICE_T_STRING:
        return p == PQ_BYTE_ARRAY;
    case ICE_T_UUID:
        return p == PQ_FIXED_LEN_BYTE_ARRAY && n->type_length == 16;
    case ICE_T_FIXED:
        return p == PQ_FIXED_LEN_BYTE_ARRAY && n->type_length == t->length;
    case ICE_T_BINARY:
        return p == PQ_BYTE_ARRAY;
    default:
        return false;
    }
}

static int decimal_fixed_bytes(int precision)
{
    for (int n = 1; n < 64; n++)
        if (floor((8.0 * n - 1) * log10(2.0)) >= precision) return n;
    return 64;
}

/* The mapped (not mirrored) primitive. */
static int map_primitive(sbuild *b, pq_schema_element *e, const ice_field *f)
{
    const ice_type *t = f->type;
    e->has_type = true;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        e->type = PQ_BOOLEAN;
        break;
    case ICE_T_INT:
        e->type = PQ_INT32;
        break;
    case ICE_T_LONG:
        e->type = PQ_INT64;
        break;
    case ICE_T_FLOAT:
        e->type = PQ_FLOAT;
        break;
    case ICE_T_DOUBLE:
        e->type = PQ_DOUBLE;
        break;
    case ICE_T_DECIMAL:
        if (t->precision <= 9) {
            e->type = PQ_INT32;
        } else if (t->precision <= 18) {
            e->type = PQ_INT64;
        } else {
            e->type = PQ_FIXED_LEN_BYTE_ARRAY;
            e->has_type_length = true;
            e->type_length = decimal_fixed_bytes(t->precision);
        }
        e->converted = PQ_CONV_DECIMAL;
        e->has_scale = e->has_precision = true;
        e->scale = t->scale;
        e->precision = t->precision;
        e->logical.kind = PQ_LT_DECIMAL;
        e->logical.scale = t->scale;
        e->logical.precision = t->precision;
        break;
    case ICE_T_DATE:
        e->type = PQ_INT32;
        e->converted = PQ_CONV_DATE;
        e->logical.kind = PQ_LT_DATE;
        break;
    case ICE_T_TIME:
        e->type = PQ_INT64;
        e->converted = PQ_CONV_TIME_MICROS; /* as parquet-mr writes it */
        e->logical.kind = PQ_LT_TIME;
        e->logical.unit = PQ_UNIT_MICROS;
        break;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        bool utc = t->kind == ICE_T_TIMESTAMPTZ || t->kind == ICE_T_TIMESTAMPTZ_NS;
        bool ns = t->kind == ICE_T_TIMESTAMP_NS || t->kind == ICE_T_TIMESTAMPTZ_NS;
        e->type = PQ_INT64;
        e->logical.kind = PQ_LT_TIMESTAMP;
        e->logical.unit = ns ? PQ_UNIT_NANOS : PQ_UNIT_MICROS;
        e->logical.utc = utc;
        /* parquet-mr (Iceberg Java) also writes the converted type for local micros */
        if (!ns) e->converted = PQ_CONV_TIMESTAMP_MICROS;
        break;
    }
    case ICE_T_STRING:
        e->type = PQ_BYTE_ARRAY;
        e->converted = PQ_CONV_UTF8;
        e->logical.kind = PQ_LT_STRING;
        break;
    case ICE_T_UUID:
        e->type = PQ_FIXED_LEN_BYTE_ARRAY;
        e->has_type_length = true;
        e->type_length = 16;
        e->logical.kind = PQ_LT_UUID;
        break;
    case ICE_T_FIXED:
        e->type = PQ_FIXED_LEN_BYTE_ARRAY;
        e->has_type_length = true;
        e->type_length = t->length;
        break;
    case ICE_T_BINARY:
        e->type = PQ_BYTE_ARRAY;
        break;
    default:
        return icd_fail(b->err, ICD_EUNSUPPORTED, NULL, -1,
                        "column %s: writing Iceberg type %s to Parquet is not supported", f->name,
                        ice_type_kind_name(t->kind));
    }
    return 0;
}

static int add_field(sbuild *b, const ice_field *f, const char *name, const pq_node *orig,
                     int repetition);

/* A field: `orig` is its original node (or NULL); `repetition` -1 takes the field's own
 * (REQUIRED / OPTIONAL), else is forced (the repeated node of a 2-level list). */
static int add_field(sbuild *b, const ice_field *f, const char *name, const pq_node *orig,
                     int repetition)
{
    const ice_type *t = f->type;
    size_t at = b->n;
    pq_schema_element *e = new_el(b);
    if (!e) return icd_fail_nomem(b->err);
    int rep = repetition >= 0 ? repetition : f->required ? PQ_REQUIRED : PQ_OPTIONAL;
    bool mirrored = false;
    if (orig) {
        if (ice_type_is_primitive(t))
            mirrored = leaf_mirrors(orig, t);
        else if (t->kind == ICE_T_STRUCT)
            mirrored = orig->kind == PQ_NODE_STRUCT && orig->physical_type < 0;
        else if (t->kind == ICE_T_LIST)
            mirrored = orig->kind == PQ_NODE_LIST;
        else if (t->kind == ICE_T_MAP)
            mirrored = orig->kind == PQ_NODE_MAP && orig->value;
    }
    if (mirrored) {
        *e = *orig->elem;
        if (repetition < 0) rep = orig->repetition;
    }
    set_name(e, name);
    e->has_repetition = true;
    e->repetition = rep;
    e->has_field_id = true;
    e->field_id = f->id;
    if (ice_type_is_primitive(t)) {
        e->has_num_children = false;
        if (!mirrored) ICD_TRY(map_primitive(b, e, f));
        return 0;
    }
    e->has_type = false;
    e->has_type_length = false;
    e->has_num_children = true;
    if (t->kind == ICE_T_STRUCT) {
        e->num_children = (int32_t)t->nfields;
        if (!t->nfields)
            return icd_fail(b->err, ICD_EUNSUPPORTED, NULL, -1,
                            "column %s: an empty struct cannot be written to Parquet", f->name);
        for (size_t i = 0; i < t->nfields; i++)
            ICD_TRY(add_field(b, &t->fields[i], t->fields[i].name,
                              mirrored ? mirror_child(b, orig, &t->fields[i]) : NULL, -1));
        return 0;
    }
    if (!mirrored) {
        e->converted = t->kind == ICE_T_LIST ? PQ_CONV_LIST : PQ_CONV_MAP;
        memset(&e->logical, 0, sizeof e->logical);
        e->logical.kind = t->kind == ICE_T_LIST ? PQ_LT_LIST : PQ_LT_MAP;
    }
    e->num_children = 1;
    if (t->kind == ICE_T_LIST) {
        if (mirrored && orig->element_is_repeated) /* legacy 2-level: the element repeats */
            return add_field(b, t->element, orig->repeated->name, orig->element, PQ_REPEATED);
        pq_schema_element *r = new_el(b);
        if (!r) return icd_fail_nomem(b->err);
        (void)at;
        if (mirrored) *r = *orig->repeated->elem;
        set_name(r, mirrored ? orig->repeated->name : "list");
        r->has_repetition = true;
        r->repetition = PQ_REPEATED;
        r->has_type = false;
        r->has_num_children = true;
        r->num_children = 1;
        return add_field(b, t->element, mirrored ? orig->element->name : "element",
                         mirrored ? orig->element : NULL, -1);
    }
    pq_schema_element *r = new_el(b);
    if (!r) return icd_fail_nomem(b->err);
    if (mirrored) *r = *orig->repeated->elem;
    set_name(r, mirrored ? orig->repeated->name : "key_value");
    r->has_repetition = true;
    r->repetition = PQ_REPEATED;
    r->has_type = false;
    r->has_num_children = true;
    r->num_children = 2;
    r->has_field_id = false;
    ICD_TRY(
        add_field(b, t->key, mirrored ? orig->key->name : "key", mirrored ? orig->key : NULL, -1));
    return add_field(b, t->value, mirrored ? orig->value->name : "value",
                     mirrored ? orig->value : NULL, -1);
}

int ice_pqw_schema(const ice_field *fields, size_t nfields, const pq_schema *mirror,
                   icd_arena *arena, pq_schema_element **out, size_t *nout, icd_error *err)
{
    *out = NULL;
    *nout = 0;
    if (!nfields)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "a Parquet file needs at least one column");
    sbuild b = {.arena = arena, .mirror = mirror, .err = err};
    if (mirror)
        for (uint32_t i = 0; i < mirror->num_nodes && !b.mirror_ids; i++)
            b.mirror_ids = mirror->nodes[i].has_field_id;
    pq_schema_element *root = new_el(&b);
    if (!root) return icd_fail_nomem(err);
    set_name(root, "table");
    root->has_num_children = true;
    root->num_children = (int32_t)nfields;
    int rc = 0;
    for (size_t i = 0; i < nfields && !rc; i++)
        rc = add_field(&b, &fields[i], fields[i].name,
                       mirror ? mirror_child(&b, mirror->root, &fields[i]) : NULL, -1);
    if (!rc) {
        *out = icd_arena_alloc(arena, b.n * sizeof **out);
        if (!*out)
            rc = icd_fail_nomem(err);
        else
            memcpy(*out, b.els, b.n * sizeof **out);
        *nout = b.n;
    }
    free(b.els);
    return rc;
}

/* ---------------------------------------------------------------- the sink */

enum { S_LEAF, S_STRUCT, S_LIST, S_MAP };

typedef struct snode snode;
struct snode {
    int kind;
    const ice_field *f;
    const pq_node *pn;
    const char *name;
    size_t name_len;
    bool required;      /* cannot be null */
    uint32_t null_def;  /* definition level of a null */
    uint32_t empty_def; /* list/map: level of an empty one */
    uint32_t item_rep;  /* list/map: repetition level of the second and later items */
    int first_leaf, nleaves;
    snode *kids;
    size_t nkids;
};

typedef struct sleaf {
    const pq_node *pn;
    int type;
    size_t width;
    int unit; /* TIME / TIMESTAMP leaves: PQ_UNIT_* of the leaf */
    uint32_t max_def, max_rep;
    uint32_t *def, *rep;    /* NULL when the leaf's max level is 0 */
    size_t n, cap, cap_rep; /* levels; the capacities of def and rep */
    icd_buf vals;
    uint32_t *lens; /* byte arrays */
    size_t nvals, cap_lens;
    /* whole-batch input (on_columns): the leaf's column batch is set directly */
    bool direct;
    pq_bytes *pb; /* byte arrays gathered from the reader's batch */
    size_t cap_pb;
} sleaf;

typedef struct frame {
    const snode *n;
    size_t cur, next, items;
    uint32_t rep;
} frame;

struct ice_pqw_sink {
    ice_row_sink sink;
    pq_writer *w;
    snode root;
    sleaf *leaves;
    size_t nleaves;
    frame stack[PQ_SCHEMA_MAX_DEPTH + 2];
    int depth;
    size_t rows; /* buffered */
    int64_t total_rows;
    size_t bytes;
    bool failed;
    icd_error err;
    pq_column_batch *cb;
    pq_bytes *bytes_tmp;
    size_t cap_bytes_tmp;
};

static int bind_node(ice_pqw_sink *s, snode *sn, const ice_field *f, const pq_node *pn,
                     bool in_repeated, icd_error *err)
{
    sn->f = f;
    sn->pn = pn;
    sn->name = f->name;
    sn->name_len = strlen(f->name);
    sn->required = pn->repetition != PQ_OPTIONAL;
    sn->null_def = pn->def_level > 0 ? (uint32_t)pn->def_level - 1 : 0;
    sn->first_leaf = pn->first_leaf;
    sn->nleaves = pn->num_leaves;
    (void)in_repeated;
    const ice_type *t = f->type;
    if (ice_type_is_primitive(t)) {
        if (pn->physical_type < 0) goto mismatch;
        sn->kind = S_LEAF;
        return 0;
    }
    if (t->kind == ICE_T_STRUCT) {
        if (pn->physical_type >= 0 || pn->num_children != t->nfields) goto mismatch;
        sn->kind = S_STRUCT;
        sn->nkids = t->nfields;
        sn->kids = calloc(t->nfields, sizeof *sn->kids);
        if (!sn->kids) return icd_fail_nomem(err);
        for (size_t i = 0; i < t->nfields; i++)
            ICD_TRY(bind_node(s, &sn->kids[i], &t->fields[i], pn->children[i], false, err));
        return 0;
    }
    if (t->kind == ICE_T_LIST ? pn->kind != PQ_NODE_LIST : pn->kind != PQ_NODE_MAP) goto mismatch;
    sn->kind = t->kind == ICE_T_LIST ? S_LIST : S_MAP;
    sn->empty_def = (uint32_t)pn->repeated->def_level - 1;
    sn->item_rep = (uint32_t)pn->repeated->rep_level;
    sn->nkids = sn->kind == S_LIST ? 1 : 2;
    sn->kids = calloc(sn->nkids, sizeof *sn->kids);
    if (!sn->kids) return icd_fail_nomem(err);
    if (sn->kind == S_LIST) {
        ICD_TRY(bind_node(s, &sn->kids[0], t->element, pn->element, true, err));
        if (pn->element_is_repeated) sn->kids[0].required = true;
    } else {
        if (!pn->value) goto mismatch;
        ICD_TRY(bind_node(s, &sn->kids[0], t->key, pn->key, true, err));
        ICD_TRY(bind_node(s, &sn->kids[1], t->value, pn->value, true, err));
    }
    return 0;
mismatch:
    return icd_fail(err, ICD_EINVALID, NULL, -1,
                    "Parquet writer: column %s of type %s does not match the schema node %s",
                    f->name, ice_type_kind_name(t->kind), pn->dotted);
}

static void free_snode(snode *n)
{
    for (size_t i = 0; i < n->nkids && n->kids; i++)
        free_snode(&n->kids[i]);
    free(n->kids);
}

static void fail(ice_pqw_sink *s, int code, const char *fmt, const char *a, const char *b)
{
    if (s->failed) return;
    s->failed = true;
    icd_fail(&s->err, code, NULL, -1, fmt, a, b);
}

static bool levels_oom(ice_pqw_sink *s)
{
    fail(s, ICD_ENOMEM, "out of memory%s%s", "", "");
    return false;
}

/* Levels are stored only where the leaf has them (flat required leaves just count). */
static inline bool push_level(ice_pqw_sink *s, sleaf *l, uint32_t def, uint32_t rep)
{
    if ((l->max_def && ICD_ARRAY_RESERVE(l->def, l->cap, l->n + 1, 1024)) ||
        (l->max_rep && ICD_ARRAY_RESERVE(l->rep, l->cap_rep, l->n + 1, 1024)))
        return levels_oom(s);
    if (l->max_def) l->def[l->n] = def;
    if (l->max_rep) l->rep[l->n] = rep;
    l->n++;
    return true;
}

/* The field the next value belongs to, and its repetition level. */
static const snode *target(ice_pqw_sink *s, uint32_t *rep)
{
    if (s->failed) return NULL;
    if (s->depth <= 0) {
        fail(s, ICD_EINTERNAL, "Parquet writer sink: a value outside a row%s%s", "", "");
        return NULL;
    }
    frame *fr = &s->stack[s->depth - 1];
    const snode *n = fr->n;
    switch (n->kind) {
    case S_STRUCT:
        *rep = fr->rep;
        if (fr->cur >= n->nkids) {
            fail(s, ICD_EINTERNAL, "Parquet writer sink: a value after the last field of %s%s",
                 n->name, "");
            return NULL;
        }
        return &n->kids[fr->cur];
    case S_LIST:
        *rep = fr->items ? n->item_rep : fr->rep;
        fr->items++;
        return &n->kids[0];
    default: /* S_MAP */
        *rep = fr->items >= 2 ? n->item_rep : fr->rep;
        return &n->kids[fr->items++ % 2];
    }
}

static void put_null_levels(ice_pqw_sink *s, const snode *n, uint32_t def, uint32_t rep)
{
    for (int i = n->first_leaf; i < n->first_leaf + n->nleaves; i++)
        if (!push_level(s, &s->leaves[i], def, rep)) return;
}

static void on_field(void *ctx, const char *name, size_t len)
{
    ice_pqw_sink *s = ctx;
    if (s->failed || s->depth <= 0) return;
    frame *fr = &s->stack[s->depth - 1];
    if (fr->n->kind != S_STRUCT || fr->next >= fr->n->nkids) {
        fail(s, ICD_EINTERNAL, "Parquet writer sink: unexpected field %s%s", name, "");
        return;
    }
    const snode *k = &fr->n->kids[fr->next];
    /* (the reader passes the field's own name pointer: usually no compare) */
    if (name != k->name && (k->name_len != len || memcmp(k->name, name, len))) {
        fail(s, ICD_EINTERNAL, "Parquet writer sink: field %s where %s was expected", name,
             k->name);
        return;
    }
    fr->cur = fr->next++;
}

static void on_null(void *ctx)
{
    ice_pqw_sink *s = ctx;
    uint32_t rep;
    const snode *n = target(s, &rep);
    if (!n) return;
    if (n->required) {
        fail(s, ICD_EUNSUPPORTED, "column %s: a null in a field the Parquet schema has as %s",
             n->pn->dotted, pq_repetition_name(n->pn->repetition));
        return;
    }
    put_null_levels(s, n, n->null_def, rep);
}

/* The leaf the next primitive value goes to (levels pushed), or NULL. */
static sleaf *leaf_for(ice_pqw_sink *s)
{
    uint32_t rep;
    const snode *n = target(s, &rep);
    if (!n) return NULL;
    if (n->kind != S_LEAF) {
        fail(s, ICD_EINTERNAL, "Parquet writer sink: a primitive value for %s %s", "group",
             n->pn->dotted);
        return NULL;
    }
    sleaf *l = &s->leaves[n->first_leaf];
    if (!push_level(s, l, (uint32_t)n->pn->def_level, rep)) return NULL;
    l->nvals++;
    return l;
}

static void put_fixed(ice_pqw_sink *s, sleaf *l, const void *p, size_t n)
{
    icd_buf_append_small(&l->vals, p, n);
    s->bytes += n;
}

static void put_bytes(ice_pqw_sink *s, sleaf *l, const void *p, size_t n)
{
    if (l->type == PQ_FIXED_LEN_BYTE_ARRAY && n != l->width) {
        char got[32];
        snprintf(got, sizeof got, "%zu", n);
        fail(s, ICD_EUNSUPPORTED, "column %s: a value of %s bytes for a fixed-length leaf",
             l->pn->dotted, got);
        return;
    }
    size_t k = l->nvals - 1;
    if (ICD_ARRAY_RESERVE(l->lens, l->cap_lens, k + 1, 1024)) {
        fail(s, ICD_ENOMEM, "out of memory%s%s", "", "");
        return;
    }
    l->lens[k] = (uint32_t)n;
    icd_buf_append(&l->vals, p, n);
    s->bytes += n + 4;
}

static void wrong_type(ice_pqw_sink *s, sleaf *l, const char *what)
{
    fail(s, ICD_EINTERNAL, "column %s: a %s value for this Parquet leaf", l->pn->dotted, what);
}

static void put_i32(ice_pqw_sink *s, sleaf *l, int64_t v)
{
    if (v < INT32_MIN || v > INT32_MAX) {
        fail(s, ICD_EUNSUPPORTED, "column %s: value does not fit the INT32 leaf%s", l->pn->dotted,
             "");
        return;
    }
    int32_t x = (int32_t)v;
    put_fixed(s, l, &x, 4);
}

static void put_i64(ice_pqw_sink *s, sleaf *l, int64_t v)
{
    put_fixed(s, l, &v, 8);
}

static void on_bool(void *ctx, bool v)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    if (l->type != PQ_BOOLEAN) return wrong_type(s, l, "boolean");
    uint8_t b = v;
    put_fixed(s, l, &b, 1);
}

static void on_i64(void *ctx, int64_t v)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    if (l->type == PQ_INT32) return put_i32(s, l, v);
    if (l->type == PQ_INT64) return put_i64(s, l, v);
    wrong_type(s, l, "integer");
}

static void on_f32(void *ctx, float v)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    if (l->type == PQ_FLOAT) return put_fixed(s, l, &v, 4);
    if (l->type == PQ_DOUBLE) {
        double d = v;
        return put_fixed(s, l, &d, 8);
    }
    wrong_type(s, l, "float");
}

static void on_f64(void *ctx, double v)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    if (l->type == PQ_DOUBLE) return put_fixed(s, l, &v, 8);
    wrong_type(s, l, "double");
}

/* A decimal's unscaled value as big-endian two's complement in be[0..n) into the leaf. */
static void put_decimal_be(ice_pqw_sink *s, sleaf *l, const uint8_t *be, size_t n)
{
    uint8_t ext = n && (be[0] & 0x80) ? 0xff : 0;
    /* strip redundant sign bytes */
    while (n > 1 && be[0] == ext && ((be[1] & 0x80) ? 0xff : 0) == ext) {
        be++;
        n--;
    }
    if (l->type == PQ_INT32 || l->type == PQ_INT64) {
        size_t max = l->type == PQ_INT32 ? 4 : 8;
        if (n > max) goto overflow;
        uint64_t u = ext ? UINT64_MAX : 0;
        for (size_t i = 0; i < n; i++)
            u = (u << 8) | be[i];
        int64_t v = (int64_t)u;
        return l->type == PQ_INT32 ? put_i32(s, l, v) : put_i64(s, l, v);
    }
    if (l->type == PQ_BYTE_ARRAY) return put_bytes(s, l, be, n);
    if (l->type == PQ_FIXED_LEN_BYTE_ARRAY) {
        if (n > l->width) goto overflow;
        uint8_t tmp[64];
        uint8_t *buf = l->width <= sizeof tmp ? tmp : malloc(l->width);
        if (!buf) return fail(s, ICD_ENOMEM, "out of memory%s%s", "", "");
        memset(buf, ext, l->width - n);
        memcpy(buf + l->width - n, be, n);
        put_bytes(s, l, buf, l->width);
        if (buf != tmp) free(buf);
        return;
    }
    return wrong_type(s, l, "decimal");
overflow:
    fail(s, ICD_EUNSUPPORTED, "column %s: a decimal does not fit the leaf's %s", l->pn->dotted,
         pq_type_name(l->type));
}

static void on_dec64(void *ctx, int64_t unscaled, int scale)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    if (l->type == PQ_INT32) return put_i32(s, l, unscaled);
    if (l->type == PQ_INT64) return put_i64(s, l, unscaled);
    uint8_t be[8];
    for (int i = 0; i < 8; i++)
        be[i] = (uint8_t)((uint64_t)unscaled >> (56 - 8 * i));
    put_decimal_be(s, l, be, 8);
}

static void on_decbe(void *ctx, const uint8_t *be, size_t n, int scale)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    put_decimal_be(s, l, be, n);
}

static void on_date(void *ctx, int32_t days)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    if (l->type == PQ_INT32) return put_i32(s, l, days);
    wrong_type(s, l, "date");
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* v with `digits` fraction digits (6 or 9) in the leaf's unit. */
static int64_t to_unit(int64_t v, int digits, int unit)
{
    int target = unit == PQ_UNIT_MILLIS ? 3 : unit == PQ_UNIT_NANOS ? 9 : 6;
    for (; digits > target; digits -= 3)
        v = floor_div(v, 1000);
    for (; digits < target; digits += 3)
        v *= 1000;
    return v;
}

static void on_time(void *ctx, int64_t micros)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    if (l->type == PQ_INT64) return put_i64(s, l, micros); /* TIME(MICROS), see leaf_mirrors */
    wrong_type(s, l, "time");
}

static void on_timestamp(void *ctx, int64_t v, int digits, bool utc)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    if (l->type == PQ_INT64) return put_i64(s, l, to_unit(v, digits, l->unit));
    if (l->type == PQ_INT96) {
        int64_t nanos = to_unit(v, digits, PQ_UNIT_NANOS);
        const int64_t day = 86400LL * 1000000000LL;
        int64_t d = floor_div(nanos, day);
        int64_t nod = nanos - d * day;
        uint32_t julian = (uint32_t)(d + 2440588);
        pq_int96 x;
        for (int i = 0; i < 8; i++)
            x.b[i] = (uint8_t)((uint64_t)nod >> (8 * i));
        for (int i = 0; i < 4; i++)
            x.b[8 + i] = (uint8_t)(julian >> (8 * i));
        return put_fixed(s, l, x.b, 12);
    }
    wrong_type(s, l, "timestamp");
}

static void on_binary(void *ctx, const uint8_t *p, size_t n)
{
    ice_pqw_sink *s = ctx;
    sleaf *l = leaf_for(s);
    if (!l) return;
    if (l->type == PQ_BYTE_ARRAY || l->type == PQ_FIXED_LEN_BYTE_ARRAY)
        return put_bytes(s, l, p, n);
    wrong_type(s, l, "binary");
}

static void on_string(void *ctx, const char *p, size_t n)
{
    on_binary(ctx, (const uint8_t *)p, n);
}

static void on_uuid(void *ctx, const uint8_t v[16])
{
    on_binary(ctx, v, 16);
}

static void on_raw_json(void *ctx, const char *json, size_t n)
{
    ice_pqw_sink *s = ctx;
    uint32_t rep;
    const snode *t = target(s, &rep);
    if (!t) return;
    fail(s, ICD_EUNSUPPORTED, "column %s: writing variant values to Parquet is not supported%s",
         t->pn->dotted, "");
}

static void open_group(ice_pqw_sink *s, int kind)
{
    uint32_t rep;
    const snode *n = target(s, &rep);
    if (!n) return;
    if (n->kind != kind) {
        fail(s, ICD_EINTERNAL, "Parquet writer sink: a nested value of the wrong kind for %s%s",
             n->pn->dotted, "");
        return;
    }
    if (s->depth >= (int)(sizeof s->stack / sizeof s->stack[0])) {
        fail(s, ICD_EUNSUPPORTED, "Parquet writer sink: nesting too deep at %s%s", n->pn->dotted,
             "");
        return;
    }
    frame *fr = &s->stack[s->depth++];
    fr->n = n;
    fr->cur = fr->next = fr->items = 0;
    fr->rep = rep;
}

static void end_frame(ice_pqw_sink *s, const frame *fr);

static void close_group(ice_pqw_sink *s)
{
    if (s->failed) return;
    if (s->depth <= 1) {
        fail(s, ICD_EINTERNAL, "Parquet writer sink: unbalanced nested value%s%s", "", "");
        return;
    }
    end_frame(s, &s->stack[--s->depth]);
}

static void end_frame(ice_pqw_sink *s, const frame *fr)
{
    const snode *n = fr->n;
    if (n->kind == S_STRUCT) {
        for (size_t i = fr->next; i < n->nkids; i++) { /* fields not emitted: null */
            const snode *k = &n->kids[i];
            if (k->required)
                return fail(s, ICD_EINTERNAL, "Parquet writer sink: required field %s missing%s",
                            k->pn->dotted, "");
            put_null_levels(s, k, k->null_def, fr->rep);
        }
    } else if (fr->items == 0) {
        put_null_levels(s, n, n->empty_def, fr->rep);
    } else if (n->kind == S_MAP && fr->items % 2) {
        fail(s, ICD_EINTERNAL, "Parquet writer sink: a map key without value in %s%s",
             n->pn->dotted, "");
    }
}

static void on_struct_begin(void *ctx)
{
    open_group(ctx, S_STRUCT);
}
static void on_list_begin(void *ctx)
{
    open_group(ctx, S_LIST);
}
static void on_map_begin(void *ctx)
{
    open_group(ctx, S_MAP);
}
static void on_group_end(void *ctx)
{
    close_group(ctx);
}

static void on_begin_row(void *ctx, const char *file, int64_t pos)
{
    ice_pqw_sink *s = ctx;
    s->depth = 1;
    s->stack[0].n = &s->root;
    s->stack[0].cur = s->stack[0].next = s->stack[0].items = 0;
    s->stack[0].rep = 0;
}

/* Hands `nrows` rows to the writer: the buffered levels and values of every leaf (those
 * not set directly by on_columns), then empties the buffers. */
static int write_leaves(ice_pqw_sink *s, size_t nrows, icd_error *err)
{
    for (size_t i = 0; i < s->nleaves; i++) {
        sleaf *l = &s->leaves[i];
        if (l->direct) continue;
        if (!icd_buf_ok(&l->vals)) return icd_fail_nomem(err);
        pq_column_batch *c = &s->cb[i];
        memset(c, 0, sizeof *c);
        c->num_levels = l->n;
        c->def = l->max_def ? l->def : NULL;
        c->rep = l->max_rep ? l->rep : NULL;
        c->num_values = l->nvals;
        c->values = l->vals.data ? l->vals.data : "";
    }
    /* byte arrays: one pq_bytes array at a time would dangle, so lay them out together */
    size_t need = 0;
    for (size_t i = 0; i < s->nleaves; i++)
        if (!s->leaves[i].direct &&
            (s->leaves[i].type == PQ_BYTE_ARRAY || s->leaves[i].type == PQ_FIXED_LEN_BYTE_ARRAY))
            need += s->leaves[i].nvals;
    if (need > s->cap_bytes_tmp) {
        pq_bytes *p = realloc(s->bytes_tmp, need * sizeof *p);
        if (!p) return icd_fail_nomem(err);
        s->bytes_tmp = p;
        s->cap_bytes_tmp = need;
    }
    size_t at = 0;
    for (size_t i = 0; i < s->nleaves; i++) {
        sleaf *l = &s->leaves[i];
        if (l->direct || (l->type != PQ_BYTE_ARRAY && l->type != PQ_FIXED_LEN_BYTE_ARRAY)) continue;
        if (!l->nvals) continue;
        pq_bytes *b = s->bytes_tmp + at;
        const uint8_t *p = l->vals.data ? (const uint8_t *)l->vals.data : (const uint8_t *)"";
        for (size_t k = 0; k < l->nvals; k++) {
            b[k].ptr = p;
            b[k].len = l->lens[k];
            p += l->lens[k];
        }
        s->cb[i].values = b;
        at += l->nvals;
    }
    int rc = pq_writer_write_batch(s->w, s->cb, nrows, err);
    for (size_t i = 0; i < s->nleaves; i++) {
        sleaf *l = &s->leaves[i];
        l->n = l->nvals = 0;
        l->direct = false;
        icd_buf_clear(&l->vals);
    }
    s->bytes = 0;
    return rc;
}

static int flush(ice_pqw_sink *s, icd_error *err)
{
    if (!s->rows) return 0;
    int rc = write_leaves(s, s->rows, err);
    s->rows = 0;
    return rc;
}

static int on_end_row(void *ctx, icd_error *err)
{
    ice_pqw_sink *s = ctx;
    if (!s->failed && s->depth == 1)
        end_frame(s, &s->stack[0]); /* columns not emitted (never: the reader emits all) */
    if (!s->failed && s->depth != 1)
        fail(s, ICD_EINTERNAL, "Parquet writer sink: a row ended inside a nested value%s%s", "",
             "");
    if (s->failed) {
        *err = s->err;
        return err->code ? err->code : ICD_EINTERNAL;
    }
    s->rows++;
    s->total_rows++;
    if (s->rows >= ICE_PQW_BATCH_ROWS || s->bytes >= ICE_PQW_BATCH_BYTES) {
        int rc = flush(s, err);
        if (rc) {
            s->failed = true;
            s->err = *err;
            return rc;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- whole batches */

/* The class of the values leaf l takes by a plain copy, giving the bytes the typed
 * callbacks would write, for a column of type t; -1 when none. By copy: integers and
 * decimals in INT32 (within its range) or INT64, dates, times, timestamps in the leaf's
 * own unit, doubles, floats, booleans, strings and binaries in a BYTE_ARRAY, fixed and
 * uuid values of the leaf's width. Not: conversions (float to double, unit changes,
 * INT96) and decimals in bytes (whose redundant sign bytes are stripped). */
static int copy_class(const sleaf *l, const ice_type *t)
{
    bool ints = l->type == PQ_INT32 || l->type == PQ_INT64;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        return l->type == PQ_BOOLEAN ? ICE_TV_BOOL : -1;
    case ICE_T_INT:
    case ICE_T_LONG:
        return ints ? ICE_TV_INT : -1;
    case ICE_T_DECIMAL:
        return ints ? ICE_TV_DEC64 : -1;
    case ICE_T_DATE:
        return l->type == PQ_INT32 ? ICE_TV_DATE : -1;
    case ICE_T_TIME:
        return l->type == PQ_INT64 ? ICE_TV_TIME : -1;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        int digits = l->unit == PQ_UNIT_NANOS ? 9 : l->unit == PQ_UNIT_MICROS ? 6 : 3;
        return l->type == PQ_INT64 && digits == ice_ts_digits(t->kind) ? ICE_TV_TS : -1;
    }
    case ICE_T_FLOAT:
        return l->type == PQ_FLOAT ? ICE_TV_FLOAT : -1;
    case ICE_T_DOUBLE:
        return l->type == PQ_DOUBLE ? ICE_TV_DOUBLE : -1;
    case ICE_T_STRING:
        return l->type == PQ_BYTE_ARRAY ? ICE_TV_STRING : -1;
    case ICE_T_BINARY:
        return l->type == PQ_BYTE_ARRAY ? ICE_TV_BINARY : -1;
    case ICE_T_FIXED:
        return l->type == PQ_FIXED_LEN_BYTE_ARRAY ? ICE_TV_BINARY : -1;
    case ICE_T_UUID:
        return l->type == PQ_FIXED_LEN_BYTE_ARRAY ? ICE_TV_UUID : -1;
    default:
        return -1;
    }
}

/* The state of gather_values. */
typedef struct gather {
    const ice_tvalue *vals;
    const uint32_t *rows;
    size_t nrows;
    int cls;
    sleaf *l;
    const snode *n;
    uint8_t *dst; /* fixed-width values */
    size_t k;     /* values gathered */
} gather;

/* The kept rows' levels and values into leaf g->l, stored as `type` (the leaf's physical
 * type, or PQ_BYTE_ARRAY for both byte-array kinds; a constant at each call, so that the
 * loop is one per type); false at the first value not of the copy class. */
static inline bool gather_values(gather *g, int type)
{
    sleaf *l = g->l;
    uint32_t null_def = g->n->null_def, max_def = l->max_def;
    uint8_t *dst = g->dst;
    size_t k = 0;
    for (size_t r = 0; r < g->nrows; r++) {
        const ice_tvalue *v = &g->vals[g->rows[r]];
        if ((int)v->cls != g->cls) {
            if (v->cls != ICE_TV_NULL || ice_tv_is_out_of_range(v)) return false;
            if (max_def) l->def[r] = null_def;
            continue;
        }
        if (max_def) l->def[r] = max_def;
        if (type == PQ_BOOLEAN) {
            dst[k] = v->i != 0;
        } else if (type == PQ_INT32) {
            if (v->i < INT32_MIN || v->i > INT32_MAX) return false;
            int32_t x = (int32_t)v->i;
            memcpy(dst + 4 * k, &x, 4);
        } else if (type == PQ_FLOAT) {
            memcpy(dst + 4 * k, &v->f, 4);
        } else if (type == PQ_DOUBLE) {
            memcpy(dst + 8 * k, &v->d, 8);
        } else if (type == PQ_INT64) {
            memcpy(dst + 8 * k, &v->i, 8);
        } else {
            if (v->n > UINT32_MAX || (l->type == PQ_FIXED_LEN_BYTE_ARRAY && v->n != l->width))
                return false;
            l->pb[k] = (pq_bytes){v->p, (uint32_t)v->n};
        }
        k++;
    }
    g->k = k;
    return true;
}

/* Leaf l takes column c's values by copy when every kept value is of the copy class
 * (levels from the nulls, values gathered from the typed cells); *done false: take them
 * value by value. */
static int put_copied(ice_pqw_sink *s, sleaf *l, const snode *n, const ice_sink_column *c,
                      size_t nrows, const uint32_t *rows, pq_column_batch *out, bool *done,
                      icd_error *err)
{
    *done = false;
    int cls = copy_class(l, c->field->type);
    if (cls < 0) return 0;
    bool bytes = l->type == PQ_BYTE_ARRAY || l->type == PQ_FIXED_LEN_BYTE_ARRAY;
    size_t w = bytes                                        ? 0
               : l->type == PQ_BOOLEAN                      ? 1
               : l->type == PQ_INT32 || l->type == PQ_FLOAT ? 4
                                                            : 8;
    if ((l->max_def && ICD_ARRAY_RESERVE(l->def, l->cap, nrows, 1024)) ||
        (bytes && ICD_ARRAY_RESERVE(l->pb, l->cap_pb, nrows ? nrows : 1, 1024)))
        return icd_fail_nomem(err);
    icd_buf_clear(&l->vals);
    if (!bytes && !icd_buf_grow(&l->vals, nrows * w + 1)) return icd_fail_nomem(err);
    gather g = {c->values, rows, nrows, cls, l, n, (uint8_t *)l->vals.data, 0};
    bool ok;
    switch (l->type) { /* (one loop per stored form: each copy one move) */
    case PQ_BOOLEAN:
        ok = gather_values(&g, PQ_BOOLEAN);
        break;
    case PQ_INT32:
        ok = gather_values(&g, PQ_INT32);
        break;
    case PQ_FLOAT:
        ok = gather_values(&g, PQ_FLOAT);
        break;
    case PQ_DOUBLE:
        ok = gather_values(&g, PQ_DOUBLE);
        break;
    case PQ_INT64:
        ok = gather_values(&g, PQ_INT64);
        break;
    default:
        ok = gather_values(&g, PQ_BYTE_ARRAY);
        break;
    }
    if (!ok) return 0;
    size_t k = g.k;
    if (k < nrows && n->required)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "column %s: a null in a field the Parquet schema has as %s", n->pn->dotted,
                        pq_repetition_name(n->pn->repetition));
    memset(out, 0, sizeof *out);
    out->num_levels = nrows;
    out->num_values = k;
    out->def = l->max_def ? l->def : NULL;
    out->values = bytes ? (const void *)l->pb : l->vals.data;
    l->direct = true;
    *done = true;
    return 0;
}

/* ice_row_sink.columns: the columns whose values the leaf takes by copy are copied (see
 * copyable); every other column goes value by value through the typed callbacks, exactly
 * as a row-by-row emission would (the frame pointed at its field). */
static int on_columns(void *ctx, const ice_sink_column *cols, size_t ncols, size_t nrows,
                      const uint32_t *rows, const int64_t *positions, icd_error *err)
{
    (void)positions;
    ice_pqw_sink *s = ctx;
    if (s->failed || (s->rows && flush(s, err))) {
        if (!s->failed) {
            s->failed = true;
            s->err = *err;
        }
        *err = s->err;
        return err->code ? err->code : ICD_EINTERNAL;
    }
    if (ncols != s->root.nkids)
        return icd_fail(err, ICD_EINTERNAL, NULL, -1,
                        "Parquet writer sink: %zu columns for %zu fields", ncols, s->root.nkids);
    int rc = 0;
    for (size_t k = 0; k < ncols && !rc; k++) {
        const ice_sink_column *c = &cols[k];
        const snode *n = &s->root.kids[k];
        if (n->kind != S_LEAF) {
            rc = icd_fail(err, ICD_EINTERNAL, NULL, -1,
                          "Parquet writer sink: whole-batch values for group %s", n->pn->dotted);
            break;
        }
        sleaf *l = &s->leaves[n->first_leaf];
        if (c->values) {
            bool done;
            rc = put_copied(s, l, n, c, nrows, rows, &s->cb[n->first_leaf], &done, err);
            if (rc || done) continue;
        }
        for (size_t r = 0; r < nrows && !s->failed; r++) {
            s->depth = 1;
            s->stack[0] = (frame){.n = &s->root, .cur = k, .next = k + 1};
            const ice_tvalue *v = c->values ? &c->values[rows[r]] : c->constant;
            ice_emit_tvalue(&s->sink, v, c->field->type);
        }
        if (s->failed) {
            *err = s->err;
            rc = err->code ? err->code : ICD_EINTERNAL;
        }
    }
    if (!rc) rc = write_leaves(s, nrows, err);
    if (rc) {
        for (size_t i = 0; i < s->nleaves; i++) /* (the writer is unusable after a failure) */
            s->leaves[i].direct = false;
        if (!s->failed) {
            s->failed = true;
            s->err = *err;
        }
        return rc;
    }
    s->total_rows += (int64_t)nrows;
    return 0;
}

int ice_pqw_sink_new(pq_writer *w, const ice_field *fields, size_t nfields, ice_pqw_sink **out,
                     icd_error *err)
{
    *out = NULL;
    const pq_schema *ps = pq_writer_schema(w);
    if (ps->root->num_children != nfields)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Parquet writer sink: %zu fields for a schema of %u columns", nfields,
                        ps->root->num_children);
    ice_pqw_sink *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    s->w = w;
    s->root.kind = S_STRUCT;
    s->root.name = "";
    s->root.pn = ps->root;
    s->root.nkids = nfields;
    s->root.kids = calloc(nfields, sizeof *s->root.kids);
    s->nleaves = ps->num_leaves;
    s->leaves = calloc(s->nleaves ? s->nleaves : 1, sizeof *s->leaves);
    s->cb = calloc(s->nleaves ? s->nleaves : 1, sizeof *s->cb);
    int rc = 0;
    if (!s->root.kids || !s->leaves || !s->cb) rc = icd_fail_nomem(err);
    for (size_t i = 0; i < nfields && !rc; i++)
        rc = bind_node(s, &s->root.kids[i], &fields[i], ps->root->children[i], false, err);
    for (size_t i = 0; i < s->nleaves && !rc; i++) {
        sleaf *l = &s->leaves[i];
        l->pn = ps->leaves[i];
        l->type = l->pn->physical_type;
        l->width = l->type == PQ_FIXED_LEN_BYTE_ARRAY ? (size_t)l->pn->type_length : 0;
        l->max_def = (uint32_t)l->pn->def_level;
        l->max_rep = (uint32_t)l->pn->rep_level;
        l->unit = l->pn->eff.kind == PQ_LT_TIME || l->pn->eff.kind == PQ_LT_TIMESTAMP
                      ? l->pn->eff.unit
                      : PQ_UNIT_MICROS;
    }
    if (rc) {
        ice_pqw_sink_free(s);
        return rc;
    }
    s->sink = (ice_row_sink){.ctx = s,
                             .begin_row = on_begin_row,
                             .field = on_field,
                             .null_value = on_null,
                             .boolean = on_bool,
                             .i64 = on_i64,
                             .f32 = on_f32,
                             .f64 = on_f64,
                             .decimal_i64 = on_dec64,
                             .decimal_be = on_decbe,
                             .date = on_date,
                             .time = on_time,
                             .timestamp = on_timestamp,
                             .string = on_string,
                             .uuid = on_uuid,
                             .binary = on_binary,
                             .struct_begin = on_struct_begin,
                             .struct_end = on_group_end,
                             .list_begin = on_list_begin,
                             .list_end = on_group_end,
                             .map_begin = on_map_begin,
                             .map_end = on_group_end,
                             .raw_json = on_raw_json,
                             .end_row = on_end_row,
                             .columns = on_columns};
    *out = s;
    return 0;
}

const ice_row_sink *ice_pqw_sink_get(ice_pqw_sink *s)
{
    return &s->sink;
}

int ice_pqw_sink_finish(ice_pqw_sink *s, icd_error *err)
{
    if (s->failed) {
        *err = s->err;
        return err->code ? err->code : ICD_EINTERNAL;
    }
    return flush(s, err);
}

int64_t ice_pqw_sink_rows(const ice_pqw_sink *s)
{
    return s->total_rows;
}

void ice_pqw_sink_free(ice_pqw_sink *s)
{
    if (!s) return;
    free_snode(&s->root);
    for (size_t i = 0; i < s->nleaves && s->leaves; i++) {
        free(s->leaves[i].def);
        free(s->leaves[i].rep);
        free(s->leaves[i].lens);
        free(s->leaves[i].pb);
        icd_buf_free(&s->leaves[i].vals);
    }
    free(s->leaves);
    free(s->cb);
    free(s->bytes_tmp);
    free(s);
}
