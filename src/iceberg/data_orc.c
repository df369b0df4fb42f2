/*
 * ORC files in the merge-on-read reader (reader.h): the data source of the one task loop
 * (ice_data_orc, reader_internal.h) and the format adapter delete files are read through
 * (ice_adapter_open_orc, adapter.h); both share the binding of field ids below.
 *
 * An ORC data file in the task loop:
 *   1. every ORC column gets the Iceberg field id it holds: its iceberg.id attribute; in
 *      files without any, the table's name mapping (by name at each level, "element" /
 *      "key" / "value" below lists and maps); without a mapping, Java's fallback of
 *      positional ids for top-level columns and names below them (as the Parquet path);
 *   2. each output field binds to the top-level ORC column with its id, recursively by id
 *      through struct/list/map (missing struct members read as their initial-default), or
 *      to a constant (identity partition value / initial-default / null);
 *   3. batches of orc_reader_next() become the format-neutral batch (vbatch.h): primitive
 *      columns and equality key columns (top-level or inside structs) as typed VALUES,
 *      nested ones as NESTED cursors over the ORC vectors, missing ones as CONST; the
 *      task loop applies the deletes and emits the surviving rows;
 *   4. with a filter (ice_scan_reader_set_filter), stripes whose statistics exclude it
 *      are skipped before they are read (ice_range_may_match, shared with Parquet row
 *      groups).
 *
 * Values are converted to the Iceberg type once (orc_tvalue): int->long, float->double,
 * decimal widening (same scale), date->timestamp, ORC timestamps (seconds + nanos) to
 * micros or nanos; ORC `timestamp` and `timestamp with local time zone` both carry UTC
 * instants here (the ORC reader refuses non-UTC writer zones), so they serve Iceberg
 * timestamp and timestamptz alike.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "formats/orc/orc.h"
#include "iceberg/adapter.h"
#include "iceberg/reader_internal.h"

#define MAX_DEPTH 64

/* ======================================================================================
 * Field ids of a file's columns.
 * ==================================================================================== */

static bool file_has_ids(const orc_file *f)
{
    for (size_t i = 0; i < orc_file_ncolumns(f); i++)
        if (orc_file_column(f, (uint32_t)i)->field_id >= 0) return true;
    return false;
}

/* The mapping name of child k of t: struct member name, or element / key / value. */
static const char *child_role(const orc_type *t, uint32_t k)
{
    if (t->kind == ORC_STRUCT) return t->children[k]->name;
    if (t->kind == ORC_LIST) return "element";
    return k == 0 ? "key" : "value";
}

static void ids_by_mapping(int64_t *ids, const orc_type *t, const ice_name_mapping *m, int depth)
{
    if (depth > MAX_DEPTH) return;
    for (uint32_t k = 0; k < t->nchildren; k++) {
        const orc_type *c = t->children[k];
        const ice_mapped_field *e = m ? ice_name_mapping_find(m, child_role(t, k)) : NULL;
        ids[c->id] = e && e->has_field_id ? e->field_id : -1;
        ids_by_mapping(ids, c, e ? e->fields : NULL, depth + 1);
    }
}

/* No ids, no mapping: below a column whose Iceberg field is known, members by name. */
static void ids_by_type(int64_t *ids, const orc_type *t, const ice_type *it, int depth)
{
    if (!it || depth > MAX_DEPTH) return;
    for (uint32_t k = 0; k < t->nchildren; k++) {
        const orc_type *c = t->children[k];
        const ice_field *f = NULL;
        if (t->kind == ORC_STRUCT && it->kind == ICE_T_STRUCT) {
            for (size_t i = 0; i < it->nfields && !f; i++)
                if (!strcmp(it->fields[i].name, c->name)) f = &it->fields[i];
        } else if (t->kind == ORC_LIST && it->kind == ICE_T_LIST) {
            f = it->element;
        } else if (t->kind == ORC_MAP && it->kind == ICE_T_MAP) {
            f = k == 0 ? it->key : it->value;
        }
        if (f) {
            ids[c->id] = f->id;
            ids_by_type(ids, c, f->type, depth + 1);
        }
    }
}

/* ids[column id] = Iceberg field id held by the column, or -1. Without ids and without a
 * mapping, data files use positional ids (`positional`), delete files (a subset of the
 * columns) the names of the current schema. */
static int compute_ids(const ice_schema *schema, const ice_name_mapping *mapping, const orc_file *f,
                       bool positional, int64_t **out, icd_error *err)
{
    size_t n = orc_file_ncolumns(f);
    int64_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids) return icd_fail_nomem(err);
    for (size_t i = 0; i < n; i++)
        ids[i] = -1;
    const orc_type *root = orc_file_root(f);
    if (file_has_ids(f)) {
        for (size_t i = 0; i < n; i++)
            ids[i] = orc_file_column(f, (uint32_t)i)->field_id;
    } else if (root && root->kind == ORC_STRUCT && mapping) {
        ids_by_mapping(ids, root, mapping, 0);
    } else if (root && root->kind == ORC_STRUCT && !positional) {
        ids_by_type(ids, root, schema ? &schema->root : NULL, 0);
    } else if (root && root->kind == ORC_STRUCT) {
        /* Java's addFallbackIds: top-level columns numbered 1, 2, ... in file order */
        for (uint32_t k = 0; k < root->nchildren; k++) {
            const orc_type *c = root->children[k];
            ids[c->id] = (int64_t)k + 1;
            const ice_field *fld = schema ? ice_schema_field(schema, (int32_t)k + 1) : NULL;
            ids_by_type(ids, c, fld ? fld->type : NULL, 1);
        }
    }
    *out = ids;
    return 0;
}

