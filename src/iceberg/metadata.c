/*
 * Table metadata JSON -> ice_metadata (spec "Table Metadata Fields", Appendix C, and
 * Appendix E for reading v1 metadata). This is the first thing a scan parses: the catalog
 * hands over a metadata file location; the planner then asks this module for schemas,
 * specs and the snapshot to read. Parsing is strict where the spec (and Iceberg Java)
 * requires fields and lenient where fields are optional or unknown. Gzip-compressed files
 * are inflated here (by their magic bytes, whatever their name).
 *
 * All parsed data lives in one arena owned by the ice_metadata.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/decompress.h"
#include "base/jsonget.h"
#include "iceberg/metadata.h"

/* Bounds on what we accept: metadata files are small, but never trust a size. */
#define MAX_METADATA_BYTES ((size_t)256 << 20)
#define MAX_INFLATED_BYTES ((size_t)1 << 30)
#define MAX_MAPPING_DEPTH 200

typedef struct id_index {
    int64_t id;
    size_t pos;
} id_index;

struct ice_metadata {
    icd_arena arena;
    const char *file;
    int format_version;
    const char *table_uuid;
    const char *location;
    int64_t last_sequence_number;
    int64_t last_updated_ms;
    int32_t last_column_id;
    int32_t last_partition_id;
    bool has_next_row_id;
    int64_t next_row_id;

    ice_schema **schemas;
    size_t nschemas;
    const ice_schema *current_schema;
    ice_partition_spec **specs;
    size_t nspecs;
    const ice_partition_spec *default_spec;
    ice_sort_order *sort_orders;
    size_t nsort_orders;
    int32_t default_sort_order_id;

    ice_property *props;
    size_t nprops;
    const ice_name_mapping *name_mapping;
    const char *name_mapping_error; /* set when the property does not parse */

    ice_snapshot *snapshots;
    size_t nsnapshots;
    id_index *snapshot_index; /* sorted by id */
    const ice_snapshot *current;
    ice_ref *refs;
    size_t nrefs;
    bool has_snapshot_log;
    ice_snapshot_log_entry *snapshot_log;
    size_t nsnapshot_log;
    ice_metadata_log_entry *metadata_log;
    size_t nmetadata_log;
    ice_encryption_key *keys;
    size_t nkeys;
};

typedef struct ctx {
    ice_metadata *md;
    icd_error *err;
    icd_json_reader r; /* strict (ids given as integral doubles accepted), ICD_ECORRUPT */
    char where[ICD_JSON_PATH_MAX]; /* JSON path of the object being read; "" = the root */
} ctx;

/* ---- field getters ------------------------------------------------------------------- */

/* Members of the object at c->where, read by base/jsonget; an absent optional member
 * leaves *out as it was. Errors read "PATH: message" ("snapshots[3].timestamp-ms:
 * required field is missing"). */

static int fail_at(ctx *c, const char *key, const char *fmt, const char *what)
{
    char p[ICD_JSON_PATH_MAX];
    icd_json_path_key(p, c->where, key);
    return icd_json_fail(&c->r, p, fmt, what);
}

static int missing(ctx *c, const char *key)
{
    return fail_at(c, key, "%s", "required field is missing");
}

static int bad_type(ctx *c, const char *path, const char *want, const json_t *v)
{
    return icd_json_fail_type(&c->r, path, want, v);
}

static icd_json_need need(bool required)
{
    return required ? ICD_JSON_REQUIRED : ICD_JSON_OPTIONAL;
}

static int member(ctx *c, const json_t *obj, const char *key, bool required, const json_t **v)
{
    return icd_json_get_value(&c->r, obj, c->where, key, need(required), v);
}

static int get_i64(ctx *c, const json_t *obj, const char *key, bool required, int64_t *out,
                   bool *present)
{
    return icd_json_get_i64(&c->r, obj, c->where, key, need(required), *out, out, present);
}

static int get_i32(ctx *c, const json_t *obj, const char *key, bool required, int32_t *out,
                   bool *present)
{
    return icd_json_get_i32(&c->r, obj, c->where, key, need(required), *out, out, present);
}

static int get_str(ctx *c, const json_t *obj, const char *key, bool required, const char **out)
{
    return icd_json_get_str(&c->r, obj, c->where, key, need(required), &c->md->arena, out);
}

static int get_array(ctx *c, const json_t *obj, const char *key, bool required, const json_t **arr)
{
    return icd_json_get_array(&c->r, obj, c->where, key, need(required), arr);
}

static int get_object(ctx *c, const json_t *obj, const char *key, bool required, const json_t **out)
{
    return icd_json_get_object(&c->r, obj, c->where, key, need(required), out);
}

/* "PATH.KEY[I]" */
static void element_path(char *out, const char *path, const char *key, size_t i)
{
    char k[ICD_JSON_PATH_MAX];
    icd_json_path_key(k, path, key);
    icd_json_path_index(out, k, i);
}

