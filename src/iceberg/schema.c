/*
 * Schema JSON -> ice_schema (types, fields, defaults) and the field index used by every
 * id-based lookup of the readers. Parsing is strict about what the spec calls required
 * (id, name, required, type; list/map ids) and names the offending field in errors.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/array.h"
#include "base/jsonget.h"
#include "iceberg/schema.h"

#define MAX_TYPE_DEPTH 200

typedef struct parse_ctx {
    icd_arena *arena;
    const char *file;
    int32_t schema_id;
    icd_error *err;
} parse_ctx;

static int fail_at(parse_ctx *c, const char *path, const char *fmt, const char *what)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, what);
    if (path && *path)
        return icd_fail(c->err, ICD_ECORRUPT, c->file, -1, "schema %d: field '%.300s': %s",
                        (int)c->schema_id, path, msg);
    return icd_fail(c->err, ICD_ECORRUPT, c->file, -1, "schema %d: %s", (int)c->schema_id, msg);
}

static char *join_name(parse_ctx *c, const char *parent, const char *name)
{
    size_t a = parent && *parent ? strlen(parent) : 0, b = strlen(name);
    char *p = icd_arena_alloc(c->arena, a + b + 2);
    if (!p) return NULL;
    if (a) {
        memcpy(p, parent, a);
        p[a] = '.';
        memcpy(p + a + 1, name, b + 1);
    } else {
        memcpy(p, name, b + 1);
    }
    return p;
}

/* Members read strictly by base/jsonget; its errors ("id: required field is missing")
 * are put in the schema's context like fail_at's: "schema 3: field 'loc.lat': ...". */
static int in_context(parse_ctx *c, const char *path, int rc)
{
    if (!rc || rc == ICD_ENOMEM) return rc;
    if (path && *path)
        return icd_error_wrap(c->err, "schema %d: field '%.300s'", (int)c->schema_id, path);
    return icd_error_wrap(c->err, "schema %d", (int)c->schema_id);
}

static icd_json_reader reader(parse_ctx *c)
{
    return (icd_json_reader){ICD_JSON_STRICT, 0, ICD_ECORRUPT, c->file, NULL, c->err};
}

static int get_int32(parse_ctx *c, const json_t *obj, const char *key, const char *path,
                     int32_t *out)
{
    icd_json_reader r = reader(c);
    return in_context(c, path,
                      icd_json_get_i32(&r, obj, NULL, key, ICD_JSON_REQUIRED, 0, out, NULL));
}

static int get_bool(parse_ctx *c, const json_t *obj, const char *key, const char *path, bool *out)
{
    icd_json_reader r = reader(c);
    return in_context(c, path,
                      icd_json_get_bool(&r, obj, NULL, key, ICD_JSON_REQUIRED, false, out));
}

static int get_value(parse_ctx *c, const json_t *obj, const char *key, const char *path,
                     const json_t **out)
{
    icd_json_reader r = reader(c);
    return in_context(c, path, icd_json_get_value(&r, obj, NULL, key, ICD_JSON_REQUIRED, out));
}

static int parse_type(parse_ctx *c, const json_t *j, const char *path, int depth, ice_type **out);