/* The top-level column (child of the root struct) holding field id `id`, or NULL. */
static const orc_type *top_column(const orc_file *f, const int64_t *ids, int32_t id)
{
    const orc_type *root = orc_file_root(f);
    if (!root || root->kind != ORC_STRUCT) return NULL;
    for (uint32_t k = 0; k < root->nchildren; k++)
        if (ids[root->children[k]->id] == id) return root->children[k];
    return NULL;
}

/* A column for field `id` anywhere, reachable from the root through structs only: its
 * top-level column and the member indexes below it. 0 found, 1 absent, -1 inside a
 * list or map (not usable as a key / for pruning). */
typedef struct col_path {
    const orc_type *top;
    const orc_type *node;
    uint32_t steps[MAX_DEPTH];
    size_t nsteps;
} col_path;

static int find_path(const orc_file *f, const int64_t *ids, int32_t id, col_path *p)
{
    const orc_type *root = orc_file_root(f);
    int rc = 1;
    for (size_t i = 1; i < orc_file_ncolumns(f); i++) {
        const orc_type *t = orc_file_column(f, (uint32_t)i);
        if (ids[i] != id) continue;
        /* walk up: every ancestor below the root must be a struct */
        size_t depth = 0;
        const orc_type *c = t;
        bool ok = true;
        while (c->parent && c->parent != root) {
            if (c->parent->kind != ORC_STRUCT || depth >= MAX_DEPTH) {
                ok = false;
                break;
            }
            depth++;
            c = c->parent;
        }
        if (!ok || !c->parent) {
            rc = -1;
            continue;
        }
        p->top = c;
        p->node = t;
        p->nsteps = depth;
        c = t;
        for (size_t s = depth; s > 0; s--) {
            const orc_type *par = c->parent;
            uint32_t k = 0;
            while (k < par->nchildren && par->children[k] != c)
                k++;
            p->steps[s - 1] = k;
            c = par;
        }
        return 0;
    }
    return rc;
}

/* ======================================================================================
 * Values.
 * ==================================================================================== */

/* Can an ORC column be read as Iceberg primitive type t? */
static bool orc_readable_as(const orc_type *o, const ice_type *t)
{
    orc_kind k = o->kind;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        return k == ORC_BOOLEAN;
    case ICE_T_INT:
        return k == ORC_BYTE || k == ORC_SHORT || k == ORC_INT;
    case ICE_T_LONG:
        return k == ORC_BYTE || k == ORC_SHORT || k == ORC_INT || k == ORC_LONG;
    case ICE_T_FLOAT:
        return k == ORC_FLOAT;
    case ICE_T_DOUBLE:
        return k == ORC_FLOAT || k == ORC_DOUBLE;
    case ICE_T_DECIMAL:
        return k == ORC_DECIMAL && (int32_t)o->scale == t->scale;
    case ICE_T_DATE:
        return k == ORC_DATE;
    case ICE_T_TIME:
        return k == ORC_LONG; /* micros of day (iceberg.long-type=TIME) */
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        return k == ORC_TIMESTAMP || k == ORC_TIMESTAMP_INSTANT || k == ORC_DATE;
    case ICE_T_STRING:
        return k == ORC_STRING || k == ORC_VARCHAR || k == ORC_CHAR;
    case ICE_T_UUID:
    case ICE_T_FIXED:
    case ICE_T_BINARY:
        return k == ORC_BINARY;
    default:
        return false;
    }
}

/* a * m + b without signed overflow (wraps; only absurd timestamps get there) */
static int64_t mul_add(int64_t a, int64_t m, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)m + (uint64_t)b);
}

/* Whether entry i (not null) of a timestamp-typed column fits type t's int64 unit (a date
 * promoted to timestamp, or seconds far from 1970 in nanoseconds, can overflow); *what
 * describes the value when not. */
static bool orc_ts_in_range(const ice_type *t, const orc_vec *v, size_t i, char *what, size_t n)
{
    if (t->kind != ICE_T_TIMESTAMP && t->kind != ICE_T_TIMESTAMPTZ &&
        t->kind != ICE_T_TIMESTAMP_NS && t->kind != ICE_T_TIMESTAMPTZ_NS)
        return true;
    bool ns = ice_ts_digits(t->kind) == 9;
    int64_t x;
    bool date = v->type->kind == ORC_DATE;
    int64_t m = date ? (ns ? 86400000000000LL : 86400000000LL) : ns ? 1000000000LL : 1000000LL;
    int64_t frac = date ? 0 : ns ? v->nanos[i] : v->nanos[i] / 1000;
    if (!__builtin_mul_overflow(v->i64[i], m, &x) && !__builtin_add_overflow(x, frac, &x))
        return true;
    snprintf(what, n, date ? "date %lld (days)" : "timestamp %lld (seconds)", (long long)v->i64[i]);
    return false;
}

