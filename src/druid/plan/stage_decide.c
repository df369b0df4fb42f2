/*
 * The per-file raw / materialized decision (see stage_decide.h). Planning (plan.c) runs
 * it once per task; `plan` prints the result and `stage` writes the materialized files.
 *
 * dr_decide_task decides from the task's delete files and the read schema's types
 * alone when those rule the file out, and otherwise reads the file's footer (Parquet)
 * or header (Avro) into a small format-neutral tree (fnode) that one checker compares
 * with the read schema.
 */
#include "druid/plan/stage_decide.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "formats/avro/container.h"
#include "formats/orc/orc.h"
#include "formats/parquet/parquet.h"
#include "formats/parquet/schema.h"
#include "iceberg/literal.h"
#include "iceberg/partition.h"

struct dr_decide_ctx {
    icd_fileio *io;
    const ice_metadata *md;
    const ice_schema *schema;
    const ice_name_mapping *mapping; /* NULL when the table has none */
};

int dr_decide_new(icd_fileio *io, const ice_metadata *md, const ice_schema *schema,
                  dr_decide_ctx **out, icd_error *err)
{
    *out = NULL;
    dr_decide_ctx *c = calloc(1, sizeof *c);
    if (!c) return icd_fail_nomem(err);
    c->io = io;
    c->md = md;
    c->schema = schema;
    if (ice_metadata_property(md, "schema.name-mapping.default")) {
        int rc = ice_metadata_name_mapping(md, &c->mapping, err);
        if (rc) {
            dr_decide_free(c);
            return rc;
        }
    }
    *out = c;
    return 0;
}

void dr_decide_free(dr_decide_ctx *c)
{
    if (!c) return;
    free(c);
}

/* ---- format-neutral view of a file's schema ------------------------------------------ */

enum { FK_PRIM, FK_STRUCT, FK_LIST, FK_MAP };
/* FP_INT64: a long without timestamp annotation (Parquet INT64, Avro long, ORC long);
 * FP_TS_MILLIS: Avro's timestamp-millis; FP_TIME_MILLIS: Avro's time-millis or a Parquet
 * INT32 time (TIME(MILLIS)); FP_TIME_NANOS: a Parquet INT64 TIME(NANOS) */
enum {
    FP_OTHER,
    FP_INT32,
    FP_INT64,
    FP_FLOAT,
    FP_DOUBLE,
    FP_DATE,
    FP_TS_MILLIS,
    FP_TIME_MILLIS,
    FP_TIME_NANOS
};

typedef struct fnode fnode;
struct fnode {
    const char *name;
    bool has_id;
    int32_t id;
    int kind, prim;
    fnode *children; /* struct fields; list: [element]; map: [key, value] */
    size_t n;
};

/* Ids for files without them, from the name mapping (like the reader). */
static void map_id(fnode *f, const ice_name_mapping *m, const ice_name_mapping **child_map)
{
    *child_map = NULL;
    if (f->has_id || !m) return;
    const ice_mapped_field *mf = ice_name_mapping_find(m, f->name);
    if (!mf) return;
    *child_map = mf->fields;
    if (mf->has_field_id) {
        f->has_id = true;
        f->id = mf->field_id;
    }
}

