/*
 * v2 split JSON -> a readable file scan task (see split.h). The worker side of the v2
 * path: where Druid's PR versions re-parse a schema JSON and trust a bare list of delete
 * paths, a split here carries everything the merge-on-read reader checks (sequence
 * numbers, partition tuple, deletion-vector offsets, equality ids), and the table
 * metadata the reader consults (schemas, the partition spec for identity-partition
 * columns, the name mapping) is rebuilt from the split as a minimal metadata document
 * parsed by the ordinary metadata parser, so there is one code path for both.
 */
#include "druid/plan/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "base/arena.h"
#include "base/jsonget.h"
#include "iceberg/literal.h"
#include "iceberg/partition.h"
#include "iceberg/schema.h"
#include "iceberg/transform.h"

#define SPLIT_MAX_BYTES (16u << 20)

struct dr_split {
    icd_arena arena;
    ice_metadata *md;
    ice_content_file data;
    ice_content_file *dels;
    const ice_content_file **del_ptrs;
    ice_scan_task task;
    bool residual;
};

typedef struct sctx {
    const char *origin;
    icd_error *err;
    icd_arena *arena;
    icd_json_reader r; /* strict, ICD_EINVALID, "split: PATH: ..." */
} sctx;

static int bad(const sctx *c, const char *field, const char *what)
{
    return icd_fail(c->err, ICD_EINVALID, c->origin, -1, "split: %s %s", field, what);
}

/* The split's members: strings in the split's arena, integers exact (no coercion). */
static int get_str(const sctx *c, const json_t *o, const char *path, const char *key, bool required,
                   const char **out)
{
    return icd_json_get_str(&c->r, o, path, key, required ? ICD_JSON_REQUIRED : ICD_JSON_OPTIONAL,
                            c->arena, out);
}

static int get_i64(const sctx *c, const json_t *o, const char *path, const char *key, bool required,
                   int64_t def, int64_t *out)
{
    return icd_json_get_i64(&c->r, o, path, key, required ? ICD_JSON_REQUIRED : ICD_JSON_OPTIONAL,
                            def, out, NULL);
}

static ice_file_format parse_format(const char *s)
{
    if (!s) return ICE_FORMAT_UNKNOWN;
    if (!strcasecmp(s, "PARQUET")) return ICE_FORMAT_PARQUET;
    if (!strcasecmp(s, "AVRO")) return ICE_FORMAT_AVRO;
    if (!strcasecmp(s, "ORC")) return ICE_FORMAT_ORC;
    if (!strcasecmp(s, "PUFFIN")) return ICE_FORMAT_PUFFIN;
    return ICE_FORMAT_UNKNOWN;
}

static void init_file(ice_content_file *f)
{
    memset(f, 0, sizeof *f);
    f->content_offset = -1;
    f->content_size = -1;
    f->first_row_id = -1;
    f->sort_order_id = -1;
}

