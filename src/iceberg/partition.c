/*
 * Partition spec JSON -> ice_partition_spec, plus the spec-level questions the planner
 * asks (is it unpartitioned? which field has this id? are two specs equivalent?).
 * Transforms themselves live in transform.c.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"
#include "iceberg/partition.h"

static int spec_fail(icd_error *err, const char *file, int32_t spec_id, size_t idx, const char *msg,
                     const char *key)
{
    return icd_fail(err, ICD_ECORRUPT, file, -1, "partition spec %d, field %zu: %s '%s'",
                    (int)spec_id, idx, msg, key);
}

static int get_i32(const json_t *v, int32_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
        json_integer_value(v) > INT32_MAX)
        return -1;
    *out = (int32_t)json_integer_value(v);
    return 0;
}

static int parse_field(const json_t *j, int32_t spec_id, size_t idx, icd_arena *arena,
                       const char *file, ice_partition_field *f, icd_error *err)
{
    if (!json_is_object(j))
        return spec_fail(err, file, spec_id, idx, "is not a JSON object:", "field");
    json_t *name = json_object_get(j, "name");
    json_t *tr = json_object_get(j, "transform");
    if (!name) return spec_fail(err, file, spec_id, idx, "missing required field", "name");
    if (!json_is_string(name)) return spec_fail(err, file, spec_id, idx, "not a string:", "name");
    if (!tr) return spec_fail(err, file, spec_id, idx, "missing required field", "transform");
    if (!json_is_string(tr))
        return spec_fail(err, file, spec_id, idx, "not a string:", "transform");
    f->name = icd_arena_strndup(arena, json_string_value(name), json_string_length(name));
    const char *text = icd_arena_strdup(arena, json_string_value(tr));
    if (!f->name || !text) return icd_fail_nomem(err);
    ice_transform_parse(text, &f->transform);

    /* v3 multi-argument transforms write "source-ids"; single-argument ones "source-id". */
    json_t *sids = json_object_get(j, "source-ids");
    json_t *sid = json_object_get(j, "source-id");
    if (json_is_array(sids) && json_array_size(sids) > 0) {
        size_t n = json_array_size(sids);
        int32_t *v = icd_arena_alloc(arena, n * sizeof *v);
        if (!v) return icd_fail_nomem(err);
        for (size_t i = 0; i < n; i++)
            if (get_i32(json_array_get(sids, i), &v[i]))
                return spec_fail(err, file, spec_id, idx, "non-integer in", "source-ids");
        f->source_ids = v;
        f->n_source_ids = n;
    } else if (sid) {
        int32_t *v = icd_arena_alloc(arena, sizeof *v);
        if (!v) return icd_fail_nomem(err);
        if (get_i32(sid, v))
            return spec_fail(err, file, spec_id, idx, "not a 32-bit integer:", "source-id");
        f->source_ids = v;
        f->n_source_ids = 1;
    } else {
        return spec_fail(err, file, spec_id, idx, "missing required field", "source-id");
    }
    f->source_id = f->source_ids[0];

    json_t *fid = json_object_get(j, "field-id");
    if (fid) {
        if (get_i32(fid, &f->field_id))
            return spec_fail(err, file, spec_id, idx, "not a 32-bit integer:", "field-id");
    } else {
        f->field_id = 1000 + (int32_t)idx;
    }
    return 0;
}