static int from_pq(const pq_node *p, const ice_name_mapping *m, icd_arena *a, fnode *f)
{
    f->name = p->name;
    f->has_id = p->has_field_id;
    f->id = p->field_id;
    const ice_name_mapping *cm = NULL;
    map_id(f, m, &cm);
    if (p->kind == PQ_NODE_PRIMITIVE) {
        f->kind = FK_PRIM;
        if (p->eff.kind == PQ_LT_DATE)
            f->prim = FP_DATE;
        else if (p->eff.kind == PQ_LT_TIME)
            f->prim = p->physical_type == PQ_INT32   ? FP_TIME_MILLIS
                      : p->eff.unit == PQ_UNIT_NANOS ? FP_TIME_NANOS
                                                     : FP_OTHER;
        else if (p->eff.kind == PQ_LT_NONE || p->eff.kind == PQ_LT_INTEGER)
            f->prim = p->physical_type == PQ_INT32    ? FP_INT32
                      : p->physical_type == PQ_INT64  ? FP_INT64
                      : p->physical_type == PQ_FLOAT  ? FP_FLOAT
                      : p->physical_type == PQ_DOUBLE ? FP_DOUBLE
                                                      : FP_OTHER;
        return 0;
    }
    const pq_node *kids[2];
    const pq_node *const *list = (const pq_node *const *)p->children;
    size_t n = p->num_children;
    const char *names[2] = {"element", NULL};
    if (p->kind == PQ_NODE_LIST) {
        f->kind = FK_LIST;
        kids[0] = p->element;
        list = kids;
        n = 1;
    } else if (p->kind == PQ_NODE_MAP) {
        f->kind = FK_MAP;
        kids[0] = p->key;
        kids[1] = p->value;
        names[0] = "key";
        names[1] = "value";
        list = kids;
        n = p->value ? 2 : 1;
    } else {
        f->kind = FK_STRUCT;
    }
    f->children = icd_arena_calloc(a, (n ? n : 1) * sizeof *f->children);
    if (!f->children) return ICD_ENOMEM;
    f->n = n;
    for (size_t i = 0; i < n; i++) {
        int rc = from_pq(list[i], cm, a, &f->children[i]);
        if (rc) return rc;
        if (f->kind != FK_STRUCT) f->children[i].name = names[i]; /* fixed names */
    }
    return 0;
}

static const icd_avro_schema *icd_avro_nonnull(const icd_avro_schema *s)
{
    if (s->type == AVRO_UNION)
        for (size_t i = 0; i < s->nbranches; i++)
            if (s->branches[i]->type != AVRO_NULL) return s->branches[i];
    return s;
}

static int from_avro(const icd_avro_schema *s, const char *name, bool has_id, int32_t id,
                     const ice_name_mapping *m, icd_arena *a, int depth, fnode *f)
{
    s = icd_avro_nonnull(s);
    f->name = name;
    f->has_id = has_id;
    f->id = id;
    const ice_name_mapping *cm = NULL;
    map_id(f, m, &cm);
    if (depth > 64) return 0; /* a recursive record: stop describing it */
    if (s->type == AVRO_RECORD) {
        f->kind = FK_STRUCT;
        f->n = s->nfields;
        f->children = icd_arena_calloc(a, (f->n ? f->n : 1) * sizeof *f->children);
        if (!f->children) return ICD_ENOMEM;
        for (size_t i = 0; i < s->nfields; i++) {
            const icd_avro_field *af = &s->fields[i];
            int rc = from_avro(af->type, af->name, af->has_field_id, af->field_id, cm, a, depth + 1,
                               &f->children[i]);
            if (rc) return rc;
        }
        return 0;
    }
    if (s->type == AVRO_ARRAY || s->type == AVRO_MAP) {
        f->kind = s->type == AVRO_ARRAY ? FK_LIST : FK_MAP;
        f->n = s->type == AVRO_ARRAY ? 1 : 2;
        f->children = icd_arena_calloc(a, 2 * sizeof *f->children);
        if (!f->children) return ICD_ENOMEM;
        if (s->type == AVRO_ARRAY)
            return from_avro(s->items, "element", s->element_id >= 0, s->element_id, cm, a,
                             depth + 1, &f->children[0]);
        f->children[0] = (fnode){"key", s->key_id >= 0, s->key_id, FK_PRIM, FP_OTHER, NULL, 0};
        return from_avro(s->items, "value", s->value_id >= 0, s->value_id, cm, a, depth + 1,
                         &f->children[1]);
    }
    f->kind = FK_PRIM;
    f->prim = s->logical == AVRO_LT_DATE               ? FP_DATE
              : s->logical == AVRO_LT_TIMESTAMP_MILLIS ? FP_TS_MILLIS
              : s->logical == AVRO_LT_TIME_MILLIS      ? FP_TIME_MILLIS
              : s->logical != AVRO_LT_NONE             ? FP_OTHER
              : s->type == AVRO_INT                    ? FP_INT32
              : s->type == AVRO_LONG                   ? FP_INT64
              : s->type == AVRO_FLOAT                  ? FP_FLOAT
              : s->type == AVRO_DOUBLE                 ? FP_DOUBLE
                                                       : FP_OTHER;
    return 0;
}