/* A field of a struct: {"id", "name", "required", "type", "doc", defaults}. */
static int parse_field(parse_ctx *c, const json_t *j, const char *parent, int depth, ice_field *f)
{
    if (!json_is_object(j)) return fail_at(c, parent, "%s", "a struct field is not a JSON object");
    icd_json_reader r = reader(c);
    ICD_TRY(in_context(
        c, parent, icd_json_get_str(&r, j, NULL, "name", ICD_JSON_REQUIRED, c->arena, &f->name)));
    const char *path = join_name(c, parent, f->name);
    if (!path) return icd_fail_nomem(c->err);
    ICD_TRY(get_int32(c, j, "id", path, &f->id));
    ICD_TRY(get_bool(c, j, "required", path, &f->required));
    const json_t *type;
    ICD_TRY(get_value(c, j, "type", path, &type));
    ICD_TRY(parse_type(c, type, path, depth + 1, &f->type));
    json_t *doc = json_object_get(j, "doc");
    if (json_is_string(doc) &&
        !(f->doc = icd_arena_strndup(c->arena, json_string_value(doc), json_string_length(doc))))
        return icd_fail_nomem(c->err);
    static const char *const DEFAULTS[] = {"initial-default", "write-default"};
    for (int i = 0; i < 2; i++) {
        json_t *d = json_object_get(j, DEFAULTS[i]);
        if (!d) continue;
        ice_literal *lit = icd_arena_calloc(c->arena, sizeof *lit);
        if (!lit) return icd_fail_nomem(c->err);
        if (ice_literal_from_json(d, f->type, c->arena, lit, c->err))
            return fail_at(c, path,
                           DEFAULTS[i][0] == 'i' ? "initial-default: %s" : "write-default: %s",
                           c->err->message);
        if (i == 0)
            f->initial_default = lit;
        else
            f->write_default = lit;
    }
    return 0;
}

static int parse_struct(parse_ctx *c, const json_t *j, const char *path, int depth, ice_type *t)
{
    const json_t *fields;
    icd_json_reader r = reader(c);
    ICD_TRY(
        in_context(c, path, icd_json_get_array(&r, j, NULL, "fields", ICD_JSON_REQUIRED, &fields)));
    t->kind = ICE_T_STRUCT;
    t->nfields = json_array_size(fields);
    if (t->nfields) {
        t->fields = icd_arena_calloc(c->arena, t->nfields * sizeof *t->fields);
        if (!t->fields) return icd_fail_nomem(c->err);
    }
    for (size_t i = 0; i < t->nfields; i++)
        ICD_TRY(parse_field(c, json_array_get(fields, i), path, depth, &t->fields[i]));
    return 0;
}

/* A list element or map key/value: a field named by the convention of Java's name index. */
static int parse_child(parse_ctx *c, const json_t *j, const char *path, int depth, const char *name,
                       const char *id_key, const char *type_key, const char *req_key,
                       ice_field **out)
{
    ice_field *f = icd_arena_calloc(c->arena, sizeof *f);
    const char *cpath = join_name(c, path, name);
    if (!f || !cpath) return icd_fail_nomem(c->err);
    f->name = name;
    ICD_TRY(get_int32(c, j, id_key, path, &f->id));
    if (req_key)
        ICD_TRY(get_bool(c, j, req_key, path, &f->required));
    else
        f->required = true; /* map keys are always required */
    const json_t *type;
    ICD_TRY(get_value(c, j, type_key, path, &type));
    ICD_TRY(parse_type(c, type, cpath, depth + 1, &f->type));
    *out = f;
    return 0;
}

static int parse_type(parse_ctx *c, const json_t *j, const char *path, int depth, ice_type **out)
{
    if (depth > MAX_TYPE_DEPTH)
        return fail_at(c, path, "types nested more than %s levels deep", "200");
    ice_type *t = icd_arena_calloc(c->arena, sizeof *t);
    if (!t) return icd_fail_nomem(c->err);
    *out = t;
    if (json_is_string(j)) {
        if (ice_type_parse_primitive(json_string_value(j), c->arena, t, c->err))
            return fail_at(c, path, "%s", c->err->message);
        return 0;
    }
    if (!json_is_object(j))
        return fail_at(c, path, "%s", "a type is neither a string nor an object");
    json_t *kind = json_object_get(j, "type");
    const char *k = json_is_string(kind) ? json_string_value(kind) : NULL;
    if (!k) return fail_at(c, path, "missing required field '%s' of a nested type", "type");
    if (!strcasecmp(k, "struct")) return parse_struct(c, j, path, depth, t);
    if (!strcasecmp(k, "list")) {
        t->kind = ICE_T_LIST;
        return parse_child(c, j, path, depth, "element", "element-id", "element",
                           "element-required", &t->element);
    }
    if (!strcasecmp(k, "map")) {
        t->kind = ICE_T_MAP;
        ICD_TRY(parse_child(c, j, path, depth, "key", "key-id", "key", NULL, &t->key));
        return parse_child(c, j, path, depth, "value", "value-id", "value", "value-required",
                           &t->value);
    }
    return fail_at(c, path, "unknown nested type '%.100s'", k);
}