/* Entry i (not null) of v as Iceberg type t (v's type readable as t). */
static ice_tvalue orc_tvalue(const ice_type *t, const orc_vec *v, size_t i)
{
    ice_tvalue out = {0};
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        out.cls = ICE_TV_BOOL;
        out.i = v->i64[i] != 0;
        break;
    case ICE_T_INT:
    case ICE_T_LONG:
        out.cls = ICE_TV_INT;
        out.i = v->i64[i];
        break;
    case ICE_T_FLOAT:
        out.cls = ICE_TV_FLOAT;
        out.f = (float)v->f64[i];
        break;
    case ICE_T_DOUBLE:
        out.cls = ICE_TV_DOUBLE;
        out.d = v->f64[i];
        break;
    case ICE_T_DECIMAL:
        if (v->dec16) {
            out.cls = ICE_TV_DECBE;
            out.p = v->dec16 + i * 16;
            out.n = 16;
        } else {
            out.cls = ICE_TV_DEC64;
            out.i = v->i64[i];
        }
        break;
    case ICE_T_DATE:
        out.cls = ICE_TV_DATE;
        out.i = v->i64[i];
        break;
    case ICE_T_TIME:
        out.cls = ICE_TV_TIME;
        out.i = v->i64[i];
        break;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        bool ns = ice_ts_digits(t->kind) == 9;
        out.cls = ICE_TV_TS;
        if (v->type->kind == ORC_DATE) /* date promoted to timestamp */
            out.i = mul_add(v->i64[i], ns ? 86400000000000LL : 86400000000LL, 0);
        else /* nanos are 0..999999999 below a floored second: micros floor too */
            out.i = mul_add(v->i64[i], ns ? 1000000000LL : 1000000LL,
                            ns ? v->nanos[i] : v->nanos[i] / 1000);
        break;
    }
    case ICE_T_STRING:
    case ICE_T_UUID:
    case ICE_T_FIXED:
    case ICE_T_BINARY:
        out.cls = t->kind == ICE_T_STRING ? ICE_TV_STRING
                  : t->kind == ICE_T_UUID ? ICE_TV_UUID
                                          : ICE_TV_BINARY;
        out.p = (const uint8_t *)v->str[i].ptr;
        out.n = v->str[i].len;
        break;
    default:
        break;
    }
    return out;
}

static inline bool is_null(const orc_vec *v, size_t i)
{
    return v->nulls && v->nulls[i];
}

/* ======================================================================================
 * Binding an Iceberg field to an ORC column (recursively) and emitting its values.
 * ==================================================================================== */

typedef struct obind obind;
struct obind {
    const ice_field *f;
    const orc_type *ot; /* NULL: the file lacks this struct member (initial-default) */
    uint32_t child;     /* struct member: index of ot among the parent's children */
    obind *kids;        /* struct: one per Iceberg field; list: element; map: key, value */
    size_t nkids;
};

typedef struct bind_ctx {
    icd_arena *arena;
    const int64_t *ids;
    const char *file;
    const char *column; /* top-level column, for messages */
    icd_error *err;
} bind_ctx;

static int bind_fail(bind_ctx *c, const ice_field *f, const orc_type *o)
{
    return icd_fail(c->err, ICD_EUNSUPPORTED, c->file, -1,
                    "column %s: ORC %s column '%s' (id %u) cannot be read as %s field %s (id %d)",
                    c->column, orc_kind_name(o->kind), o->name, (unsigned)o->id,
                    ice_type_kind_name(f->type->kind), f->name, (int)f->id);
}

static int bind(bind_ctx *c, obind *b, const ice_field *f, const orc_type *o, int depth)
{
    b->f = f;
    b->ot = o;
    const ice_type *t = f->type;
    if (depth > MAX_DEPTH)
        return icd_fail(c->err, ICD_EUNSUPPORTED, c->file, -1, "column %s: nested too deeply",
                        c->column);
    if (t->kind == ICE_T_VARIANT)
        return icd_fail(c->err, ICD_EUNSUPPORTED, c->file, -1,
                        "column %s: variant values in ORC data files are not supported", c->column);
    if (ice_type_is_primitive(t)) return orc_readable_as(o, t) ? 0 : bind_fail(c, f, o);
    if (t->kind == ICE_T_STRUCT) {
        if (o->kind != ORC_STRUCT) return bind_fail(c, f, o);
        b->nkids = t->nfields;
        b->kids = icd_arena_calloc(c->arena, (t->nfields ? t->nfields : 1) * sizeof *b->kids);
        if (!b->kids) return icd_fail_nomem(c->err);
        for (size_t i = 0; i < t->nfields; i++) {
            const ice_field *cf = &t->fields[i];
            b->kids[i].f = cf;
            for (uint32_t k = 0; k < o->nchildren; k++)
                if (c->ids[o->children[k]->id] == cf->id) {
                    ICD_TRY(bind(c, &b->kids[i], cf, o->children[k], depth + 1));
                    b->kids[i].child = k;
                    break;
                }
        }
        return 0;
    }
    if (t->kind == ICE_T_LIST) {
        if (o->kind != ORC_LIST || o->nchildren != 1) return bind_fail(c, f, o);
        b->nkids = 1;
        b->kids = icd_arena_calloc(c->arena, sizeof *b->kids);
        if (!b->kids) return icd_fail_nomem(c->err);
        return bind(c, &b->kids[0], t->element, o->children[0], depth + 1);
    }
    if (o->kind != ORC_MAP || o->nchildren != 2) return bind_fail(c, f, o);
    b->nkids = 2;
    b->kids = icd_arena_calloc(c->arena, 2 * sizeof *b->kids);
    if (!b->kids) return icd_fail_nomem(c->err);
    ICD_TRY(bind(c, &b->kids[0], t->key, o->children[0], depth + 1));
    return bind(c, &b->kids[1], t->value, o->children[1], depth + 1);
}