static int from_orc(const orc_type *o, const ice_name_mapping *m, icd_arena *a, int depth, fnode *f)
{
    f->name = o->name ? o->name : "";
    f->has_id = o->field_id >= 0;
    f->id = (int32_t)o->field_id;
    const ice_name_mapping *cm = NULL;
    map_id(f, m, &cm);
    if (depth > 64) return 0;
    f->kind = o->kind == ORC_STRUCT ? FK_STRUCT
              : o->kind == ORC_LIST ? FK_LIST
              : o->kind == ORC_MAP  ? FK_MAP
                                    : FK_PRIM;
    f->prim = o->kind == ORC_DATE                                                 ? FP_DATE
              : o->kind == ORC_INT || o->kind == ORC_SHORT || o->kind == ORC_BYTE ? FP_INT32
              : o->kind == ORC_LONG                                               ? FP_INT64
              : o->kind == ORC_FLOAT                                              ? FP_FLOAT
              : o->kind == ORC_DOUBLE                                             ? FP_DOUBLE
                                                                                  : FP_OTHER;
    if (f->kind == FK_PRIM) return 0;
    f->n = o->nchildren;
    f->children = icd_arena_calloc(a, (f->n ? f->n : 1) * sizeof *f->children);
    if (!f->children) return ICD_ENOMEM;
    static const char *const kv[2] = {"key", "value"};
    for (size_t i = 0; i < f->n; i++) {
        int rc = from_orc(o->children[i], cm, a, depth + 1, &f->children[i]);
        if (rc) return rc;
        if (f->kind == FK_LIST) f->children[i].name = "element";
        if (f->kind == FK_MAP && i < 2) f->children[i].name = kv[i];
    }
    return 0;
}

/* ---- the checks ------------------------------------------------------------------------ */

static int decision_fail(dr_file_decision *d, const char *fmt, ...) ICD_PRINTF(2, 3);
static int decision_fail(dr_file_decision *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->reason, sizeof d->reason, fmt, ap);
    va_end(ap);
    d->raw = false;
    return 1;
}

/* The value the Iceberg read fills a field the file lacks with is not null. */
static bool filled_when_absent(const ice_field *f, const ice_content_file *df,
                               const ice_partition_spec *spec, bool top)
{
    if (f->initial_default && !f->initial_default->is_null) return true;
    if (!top || !spec) return false;
    for (size_t i = 0; i < spec->nfields && (int32_t)i < df->npartition; i++)
        if (spec->fields[i].transform.kind == ICE_TR_IDENTITY &&
            spec->fields[i].source_id == f->id && !df->partition[i].is_null)
            return true;
    return false;
}

static const fnode *child_by_id(const fnode *g, int32_t id)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->children[i].has_id && g->children[i].id == id) return &g->children[i];
    return NULL;
}
static const fnode *child_by_name(const fnode *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (!strcmp(g->children[i].name, name)) return &g->children[i];
    return NULL;
}

typedef struct check_ctx {
    const ice_content_file *df;
    const ice_partition_spec *spec;
    bool ids; /* the file (or the mapping) gives field ids */
    dr_file_decision *d;
} check_ctx;

static int check_type(check_ctx *k, const ice_field *f, const fnode *fn);