/* ---- index --------------------------------------------------------------------------- */

typedef struct index_builder {
    ice_schema_entry *v;
    size_t n, cap;
} index_builder;

static int index_add(index_builder *b, parse_ctx *c, const ice_field *f, const ice_field *parent,
                     const char *parent_name)
{
    if (ICD_ARRAY_RESERVE(b->v, b->cap, b->n + 1, 32)) return icd_fail_nomem(c->err);
    const char *full = join_name(c, parent_name, f->name);
    if (!full) return icd_fail_nomem(c->err);
    b->v[b->n++] = (ice_schema_entry){f->id, f, parent, full};
    const ice_type *t = f->type;
    if (t->kind == ICE_T_STRUCT) {
        for (size_t i = 0; i < t->nfields; i++)
            ICD_TRY(index_add(b, c, &t->fields[i], f, full));
    } else if (t->kind == ICE_T_LIST) {
        ICD_TRY(index_add(b, c, t->element, f, full));
    } else if (t->kind == ICE_T_MAP) {
        ICD_TRY(index_add(b, c, t->key, f, full));
        ICD_TRY(index_add(b, c, t->value, f, full));
    }
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    int32_t x = ((const ice_schema_entry *)a)->id, y = ((const ice_schema_entry *)b)->id;
    return x < y ? -1 : x > y;
}

static int build_index(ice_schema *s, parse_ctx *c)
{
    index_builder b = {0};
    int rc = 0;
    for (size_t i = 0; i < s->root.nfields && !rc; i++)
        rc = index_add(&b, c, &s->root.fields[i], NULL, NULL);
    if (!rc && b.n) {
        qsort(b.v, b.n, sizeof *b.v, cmp_entry);
        for (size_t i = 1; i < b.n && !rc; i++)
            if (b.v[i].id == b.v[i - 1].id)
                rc = icd_fail(c->err, ICD_ECORRUPT, c->file, -1,
                              "schema %d: field id %d is used by both '%.200s' and '%.200s'",
                              (int)c->schema_id, (int)b.v[i].id, b.v[i - 1].full_name,
                              b.v[i].full_name);
        ice_schema_entry *copy = rc ? NULL : icd_arena_alloc(c->arena, b.n * sizeof *copy);
        if (!rc && !copy) rc = icd_fail_nomem(c->err);
        if (!rc) {
            memcpy(copy, b.v, b.n * sizeof *copy);
            s->index = copy;
            s->n_index = b.n;
        }
    }
    free(b.v);
    return rc;
}

/* ---- public -------------------------------------------------------------------------- */

