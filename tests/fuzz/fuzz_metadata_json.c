/*
 * libFuzzer target: table metadata JSON (plain or gzip) from memory through
 * ice_metadata_parse, then every accessor the planner and `inspect` use: schema and spec
 * serialisation, snapshot selection of every kind, name mapping, and transforms applied
 * to the parsed column defaults. Any crash, leak or sanitizer report is a bug.
 */
#include <stddef.h>
#include <stdint.h>

#include "iceberg/metadata.h"

static void walk_defaults(const ice_type *t, icd_arena *a, icd_buf *b);

static void apply_transforms(const ice_literal *l, icd_arena *a, icd_buf *b)
{
    static const char *const TRANSFORMS[] = {"identity", "bucket[7]", "truncate[3]", "year",
                                             "month",    "day",       "hour",        "void"};
    for (size_t i = 0; i < sizeof TRANSFORMS / sizeof TRANSFORMS[0]; i++) {
        ice_transform t;
        ice_transform_parse(TRANSFORMS[i], &t);
        ice_literal out;
        icd_error err;
        if (ice_transform_apply(&t, l, a, &out, &err) == 0) ice_literal_to_json(b, &out);
    }
    int32_t h;
    icd_error err;
    (void)ice_literal_hash(l, &h, &err);
    ice_literal_to_json(b, l);
    ice_literal_to_single_value_json(b, l);
    (void)ice_literal_cmp(l, l);
}

static void walk_field(const ice_field *f, icd_arena *a, icd_buf *b)
{
    if (f->initial_default) apply_transforms(f->initial_default, a, b);
    if (f->write_default) apply_transforms(f->write_default, a, b);
    icd_error err;
    (void)ice_type_check_readable(f->type, f->name, &err);
    walk_defaults(f->type, a, b);
}

static void walk_defaults(const ice_type *t, icd_arena *a, icd_buf *b)
{
    if (t->kind == ICE_T_STRUCT)
        for (size_t i = 0; i < t->nfields; i++)
            walk_field(&t->fields[i], a, b);
    else if (t->kind == ICE_T_LIST)
        walk_field(t->element, a, b);
    else if (t->kind == ICE_T_MAP) {
        walk_field(t->key, a, b);
        walk_field(t->value, a, b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ice_metadata *md = NULL;
    icd_error err;
    if (ice_metadata_parse((const char *)data, size, "fuzz.metadata.json", &md, &err)) return 0;
    icd_buf b = ICD_BUF_INIT;
    icd_arena a = ICD_ARENA_INIT;
    for (size_t i = 0; i < ice_metadata_schema_count(md); i++) {
        const ice_schema *s = ice_metadata_schema_at(md, i);
        ice_schema_to_json(&b, s);
        walk_defaults(&s->root, &a, &b);
        for (size_t k = 0; k < s->n_index; k++) {
            (void)ice_schema_parent(s, s->index[k].id);
            (void)ice_schema_find(s, s->index[k].full_name, false);
        }
    }
    for (size_t i = 0; i < ice_metadata_spec_count(md); i++) {
        const ice_partition_spec *p = ice_metadata_spec_at(md, i);
        ice_partition_spec_to_json(&b, p);
        (void)ice_partition_spec_is_unpartitioned(p);
        (void)ice_partition_spec_equivalent(p, ice_metadata_default_spec(md));
        const ice_schema *s = ice_metadata_current_schema(md);
        for (size_t k = 0; k < p->nfields; k++) {
            const ice_field *src = ice_schema_field(s, p->fields[k].source_id);
            ice_type rt;
            if (src) (void)ice_transform_result_type(&p->fields[k].transform, src->type, &rt, &err);
        }
    }
    const ice_name_mapping *nm;
    (void)ice_metadata_name_mapping(md, &nm, &err);
    const ice_snapshot *snap;
    ice_snapshot_selector sel = {.kind = ICE_SELECT_CURRENT};
    (void)ice_metadata_select_snapshot(md, &sel, &snap, &err);
    const ice_schema *sc;
    (void)ice_metadata_read_schema(md, &sel, snap, &sc, &err);
    sel.kind = ICE_SELECT_REF;
    sel.ref = "main";
    (void)ice_metadata_select_snapshot(md, &sel, &snap, &err);
    sel.kind = ICE_SELECT_AS_OF;
    int64_t times[] = {INT64_MIN, -1, 0, 1000, ice_metadata_last_updated_ms(md), INT64_MAX};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        sel.timestamp_ms = times[i];
        (void)ice_metadata_select_snapshot(md, &sel, &snap, &err);
    }
    for (size_t i = 0; i < ice_metadata_snapshot_count(md); i++) {
        const ice_snapshot *s = ice_metadata_snapshot_at(md, i);
        sel.kind = ICE_SELECT_ID;
        sel.snapshot_id = s->snapshot_id;
        (void)ice_metadata_select_snapshot(md, &sel, &snap, &err);
        (void)ice_metadata_read_schema(md, &sel, s, &sc, &err);
    }
    icd_buf_free(&b);
    icd_arena_free(&a);
    ice_metadata_free(md);
    return 0;
}