/* Element `i` of the array at c->where.key must be an object. */
static int element_object(ctx *c, const json_t *arr, const char *key, size_t i, const json_t **out)
{
    *out = json_array_get(arr, i);
    if (json_is_object(*out)) return 0;
    char p[ICD_JSON_PATH_MAX];
    element_path(p, c->where, key, i);
    return bad_type(c, p, "an object", *out);
}

static void *arena_array(ctx *c, size_t n, size_t size)
{
    if (n == 0) return NULL;
    if (n > SIZE_MAX / size) return NULL;
    return icd_arena_calloc(&c->md->arena, n * size);
}

#define ALLOC_ARRAY(c, ptr, n)                                                                     \
    do {                                                                                           \
        (ptr) = arena_array((c), (n), sizeof *(ptr));                                              \
        if ((n) && !(ptr)) return icd_fail_nomem((c)->err);                                        \
    } while (0)

/* A string -> string map member (properties, snapshot summary); absent: none. */
static int parse_string_map(ctx *c, const json_t *parent, const char *key, ice_property **out,
                            size_t *n)
{
    *out = NULL;
    *n = 0;
    const json_t *obj;
    ICD_TRY(get_object(c, parent, key, false, &obj));
    if (!obj) return 0;
    size_t count = json_object_size(obj);
    ice_property *v;
    ALLOC_ARRAY(c, v, count);
    char map[ICD_JSON_PATH_MAX], p[ICD_JSON_PATH_MAX];
    icd_json_path_key(map, c->where, key);
    const char *k;
    json_t *val;
    size_t i = 0;
    json_object_foreach((json_t *)obj, k, val)
    {
        icd_json_path_key(p, map, k);
        ICD_TRY(icd_json_as_str(&c->r, val, p, &c->md->arena, &v[i].value));
        v[i].key = icd_arena_strdup(&c->md->arena, k);
        if (!v[i].key) return icd_fail_nomem(c->err);
        i++;
    }
    *out = v;
    *n = i;
    return 0;
}

/* ---- name mapping -------------------------------------------------------------------- */

/* The mapping's fields at `path` ("" for the top level, "[2].fields" below). */
static int mapping_from_json(const icd_json_reader *r, const json_t *j, icd_arena *a,
                             const char *path, int depth, const ice_name_mapping **out)
{
    if (depth > MAX_MAPPING_DEPTH) return icd_json_fail(r, path, "nested too deep");
    if (!json_is_array(j)) return icd_json_fail_type(r, path, "an array", j);
    ice_name_mapping *m = icd_arena_calloc(a, sizeof *m);
    size_t n = json_array_size(j);
    ice_mapped_field *fields = n ? icd_arena_calloc(a, n * sizeof *fields) : NULL;
    if (!m || (n && !fields)) return icd_fail_nomem(r->err);
    for (size_t i = 0; i < n; i++) {
        char p[ICD_JSON_PATH_MAX], q[ICD_JSON_PATH_MAX];
        icd_json_path_index(p, path, i);
        const json_t *f = json_array_get(j, i);
        if (!json_is_object(f)) return icd_json_fail_type(r, p, "an object", f);
        const json_t *names;
        ICD_TRY(icd_json_get_array(r, f, p, "names", ICD_JSON_REQUIRED, &names));
        size_t nn = json_array_size(names);
        const char **nv = nn ? icd_arena_calloc(a, nn * sizeof *nv) : NULL;
        if (nn && !nv) return icd_fail_nomem(r->err);
        for (size_t k = 0; k < nn; k++) {
            element_path(q, p, "names", k);
            ICD_TRY(icd_json_as_str(r, json_array_get(names, k), q, a, &nv[k]));
        }
        fields[i].names = nv;
        fields[i].n_names = nn;
        ICD_TRY(icd_json_get_i32(r, f, p, "field-id", ICD_JSON_OPTIONAL, 0, &fields[i].field_id,
                                 &fields[i].has_field_id));
        const json_t *sub = icd_json_field(f, "fields");
        if (sub) {
            icd_json_path_key(q, p, "fields");
            ICD_TRY(mapping_from_json(r, sub, a, q, depth + 1, &fields[i].fields));
        }
    }
    m->fields = fields;
    m->n = n;
    *out = m;
    return 0;
}

int ice_name_mapping_parse(const char *json, size_t len, icd_arena *arena, const char *file,
                           const ice_name_mapping **out, icd_error *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!root)
        return icd_fail(err, ICD_ECORRUPT, file, -1, "name mapping is not valid JSON: %s",
                        jerr.text);
    icd_json_reader r = {ICD_JSON_STRICT, 0, ICD_ECORRUPT, file, "name mapping", err};
    int rc = mapping_from_json(&r, root, arena, "", 0, out);
    json_decref(root);
    return rc;
}