int ice_partition_spec_from_json(const json_t *j, int32_t spec_id_if_array, icd_arena *arena,
                                 const char *file, ice_partition_spec **out, icd_error *err)
{
    *out = NULL;
    ice_partition_spec *spec = icd_arena_calloc(arena, sizeof *spec);
    if (!spec) return icd_fail_nomem(err);
    const json_t *fields = j;
    spec->spec_id = spec_id_if_array;
    if (json_is_object(j)) {
        json_t *id = json_object_get(j, "spec-id");
        if (!id)
            return icd_fail(err, ICD_ECORRUPT, file, -1,
                            "partition spec: missing required field 'spec-id'");
        if (get_i32(id, &spec->spec_id))
            return icd_fail(err, ICD_ECORRUPT, file, -1,
                            "partition spec: 'spec-id' is not a 32-bit integer");
        fields = json_object_get(j, "fields");
        if (!fields)
            return icd_fail(err, ICD_ECORRUPT, file, -1,
                            "partition spec %d: missing required field 'fields'",
                            (int)spec->spec_id);
    }
    if (!json_is_array(fields))
        return icd_fail(err, ICD_ECORRUPT, file, -1,
                        "partition spec %d: the fields are not a JSON array", (int)spec->spec_id);
    size_t n = json_array_size(fields);
    ice_partition_field *v = n ? icd_arena_calloc(arena, n * sizeof *v) : NULL;
    if (n && !v) return icd_fail_nomem(err);
    for (size_t i = 0; i < n; i++)
        ICD_TRY(parse_field(json_array_get(fields, i), spec->spec_id, i, arena, file, &v[i], err));
    spec->fields = v;
    spec->nfields = n;
    *out = spec;
    return 0;
}

int ice_partition_spec_parse(const char *json, size_t len, int32_t spec_id_if_array,
                             const char *file, ice_partition_spec **out, icd_error *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!root)
        return icd_fail(err, ICD_ECORRUPT, file, (int64_t)jerr.position,
                        "partition spec is not valid JSON: %s", jerr.text);
    icd_arena *arena = calloc(1, sizeof *arena);
    if (!arena) {
        json_decref(root);
        return icd_fail_nomem(err);
    }
    arena->chunk_size = 4096;
    ice_partition_spec *spec;
    int rc = ice_partition_spec_from_json(root, spec_id_if_array, arena, file, &spec, err);
    json_decref(root);
    if (rc) {
        icd_arena_free(arena);
        free(arena);
        return rc;
    }
    spec->owned_arena = arena;
    *out = spec;
    return 0;
}

void ice_partition_spec_free(ice_partition_spec *spec)
{
    if (!spec || !spec->owned_arena) return;
    icd_arena *a = spec->owned_arena;
    icd_arena_free(a);
    free(a);
}

bool ice_partition_spec_is_unpartitioned(const ice_partition_spec *spec)
{
    for (size_t i = 0; i < spec->nfields; i++)
        if (spec->fields[i].transform.kind != ICE_TR_VOID) return false;
    return true;
}

const ice_partition_field *ice_partition_spec_field(const ice_partition_spec *spec,
                                                    int32_t field_id)
{
    for (size_t i = 0; i < spec->nfields; i++)
        if (spec->fields[i].field_id == field_id) return &spec->fields[i];
    return NULL;
}

bool ice_partition_spec_equivalent(const ice_partition_spec *a, const ice_partition_spec *b)
{
    if (a->nfields != b->nfields) return false;
    for (size_t i = 0; i < a->nfields; i++) {
        const ice_partition_field *x = &a->fields[i], *y = &b->fields[i];
        if (x->n_source_ids != y->n_source_ids || strcmp(x->name, y->name) ||
            !ice_transform_equal(&x->transform, &y->transform))
            return false;
        for (size_t k = 0; k < x->n_source_ids; k++)
            if (x->source_ids[k] != y->source_ids[k]) return false;
    }
    return true;
}

void ice_partition_spec_to_json(icd_buf *b, const ice_partition_spec *spec)
{
    icd_buf_printf(b, "{\"spec-id\":%d,\"fields\":[", (int)spec->spec_id);
    for (size_t i = 0; i < spec->nfields; i++) {
        const ice_partition_field *f = &spec->fields[i];
        icd_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        icd_json_cstr(b, f->name);
        icd_buf_puts(b, ",\"transform\":");
        icd_json_cstr(b, f->transform.text ? f->transform.text : "");
        if (f->n_source_ids == 1) {
            icd_buf_printf(b, ",\"source-id\":%d", (int)f->source_id);
        } else {
            icd_buf_puts(b, ",\"source-ids\":[");
            for (size_t k = 0; k < f->n_source_ids; k++)
                icd_buf_printf(b, "%s%d", k ? "," : "", (int)f->source_ids[k]);
            icd_buf_putc(b, ']');
        }
        icd_buf_printf(b, ",\"field-id\":%d}", (int)f->field_id);
    }
    icd_buf_puts(b, "]}");
}