static int parse_delete(const sctx *c, const json_t *o, size_t i, ice_content_file *d)
{
    char where[64];
    snprintf(where, sizeof where, "deleteFiles[%zu]", i);
    if (!json_is_object(o)) return bad(c, where, "is not an object");
    init_file(d);
    const char *content, *format;
    ICD_TRY(get_str(c, o, where, "path", true, &d->path));
    ICD_TRY(get_str(c, o, where, "content", true, &content));
    ICD_TRY(get_str(c, o, where, "format", false, &format));
    if (!strcmp(content, "POSITION_DELETES"))
        d->content = ICE_CONTENT_POSITION_DELETES;
    else if (!strcmp(content, "EQUALITY_DELETES"))
        d->content = ICE_CONTENT_EQUALITY_DELETES;
    else
        return icd_fail(c->err, ICD_EINVALID, c->origin, -1,
                        "split: %s.content '%s' is not POSITION_DELETES or EQUALITY_DELETES", where,
                        content);
    d->format = format ? parse_format(format) : ICE_FORMAT_PARQUET;
    ICD_TRY(get_i64(c, o, where, "fileSizeInBytes", false, -1, &d->file_size));
    ICD_TRY(get_i64(c, o, where, "recordCount", false, -1, &d->record_count));
    ICD_TRY(get_i64(c, o, where, "sequenceNumber", true, 0, &d->data_seq));
    d->file_seq = d->data_seq;
    ICD_TRY(get_str(c, o, where, "referencedDataFile", false, &d->referenced_data_file));
    ICD_TRY(get_i64(c, o, where, "contentOffset", false, -1, &d->content_offset));
    ICD_TRY(get_i64(c, o, where, "contentSizeInBytes", false, -1, &d->content_size));
    if (ice_is_dv(d) && (d->content_offset < 0 || d->content_size < 0 || !d->referenced_data_file))
        return bad(c, where,
                   "is a deletion vector without contentOffset, contentSizeInBytes and "
                   "referencedDataFile");
    const json_t *ids;
    ICD_TRY(icd_json_get_array(&c->r, o, where, "equalityFieldIds", ICD_JSON_OPTIONAL, &ids));
    size_t n = ids ? json_array_size(ids) : 0;
    if (d->content == ICE_CONTENT_EQUALITY_DELETES && n == 0)
        return bad(c, where, "is an equality delete without equalityFieldIds");
    if (n > 1000) return bad(c, where, "has too many equalityFieldIds");
    int32_t *eq = icd_arena_alloc(c->arena, (n ? n : 1) * sizeof *eq);
    if (!eq) return icd_fail_nomem(c->err);
    for (size_t k = 0; k < n; k++) {
        char p[ICD_JSON_PATH_MAX];
        snprintf(p, sizeof p, "%s.equalityFieldIds[%zu]", where, k);
        ICD_TRY(icd_json_as_i32(&c->r, json_array_get(ids, k), p, &eq[k]));
        if (eq[k] < 0) return bad(c, where, "equalityFieldIds holds a negative id");
    }
    d->equality_ids = eq;
    d->nequality_ids = (int32_t)n;
    return 0;
}

/* Builds the minimal table metadata document the reader needs and parses it. */
static int build_metadata(dr_split *s, const sctx *c, const json_t *j)
{
    const char *schema_text, *spec_text, *mapping, *location;
    int64_t fv;
    if (!json_object_get(j, "tableSchemaJson") && json_object_get(j, "dataFilePath"))
        return bad(c, "tableSchemaJson",
                   "is missing (a split taken from `icedruid plan` output is the plan's "
                   "splitCommon members plus the split's own)");
    ICD_TRY(get_str(c, j, NULL, "tableSchemaJson", true, &schema_text));
    ICD_TRY(get_str(c, j, NULL, "partitionSpecJson", false, &spec_text));
    ICD_TRY(get_str(c, j, NULL, "nameMappingJson", false, &mapping));
    ICD_TRY(get_str(c, j, NULL, "tableLocation", false, &location));
    ICD_TRY(get_i64(c, j, NULL, "formatVersion", false, 2, &fv));
    if (fv < 1 || fv > 3) return bad(c, "formatVersion", "is not 1, 2 or 3");
    json_error_t jerr;
    json_t *schema = json_loads(schema_text, 0, &jerr);
    if (!json_is_object(schema)) {
        json_decref(schema);
        return bad(c, "tableSchemaJson", "is not a JSON object");
    }
    json_t *spec = spec_text ? json_loads(spec_text, 0, &jerr) : NULL;
    if (spec_text && !json_is_object(spec)) {
        json_decref(schema);
        json_decref(spec);
        return bad(c, "partitionSpecJson", "is not a JSON object");
    }
    if (!spec) spec = json_pack("{s:i,s:[]}", "spec-id", (json_int_t)s->data.spec_id, "fields");
    json_t *schemas = json_array();
    json_t *props = json_object();
    json_t *md = json_object();
    int rc = (!spec || !schemas || !props || !md) ? icd_fail_nomem(c->err) : 0;
    json_t *sid = json_object_get(schema, "schema-id");
    int64_t schema_id = json_is_integer(sid) ? json_integer_value(sid) : 0;
    if (!rc) {
        json_array_append_new(schemas, schema);
        schema = NULL;
    }
    const json_t *extra = json_object_get(j, "equalityKeySchemasJson");
    for (size_t i = 0; !rc && json_is_array(extra) && i < json_array_size(extra); i++) {
        const json_t *e = json_array_get(extra, i);
        json_t *x = json_is_string(e) ? json_loads(json_string_value(e), 0, &jerr) : NULL;
        if (!json_is_object(x)) {
            json_decref(x);
            rc = bad(c, "equalityKeySchemasJson", "holds a non-schema");
            break;
        }
        json_array_append_new(schemas, x);
    }
    if (!rc && mapping)
        json_object_set_new(props, "schema.name-mapping.default", json_string(mapping));
    if (!rc) {
        json_t *spec_id = json_object_get(spec, "spec-id");
        json_object_set_new(md, "format-version", json_integer(fv));
        json_object_set_new(md, "table-uuid", json_string("00000000-0000-0000-0000-000000000000"));
        json_object_set_new(md, "location", json_string(location ? location : ""));
        json_object_set_new(md, "last-sequence-number", json_integer(0));
        json_object_set_new(md, "last-updated-ms", json_integer(0));
        json_object_set_new(md, "last-column-id", json_integer(0));
        json_object_set_new(md, "current-schema-id", json_integer(schema_id));
        json_object_set_new(md, "schemas", schemas);
        schemas = NULL;
        json_object_set_new(
            md, "default-spec-id",
            json_integer(json_is_integer(spec_id) ? json_integer_value(spec_id) : 0));
        json_object_set_new(md, "partition-specs", json_pack("[O]", spec));
        json_object_set_new(md, "last-partition-id", json_integer(0));
        json_object_set_new(md, "properties", props);
        props = NULL;
        json_object_set_new(md, "sort-orders", json_pack("[{s:i,s:[]}]", "order-id", 0, "fields"));
        json_object_set_new(md, "default-sort-order-id", json_integer(0));
        if (fv > 2) json_object_set_new(md, "next-row-id", json_integer(0));
        char *text = json_dumps(md, JSON_COMPACT);
        if (!text) {
            rc = icd_fail_nomem(c->err);
        } else {
            rc = ice_metadata_parse(text, strlen(text), c->origin ? c->origin : "split", &s->md,
                                    c->err);
            if (rc && rc != ICD_ENOMEM)
                icd_error_wrap(c->err, "split: the table metadata it carries");
            free(text);
        }
    }
    json_decref(schema);
    json_decref(spec);
    json_decref(schemas);
    json_decref(props);
    json_decref(md);
    return rc;
}