const ice_mapped_field *ice_name_mapping_find(const ice_name_mapping *m, const char *name)
{
    for (size_t i = 0; m && i < m->n; i++)
        for (size_t k = 0; k < m->fields[i].n_names; k++)
            if (!strcmp(m->fields[i].names[k], name)) return &m->fields[i];
    return NULL;
}

/* ---- schemas and specs --------------------------------------------------------------- */

static int parse_schemas(ctx *c, const json_t *root)
{
    ice_metadata *md = c->md;
    const json_t *arr;
    ICD_TRY(get_array(c, root, "schemas", false, &arr));
    int32_t current = 0;
    if (arr) {
        ICD_TRY(get_i32(c, root, "current-schema-id", true, &current, NULL));
        md->nschemas = json_array_size(arr);
        ALLOC_ARRAY(c, md->schemas, md->nschemas);
        for (size_t i = 0; i < md->nschemas; i++) {
            ICD_TRY(ice_schema_from_json(json_array_get(arr, i), &md->arena, md->file,
                                         &md->schemas[i], c->err));
            for (size_t k = 0; k < i; k++)
                if (md->schemas[k]->schema_id == md->schemas[i]->schema_id)
                    return icd_fail(c->err, ICD_ECORRUPT, md->file, -1,
                                    "two schemas have schema-id %d",
                                    (int)md->schemas[i]->schema_id);
        }
    } else {
        /* v1 keeps the single current schema in "schema". */
        if (md->format_version > 1) return missing(c, "schemas");
        const json_t *one;
        ICD_TRY(member(c, root, "schema", true, &one));
        md->nschemas = 1;
        ALLOC_ARRAY(c, md->schemas, 1);
        ICD_TRY(ice_schema_from_json(one, &md->arena, md->file, &md->schemas[0], c->err));
        current = md->schemas[0]->schema_id;
    }
    md->current_schema = ice_metadata_schema(md, current);
    if (!md->current_schema)
        return icd_fail(c->err, ICD_ECORRUPT, md->file, -1,
                        "current-schema-id %d names no schema in 'schemas'", (int)current);
    return 0;
}

static int parse_specs(ctx *c, const json_t *root)
{
    ice_metadata *md = c->md;
    const json_t *arr;
    ICD_TRY(get_array(c, root, "partition-specs", false, &arr));
    int32_t def = 0;
    if (arr) {
        ICD_TRY(get_i32(c, root, "default-spec-id", true, &def, NULL));
        md->nspecs = json_array_size(arr);
        ALLOC_ARRAY(c, md->specs, md->nspecs);
        for (size_t i = 0; i < md->nspecs; i++) {
            const json_t *s;
            ICD_TRY(element_object(c, arr, "partition-specs", i, &s));
            ICD_TRY(
                ice_partition_spec_from_json(s, 0, &md->arena, md->file, &md->specs[i], c->err));
            for (size_t k = 0; k < i; k++)
                if (md->specs[k]->spec_id == md->specs[i]->spec_id)
                    return icd_fail(c->err, ICD_ECORRUPT, md->file, -1,
                                    "two partition specs have spec-id %d",
                                    (int)md->specs[i]->spec_id);
        }
    } else {
        /* v1: "partition-spec" is the field array of spec 0. */
        if (md->format_version > 1) return missing(c, "partition-specs");
        const json_t *fields;
        ICD_TRY(get_array(c, root, "partition-spec", true, &fields));
        md->nspecs = 1;
        ALLOC_ARRAY(c, md->specs, 1);
        ICD_TRY(
            ice_partition_spec_from_json(fields, 0, &md->arena, md->file, &md->specs[0], c->err));
    }
    md->default_spec = ice_metadata_spec(md, def);
    if (!md->default_spec)
        return icd_fail(c->err, ICD_ECORRUPT, md->file, -1,
                        "default-spec-id %d names no spec in 'partition-specs'", (int)def);

    bool have = false;
    ICD_TRY(get_i32(c, root, "last-partition-id", md->format_version > 1, &md->last_partition_id,
                    &have));
    if (!have) { /* v1: the highest field id of any spec (999 when none) */
        md->last_partition_id = 999;
        for (size_t i = 0; i < md->nspecs; i++)
            for (size_t k = 0; k < md->specs[i]->nfields; k++)
                if (md->specs[i]->fields[k].field_id > md->last_partition_id)
                    md->last_partition_id = md->specs[i]->fields[k].field_id;
    }
    return 0;
}

