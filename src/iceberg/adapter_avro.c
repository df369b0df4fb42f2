/*
 * The Avro format adapter (adapter.h), and the conversion of Avro values to Iceberg typed
 * values that the Avro data path uses too.
 *
 * A requested column is bound once, on the file's writer schema: the path of field
 * indexes to the field with its field id (through records, and unions of null and a
 * record: structs), or to the top-level field of its fallback name; its schema must be
 * readable as the requested type. Records are decoded in batches of at most
 * ICE_ADAPTER_AVRO_BATCH that never cross a container block (the values point into it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "formats/avro/container.h"
#include "iceberg/adapter.h"

/* ---- values ---------------------------------------------------------------------------- */

/* The schema a nullable union stands for: its one non-null branch (else s itself). */
static const icd_avro_schema *non_null(const icd_avro_schema *s)
{
    if (s->type != AVRO_UNION) return s;
    const icd_avro_schema *one = NULL;
    for (size_t i = 0; i < s->nbranches; i++) {
        if (s->branches[i]->type == AVRO_NULL) continue;
        if (one) return s; /* several: not a nullable type */
        one = s->branches[i];
    }
    return one ? one : s;
}

static bool schema_readable_as(const icd_avro_schema *s, const ice_type *t)
{
    icd_avro_type k = s->type;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        return k == AVRO_BOOLEAN;
    case ICE_T_INT:
        return k == AVRO_INT;
    case ICE_T_LONG:
        return k == AVRO_INT || k == AVRO_LONG;
    case ICE_T_FLOAT:
        return k == AVRO_FLOAT;
    case ICE_T_DOUBLE:
        return k == AVRO_FLOAT || k == AVRO_DOUBLE;
    case ICE_T_DECIMAL:
        return (k == AVRO_BYTES || k == AVRO_FIXED) && s->logical == AVRO_LT_DECIMAL &&
               s->scale == t->scale;
    case ICE_T_DATE:
        return k == AVRO_INT;
    case ICE_T_TIME:
        return k == AVRO_INT || k == AVRO_LONG;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        return k == AVRO_LONG || k == AVRO_INT; /* int: a date promoted to timestamp */
    case ICE_T_STRING:
        return k == AVRO_STRING;
    case ICE_T_UUID:
        return k == AVRO_FIXED && s->size == 16;
    case ICE_T_FIXED:
    case ICE_T_BINARY:
        return k == AVRO_BYTES || k == AVRO_FIXED;
    default:
        return false;
    }
}

bool ice_avro_readable_as(const icd_avro_value *v, const ice_type *t)
{
    return v->schema && schema_readable_as(v->schema, t);
}

ice_tvalue ice_avro_tvalue(const icd_avro_value *v, const ice_type *t)
{
    ice_tvalue out = {0};
    if (icd_avro_value_is_null(v)) return out;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        out.cls = ICE_TV_BOOL;
        out.i = v->u.boolean;
        break;
    case ICE_T_INT:
    case ICE_T_LONG:
        out.cls = ICE_TV_INT;
        out.i = v->u.i64;
        break;
    case ICE_T_FLOAT:
        out.cls = ICE_TV_FLOAT;
        out.f = v->u.f32;
        break;
    case ICE_T_DOUBLE:
        out.cls = ICE_TV_DOUBLE;
        out.d = v->type == AVRO_FLOAT ? (double)v->u.f32 : v->u.f64;
        break;
    case ICE_T_DECIMAL:
        out.cls = ICE_TV_DECBE;
        out.p = v->u.bytes.ptr;
        out.n = v->u.bytes.len;
        break;
    case ICE_T_DATE:
        out.cls = ICE_TV_DATE;
        out.i = v->u.i64;
        break;
    case ICE_T_TIME:
        out.cls = ICE_TV_TIME;
        out.i = v->schema && v->schema->logical == AVRO_LT_TIME_MILLIS ? v->u.i64 * 1000 : v->u.i64;
        break;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        int unit = PQ_UNIT_MICROS;
        if (v->schema && v->schema->logical == AVRO_LT_TIMESTAMP_MILLIS)
            unit = PQ_UNIT_MILLIS;
        else if (v->schema && v->schema->logical == AVRO_LT_TIMESTAMP_NANOS)
            unit = PQ_UNIT_NANOS;
        out.cls = ICE_TV_TS;
        out.i = v->type == AVRO_INT
                    ? v->u.i64 * 86400 * (ice_ts_digits(t->kind) == 9 ? 1000000000LL : 1000000LL)
                    : ice_rescale_time(v->u.i64, unit, ice_ts_digits(t->kind));
        break;
    }
    case ICE_T_STRING:
        out.cls = ICE_TV_STRING;
        out.p = v->u.bytes.ptr;
        out.n = v->u.bytes.len;
        break;
    case ICE_T_UUID:
        out.cls = ICE_TV_UUID;
        out.p = v->u.bytes.ptr;
        out.n = v->u.bytes.len;
        break;
    default:
        out.cls = ICE_TV_BINARY;
        out.p = v->u.bytes.ptr;
        out.n = v->u.bytes.len;
        break;
    }
    return out;
}