/* The partition tuple from {name: single-value JSON}, typed by the spec and schema. */
static int parse_partition(dr_split *s, const sctx *c, const json_t *j)
{
    const ice_partition_spec *spec = ice_metadata_spec(s->md, s->data.spec_id);
    const json_t *part;
    ICD_TRY(icd_json_get_object(&c->r, j, NULL, "partition", ICD_JSON_OPTIONAL, &part));
    if (!spec || spec->nfields == 0) return 0;
    ice_literal *vals = icd_arena_calloc(&s->arena, spec->nfields * sizeof *vals);
    if (!vals) return icd_fail_nomem(c->err);
    const ice_schema *schema = ice_metadata_current_schema(s->md);
    for (size_t i = 0; i < spec->nfields; i++) {
        const ice_partition_field *pf = &spec->fields[i];
        const ice_field *src = ice_schema_field(schema, pf->source_id);
        const json_t *v = part ? json_object_get(part, pf->name) : NULL;
        vals[i] = ice_lit_null(ICE_T_UNKNOWN);
        ice_type t;
        icd_error tmp;
        /* a dropped source column or an unknown transform: the value cannot matter to
         * the reader (only identity partitions of projected columns are read) */
        if (!src || !v || json_is_null(v) ||
            ice_transform_result_type(&pf->transform, src->type, &t, &tmp) ||
            t.kind == ICE_T_UNKNOWN)
            continue;
        if (ice_literal_from_json(v, &t, &s->arena, &vals[i], c->err)) {
            icd_error_wrap(c->err, "split: partition.%s", pf->name);
            icd_error_set_file(c->err, c->origin);
            return c->err->code;
        }
    }
    s->data.partition = vals;
    s->data.npartition = (int32_t)spec->nfields;
    return 0;
}