static int check_fields(check_ctx *k, const ice_field *fields, size_t n, const fnode *g, bool top)
{
    for (size_t i = 0; i < n; i++) {
        const ice_field *f = &fields[i];
        const fnode *fn = k->ids ? child_by_id(g, f->id) : child_by_name(g, f->name);
        if (!fn && k->ids) {
            const fnode *other = child_by_name(g, f->name);
            if (other)
                return decision_fail(k->d,
                                     "column '%s' (id %d): the file's column '%s' is another "
                                     "field (id %d, dropped and re-added)",
                                     f->name, (int)f->id, other->name,
                                     other->has_id ? (int)other->id : -1);
        }
        if (!fn) {
            if (filled_when_absent(f, k->df, k->spec, top))
                return decision_fail(k->d,
                                     "column '%s' (id %d) is not in the file: the Iceberg read "
                                     "fills it from %s",
                                     f->name, (int)f->id,
                                     f->initial_default && !f->initial_default->is_null
                                         ? "its initial-default"
                                         : "the identity partition value");
            continue;
        }
        if (strcmp(fn->name, f->name) != 0)
            return decision_fail(k->d, "column '%s' (id %d) is '%s' in the file (renamed)", f->name,
                                 (int)f->id, fn->name);
        int rc = check_type(k, f, fn);
        if (rc) return rc;
    }
    return 0;
}

static int check_type(check_ctx *k, const ice_field *f, const fnode *fn)
{
    const ice_type *t = f->type;
    if (t->kind == ICE_T_DOUBLE && fn->kind == FK_PRIM && fn->prim == FP_FLOAT)
        return decision_fail(k->d,
                             "column '%s' (id %d) was promoted float -> double (the file holds "
                             "FLOAT; Druid reads it as float)",
                             f->name, (int)f->id);
    bool ts = ice_type_kind_is_timestamp(t->kind);
    if (ts && fn->kind == FK_PRIM && fn->prim == FP_DATE)
        return decision_fail(k->d,
                             "column '%s' (id %d) was promoted date -> timestamp (the file "
                             "holds DATE)",
                             f->name, (int)f->id);
    /* Druid's readers give these stored longs as they are (a Parquet INT64 or ORC long
     * without timestamp type; Avro: a GenericRecord without logical-type conversions), in
     * the file's unit, where a timestamp-typed value becomes millis (Parquet, ORC) or stays
     * micros (Avro: so an Avro plain long of micros reads the same and stays raw); the
     * materialized file holds Iceberg's micros, like the table's other files */
    bool avro = k->df->format == ICE_FORMAT_AVRO;
    if (ts && fn->kind == FK_PRIM && ((fn->prim == FP_INT64 && !avro) || fn->prim == FP_TS_MILLIS))
        return decision_fail(k->d,
                             "column '%s' (id %d) is stored as %s (Druid reads the raw long, "
                             "not Iceberg's microseconds)",
                             f->name, (int)f->id,
                             fn->prim == FP_INT64 ? "a long without timestamp annotation"
                                                  : "Avro timestamp-millis");
    if (t->kind == ICE_T_TIME && fn->kind == FK_PRIM &&
        (fn->prim == FP_TIME_MILLIS || fn->prim == FP_TIME_NANOS))
        return decision_fail(k->d,
                             "column '%s' (id %d) is stored as %s (Druid reads the raw %s, not "
                             "Iceberg's microseconds)",
                             f->name, (int)f->id,
                             fn->prim == FP_TIME_NANOS ? "Parquet TIME(NANOS)"
                             : avro                    ? "Avro time-millis"
                                                       : "Parquet TIME(MILLIS)",
                             fn->prim == FP_TIME_NANOS ? "long of nanoseconds" : "int of millis");
    if (t->kind == ICE_T_STRUCT && fn->kind == FK_STRUCT)
        return check_fields(k, t->fields, t->nfields, fn, false);
    if (t->kind == ICE_T_LIST && fn->kind == FK_LIST && fn->n == 1)
        return check_type(k, t->element, &fn->children[0]);
    if (t->kind == ICE_T_MAP && fn->kind == FK_MAP && fn->n == 2)
        return check_type(k, t->value, &fn->children[1]);
    return 0;
}