static int parse_sort_orders(ctx *c, const json_t *root)
{
    ice_metadata *md = c->md;
    const json_t *arr;
    ICD_TRY(get_array(c, root, "sort-orders", md->format_version > 1, &arr));
    if (!arr) return 0; /* v1 without sort orders: unsorted (order 0) */
    ICD_TRY(get_i32(c, root, "default-sort-order-id", true, &md->default_sort_order_id, NULL));
    md->nsort_orders = json_array_size(arr);
    ALLOC_ARRAY(c, md->sort_orders, md->nsort_orders);
    for (size_t i = 0; i < md->nsort_orders; i++) {
        const json_t *o;
        ice_sort_order *so = &md->sort_orders[i];
        c->where[0] = '\0';
        ICD_TRY(element_object(c, arr, "sort-orders", i, &o));
        snprintf(c->where, sizeof c->where, "sort-orders[%zu]", i);
        const json_t *fields;
        ICD_TRY(get_i32(c, o, "order-id", true, &so->order_id, NULL));
        ICD_TRY(get_array(c, o, "fields", true, &fields));
        so->nfields = json_array_size(fields);
        ice_sort_field *sf;
        ALLOC_ARRAY(c, sf, so->nfields);
        for (size_t k = 0; k < so->nfields; k++) {
            const json_t *f;
            snprintf(c->where, sizeof c->where, "sort-orders[%zu]", i);
            ICD_TRY(element_object(c, fields, "fields", k, &f));
            snprintf(c->where, sizeof c->where, "sort-orders[%zu].fields[%zu]", i, k);
            const char *tr, *dir, *nulls;
            ICD_TRY(get_str(c, f, "transform", true, &tr));
            ICD_TRY(get_str(c, f, "direction", true, &dir));
            ICD_TRY(get_str(c, f, "null-order", true, &nulls));
            ice_transform_parse(tr, &sf[k].transform);
            sf[k].descending = !strcmp(dir, "desc");
            sf[k].nulls_first = !strcmp(nulls, "nulls-first");
            const json_t *ids;
            ICD_TRY(get_array(c, f, "source-ids", false, &ids));
            if (ids && json_array_size(ids)) {
                sf[k].n_source_ids = json_array_size(ids);
                int32_t *v;
                ALLOC_ARRAY(c, v, sf[k].n_source_ids);
                for (size_t m = 0; m < sf[k].n_source_ids; m++) {
                    char p[ICD_JSON_PATH_MAX];
                    element_path(p, c->where, "source-ids", m);
                    ICD_TRY(icd_json_as_i32(&c->r, json_array_get(ids, m), p, &v[m]));
                }
                sf[k].source_ids = v;
            } else {
                int32_t *v;
                ALLOC_ARRAY(c, v, 1);
                ICD_TRY(get_i32(c, f, "source-id", true, v, NULL));
                sf[k].source_ids = v;
                sf[k].n_source_ids = 1;
            }
        }
        so->fields = sf;
    }
    c->where[0] = '\0';
    return 0;
}

/* ---- snapshots and refs -------------------------------------------------------------- */

static int parse_snapshot(ctx *c, const json_t *j, size_t idx, ice_snapshot *s)
{
    ice_metadata *md = c->md;
    if (!json_is_object(j)) {
        char p[ICD_JSON_PATH_MAX];
        icd_json_path_index(p, "snapshots", idx);
        return bad_type(c, p, "an object", j);
    }
    snprintf(c->where, sizeof c->where, "snapshots[%zu]", idx);
    ICD_TRY(get_i64(c, j, "snapshot-id", true, &s->snapshot_id, NULL));
    ICD_TRY(get_i64(c, j, "parent-snapshot-id", false, &s->parent_snapshot_id, &s->has_parent));
    ICD_TRY(get_i64(c, j, "sequence-number", md->format_version > 1, &s->sequence_number, NULL));
    ICD_TRY(get_i64(c, j, "timestamp-ms", true, &s->timestamp_ms, NULL));
    ICD_TRY(get_str(c, j, "manifest-list", false, &s->manifest_list));
    if (!s->manifest_list) {
        const json_t *list;
        ICD_TRY(get_array(c, j, "manifests", false, &list));
        if (!list || md->format_version > 1) return missing(c, "manifest-list");
        s->n_manifests = json_array_size(list);
        const char **v;
        ALLOC_ARRAY(c, v, s->n_manifests);
        for (size_t i = 0; i < s->n_manifests; i++) {
            char p[ICD_JSON_PATH_MAX];
            element_path(p, c->where, "manifests", i);
            ICD_TRY(icd_json_as_str(&c->r, json_array_get(list, i), p, &md->arena, &v[i]));
        }
        s->manifests = v;
    }
    ice_property *p;
    ICD_TRY(parse_string_map(c, j, "summary", &p, &s->n_summary));
    s->summary = p;
    for (size_t i = 0; i < s->n_summary; i++)
        if (!strcmp(p[i].key, "operation")) s->operation = p[i].value;
    ICD_TRY(get_i32(c, j, "schema-id", false, &s->schema_id, &s->has_schema_id));
    ICD_TRY(get_i64(c, j, "first-row-id", false, &s->first_row_id, &s->has_first_row_id));
    ICD_TRY(get_i64(c, j, "added-rows", false, &s->added_rows, &s->has_added_rows));
    ICD_TRY(get_str(c, j, "key-id", false, &s->key_id));
    c->where[0] = '\0';
    return 0;
}