int dr_split_from_json(const json_t *j, const char *origin, dr_split **out, icd_error *err)
{
    *out = NULL;
    dr_split *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    s->arena.chunk_size = 8192;
    sctx c = {origin, err, &s->arena, {ICD_JSON_STRICT, 0, ICD_EINVALID, origin, "split", err}};
    int rc = 0;
    const char *type = NULL, *format = NULL;
    if (!json_is_object(j)) rc = bad(&c, "document", "is not a JSON object");
    if (!rc) rc = get_str(&c, j, NULL, "type", true, &type);
    if (!rc && strcmp(type, "icebergFileTask"))
        rc = icd_fail(err, ICD_EINVALID, origin, -1,
                      "split: type is '%s', expected 'icebergFileTask'", type);
    ice_content_file *d = &s->data;
    init_file(d);
    d->content = ICE_CONTENT_DATA;
    int64_t spec_id = 0;
    if (!rc) rc = get_str(&c, j, NULL, "dataFilePath", true, &d->path);
    if (!rc) rc = get_str(&c, j, NULL, "fileFormat", false, &format);
    if (!rc) {
        d->format = format ? parse_format(format) : ICE_FORMAT_PARQUET;
        rc = get_i64(&c, j, NULL, "dataFileSizeInBytes", false, -1, &d->file_size);
    }
    if (!rc) rc = get_i64(&c, j, NULL, "dataFileRecordCount", false, -1, &d->record_count);
    if (!rc) rc = get_i64(&c, j, NULL, "dataSequenceNumber", true, 0, &d->data_seq);
    if (!rc) rc = get_i64(&c, j, NULL, "specId", false, 0, &spec_id);
    if (!rc && (spec_id < 0 || spec_id > INT32_MAX)) rc = bad(&c, "specId", "is out of range");
    d->spec_id = (int32_t)spec_id;
    d->file_seq = d->data_seq;
    const json_t *dels = NULL;
    if (!rc) rc = icd_json_get_array(&c.r, j, NULL, "deleteFiles", ICD_JSON_OPTIONAL, &dels);
    size_t n = dels ? json_array_size(dels) : 0;
    if (!rc) {
        s->dels = icd_arena_calloc(&s->arena, (n ? n : 1) * sizeof *s->dels);
        s->del_ptrs = icd_arena_calloc(&s->arena, (n ? n : 1) * sizeof *s->del_ptrs);
        if (!s->dels || !s->del_ptrs) rc = icd_fail_nomem(err);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        rc = parse_delete(&c, json_array_get(dels, i), i, &s->dels[i]);
        s->del_ptrs[i] = &s->dels[i];
    }
    if (!rc) rc = build_metadata(s, &c, j);
    if (!rc) rc = parse_partition(s, &c, j);
    if (!rc) {
        const json_t *res = json_object_get(j, "hasResidual");
        s->residual = json_is_true(res);
        s->task.data = d;
        s->task.deletes = s->del_ptrs;
        s->task.ndeletes = n;
        s->task.has_residual = s->residual;
        *out = s;
        return 0;
    }
    dr_split_free(s);
    return rc;
}

int dr_split_parse(const char *json, size_t len, const char *origin, dr_split **out, icd_error *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *j = json_loadb(json, len, 0, &jerr);
    if (!j)
        return icd_fail(err, ICD_EINVALID, origin, (int64_t)jerr.position,
                        "split is not valid JSON: %s", jerr.text);
    int rc = dr_split_from_json(j, origin, out, err);
    json_decref(j);
    return rc;
}

int dr_split_load(const char *path, dr_split **out, icd_error *err)
{
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return icd_fail(err, errno == ENOENT ? ICD_ENOTFOUND : ICD_EIO, path, -1,
                        "cannot open the split file: %s", strerror(errno));
    char *buf = malloc(SPLIT_MAX_BYTES + 1);
    if (!buf) {
        fclose(fp);
        return icd_fail_nomem(err);
    }
    size_t n = fread(buf, 1, SPLIT_MAX_BYTES + 1, fp);
    bool bad_read = ferror(fp);
    fclose(fp);
    int rc;
    if (bad_read)
        rc = icd_fail(err, ICD_EIO, path, -1, "cannot read the split file");
    else if (n > SPLIT_MAX_BYTES)
        rc = icd_fail(err, ICD_EINVALID, path, -1, "split file is larger than 16 MiB");
    else
        rc = dr_split_parse(buf, n, path, out, err);
    free(buf);
    return rc;
}

void dr_split_free(dr_split *s)
{
    if (!s) return;
    ice_metadata_free(s->md);
    icd_arena_free(&s->arena);
    free(s);
}

const ice_scan_task *dr_split_task(const dr_split *s)
{
    return &s->task;
}
const ice_metadata *dr_split_metadata(const dr_split *s)
{
    return s->md;
}
const ice_schema *dr_split_schema(const dr_split *s)
{
    return ice_metadata_current_schema(s->md);
}
bool dr_split_has_residual(const dr_split *s)
{
    return s->residual;
}