static bool any_id(const fnode *f)
{
    if (f->has_id) return true;
    for (size_t i = 0; i < f->n; i++)
        if (any_id(&f->children[i])) return true;
    return false;
}

static int check_footer(dr_decide_ctx *c, const ice_content_file *df, dr_file_decision *d,
                        icd_error *err)
{
    icd_arena a = ICD_ARENA_INIT;
    fnode root = {0};
    int rc = 0;
    d->from_footer = true;
    pq_file *pf = NULL; /* kept open while the check runs: the names point into it */
    icd_avro_reader *ar = NULL;
    if (df->format == ICE_FORMAT_PARQUET) {
        rc = pq_file_open(c->io, df->path, &pf, err);
        if (!rc) {
            const ice_name_mapping *m = c->mapping;
            rc = from_pq(pq_file_schema(pf)->root, NULL, &a, &root);
            /* the root has no id; apply the mapping from its children down */
            if (!rc && !any_id(&root) && m)
                for (size_t i = 0; !rc && i < root.n; i++)
                    rc = from_pq(pq_file_schema(pf)->root->children[i], m, &a, &root.children[i]);
            if (rc > 0 || rc == ICD_ENOMEM) rc = icd_fail_nomem(err);
        }
    } else if (df->format == ICE_FORMAT_AVRO) {
        rc = icd_avro_reader_open(c->io, df->path, &ar, err);
        if (!rc) {
            const icd_avro_schema *s = icd_avro_reader_schema(ar);
            rc = from_avro(s, "", false, 0, NULL, &a, 0, &root);
            if (!rc && !any_id(&root) && c->mapping && root.kind == FK_STRUCT)
                for (size_t i = 0; !rc && i < s->nfields; i++)
                    rc = from_avro(s->fields[i].type, s->fields[i].name, false, 0, c->mapping, &a,
                                   1, &root.children[i]);
            if (rc == ICD_ENOMEM) rc = icd_fail_nomem(err);
        }
    } else if (df->format == ICE_FORMAT_ORC) {
        orc_file *of = NULL;
        rc = orc_file_open(&of, c->io, df->path, NULL, err);
        if (!rc) {
            rc = from_orc(orc_file_root(of), NULL, &a, 0, &root);
            if (!rc && !any_id(&root) && c->mapping)
                for (size_t i = 0; !rc && i < root.n; i++)
                    rc = from_orc(orc_file_root(of)->children[i], c->mapping, &a, 1,
                                  &root.children[i]);
            if (rc == ICD_ENOMEM) rc = icd_fail_nomem(err);
        }
        if (!rc) {
            check_ctx k = {df, ice_metadata_spec(c->md, df->spec_id), any_id(&root), d};
            if (root.kind != FK_STRUCT)
                decision_fail(d, "the file's schema is not a struct");
            else
                check_fields(&k, c->schema->root.fields, c->schema->root.nfields, &root, true);
        }
        orc_file_free(of);
        icd_arena_free(&a);
        return rc;
    } else {
        icd_arena_free(&a);
        decision_fail(d, "%s data file: not a format Druid reads raw",
                      ice_file_format_name(df->format));
        return 0;
    }
    if (!rc) {
        check_ctx k = {df, ice_metadata_spec(c->md, df->spec_id), any_id(&root), d};
        if (root.kind != FK_STRUCT)
            decision_fail(d, "the file's schema is not a record");
        else
            check_fields(&k, c->schema->root.fields, c->schema->root.nfields, &root, true);
    }
    pq_file_close(pf);
    icd_avro_reader_free(ar);
    icd_arena_free(&a);
    return rc;
}