static int cmp_id_index(const void *a, const void *b)
{
    int64_t x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
    return x < y ? -1 : x > y;
}

static int parse_snapshots(ctx *c, const json_t *root)
{
    ice_metadata *md = c->md;
    const json_t *arr;
    ICD_TRY(get_array(c, root, "snapshots", false, &arr));
    md->nsnapshots = arr ? json_array_size(arr) : 0;
    ALLOC_ARRAY(c, md->snapshots, md->nsnapshots);
    ALLOC_ARRAY(c, md->snapshot_index, md->nsnapshots);
    for (size_t i = 0; i < md->nsnapshots; i++) {
        ICD_TRY(parse_snapshot(c, json_array_get(arr, i), i, &md->snapshots[i]));
        md->snapshot_index[i] = (id_index){md->snapshots[i].snapshot_id, i};
    }
    if (md->nsnapshots)
        qsort(md->snapshot_index, md->nsnapshots, sizeof *md->snapshot_index, cmp_id_index);
    for (size_t i = 1; i < md->nsnapshots; i++)
        if (md->snapshot_index[i].id == md->snapshot_index[i - 1].id)
            return icd_fail(c->err, ICD_ECORRUPT, md->file, -1,
                            "snapshot id %lld appears twice in 'snapshots'",
                            (long long)md->snapshot_index[i].id);

    /* current-snapshot-id: absent, null or -1 all mean "no current snapshot". */
    int64_t cur = -1;
    ICD_TRY(get_i64(c, root, "current-snapshot-id", false, &cur, NULL));
    if (cur != -1) {
        md->current = ice_metadata_snapshot(md, cur);
        if (!md->current)
            return icd_fail(c->err, ICD_ECORRUPT, md->file, -1,
                            "current-snapshot-id %lld names no snapshot in 'snapshots'",
                            (long long)cur);
    }
    return 0;
}

static int parse_refs(ctx *c, const json_t *root)
{
    ice_metadata *md = c->md;
    const json_t *obj;
    ICD_TRY(get_object(c, root, "refs", false, &obj));
    size_t n = obj ? json_object_size(obj) : 0;
    bool has_main = obj && json_object_get(obj, "main");
    ALLOC_ARRAY(c, md->refs, n + 1);
    const char *name;
    json_t *r;
    size_t i = 0;
    if (obj) {
        json_object_foreach((json_t *)obj, name, r)
        {
            ice_ref *ref = &md->refs[i++];
            snprintf(c->where, sizeof c->where, "refs.%.100s", name);
            if (!json_is_object(r)) return bad_type(c, c->where, "an object", r);
            if (!(ref->name = icd_arena_strdup(&md->arena, name))) return icd_fail_nomem(c->err);
            const char *type;
            ICD_TRY(get_i64(c, r, "snapshot-id", true, &ref->snapshot_id, NULL));
            ICD_TRY(get_str(c, r, "type", true, &type));
            if (!strcasecmp(type, "branch"))
                ref->type = ICE_REF_BRANCH;
            else if (!strcasecmp(type, "tag"))
                ref->type = ICE_REF_TAG;
            else
                return fail_at(c, "type", "expected \"branch\" or \"tag\", found \"%.100s\"", type);
            ICD_TRY(get_i32(c, r, "min-snapshots-to-keep", false, &ref->min_snapshots_to_keep,
                            &ref->has_min_snapshots_to_keep));
            ICD_TRY(get_i64(c, r, "max-snapshot-age-ms", false, &ref->max_snapshot_age_ms,
                            &ref->has_max_snapshot_age_ms));
            ICD_TRY(get_i64(c, r, "max-ref-age-ms", false, &ref->max_ref_age_ms,
                            &ref->has_max_ref_age_ms));
            if (!ice_metadata_snapshot(md, ref->snapshot_id))
                return icd_fail(c->err, ICD_ECORRUPT, md->file, -1,
                                "ref '%.100s' names snapshot %lld, which is not in 'snapshots'",
                                name, (long long)ref->snapshot_id);
            if (!strcmp(name, "main") &&
                (!md->current || md->current->snapshot_id != ref->snapshot_id))
                return icd_fail(c->err, ICD_ECORRUPT, md->file, -1,
                                "the main branch (snapshot %lld) differs from "
                                "current-snapshot-id",
                                (long long)ref->snapshot_id);
        }
    }
    if (!has_main && md->current) { /* the spec: there is always a main branch */
        ice_ref *ref = &md->refs[i++];
        ref->name = "main";
        ref->snapshot_id = md->current->snapshot_id;
        ref->type = ICE_REF_BRANCH;
    }
    md->nrefs = i;
    c->where[0] = '\0';
    return 0;
}