/* Entry i of v through binding b. Offsets are checked against the child vectors so a
 * corrupt batch can never be read out of bounds. */
static int emit(const ice_row_sink *s, const obind *b, const orc_vec *v, size_t i, const char *file,
                int64_t row, icd_error *err)
{
    if (i >= v->n)
        return icd_fail(err, ICD_ECORRUPT, file, -1, "ORC entry %zu beyond its vector (%zu)", i,
                        v->n);
    if (is_null(v, i)) {
        s->null_value(s->ctx);
        return 0;
    }
    const ice_type *t = b->f->type;
    if (ice_type_is_primitive(t)) {
        char what[96];
        if (!orc_ts_in_range(t, v, i, what, sizeof what))
            return ice_time_value_range_error(err, file, b->f->name, row, t, what);
        ice_tvalue tv = orc_tvalue(t, v, i);
        ice_emit_tvalue(s, &tv, t);
        return 0;
    }
    if (t->kind == ICE_T_STRUCT) {
        s->struct_begin(s->ctx);
        for (size_t k = 0; k < b->nkids; k++) {
            const obind *kb = &b->kids[k];
            s->field(s->ctx, kb->f->name, strlen(kb->f->name));
            if (kb->ot)
                ICD_TRY(emit(s, kb, &v->children[kb->child], i, file, row, err));
            else
                ice_emit_literal(s, kb->f->initial_default, kb->f->type);
        }
        s->struct_end(s->ctx);
        return 0;
    }
    uint64_t lo = v->offsets[i], hi = v->offsets[i + 1];
    if (lo > hi || hi > v->children[0].n || (t->kind == ICE_T_MAP && hi > v->children[1].n))
        return icd_fail(err, ICD_ECORRUPT, file, -1, "ORC %s offsets out of range",
                        t->kind == ICE_T_LIST ? "list" : "map");
    if (t->kind == ICE_T_LIST) {
        s->list_begin(s->ctx);
        for (uint64_t k = lo; k < hi; k++)
            ICD_TRY(emit(s, &b->kids[0], &v->children[0], (size_t)k, file, row, err));
        s->list_end(s->ctx);
        return 0;
    }
    s->map_begin(s->ctx);
    for (uint64_t k = lo; k < hi; k++) {
        ICD_TRY(emit(s, &b->kids[0], &v->children[0], (size_t)k, file, row, err));
        ICD_TRY(emit(s, &b->kids[1], &v->children[1], (size_t)k, file, row, err));
    }
    s->map_end(s->ctx);
    return 0;
}

/* ======================================================================================
 * Key columns (equality deletes, both sides) and selected top-level columns.
 * ==================================================================================== */

typedef struct okey {
    const ice_type *type;
    const char *name; /* the field's name, for range errors */
    int batch_col;    /* -1: constant */
    col_path path;
    ice_tvalue constant;
} okey;

/* The typed value of a key column in row i of a batch (null when a struct on the path is
 * null); a timestamp outside its type's range is an error naming column and row, as for
 * data values, never a key. */
static int key_value(const okey *k, const orc_batch *b, size_t i, const char *file, ice_tvalue *out,
                     icd_error *err)
{
    ice_tvalue none = {0};
    *out = none;
    if (k->batch_col < 0) {
        *out = k->constant;
        return 0;
    }
    const orc_vec *v = &b->cols[k->batch_col];
    if (is_null(v, i)) return 0;
    for (size_t s = 0; s < k->path.nsteps; s++) {
        v = &v->children[k->path.steps[s]];
        if (is_null(v, i)) return 0;
    }
    char what[96];
    if (!orc_ts_in_range(k->type, v, i, what, sizeof what))
        return ice_time_value_range_error(err, file, k->name, (int64_t)(b->row_start + i), k->type,
                                          what);
    *out = orc_tvalue(k->type, v, i);
    return 0;
}

/* The typed values of column k in every row of batch b into out (key_value's values, a
 * column at a time); a value out of its type's range is marked, and makes it true. */