/* The first top-level column that is or holds a variant (Druid's readers see its
 * binary metadata / value, the Iceberg read gives its JSON). */
static bool has_variant(const ice_type *t)
{
    if (t->kind == ICE_T_VARIANT) return true;
    if (t->kind == ICE_T_STRUCT)
        for (size_t i = 0; i < t->nfields; i++)
            if (has_variant(t->fields[i].type)) return true;
    if (t->kind == ICE_T_LIST) return has_variant(t->element->type);
    if (t->kind == ICE_T_MAP) return has_variant(t->key->type) || has_variant(t->value->type);
    return false;
}

/* Appends the decimal digits of v at o; returns the end. */
static char *put_count(char *o, size_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *o++ = tmp[--n];
    return o;
}

/* The counts of a task's delete files by kind, packed as its reason key (stage_decide.h);
 * pos, eq, dv receive them. 0 when the task has none. */
static uint64_t deletes_counts(const ice_scan_task *t, size_t *pos, size_t *eq, size_t *dv)
{
    *pos = *eq = *dv = 0;
    for (size_t i = 0; i < t->ndeletes; i++) {
        const ice_content_file *d = t->deletes[i];
        if (ice_is_dv(d))
            (*dv)++;
        else if (d->content == ICE_CONTENT_EQUALITY_DELETES)
            (*eq)++;
        else
            (*pos)++;
    }
    if (!t->ndeletes) return 0;
    const size_t lim = (size_t)1 << 21; /* (larger counts get no key: the text is made) */
    if (*pos >= lim || *eq >= lim || *dv >= lim) return 0;
    return (uint64_t)1 << 63 | (uint64_t)*pos | (uint64_t)*eq << 21 | (uint64_t)*dv << 42;
}

uint64_t dr_decide_deletes_key(const ice_scan_task *t)
{
    size_t pos, eq, dv;
    return deletes_counts(t, &pos, &eq, &dv);
}

/* "deletes apply: %zu position, %zu equality, %zu deletion vector" without vsnprintf (the
 * reason of every data file with deletes: a million of them in big plans). */
static void deletes_reason(dr_file_decision *d, size_t pos, size_t eq, size_t dv)
{
    _Static_assert(sizeof d->reason >= 128, "the longest deletes reason fits");
    char *o = d->reason;
    memcpy(o, "deletes apply: ", 15);
    o = put_count(o + 15, pos);
    memcpy(o, " position, ", 11);
    o = put_count(o + 11, eq);
    memcpy(o, " equality, ", 11);
    o = put_count(o + 11, dv);
    memcpy(o, " deletion vector", 17); /* (with the NUL) */
    d->raw = false;
}

int dr_decide_task(dr_decide_ctx *c, const ice_scan_task *t, dr_file_decision *out, icd_error *err)
{
    /* (not a memset of the reason: a million tasks) */
    out->raw = true;
    out->from_footer = false;
    out->reason[0] = '\0';
    out->reason_key = 0;
    if (t->ndeletes) {
        size_t pos, eq, dv;
        out->reason_key = deletes_counts(t, &pos, &eq, &dv);
        deletes_reason(out, pos, eq, dv);
        return 0;
    }
    const ice_type *root = &c->schema->root;
    for (size_t i = 0; i < root->nfields; i++)
        if (has_variant(root->fields[i].type)) {
            decision_fail(out, "column '%s' holds a variant: Druid's reader does not decode it",
                          root->fields[i].name);
            return 0;
        }
    /* The metadata cannot prove the names in the file: writers need not write the
     * schema's spelling (Impala writes lower-case names for upper-case columns, see the
     * corpus's iceberg_column_case_sensitivity_issue), so every file without deletes
     * has its footer checked. */
    return check_footer(c, t->data, out, err);
}