static int parse_logs(ctx *c, const json_t *root)
{
    ice_metadata *md = c->md;
    const json_t *arr;
    ICD_TRY(get_array(c, root, "snapshot-log", false, &arr));
    md->has_snapshot_log = arr != NULL;
    md->nsnapshot_log = arr ? json_array_size(arr) : 0;
    ALLOC_ARRAY(c, md->snapshot_log, md->nsnapshot_log);
    for (size_t i = 0; i < md->nsnapshot_log; i++) {
        const json_t *e;
        ICD_TRY(element_object(c, arr, "snapshot-log", i, &e));
        snprintf(c->where, sizeof c->where, "snapshot-log[%zu]", i);
        ICD_TRY(get_i64(c, e, "timestamp-ms", true, &md->snapshot_log[i].timestamp_ms, NULL));
        ICD_TRY(get_i64(c, e, "snapshot-id", true, &md->snapshot_log[i].snapshot_id, NULL));
    }
    c->where[0] = '\0';
    ICD_TRY(get_array(c, root, "metadata-log", false, &arr));
    md->nmetadata_log = arr ? json_array_size(arr) : 0;
    ALLOC_ARRAY(c, md->metadata_log, md->nmetadata_log);
    for (size_t i = 0; i < md->nmetadata_log; i++) {
        const json_t *e;
        c->where[0] = '\0';
        ICD_TRY(element_object(c, arr, "metadata-log", i, &e));
        snprintf(c->where, sizeof c->where, "metadata-log[%zu]", i);
        ICD_TRY(get_i64(c, e, "timestamp-ms", true, &md->metadata_log[i].timestamp_ms, NULL));
        ICD_TRY(get_str(c, e, "metadata-file", true, &md->metadata_log[i].metadata_file));
    }
    c->where[0] = '\0';
    return 0;
}

static int parse_keys(ctx *c, const json_t *root)
{
    ice_metadata *md = c->md;
    const json_t *arr;
    ICD_TRY(get_array(c, root, "encryption-keys", false, &arr));
    md->nkeys = arr ? json_array_size(arr) : 0;
    ALLOC_ARRAY(c, md->keys, md->nkeys);
    for (size_t i = 0; i < md->nkeys; i++) {
        const json_t *e;
        ice_encryption_key *k = &md->keys[i];
        c->where[0] = '\0';
        ICD_TRY(element_object(c, arr, "encryption-keys", i, &e));
        snprintf(c->where, sizeof c->where, "encryption-keys[%zu]", i);
        ICD_TRY(get_str(c, e, "key-id", true, &k->key_id));
        ICD_TRY(get_str(c, e, "encrypted-key-metadata", false, &k->encrypted_key_metadata));
        if (!k->encrypted_key_metadata) /* the spec's example spells it "key-metadata" */
            ICD_TRY(get_str(c, e, "key-metadata", false, &k->encrypted_key_metadata));
        ICD_TRY(get_str(c, e, "encrypted-by-id", false, &k->encrypted_by_id));
    }
    c->where[0] = '\0';
    return 0;
}

static int parse_properties(ctx *c, const json_t *root)
{
    ice_metadata *md = c->md;
    ICD_TRY(parse_string_map(c, root, "properties", &md->props, &md->nprops));
    const char *nm = ice_metadata_property(md, "schema.name-mapping.default");
    if (nm) {
        icd_error nerr;
        icd_error_clear(&nerr);
        if (ice_name_mapping_parse(nm, strlen(nm), &md->arena, md->file, &md->name_mapping,
                                   &nerr)) {
            md->name_mapping = NULL;
            md->name_mapping_error = icd_arena_strdup(&md->arena, nerr.message);
            if (!md->name_mapping_error) return icd_fail_nomem(c->err);
        }
    }
    return 0;
}

static int parse_root(ctx *c, const json_t *root)
{
    ice_metadata *md = c->md;
    if (!json_is_object(root))
        return icd_fail(c->err, ICD_ECORRUPT, md->file, -1, "table metadata is not a JSON object");
    int32_t fv = 0;
    ICD_TRY(get_i32(c, root, "format-version", true, &fv, NULL));
    if (fv > 3)
        return icd_fail(c->err, ICD_EUNSUPPORTED, md->file, -1,
                        "format-version %d is not supported (icedruid reads 1 to 3)", (int)fv);
    if (fv < 1)
        return icd_json_fail(&c->r, "format-version", "expected 1, 2 or 3, found %d", (int)fv);
    md->format_version = fv;
    ICD_TRY(get_str(c, root, "table-uuid", fv > 1, &md->table_uuid));
    ICD_TRY(get_str(c, root, "location", true, &md->location));
    ICD_TRY(get_i64(c, root, "last-sequence-number", fv > 1, &md->last_sequence_number, NULL));
    ICD_TRY(get_i64(c, root, "last-updated-ms", true, &md->last_updated_ms, NULL));
    ICD_TRY(get_i32(c, root, "last-column-id", true, &md->last_column_id, NULL));
    ICD_TRY(parse_schemas(c, root));
    ICD_TRY(parse_specs(c, root));
    ICD_TRY(parse_properties(c, root));
    ICD_TRY(parse_snapshots(c, root));
    ICD_TRY(parse_refs(c, root));
    ICD_TRY(parse_logs(c, root));
    ICD_TRY(parse_sort_orders(c, root));
    ICD_TRY(get_i64(c, root, "next-row-id", fv > 2, &md->next_row_id, &md->has_next_row_id));
    ICD_TRY(parse_keys(c, root));
    /* statistics and partition-statistics are informational: not needed to read. */
    return 0;
}