static bool fill_values(const okey *k, const orc_batch *b, ice_tvalue *out)
{
    bool bad = false;
    for (size_t i = 0; i < b->n; i++) {
        const orc_vec *v = &b->cols[k->batch_col];
        bool null = is_null(v, i);
        for (size_t s = 0; s < k->path.nsteps && !null; s++) {
            v = &v->children[k->path.steps[s]];
            null = is_null(v, i);
        }
        char what[96];
        if (null) {
            out[i] = (ice_tvalue){0};
        } else if (!orc_ts_in_range(k->type, v, i, what, sizeof what)) {
            ice_tv_mark_out_of_range(&out[i]);
            bad = true;
        } else {
            out[i] = orc_tvalue(k->type, v, i);
        }
    }
    return bad;
}

typedef struct colsel {
    const orc_type **cols;
    size_t n;
} colsel;

/* Index of a top-level column among the selected ones (batch column), adding it. */
static int select_col(colsel *cs, const orc_type *top, icd_error *err)
{
    for (size_t i = 0; i < cs->n; i++)
        if (cs->cols[i] == top) return (int)i;
    const orc_type **nc = realloc((void *)cs->cols, (cs->n + 1) * sizeof *nc);
    if (!nc) return icd_fail_nomem(err);
    cs->cols = nc;
    cs->cols[cs->n] = top;
    return (int)cs->n++;
}

/* Binds field `id` (read as `type`; `name` for messages) of a file: a primitive column
 * reachable through structs. 1 when the file has no column for it. */
static int bind_key(const orc_file *f, const int64_t *ids, int32_t id, const char *name,
                    const ice_type *type, okey *k, colsel *cs, const char *file, icd_error *err)
{
    k->type = type;
    k->name = name;
    int found = find_path(f, ids, id, &k->path);
    if (found < 0)
        return icd_fail(err, ICD_EUNSUPPORTED, file, -1,
                        "column %s (field id %d) is inside a list or map", name, (int)id);
    if (found > 0) {
        k->batch_col = -1;
        return 1;
    }
    if (!ice_type_is_primitive(type) || !orc_readable_as(k->path.node, type))
        return icd_fail(err, ICD_EUNSUPPORTED, file, -1,
                        "column %s: ORC %s column '%s' cannot be read as %s", name,
                        orc_kind_name(k->path.node->kind), k->path.node->name,
                        ice_type_kind_name(type->kind));
    int bc = select_col(cs, k->path.top, err);
    if (bc < 0) return bc;
    k->batch_col = bc;
    return 0;
}

/* ======================================================================================
 * The ORC format adapter (adapter.h): columns bound like equality keys (by the ids of
 * compute_ids, through structs), read with orc_reader and converted by key_value, the
 * conversion and range check of the ORC data path.
 * ==================================================================================== */

typedef struct orc_adapter {
    orc_file *f;
    orc_reader *rd;
    int64_t *ids;
    okey *keys; /* per requested column */
    colsel cs;
    size_t first, end; /* the stripes read (ice_adapter_select_units) */
} orc_adapter;

static void orc_adapter_free(orc_adapter *p)
{
    if (!p) return;
    orc_reader_free(p->rd);
    orc_file_free(p->f);
    free(p->ids);
    free(p->keys);
    free((void *)p->cs.cols);
    free(p);
}

static void orc_adapter_close(ice_adapter *a)
{
    orc_adapter_free(a->impl);
}

static int orc_adapter_next(ice_adapter *a, icd_error *err)
{
    orc_adapter *p = a->impl;
    orc_batch *b;
    if (!p->rd) return icd_fail(err, ICD_EINTERNAL, a->path, -1, "no reader (a failed restart)");
    int rc = orc_reader_next(p->rd, &b, err);
    if (rc <= 0) return rc;
    ICD_TRY(ice_adapter_reserve(a, b->n, err));
    for (size_t c = 0; c < a->ncols; c++) {
        if (!fill_values(&p->keys[c], b, a->vals[c])) continue;
        for (size_t i = 0; i < b->n; i++) /* a value out of range: the error of the first */
            if (ice_tv_is_out_of_range(&a->vals[c][i]))
                return key_value(&p->keys[c], b, i, a->path, &a->vals[c][i], err);
    }
    a->batch.first_row = (int64_t)b->row_start;
    a->batch.nrows = b->n;
    return 0;
}

static bool keep_selected(void *ctx, const orc_file *f, size_t stripe)
{
    (void)f;
    const orc_adapter *p = ctx;
    return stripe >= p->first && stripe < p->end;
}

static int open_reader(orc_adapter *p, icd_error *err)
{
    orc_read_opts ro = {0};
    ro.columns = p->cs.cols;
    ro.ncolumns = p->cs.n;
    ro.keep_stripe = keep_selected;
    ro.keep_ctx = p;
    return orc_reader_open(&p->rd, p->f, &ro, err);
}

/* A new reader over the same columns that keeps stripes [first, first + count). */
static int orc_adapter_select_units(ice_adapter *a, size_t first, size_t count, icd_error *err)
{
    orc_adapter *p = a->impl;
    orc_reader_free(p->rd);
    p->rd = NULL;
    p->first = first;
    p->end = first + count;
    return open_reader(p, err);
}