int ice_schema_from_json(const json_t *j, icd_arena *arena, const char *file, ice_schema **out,
                         icd_error *err)
{
    icd_error local;
    if (!err) err = &local; /* the parser reads back messages it wraps */
    parse_ctx c = {arena, file, 0, err};
    *out = NULL;
    if (!json_is_object(j))
        return icd_fail(err, ICD_ECORRUPT, file, -1, "a schema is not a JSON object");
    ice_schema *s = icd_arena_calloc(arena, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    json_t *id = json_object_get(j, "schema-id");
    if (id) {
        ICD_TRY(get_int32(&c, j, "schema-id", NULL, &s->schema_id));
        c.schema_id = s->schema_id;
    }
    json_t *type = json_object_get(j, "type");
    if (type && (!json_is_string(type) || strcasecmp(json_string_value(type), "struct")))
        return fail_at(&c, NULL, "%s", "a schema's 'type' must be \"struct\"");
    ICD_TRY(parse_struct(&c, j, NULL, 0, &s->root));
    const json_t *ids;
    icd_json_reader r = reader(&c);
    ICD_TRY(in_context(
        &c, NULL,
        icd_json_get_array(&r, j, NULL, "identifier-field-ids", ICD_JSON_OPTIONAL, &ids)));
    if (ids) {
        size_t n = json_array_size(ids);
        int32_t *v = n ? icd_arena_alloc(arena, n * sizeof *v) : NULL;
        if (n && !v) return icd_fail_nomem(err);
        for (size_t i = 0; i < n; i++) {
            char p[ICD_JSON_PATH_MAX];
            icd_json_path_index(p, "identifier-field-ids", i);
            ICD_TRY(in_context(&c, NULL, icd_json_as_i32(&r, json_array_get(ids, i), p, &v[i])));
        }
        s->identifier_field_ids = v;
        s->n_identifier_field_ids = n;
    }
    ICD_TRY(build_index(s, &c));
    *out = s;
    return 0;
}

int ice_schema_parse(const char *json, size_t len, const char *file, ice_schema **out,
                     icd_error *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!root)
        return icd_fail(err, ICD_ECORRUPT, file, (int64_t)jerr.position,
                        "schema is not valid JSON: %s", jerr.text);
    icd_arena *arena = calloc(1, sizeof *arena);
    if (!arena) {
        json_decref(root);
        return icd_fail_nomem(err);
    }
    arena->chunk_size = 8192;
    ice_schema *s;
    int rc = ice_schema_from_json(root, arena, file, &s, err);
    json_decref(root);
    if (rc) {
        icd_arena_free(arena);
        free(arena);
        return rc;
    }
    s->owned_arena = arena;
    *out = s;
    return 0;
}

void ice_schema_free(ice_schema *s)
{
    if (!s || !s->owned_arena) return;
    icd_arena *a = s->owned_arena;
    icd_arena_free(a); /* s itself lives in the arena */
    free(a);
}

const ice_schema_entry *ice_schema_entry_by_id(const ice_schema *s, int32_t id)
{
    size_t lo = 0, hi = s->n_index;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->index[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n_index && s->index[lo].id == id ? &s->index[lo] : NULL;
}

const ice_field *ice_schema_field(const ice_schema *s, int32_t id)
{
    const ice_schema_entry *e = ice_schema_entry_by_id(s, id);
    return e ? e->field : NULL;
}

const ice_field *ice_schema_parent(const ice_schema *s, int32_t id)
{
    const ice_schema_entry *e = ice_schema_entry_by_id(s, id);
    return e ? e->parent : NULL;
}

const ice_field *ice_schema_find(const ice_schema *s, const char *name, bool case_sensitive)
{
    for (size_t i = 0; i < s->n_index; i++) {
        const char *full = s->index[i].full_name;
        if (case_sensitive ? !strcmp(full, name) : !strcasecmp(full, name))
            return s->index[i].field;
    }
    return NULL;
}

void ice_schema_to_json(icd_buf *b, const ice_schema *s)
{
    icd_buf_printf(b, "{\"type\":\"struct\",\"schema-id\":%d", (int)s->schema_id);
    if (s->n_identifier_field_ids) {
        icd_buf_puts(b, ",\"identifier-field-ids\":[");
        for (size_t i = 0; i < s->n_identifier_field_ids; i++)
            icd_buf_printf(b, "%s%d", i ? "," : "", (int)s->identifier_field_ids[i]);
        icd_buf_putc(b, ']');
    }
    icd_buf_puts(b, ",\"fields\":[");
    for (size_t i = 0; i < s->root.nfields; i++) {
        if (i) icd_buf_putc(b, ',');
        ice_field_to_json(b, &s->root.fields[i]);
    }
    icd_buf_puts(b, "]}");
}