bool ice_avro_ts_in_range(const icd_avro_value *v, const ice_type *t, char *what, size_t n)
{
    if (icd_avro_value_is_null(v) || !ice_type_is_primitive(t)) return true;
    if (t->kind != ICE_T_TIMESTAMP && t->kind != ICE_T_TIMESTAMPTZ &&
        t->kind != ICE_T_TIMESTAMP_NS && t->kind != ICE_T_TIMESTAMPTZ_NS)
        return true;
    int digits = ice_ts_digits(t->kind);
    int64_t x, m;
    const char *unit;
    if (v->type == AVRO_INT) {
        m = 86400 * (digits == 9 ? 1000000000LL : 1000000LL);
        unit = "days";
    } else if (v->schema && v->schema->logical == AVRO_LT_TIMESTAMP_MILLIS) {
        m = digits == 9 ? 1000000 : 1000;
        unit = "milliseconds";
    } else if (!(v->schema && v->schema->logical == AVRO_LT_TIMESTAMP_NANOS) && digits == 9) {
        m = 1000;
        unit = "microseconds";
    } else {
        return true;
    }
    if (!__builtin_mul_overflow(v->u.i64, m, &x)) return true;
    snprintf(what, n, "%s %lld (%s)", v->type == AVRO_INT ? "date" : "timestamp",
             (long long)v->u.i64, unit);
    return false;
}

static const icd_avro_value *find_id_value(const icd_avro_value *rec, int32_t id, int depth)
{
    if (!rec || rec->type != AVRO_RECORD || depth > 32) return NULL;
    const icd_avro_value *v = icd_avro_value_field_by_id(rec, id);
    if (v) return v;
    for (size_t i = 0; i < rec->u.list.count; i++) {
        const icd_avro_value *c = &rec->u.list.items[i];
        if (c->type == AVRO_RECORD && (v = find_id_value(c, id, depth + 1)) != NULL) return v;
    }
    return NULL;
}

const icd_avro_value *ice_avro_find_id(const icd_avro_value *rec, int32_t id)
{
    return find_id_value(rec, id, 0);
}

/* ---- the adapter ------------------------------------------------------------------------ */

#define MAX_PATH 32

typedef struct avro_path {
    int idx[MAX_PATH]; /* field index at each record level */
    size_t n;
} avro_path;

/* The path to the field with id `id` below record schema `rec` (depth first, in field
 * order); false when there is none. */
static bool find_id(const icd_avro_schema *rec, int32_t id, avro_path *p, size_t depth)
{
    if (rec->type != AVRO_RECORD || depth >= MAX_PATH) return false;
    for (size_t i = 0; i < rec->nfields; i++) {
        if (rec->fields[i].has_field_id && rec->fields[i].field_id == id) {
            p->idx[depth] = (int)i;
            p->n = depth + 1;
            return true;
        }
    }
    for (size_t i = 0; i < rec->nfields; i++) {
        const icd_avro_schema *c = non_null(rec->fields[i].type);
        if (c->type == AVRO_RECORD && find_id(c, id, p, depth + 1)) {
            p->idx[depth] = (int)i;
            return true;
        }
    }
    return false;
}

/* The schema of the field a path leads to (the field's own type: maybe a union). */
static const icd_avro_schema *path_schema(const icd_avro_schema *rec, const avro_path *p)
{
    const icd_avro_schema *s = rec;
    for (size_t d = 0; d < p->n; d++) {
        const icd_avro_schema *r = non_null(s);
        s = r->fields[p->idx[d]].type;
    }
    return s;
}

typedef struct avro_adapter {
    icd_avro_reader *ar;
    icd_arena arena;
    icd_avro_value *recs;
    avro_path *paths; /* per requested column */
    int64_t records;  /* records read so far */
} avro_adapter;

static void avro_free(avro_adapter *p)
{
    if (!p) return;
    icd_avro_reader_free(p->ar);
    icd_arena_free(&p->arena);
    free(p->recs);
    free(p->paths);
    free(p);
}

static void avro_close(ice_adapter *a)
{
    avro_free(a->impl);
}