static const ice_adapter_ops ORC_OPS = {orc_adapter_next, orc_adapter_close,
                                        orc_adapter_select_units};

int ice_adapter_open_orc(ice_adapter *a, const ice_adapter_opts *o, size_t *missing, icd_error *err)
{
    orc_adapter *p = calloc(1, sizeof *p);
    if (!p) {
        icd_file_close(o->file);
        return icd_fail_nomem(err);
    }
    int rc = orc_file_open_file(&p->f, o->file, true, NULL, err);
    if (!rc && !(p->keys = calloc(o->ncols ? o->ncols : 1, sizeof *p->keys)))
        rc = icd_fail_nomem(err);
    if (!rc) rc = compute_ids(o->schema, o->mapping, p->f, false, &p->ids, err);
    for (size_t c = 0; !rc && c < o->ncols; c++) {
        const ice_adapter_col *col = &o->cols[c];
        okey *k = &p->keys[c];
        rc = bind_key(p->f, p->ids, col->field_id, col->name, col->type, k, &p->cs, o->path, err);
        const orc_type *top =
            rc > 0 && col->fallback_name ? orc_file_find_name(p->f, col->fallback_name) : NULL;
        const orc_type *root = orc_file_root(p->f);
        if (top && top->parent == root) { /* a top-level column of that name */
            k->path.top = k->path.node = top;
            k->path.nsteps = 0;
            if (!orc_readable_as(top, col->type)) {
                rc = icd_fail(err, ICD_EUNSUPPORTED, o->path, -1,
                              "column %s: ORC %s column '%s' cannot be read as %s", col->name,
                              orc_kind_name(top->kind), top->name,
                              ice_type_kind_name(col->type->kind));
                break;
            }
            int bc = select_col(&p->cs, top, err);
            rc = bc < 0 ? bc : 0;
            k->batch_col = bc;
        } else if (rc > 0) {
            rc = ice_adapter_missing(o, c, missing, err);
        }
    }
    p->first = 0;
    p->end = SIZE_MAX;
    if (!rc) rc = open_reader(p, err);
    if (rc) {
        orc_adapter_free(p);
        return rc;
    }
    a->num_rows = (int64_t)orc_file_rows(p->f);
    a->num_units = orc_file_nstripes(p->f);
    a->impl = p;
    a->ops = &ORC_OPS;
    return 0;
}

/* ======================================================================================
 * Stripe pruning with a bound filter and stripe statistics (inclusive: may any row of
 * the stripe match?). Only top-level columns are used: a member of a null struct is null
 * without being counted in the member's statistics.
 * ==================================================================================== */

typedef struct prune_ctx {
    const ice_bound_expr *filter;
    const int64_t *ids;
    const orc_file *f;
    size_t stripe;
    uint8_t d1[16], d2[16]; /* decimal bounds */
    uint64_t stripes_read, stripes_skipped;
    size_t lo, hi; /* the task part's stripes [lo, hi) (ice_scan_reader_read_task_part) */
} prune_ctx;

/* The statistics bound (min or max) as a literal of type t; false when unusable. */
static bool stats_literal(const orc_stats *st, const ice_type *t, bool max, uint8_t dec[16],
                          ice_literal *out)
{
    if (max ? !st->has_max : !st->has_min) return false;
    int64_t i = max ? st->max_i : st->min_i;
    switch (t->kind) {
    case ICE_T_INT:
    case ICE_T_LONG:
        if (st->kind != ORC_STATS_INT) return false;
        if (t->kind == ICE_T_INT) {
            if (i < INT32_MIN || i > INT32_MAX) return false;
            *out = ice_lit_int((int32_t)i);
        } else {
            *out = ice_lit_long(i);
        }
        return true;
    case ICE_T_DATE:
        if (st->kind != ORC_STATS_DATE || i < INT32_MIN || i > INT32_MAX) return false;
        *out = ice_lit_date((int32_t)i);
        return true;
    case ICE_T_FLOAT:
    case ICE_T_DOUBLE: {
        double d = max ? st->max_d : st->min_d;
        if (st->kind != ORC_STATS_DOUBLE || isnan(d)) return false;
        *out = t->kind == ICE_T_FLOAT ? ice_lit_float((float)d) : ice_lit_double(d);
        return true;
    }
    case ICE_T_STRING:
        if (st->kind != ORC_STATS_STRING) return false;
        *out = max ? ice_lit_string((const char *)st->max_s, st->max_len)
                   : ice_lit_string((const char *)st->min_s, st->min_len);
        return true;
    case ICE_T_DECIMAL: {
        ice_i128 v;
        const uint8_t *s = max ? st->max_s : st->min_s;
        size_t n = max ? st->max_len : st->min_len;
        if (st->kind != ORC_STATS_DECIMAL || !s ||
            !ice_decimal_parse((const char *)s, n, 0, t->scale, &v))
            return false;
        size_t len = ice_decimal_from_i128(v, dec);
        *out = ice_lit_decimal(dec, len, t->scale);
        return true;
    }
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        if (st->kind != ORC_STATS_TIMESTAMP || i > INT64_MAX / 1000000 - 1 ||
            i < INT64_MIN / 1000000 + 1)
            return false;
        int32_t ns = max ? st->max_ns : st->min_ns;
        int64_t v;
        if (ice_ts_digits(t->kind) == 9)
            v = i * 1000000 + ns;
        else /* micros: floor the minimum, round the maximum up */
            v = i * 1000 + (max ? (ns + 999) / 1000 : ns / 1000);
        *out = ice_lit_i64(t->kind, v);
        return true;
    }
    default:
        return false;
    }
}