/* ---- gzip ---------------------------------------------------------------------------- */

/* Inflates gzip data (one or more members) into a malloc'd, NUL-terminated buffer. */
static int gunzip(const char *in, size_t n, const char *file, char **out, size_t *out_len,
                  icd_error *err)
{
    icd_buf b = ICD_BUF_INIT;
    int rc = icd_decompress_buf(ICD_CODEC_ZLIB, in, n, MAX_INFLATED_BYTES, &b, err);
    if (rc) {
        icd_buf_free(&b);
        if (rc != ICD_ENOMEM) {
            icd_error_set_file(err, file);
            icd_error_wrap(err, "gzip metadata");
        }
        return rc;
    }
    *out_len = b.len;
    *out = icd_buf_detach(&b);
    return *out ? 0 : icd_fail_nomem(err);
}

/* ---- public: loading ----------------------------------------------------------------- */

int ice_metadata_parse(const char *json, size_t len, const char *location, ice_metadata **out,
                       icd_error *err)
{
    *out = NULL;
    icd_error local;
    if (!err) err = &local;
    if (!location) location = "";
    char *inflated = NULL;
    if (len >= 2 && (unsigned char)json[0] == 0x1f && (unsigned char)json[1] == 0x8b) {
        ICD_TRY(gunzip(json, len, location, &inflated, &len, err));
        json = inflated;
    }
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    free(inflated);
    if (!root)
        return icd_fail(err, ICD_ECORRUPT, location, (int64_t)jerr.position,
                        "table metadata is not valid JSON: %s", jerr.text);
    ice_metadata *md = calloc(1, sizeof *md);
    if (!md) {
        json_decref(root);
        return icd_fail_nomem(err);
    }
    md->arena.chunk_size = 16384;
    md->file = icd_arena_strdup(&md->arena, location);
    int rc = md->file ? 0 : icd_fail_nomem(err);
    ctx c = {
        md, err, {ICD_JSON_STRICT, ICD_JSON_INTEGRAL_REALS, ICD_ECORRUPT, md->file, NULL, err}, ""};
    if (!rc) rc = parse_root(&c, root);
    json_decref(root);
    if (rc) {
        ice_metadata_free(md);
        return rc;
    }
    *out = md;
    return 0;
}

int ice_metadata_load(icd_fileio *io, const char *location, ice_metadata **out, icd_error *err)
{
    *out = NULL;
    char *buf;
    size_t len;
    ICD_TRY(icd_fileio_read_small(io, location, MAX_METADATA_BYTES, &buf, &len, err));
    int rc = ice_metadata_parse(buf, len, location, out, err);
    free(buf);
    return rc;
}

void ice_metadata_free(ice_metadata *md)
{
    if (!md) return;
    icd_arena_free(&md->arena);
    free(md);
}

/* ---- public: accessors --------------------------------------------------------------- */

const char *ice_metadata_file(const ice_metadata *md)
{
    return md->file;
}
int ice_metadata_format_version(const ice_metadata *md)
{
    return md->format_version;
}
const char *ice_metadata_table_uuid(const ice_metadata *md)
{
    return md->table_uuid;
}
const char *ice_metadata_location(const ice_metadata *md)
{
    return md->location;
}
int64_t ice_metadata_last_sequence_number(const ice_metadata *md)
{
    return md->last_sequence_number;
}
int64_t ice_metadata_last_updated_ms(const ice_metadata *md)
{
    return md->last_updated_ms;
}
int32_t ice_metadata_last_column_id(const ice_metadata *md)
{
    return md->last_column_id;
}
int32_t ice_metadata_last_partition_id(const ice_metadata *md)
{
    return md->last_partition_id;
}
bool ice_metadata_next_row_id(const ice_metadata *md, int64_t *out)
{
    if (md->has_next_row_id && out) *out = md->next_row_id;
    return md->has_next_row_id;
}