/* The value a path leads to in a record; NULL when a struct on the way is null. */
static const icd_avro_value *walk(const icd_avro_value *rec, const avro_path *p)
{
    const icd_avro_value *v = rec;
    for (size_t d = 0; d < p->n; d++) {
        if (v->type != AVRO_RECORD || (size_t)p->idx[d] >= v->u.list.count) return NULL;
        v = &v->u.list.items[p->idx[d]];
    }
    return v;
}

static int avro_next(ice_adapter *a, icd_error *err)
{
    avro_adapter *p = a->impl;
    icd_arena_reset(&p->arena);
    size_t n = 0;
    bool eof = false;
    while (n < ICE_ADAPTER_AVRO_BATCH) {
        ICD_TRY(icd_avro_reader_next(p->ar, &p->arena, &p->recs[n], &eof, err));
        if (eof) break;
        n++;
        if (icd_avro_reader_block_read(p->ar) >= icd_avro_reader_block_count(p->ar)) break;
    }
    if (!n) return 0;
    ICD_TRY(ice_adapter_reserve(a, n, err));
    for (size_t c = 0; c < a->ncols; c++) {
        const ice_adapter_col *col = &a->cols[c];
        ice_tvalue *out = a->vals[c];
        for (size_t i = 0; i < n; i++) {
            const icd_avro_value *v = walk(&p->recs[i], &p->paths[c]);
            out[i] = (ice_tvalue){0};
            if (icd_avro_value_is_null(v)) continue;
            int64_t row = p->records + (int64_t)i;
            if (!ice_avro_readable_as(v, col->type))
                return icd_fail(err, ICD_ECORRUPT, a->path, -1,
                                "column %s, record %lld: an Avro %s value cannot be read as %s",
                                col->name, (long long)row, icd_avro_type_name(v->type),
                                ice_type_kind_name(col->type->kind));
            char what[96];
            if (!ice_avro_ts_in_range(v, col->type, what, sizeof what))
                return ice_time_value_range_error(err, a->path, col->name, row, col->type, what);
            out[i] = ice_avro_tvalue(v, col->type);
        }
    }
    a->batch.first_row = p->records;
    a->batch.nrows = n;
    p->records += (int64_t)n;
    return 0;
}

static const ice_adapter_ops AVRO_OPS = {avro_next, avro_close, NULL};

int ice_adapter_open_avro(ice_adapter *a, const ice_adapter_opts *o, size_t *missing,
                          icd_error *err)
{
    avro_adapter *p = calloc(1, sizeof *p);
    if (!p) {
        icd_file_close(o->file);
        return icd_fail_nomem(err);
    }
    icd_arena empty = ICD_ARENA_INIT;
    p->arena = empty;
    int rc = icd_avro_reader_open_file(o->file, true, &p->ar, err);
    if (rc) goto fail;
    p->recs = malloc(ICE_ADAPTER_AVRO_BATCH * sizeof *p->recs);
    p->paths = calloc(o->ncols ? o->ncols : 1, sizeof *p->paths);
    if (!p->recs || !p->paths) {
        rc = icd_fail_nomem(err);
        goto fail;
    }
    const icd_avro_schema *root = icd_avro_reader_schema(p->ar);
    if (root->type != AVRO_RECORD) {
        rc = icd_fail(err, ICD_ECORRUPT, o->path, -1, "the file's schema is a %s, not a record",
                      icd_avro_type_name(root->type));
        goto fail;
    }
    for (size_t c = 0; c < o->ncols; c++) {
        const ice_adapter_col *col = &o->cols[c];
        avro_path *ap = &p->paths[c];
        if (!find_id(root, col->field_id, ap, 0)) {
            int i = col->fallback_name ? icd_avro_schema_field_index(root, col->fallback_name) : -1;
            if (i < 0) {
                rc = ice_adapter_missing(o, c, missing, err);
                goto fail;
            }
            ap->idx[0] = i;
            ap->n = 1;
        }
        const icd_avro_schema *s = path_schema(root, ap);
        bool ok = s->type != AVRO_UNION;
        if (ok) {
            ok = schema_readable_as(s, col->type);
        } else {
            ok = true;
            for (size_t b = 0; b < s->nbranches && ok; b++)
                if (s->branches[b]->type != AVRO_NULL)
                    ok = schema_readable_as(s->branches[b], col->type);
        }
        if (!ok) {
            const icd_avro_schema *shown = non_null(s);
            rc = icd_fail(err, ICD_EUNSUPPORTED, o->path, -1,
                          "column %s: Avro %s field cannot be read as %s", col->name,
                          icd_avro_type_name(shown->type), ice_type_kind_name(col->type->kind));
            goto fail;
        }
    }
    a->impl = p;
    a->ops = &AVRO_OPS;
    return 0;
fail:
    avro_free(p);
    return rc;
}