/* The statistics of one predicate's column in the stripe being decided. */
static bool stripe_range(void *ctx, const ice_bound_expr *p, ice_range_stats *out)
{
    prune_ctx *pc = ctx;
    const orc_type *col = top_column(pc->f, pc->ids, p->field_id);
    if (!col) return false; /* a constant column in this file: not decided here */
    orc_stats st;
    orc_file_stripe_stats(pc->f, pc->stripe, col->id, &st);
    if (!st.present) return false;
    out->no_null = st.has_null_known && !st.has_null;
    out->all_null =
        st.has_count && st.count == 0 && (p->op == ICE_EXPR_NOT_NULL || st.has_null_known);
    out->has_lo = stats_literal(&st, p->type, false, pc->d1, &out->lo);
    out->has_hi = stats_literal(&st, p->type, true, pc->d2, &out->hi);
    return true;
}

/* The stripes of the task's part, then those the filter (if any) cannot rule out. */
static bool keep_stripe(void *ctx, const orc_file *f, size_t stripe)
{
    prune_ctx *pc = ctx;
    if (stripe < pc->lo || stripe >= pc->hi) return false; /* another part's */
    pc->f = f;
    pc->stripe = stripe;
    if (!pc->filter || ice_range_may_match(pc->filter, stripe_range, pc)) {
        pc->stripes_read++;
        return true;
    }
    pc->stripes_skipped++;
    return false;
}

/* ======================================================================================
 * ORC data files in the one task loop (ice_data_orc).
 * ==================================================================================== */

typedef struct ocol {
    okey k;        /* a primitive column: its values (VALUES) */
    obind b;       /* a nested one: its binding (NESTED) */
    int batch_col; /* -1: constant */
} ocol;

/* The state of one ORC data file being read (ice_rd_task.src). */
typedef struct orc_src {
    orc_file *f;
    orc_reader *rd;
    int64_t *ids;
    icd_arena arena;
    ocol *ocols;          /* per output column: its ORC side */
    okey *okeys;          /* per key column: its ORC side */
    const orc_batch *cur; /* the batch being read */
    colsel sel;
    prune_ctx pc;
} orc_src;

/* ice_vcol.range_error of a VALUES column (impl: its okey) */
static int orc_range_error(ice_rd_task *t, const ice_vcol *c, size_t row, icd_error *err)
{
    const orc_src *p = t->src;
    ice_tvalue tv;
    int rc = key_value(c->impl, p->cur, row, t->task->data->path, &tv, err);
    return rc ? rc : icd_fail(err, ICD_EINTERNAL, t->task->data->path, -1, "value in range");
}

/* ice_vcol.nested_row (impl: its ocol) */
static int orc_nested_row(ice_rd_task *t, ice_vcol *c, size_t row, icd_error *err)
{
    const orc_src *p = t->src;
    const ocol *oc = c->impl;
    return emit(t->sink, &oc->b, &p->cur->cols[oc->batch_col], row, t->task->data->path,
                (int64_t)(p->cur->row_start + row), err);
}

/* ice_data_ops.open */
static int orc_open(ice_rd_task *t, int64_t *num_rows, icd_error *err)
{
    orc_src *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    t->src = p;
    p->arena = (icd_arena)ICD_ARENA_INIT;
    icd_file *file;
    ICD_TRY(ice_rd_open_entry(t->r, t->task->data, &file, err));
    ICD_TRY(orc_file_open_file(&p->f, file, true, NULL, err));
    *num_rows = (int64_t)orc_file_rows(p->f);
    return 0;
}

/* ice_data_ops.bind */
static int orc_bind(ice_rd_task *t, icd_error *err)
{
    orc_src *p = t->src;
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    const orc_type *root = orc_file_root(p->f);
    if (!root || root->kind != ORC_STRUCT)
        return icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                        "ORC file whose root type is not a struct");
    ICD_TRY(compute_ids(r->schema, r->mapping, p->f, true, &p->ids, err));
    p->ocols = calloc(t->batch.ncols ? t->batch.ncols : 1, sizeof *p->ocols);
    if (!p->ocols) return icd_fail_nomem(err);
    for (size_t i = 0; i < t->batch.ncols; i++) {
        ice_vcol *c = &t->batch.cols[i];
        ocol *oc = &p->ocols[i];
        const ice_field *fld = c->field;
        const orc_type *top = top_column(p->f, p->ids, fld->id);
        if (top) {
            bind_ctx bc = {&p->arena, p->ids, df->path, fld->name, err};
            ICD_TRY(bind(&bc, &oc->b, fld, top, 0));
            int k = select_col(&p->sel, top, err);
            if (k < 0) return k;
            oc->batch_col = k;
            if (ice_type_is_primitive(fld->type)) {
                c->kind = ICE_VCOL_VALUES;
                c->impl = &oc->k;
                c->range_error = orc_range_error;
                oc->k = (okey){.type = fld->type, .name = fld->name, .batch_col = k};
                oc->k.path.top = oc->k.path.node = top;
            } else {
                c->kind = ICE_VCOL_NESTED;
                c->impl = oc;
                c->nested_row = orc_nested_row;
            }
            continue;
        }
        /* Not in the file: identity partition value, initial-default, or null. */
        oc->batch_col = -1;
        c->kind = ICE_VCOL_CONST;
        c->lit = ice_rd_partition_value(r, df, fld->id);
        if (!c->lit) c->lit = fld->initial_default;
        if (ice_type_is_primitive(fld->type)) c->constant = ice_literal_tvalue(c->lit, fld->type);
    }
    return 0;
}