size_t ice_metadata_schema_count(const ice_metadata *md)
{
    return md->nschemas;
}
const ice_schema *ice_metadata_schema_at(const ice_metadata *md, size_t i)
{
    return i < md->nschemas ? md->schemas[i] : NULL;
}
const ice_field *ice_metadata_field_any(const ice_metadata *md, const ice_schema *first, int32_t id)
{
    const ice_field *f = first ? ice_schema_field(first, id) : NULL;
    for (size_t i = 0; !f && i < md->nschemas; i++)
        if (md->schemas[i]) f = ice_schema_field(md->schemas[i], id);
    return f;
}
const ice_schema *ice_metadata_schema(const ice_metadata *md, int32_t schema_id)
{
    for (size_t i = 0; i < md->nschemas; i++)
        if (md->schemas[i] && md->schemas[i]->schema_id == schema_id) return md->schemas[i];
    return NULL;
}
const ice_schema *ice_metadata_current_schema(const ice_metadata *md)
{
    return md->current_schema;
}

size_t ice_metadata_spec_count(const ice_metadata *md)
{
    return md->nspecs;
}
const ice_partition_spec *ice_metadata_spec_at(const ice_metadata *md, size_t i)
{
    return i < md->nspecs ? md->specs[i] : NULL;
}
const ice_partition_spec *ice_metadata_spec(const ice_metadata *md, int32_t spec_id)
{
    for (size_t i = 0; i < md->nspecs; i++)
        if (md->specs[i] && md->specs[i]->spec_id == spec_id) return md->specs[i];
    return NULL;
}
const ice_partition_spec *ice_metadata_default_spec(const ice_metadata *md)
{
    return md->default_spec;
}

size_t ice_metadata_sort_order_count(const ice_metadata *md)
{
    return md->nsort_orders;
}
const ice_sort_order *ice_metadata_sort_order_at(const ice_metadata *md, size_t i)
{
    return i < md->nsort_orders ? &md->sort_orders[i] : NULL;
}
int32_t ice_metadata_default_sort_order_id(const ice_metadata *md)
{
    return md->default_sort_order_id;
}

size_t ice_metadata_property_count(const ice_metadata *md)
{
    return md->nprops;
}
const ice_property *ice_metadata_property_at(const ice_metadata *md, size_t i)
{
    return i < md->nprops ? &md->props[i] : NULL;
}
const char *ice_metadata_property(const ice_metadata *md, const char *key)
{
    for (size_t i = 0; i < md->nprops; i++)
        if (!strcmp(md->props[i].key, key)) return md->props[i].value;
    return NULL;
}

int ice_metadata_name_mapping(const ice_metadata *md, const ice_name_mapping **out, icd_error *err)
{
    *out = md->name_mapping;
    if (md->name_mapping_error)
        return icd_fail(err, ICD_ECORRUPT, md->file, -1,
                        "table property schema.name-mapping.default: %s", md->name_mapping_error);
    return 0;
}

size_t ice_metadata_snapshot_count(const ice_metadata *md)
{
    return md->nsnapshots;
}
const ice_snapshot *ice_metadata_snapshot_at(const ice_metadata *md, size_t i)
{
    return i < md->nsnapshots ? &md->snapshots[i] : NULL;
}
const ice_snapshot *ice_metadata_snapshot(const ice_metadata *md, int64_t id)
{
    size_t lo = 0, hi = md->nsnapshots;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (md->snapshot_index[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < md->nsnapshots && md->snapshot_index[lo].id == id)
        return &md->snapshots[md->snapshot_index[lo].pos];
    return NULL;
}
const ice_snapshot *ice_metadata_current_snapshot(const ice_metadata *md)
{
    return md->current;
}

size_t ice_metadata_ref_count(const ice_metadata *md)
{
    return md->nrefs;
}
const ice_ref *ice_metadata_ref_at(const ice_metadata *md, size_t i)
{
    return i < md->nrefs ? &md->refs[i] : NULL;
}
const ice_ref *ice_metadata_ref(const ice_metadata *md, const char *name)
{
    for (size_t i = 0; i < md->nrefs; i++)
        if (!strcmp(md->refs[i].name, name)) return &md->refs[i];
    return NULL;
}

bool ice_metadata_has_snapshot_log(const ice_metadata *md)
{
    return md->has_snapshot_log;
}
size_t ice_metadata_snapshot_log_count(const ice_metadata *md)
{
    return md->nsnapshot_log;
}
const ice_snapshot_log_entry *ice_metadata_snapshot_log_at(const ice_metadata *md, size_t i)
{
    return i < md->nsnapshot_log ? &md->snapshot_log[i] : NULL;
}
size_t ice_metadata_metadata_log_count(const ice_metadata *md)
{
    return md->nmetadata_log;
}
const ice_metadata_log_entry *ice_metadata_metadata_log_at(const ice_metadata *md, size_t i)
{
    return i < md->nmetadata_log ? &md->metadata_log[i] : NULL;
}

size_t ice_metadata_encryption_key_count(const ice_metadata *md)
{
    return md->nkeys;
}
const ice_encryption_key *ice_metadata_encryption_key_at(const ice_metadata *md, size_t i)
{
    return i < md->nkeys ? &md->keys[i] : NULL;
}