/* ice_data_ops.prepare */
static int orc_prepare(ice_rd_task *t, icd_error *err)
{
    orc_src *p = t->src;
    ice_scan_reader *r = t->r;
    const ice_content_file *data = t->task->data;
    p->okeys = calloc(t->nkcols ? t->nkcols : 1, sizeof *p->okeys);
    if (!p->okeys) return icd_fail_nomem(err);
    for (size_t j = 0; j < t->nkcols; j++) {
        ice_vcol *kc = &t->kcols[j];
        const ice_field *fld = kc->field;
        int rc = bind_key(p->f, p->ids, fld->id, fld->name, fld->type, &p->okeys[j], &p->sel,
                          data->path, err);
        if (rc < 0) return rc;
        if (rc > 0) { /* the data file predates the column */
            kc->kind = ICE_VCOL_CONST;
            kc->constant = ice_rd_absent_value(r, data, fld);
            continue;
        }
        kc->kind = ICE_VCOL_VALUES;
        kc->impl = &p->okeys[j];
        kc->range_error = orc_range_error;
    }
    const orc_type *root = orc_file_root(p->f);
    if (p->sel.n == 0 && orc_file_rows(p->f) > 0) {
        /* no projected column is in the file: read one column to walk its rows */
        if (root->nchildren == 0)
            return icd_fail(err, ICD_EUNSUPPORTED, data->path, -1, "ORC file without columns");
        int k = select_col(&p->sel, root->children[0], err);
        if (k < 0) return k;
    }
    if (p->sel.n == 0) return 0; /* no rows */
    p->pc.filter = r->filter;
    p->pc.ids = p->ids;
    size_t ns = orc_file_nstripes(p->f);
    ice_rd_part_units(t, ns, &p->pc.lo, &p->pc.hi);
    orc_read_opts ro = {0};
    ro.columns = p->sel.cols;
    ro.ncolumns = p->sel.n;
    if (r->filter || p->pc.lo > 0 || p->pc.hi < ns) {
        ro.keep_stripe = keep_stripe;
        ro.keep_ctx = &p->pc;
    }
    return orc_reader_open(&p->rd, p->f, &ro, err);
}

/* ice_data_ops.next: a batch of the ORC reader, every VALUES column's cells filled by
 * key_value (a value out of its type's range is marked). */
static int orc_next(ice_rd_task *t, icd_error *err)
{
    orc_src *p = t->src;
    if (!p->rd) return 0;
    orc_batch *b;
    int rc = orc_reader_next(p->rd, &b, err);
    if (rc <= 0) return rc;
    const char *path = t->task->data->path;
    for (size_t c = 0; c < b->ncols; c++)
        if (b->cols[c].n != b->n)
            return icd_fail(err, ICD_ECORRUPT, path, -1,
                            "ORC batch column %zu has %zu entries for %zu rows", c, b->cols[c].n,
                            b->n);
    p->cur = b;
    size_t n = b->n;
    ICD_TRY(ice_rd_batch_begin(t, n, err));
    for (size_t k = 0; k < t->batch.ncols + t->nkcols; k++) {
        ice_vcol *c = ice_rd_col(t, k);
        if (c->kind == ICE_VCOL_VALUES) c->out_of_range = fill_values(c->impl, b, c->v);
    }
    t->batch.first_row = (int64_t)b->row_start;
    t->batch.nrows = n;
    return 1;
}

/* ice_data_ops.close: also counts the stripes read and skipped. */
static void orc_close(ice_rd_task *t)
{
    orc_src *p = t->src;
    if (!p) return;
    if (p->rd) {
        /* without a filter: the part's stripes, empty ones too (as a whole read counts) */
        t->stats->row_groups_read += t->r->filter ? p->pc.stripes_read : p->pc.hi - p->pc.lo;
        t->stats->row_groups_skipped += p->pc.stripes_skipped;
    }
    orc_reader_free(p->rd);
    free(p->ocols);
    free(p->okeys);
    free((void *)p->sel.cols);
    free(p->ids);
    icd_arena_free(&p->arena);
    orc_file_free(p->f);
    free(p);
    t->src = NULL;
}

const ice_data_ops ice_data_orc = {orc_open, orc_bind, orc_prepare, orc_next, orc_close};
