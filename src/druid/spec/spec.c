/*
 * Druid ingestion-spec parsing for the iceberg input source (see spec.h). This is the
 * entry point of every spec-driven command (plan, read, serve, rewrite-spec, diff): it
 * validates the document the way Druid's Jackson deserialization and constructors would,
 * and exposes the parsed fields to the planner (table, catalog, filter, snapshot time),
 * the row writer (timestampSpec, maxParseExceptions) and the rewrite step (the original
 * document and its inputSource).
 */
#include "druid/spec/spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "druid/spec/jsonget.h"

#define SPEC_MAX_BYTES (16u << 20)

struct dr_spec {
    json_t *doc;
    dr_doc_shape shape;
    json_t *input_source;
    char is_path[ICD_JSON_PATH_MAX];
    /* iceberg input source */
    char *table_name;
    char *namespace_;
    dr_catalog catalog;
    dr_filter *filter;
    const json_t *warehouse_source;
    char *warehouse_type;
    bool has_snapshot_time;
    int64_t snapshot_time_ms;
    dr_residual_mode residual_mode;
    bool use_arrow_reader;
    int64_t arrow_batch_size;
    /* dataSchema */
    char *data_source;
    dr_timestamp_spec ts;
    dr_dimensions_spec dims;
    dr_granularity_spec gran;
    const json_t *metrics;
    const char **metric_fields;
    size_t n_metric_fields;
    const json_t *transform_spec;
    /* ioConfig / tuningConfig */
    const json_t *input_format;
    bool append_to_existing;
    bool drop_existing;
    const json_t *tuning;
    int64_t max_parse_exceptions;
    int64_t max_subtasks;
};

typedef struct pctx {
    const dr_spec_opts *opts;
    int64_t now_ms;
    icd_error *err;
} pctx;

void dr_spec_free(dr_spec *s)
{
    if (!s) return;
    free(s->table_name);
    free(s->namespace_);
    free(s->catalog.warehouse_path);
    free(s->catalog.catalog_uri);
    json_decref(s->catalog.properties);
    dr_filter_free(s->filter);
    free(s->warehouse_type);
    free(s->data_source);
    dr_timestamp_spec_clear(&s->ts);
    for (size_t i = 0; i < s->dims.n_dims; i++) {
        free(s->dims.dims[i].name);
        free(s->dims.dims[i].type);
    }
    free(s->dims.dims);
    for (size_t i = 0; i < s->dims.n_exclusions; i++)
        free(s->dims.exclusions[i]);
    free(s->dims.exclusions);
    free(s->gran.intervals);
    free(s->metric_fields);
    json_decref(s->doc);
    free(s);
}

/* ---- icebergCatalog ------------------------------------------------------------------- */

static int parse_catalog(dr_spec *s, const json_t *v, const char *path, icd_error *err)
{
    char p[ICD_JSON_PATH_MAX];
    dr_catalog *c = &s->catalog;
    static const char *names[] = {"local", "rest", "hive", "glue"};
    const json_t *type = json_object_get(v, "type");
    if (!json_is_string(type))
        return dr_fail_path(err, path,
                            "missing type id when trying to resolve subtype of IcebergCatalog: "
                            "missing type id property 'type'");
    int t = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(json_string_value(type), names[i]) == 0) t = i;
    if (t < 0)
        return dr_fail_path(
            err, path,
            "Could not resolve type id '%.100s' as a subtype of IcebergCatalog: known "
            "type ids = [glue, hive, local, rest]",
            json_string_value(type));
    c->type = (dr_catalog_type)t;
    c->type_name = names[t];
    const json_t *props;
    ICD_TRY(dr_get_object(v, "catalogProperties", path, &props, err));
    c->properties = props ? json_deep_copy(props) : json_object();
    if (!c->properties) return icd_fail_nomem(err);
    ICD_TRY(dr_get_bool(v, "caseSensitive", path, true, &c->case_sensitive, err));
    if (c->type == DR_CAT_LOCAL || c->type == DR_CAT_HIVE) {
        ICD_TRY(dr_get_str(v, "warehousePath", path, &c->warehouse_path, err));
        if (!c->warehouse_path) {
            icd_json_path_key(p, path, "warehousePath");
            return dr_fail_path(err, p,
                                c->type == DR_CAT_LOCAL ? "warehousePath is null"
                                                        : "warehousePath cannot be null");
        }
    }
    if (c->type == DR_CAT_REST || c->type == DR_CAT_HIVE) {
        ICD_TRY(dr_get_str(v, "catalogUri", path, &c->catalog_uri, err));
        if (!c->catalog_uri) {
            icd_json_path_key(p, path, "catalogUri");
            return dr_fail_path(err, p, "catalogUri cannot be null");
        }
    }
    return 0;
}

/* ---- the iceberg input source --------------------------------------------------------- */

static int parse_warehouse_source(dr_spec *s, const json_t *is, const char *path, icd_error *err)
{
    static const char *known[] = {"local", "s3", "hdfs", "google", "azureStorage", "azure", "http"};
    char p[ICD_JSON_PATH_MAX];
    icd_json_path_key(p, path, "warehouseSource");
    const json_t *w = icd_json_field(is, "warehouseSource");
    if (!w) {
        if (!s->use_arrow_reader)
            return dr_fail_path(err, p,
                                "warehouseSource cannot be null unless useArrowReader is true");
        return 0;
    }
    if (!json_is_object(w))
        return dr_fail_path(err, p, "warehouseSource must be an object with a \"type\"");
    const json_t *type = json_object_get(w, "type");
    if (!json_is_string(type))
        return dr_fail_path(err, p,
                            "missing type id when trying to resolve subtype of InputSourceFactory: "
                            "missing type id property 'type'");
    const char *t = json_string_value(type);
    bool ok = false;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        ok = ok || strcmp(t, known[i]) == 0;
    if (!ok)
        return dr_fail_path(
            err, p,
            "Could not resolve type id '%.100s' as a subtype of InputSourceFactory: "
            "known type ids = [azure, azureStorage, google, hdfs, http, local, s3]",
            t);
    s->warehouse_source = w;
    s->warehouse_type = strdup(t);
    return s->warehouse_type ? 0 : icd_fail_nomem(err);
}

static int parse_residual_mode(dr_spec *s, const json_t *is, const char *path, icd_error *err)
{
    char *m = NULL;
    s->residual_mode = DR_RESIDUAL_IGNORE;
    ICD_TRY(dr_get_str(is, "residualFilterMode", path, &m, err));
    if (!m) return 0;
    int rc = 0;
    if (strcasecmp(m, "ignore") == 0)
        s->residual_mode = DR_RESIDUAL_IGNORE;
    else if (strcasecmp(m, "warn") == 0)
        s->residual_mode = DR_RESIDUAL_WARN;
    else if (strcasecmp(m, "fail") == 0)
        s->residual_mode = DR_RESIDUAL_FAIL;
    else {
        char p[ICD_JSON_PATH_MAX];
        icd_json_path_key(p, path, "residualFilterMode");
        rc = dr_fail_path(
            err, p, "Unknown residualFilterMode: %.100s. Valid values are: ignore, warn, fail", m);
    }
    free(m);
    return rc;
}

/* A Joda DateTime as Druid's DateTimeDeserializer reads it: millis or an ISO string. */
static int parse_datetime(const json_t *obj, const char *key, const char *path, bool *has,
                          int64_t *ms, icd_error *err)
{
    char p[ICD_JSON_PATH_MAX];
    const json_t *v = icd_json_field(obj, key);
    *has = false;
    if (!v) return 0;
    icd_json_path_key(p, path, key);
    if (json_is_integer(v)) {
        *ms = json_integer_value(v);
        *has = true;
        return 0;
    }
    if (!json_is_string(v)) return dr_fail_path(err, p, "expected an ISO-8601 date-time");
    const char *str = json_string_value(v);
    size_t n = json_string_length(v);
    while (n && (unsigned char)str[0] <= ' ')
        str++, n--;
    while (n && (unsigned char)str[n - 1] <= ' ')
        n--;
    if (n == 0) return 0;
    if (dr_parse_iso_datetime(str, n, 0, ms, err) < 0) return icd_error_wrap(err, "%s", p);
    *has = true;
    return 0;
}

static int parse_input_source(dr_spec *s, const json_t *is, const char *path, const pctx *c)
{
    icd_error *err = c->err;
    char p[ICD_JSON_PATH_MAX];
    if (!json_is_object(is)) return dr_fail_path(err, path, "inputSource must be an object");
    const json_t *type = json_object_get(is, "type");
    if (!json_is_string(type))
        return dr_fail_path(
            err, path, "inputSource has no \"type\"; icedruid reads the \"iceberg\" input source");
    if (strcmp(json_string_value(type), "iceberg") != 0)
        return dr_fail_path(err, path,
                            "inputSource type '%.100s' is not \"iceberg\": icedruid only reads "
                            "Iceberg input sources",
                            json_string_value(type));
    ICD_TRY(dr_get_str(is, "tableName", path, &s->table_name, err));
    if (!s->table_name) {
        icd_json_path_key(p, path, "tableName");
        return dr_fail_path(err, p, "tableName cannot be null");
    }
    ICD_TRY(dr_get_str(is, "namespace", path, &s->namespace_, err));
    if (!s->namespace_) {
        icd_json_path_key(p, path, "namespace");
        return dr_fail_path(err, p, "namespace cannot be null");
    }
    const json_t *cat;
    ICD_TRY(dr_get_object(is, "icebergCatalog", path, &cat, err));
    icd_json_path_key(p, path, "icebergCatalog");
    if (!cat) return dr_fail_path(err, p, "icebergCatalog cannot be null");
    ICD_TRY(parse_catalog(s, cat, p, err));
    const json_t *f = icd_json_field(is, "icebergFilter");
    if (f) {
        icd_json_path_key(p, path, "icebergFilter");
        ICD_TRY(dr_filter_parse(&s->filter, f, p, c->now_ms, err));
    }
    ICD_TRY(dr_get_bool(is, "useArrowReader", path, false, &s->use_arrow_reader, err));
    ICD_TRY(dr_get_i64(is, "arrowBatchSize", path, 1024, &s->arrow_batch_size, NULL, err));
    if (s->arrow_batch_size <= 0 || s->arrow_batch_size > INT32_MAX) s->arrow_batch_size = 1024;
    ICD_TRY(parse_warehouse_source(s, is, path, err));
    ICD_TRY(
        parse_datetime(is, "snapshotTime", path, &s->has_snapshot_time, &s->snapshot_time_ms, err));
    /* v2DeleteHandling (an early PR#19266 knob) is accepted and ignored: deletes are
     * always applied. */
    return parse_residual_mode(s, is, path, err);
}

/* ---- dataSchema ------------------------------------------------------------------------ */

static int str_list_has(char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0) return 1;
    return 0;
}

static int parse_dimensions(dr_spec *s, const json_t *ds, const char *path, icd_error *err)
{
    char p[ICD_JSON_PATH_MAX], q[ICD_JSON_PATH_MAX];
    dr_dimensions_spec *d = &s->dims;
    if (!ds) return 0;
    if (!json_is_object(ds)) return dr_fail_path(err, path, "dimensionsSpec must be an object");
    const json_t *arr;
    ICD_TRY(dr_get_array(ds, "dimensions", path, &arr, err));
    icd_json_path_key(p, path, "dimensions");
    size_t n = arr ? json_array_size(arr) : 0;
    if (n) {
        d->dims = calloc(n, sizeof *d->dims);
        if (!d->dims) return icd_fail_nomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(arr, i);
        dr_dimension *dim = &d->dims[d->n_dims++];
        dim->json = e;
        icd_json_path_index(q, p, i);
        if (json_is_object(e)) {
            ICD_TRY(dr_get_str(e, "name", q, &dim->name, err));
            ICD_TRY(dr_get_str(e, "type", q, &dim->type, err));
            if (!dim->name) return dr_fail_path(err, q, "Dimension name cannot be null or empty");
        } else {
            ICD_TRY(dr_scalar_text(e, q, &dim->name, err));
        }
        if (!dim->type && !(dim->type = strdup("string"))) return icd_fail_nomem(err);
        if (dim->name[0] == '\0')
            return dr_fail_path(err, q, "Dimension name cannot be null or empty");
        for (size_t k = 0; k + 1 < d->n_dims; k++)
            if (strcmp(d->dims[k].name, dim->name) == 0)
                return dr_fail_path(err, p, "Duplicate column entries found : [%.200s]", dim->name);
    }
    ICD_TRY(dr_get_array(ds, "dimensionExclusions", path, &arr, err));
    icd_json_path_key(p, path, "dimensionExclusions");
    n = arr ? json_array_size(arr) : 0;
    if (n) {
        d->exclusions = calloc(n, sizeof *d->exclusions);
        if (!d->exclusions) return icd_fail_nomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        icd_json_path_index(q, p, i);
        char *x;
        ICD_TRY(dr_scalar_text(json_array_get(arr, i), q, &x, err));
        if (str_list_has(d->exclusions, d->n_exclusions, x)) {
            free(x); /* a set in Druid */
            continue;
        }
        d->exclusions[d->n_exclusions++] = x;
        for (size_t k = 0; k < d->n_dims; k++)
            if (strcmp(d->dims[k].name, x) == 0)
                return dr_fail_path(err, path,
                                    "dimensions and dimensions exclusions cannot overlap");
    }
    ICD_TRY(dr_get_array(ds, "spatialDimensions", path, &d->spatial, err));
    ICD_TRY(dr_get_bool(ds, "useSchemaDiscovery", path, false, &d->use_schema_discovery, err));
    return dr_get_bool(ds, "includeAllDimensions", path, false, &d->include_all_dimensions, err);
}

static int add_metric_field(dr_spec *s, const json_t *v, const char *path, icd_error *err)
{
    if (!json_is_string(v)) return dr_fail_path(err, path, "expected a field name string");
    const char *name = json_string_value(v);
    for (size_t i = 0; i < s->n_metric_fields; i++)
        if (strcmp(s->metric_fields[i], name) == 0) return 0;
    const char **nv = realloc(s->metric_fields, (s->n_metric_fields + 1) * sizeof *nv);
    if (!nv) return icd_fail_nomem(err);
    s->metric_fields = nv;
    s->metric_fields[s->n_metric_fields++] = name; /* borrowed from the document */
    return 0;
}

static int parse_metrics(dr_spec *s, const json_t *schema, const char *path, icd_error *err)
{
    char p[ICD_JSON_PATH_MAX], q[ICD_JSON_PATH_MAX], r[ICD_JSON_PATH_MAX];
    ICD_TRY(dr_get_array(schema, "metricsSpec", path, &s->metrics, err));
    if (!s->metrics) return 0;
    icd_json_path_key(p, path, "metricsSpec");
    for (size_t i = 0; i < json_array_size(s->metrics); i++) {
        const json_t *m = json_array_get(s->metrics, i);
        icd_json_path_index(q, p, i);
        if (!json_is_object(m)) return dr_fail_path(err, q, "an aggregator must be an object");
        const json_t *fn = icd_json_field(m, "fieldName");
        if (fn) {
            icd_json_path_key(r, q, "fieldName");
            ICD_TRY(add_metric_field(s, fn, r, err));
        }
        const json_t *fns = icd_json_field(m, "fieldNames");
        if (json_is_array(fns)) {
            icd_json_path_key(r, q, "fieldNames");
            for (size_t k = 0; k < json_array_size(fns); k++)
                ICD_TRY(add_metric_field(s, json_array_get(fns, k), r, err));
        }
    }
    return 0;
}

static int parse_intervals(dr_interval **out, size_t *count, const json_t *arr, const char *path,
                           icd_error *err)
{
    char q[ICD_JSON_PATH_MAX];
    size_t n = json_array_size(arr);
    *out = NULL;
    *count = 0;
    if (n == 0) return 0;
    *out = calloc(n, sizeof **out);
    if (!*out) return icd_fail_nomem(err);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        icd_json_path_index(q, path, i);
        if (!json_is_string(v))
            return dr_fail_path(err, q, "an interval must be an ISO-8601 string \"start/end\"");
        if (dr_parse_interval(json_string_value(v), json_string_length(v), &(*out)[i], err) < 0)
            return icd_error_wrap(err, "%s", q);
        (*count)++;
    }
    return 0;
}

static int parse_one_granularity(dr_granularity *g, const json_t *gs, const char *key,
                                 const char *def, const char *path, icd_error *err)
{
    char p[ICD_JSON_PATH_MAX];
    const json_t *v = icd_json_field(gs, key);
    if (!v) return dr_granularity_named(g, def, err);
    icd_json_path_key(p, path, key);
    if (dr_granularity_parse(g, v, err) < 0) return icd_error_wrap(err, "%s", p);
    return 0;
}

static int parse_granularity(dr_spec *s, const json_t *gs, const char *path, icd_error *err)
{
    dr_granularity_spec *g = &s->gran;
    snprintf(g->type, sizeof g->type, "uniform");
    g->rollup = true;
    if (gs && !json_is_object(gs))
        return dr_fail_path(err, path, "granularitySpec must be an object");
    const json_t *type = icd_json_field(gs, "type");
    if (type) {
        if (!json_is_string(type) || (strcmp(json_string_value(type), "uniform") != 0 &&
                                      strcmp(json_string_value(type), "arbitrary") != 0))
            return dr_fail_path(
                err, path,
                "Could not resolve granularitySpec type: known type ids = [arbitrary, uniform]");
        snprintf(g->type, sizeof g->type, "%s", json_string_value(type));
    }
    ICD_TRY(parse_one_granularity(&g->segment, gs, "segmentGranularity", "DAY", path, err));
    ICD_TRY(parse_one_granularity(&g->query, gs, "queryGranularity", "NONE", path, err));
    ICD_TRY(dr_get_bool(gs, "rollup", path, true, &g->rollup, err));
    const json_t *iv;
    ICD_TRY(dr_get_array(gs, "intervals", path, &iv, err));
    if (iv) {
        char p[ICD_JSON_PATH_MAX];
        icd_json_path_key(p, path, "intervals");
        ICD_TRY(parse_intervals(&g->intervals, &g->n_intervals, iv, p, err));
    }
    if (strcmp(g->type, "arbitrary") == 0 && g->n_intervals == 0)
        return dr_fail_path(err, path, "intervals cannot be null for an arbitrary granularitySpec");
    return 0;
}

static int parse_timestamp_spec(dr_spec *s, const json_t *ts, const char *path, const pctx *c)
{
    char *col = NULL, *fmt = NULL, *missing = NULL;
    int rc = 0;
    if (ts && !json_is_object(ts))
        return dr_fail_path(c->err, path, "timestampSpec must be an object");
    /* missingValue as Druid's DateTime deserializer reads it: a JSON integer is epoch
     * millis, a string is ISO-8601 (see dr_timestamp_missing_from_text) */
    const json_t *mv = icd_json_field(ts, "missingValue");
    bool mv_int = mv && json_is_integer(mv);
    if ((rc = dr_get_str(ts, "column", path, &col, c->err)) == 0 &&
        (rc = dr_get_str(ts, "format", path, &fmt, c->err)) == 0 &&
        (mv_int || (rc = dr_get_str(ts, "missingValue", path, &missing, c->err)) == 0)) {
        rc = dr_timestamp_spec_init(&s->ts, col, fmt, missing, c->now_ms, c->err);
        if (rc < 0) icd_error_wrap(c->err, "%s", path);
        if (rc == 0 && mv_int) {
            s->ts.has_missing = true;
            s->ts.missing_ms = (int64_t)json_integer_value(mv);
        }
    }
    free(col);
    free(fmt);
    free(missing);
    return rc;
}

static int validate_data_source(const char *ds, const char *path, icd_error *err)
{
    if (!ds || !*ds)
        return dr_fail_path(err, path, "Invalid value for field [dataSource]: must not be null");
    if (ds[0] == '.')
        return dr_fail_path(
            err, path,
            "Invalid value for field [dataSource]: Value [%.200s] cannot start with '.'.", ds);
    if (strchr(ds, '/'))
        return dr_fail_path(
            err, path, "Invalid value for field [dataSource]: Value [%.200s] cannot contain '/'.",
            ds);
    for (const char *p = ds; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
            return dr_fail_path(err, path,
                                "Invalid value for field [dataSource]: Value [%.200s] contains "
                                "illegal whitespace characters.  Only space is allowed.",
                                ds);
    return 0;
}

static int parse_data_schema(dr_spec *s, const json_t *spec, const char *path, const pctx *c)
{
    char p[ICD_JSON_PATH_MAX], q[ICD_JSON_PATH_MAX];
    icd_error *err = c->err;
    const json_t *schema;
    ICD_TRY(dr_get_object(spec, "dataSchema", path, &schema, err));
    icd_json_path_key(p, path, "dataSchema");
    if (!schema) return dr_fail_path(err, p, "dataSchema cannot be null");
    ICD_TRY(dr_get_str(schema, "dataSource", p, &s->data_source, err));
    icd_json_path_key(q, p, "dataSource");
    ICD_TRY(validate_data_source(s->data_source, q, err));
    const json_t *ts;
    ICD_TRY(dr_get_object(schema, "timestampSpec", p, &ts, err));
    if (!ts && icd_json_field(schema, "parser"))
        return dr_fail_path_code(err, ICD_EUNSUPPORTED, p,
                                 "the legacy \"parser\" is not supported; use timestampSpec, "
                                 "dimensionsSpec and inputFormat");
    icd_json_path_key(q, p, "timestampSpec");
    ICD_TRY(parse_timestamp_spec(s, ts, q, c));
    const json_t *ds;
    ICD_TRY(dr_get_object(schema, "dimensionsSpec", p, &ds, err));
    icd_json_path_key(q, p, "dimensionsSpec");
    ICD_TRY(parse_dimensions(s, ds, q, err));
    ICD_TRY(parse_metrics(s, schema, p, err));
    ICD_TRY(dr_get_object(schema, "transformSpec", p, &s->transform_spec, err));
    if (s->transform_spec) {
        const json_t *tf;
        icd_json_path_key(q, p, "transformSpec");
        ICD_TRY(dr_get_object(s->transform_spec, "filter", q, &tf, err));
        ICD_TRY(dr_get_array(s->transform_spec, "transforms", q, &tf, err));
    }
    const json_t *gs;
    ICD_TRY(dr_get_object(schema, "granularitySpec", p, &gs, err));
    icd_json_path_key(q, p, "granularitySpec");
    return parse_granularity(s, gs, q, err);
}

static int parse_tuning(dr_spec *s, const json_t *spec, const char *path, icd_error *err)
{
    char p[ICD_JSON_PATH_MAX];
    ICD_TRY(dr_get_object(spec, "tuningConfig", path, &s->tuning, err));
    icd_json_path_key(p, path, "tuningConfig");
    bool report = false, given = false;
    ICD_TRY(dr_get_bool(s->tuning, "reportParseExceptions", p, false, &report, err));
    ICD_TRY(dr_get_i64(s->tuning, "maxParseExceptions", p, INT64_MAX, &s->max_parse_exceptions,
                       &given, err));
    if (report)
        s->max_parse_exceptions = 0; /* Druid: reportParseExceptions means fail on the first */
    else if (!given || s->max_parse_exceptions < 0)
        s->max_parse_exceptions = INT64_MAX;
    ICD_TRY(dr_get_i64(s->tuning, "maxNumConcurrentSubTasks", p, 1, &s->max_subtasks, NULL, err));
    if (s->max_subtasks < 1) {
        char q[ICD_JSON_PATH_MAX];
        icd_json_path_key(q, p, "maxNumConcurrentSubTasks");
        return dr_fail_path(err, q, "maxNumConcurrentSubTasks must be at least 1");
    }
    return 0;
}

/* {"dataSchema", "ioConfig", "tuningConfig"} at `path`. */
static int parse_spec_body(dr_spec *s, json_t *spec, const char *path, const pctx *c)
{
    char p[ICD_JSON_PATH_MAX], q[ICD_JSON_PATH_MAX];
    icd_error *err = c->err;
    const json_t *io;
    ICD_TRY(dr_get_object(spec, "ioConfig", path, &io, err));
    icd_json_path_key(p, path, "ioConfig");
    if (!io) return dr_fail_path(err, p, "ioConfig cannot be null");
    icd_json_path_key(q, p, "inputSource");
    json_t *is = json_object_get(io, "inputSource");
    if (!is || json_is_null(is)) {
        if (icd_json_field(io, "firehose"))
            return dr_fail_path_code(
                err, ICD_EUNSUPPORTED, p,
                "firehose ingestion is not supported; use an iceberg inputSource");
        return dr_fail_path(err, q, "inputSource cannot be null");
    }
    s->input_source = is;
    snprintf(s->is_path, sizeof s->is_path, "%s", q);
    ICD_TRY(parse_input_source(s, is, q, c));
    ICD_TRY(dr_get_object(io, "inputFormat", p, &s->input_format, err));
    ICD_TRY(dr_get_bool(io, "appendToExisting", p, false, &s->append_to_existing, err));
    ICD_TRY(dr_get_bool(io, "dropExisting", p, false, &s->drop_existing, err));
    if (s->append_to_existing && s->drop_existing)
        return dr_fail_path(err, p,
                            "Cannot both drop existing segments and append to existing segments. "
                            "Either dropExisting or appendToExisting should be set to false");
    ICD_TRY(parse_data_schema(s, spec, path, c));
    return parse_tuning(s, spec, path, err);
}

static int parse_document(dr_spec *s, const pctx *c)
{
    icd_error *err = c->err;
    json_t *doc = s->doc;
    if (!json_is_object(doc))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "a Druid spec must be a JSON object (a task, a spec or an inputSource)");
    json_t *spec = json_object_get(doc, "spec");
    if (spec && !json_is_null(spec)) {
        s->shape = DR_DOC_TASK;
        const json_t *type = json_object_get(doc, "type");
        if (!json_is_string(type))
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "type: missing type id when trying to resolve subtype of Task: missing "
                            "type id property 'type'");
        const char *t = json_string_value(type);
        if (strcmp(t, "index_parallel") != 0 && strcmp(t, "index") != 0)
            return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                            "type: task type '%.100s' is not supported; icedruid reads native "
                            "batch tasks (index_parallel, index)",
                            t);
        if (!json_is_object(spec))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "spec: expected an object");
        return parse_spec_body(s, spec, "spec", c);
    }
    if (json_object_get(doc, "ioConfig") || json_object_get(doc, "dataSchema")) {
        s->shape = DR_DOC_SPEC;
        return parse_spec_body(s, doc, "", c);
    }
    if (json_object_get(doc, "type")) {
        s->shape = DR_DOC_INPUT_SOURCE;
        s->input_source = doc;
        s->is_path[0] = '\0';
        ICD_TRY(parse_input_source(s, doc, "", c));
        /* no dataSchema: Druid's defaults */
        ICD_TRY(dr_timestamp_spec_init(&s->ts, NULL, NULL, NULL, c->now_ms, err));
        return parse_granularity(s, NULL, "", err);
    }
    return icd_fail(err, ICD_EINVALID, NULL, -1,
                    "not a Druid ingestion task, ingestion spec or iceberg inputSource (no "
                    "\"spec\", \"ioConfig\" or \"type\")");
}

int dr_spec_parse_json(dr_spec **out, json_t *doc, const char *origin, const dr_spec_opts *opts,
                       icd_error *err)
{
    *out = NULL;
    dr_spec *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    s->doc = json_incref(doc);
    s->max_parse_exceptions = INT64_MAX;
    s->max_subtasks = 1;
    s->arrow_batch_size = 1024;
    pctx c = {opts, opts && opts->has_now ? opts->now_ms : dr_now_ms(), err};
    int rc = parse_document(s, &c);
    if (rc < 0) {
        if (origin) icd_error_set_file(err, origin);
        dr_spec_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int dr_spec_parse(dr_spec **out, const char *text, size_t len, const char *origin,
                  const dr_spec_opts *opts, icd_error *err)
{
    json_error_t je;
    *out = NULL;
    json_t *doc = json_loadb(text, len, 0, &je);
    if (!doc)
        return icd_fail(err, ICD_EINVALID, origin, je.position,
                        "invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
    int rc = dr_spec_parse_json(out, doc, origin, opts, err);
    json_decref(doc);
    return rc;
}

int dr_spec_load(dr_spec **out, const char *path, const dr_spec_opts *opts, icd_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return icd_fail(err, errno == ENOENT ? ICD_ENOTFOUND : ICD_EIO, path, -1,
                        "cannot open the spec file: %s", strerror(errno));
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return icd_fail(err, ICD_EIO, path, -1, "cannot read the spec file");
    }
    if ((unsigned long)size > SPEC_MAX_BYTES) {
        fclose(f);
        return icd_fail(err, ICD_EINVALID, path, -1, "the spec file is larger than %u bytes",
                        SPEC_MAX_BYTES);
    }
    char *buf = malloc((size_t)size + 1);
    if (!buf) {
        fclose(f);
        return icd_fail_nomem(err);
    }
    size_t n = fread(buf, 1, (size_t)size, f);
    int bad = ferror(f) || n != (size_t)size;
    fclose(f);
    int rc = bad ? icd_fail(err, ICD_EIO, path, -1, "cannot read the spec file")
                 : dr_spec_parse(out, buf, n, path, opts, err);
    free(buf);
    return rc;
}

/* ---- accessors ---------------------------------------------------------------------------- */

dr_doc_shape dr_spec_shape(const dr_spec *s)
{
    return s->shape;
}
json_t *dr_spec_document(const dr_spec *s)
{
    return s->doc;
}
json_t *dr_spec_input_source(const dr_spec *s)
{
    return s->input_source;
}
const char *dr_spec_input_source_path(const dr_spec *s)
{
    return s->is_path;
}
const char *dr_spec_table_name(const dr_spec *s)
{
    return s->table_name;
}
const char *dr_spec_namespace(const dr_spec *s)
{
    return s->namespace_;
}
const dr_catalog *dr_spec_catalog(const dr_spec *s)
{
    return &s->catalog;
}
bool dr_spec_case_sensitive(const dr_spec *s)
{
    return s->catalog.case_sensitive;
}
const dr_filter *dr_spec_filter(const dr_spec *s)
{
    return s->filter;
}
const json_t *dr_spec_warehouse_source(const dr_spec *s)
{
    return s->warehouse_source;
}
const char *dr_spec_warehouse_source_type(const dr_spec *s)
{
    return s->warehouse_type;
}
bool dr_spec_has_snapshot_time(const dr_spec *s)
{
    return s->has_snapshot_time;
}
int64_t dr_spec_snapshot_time_ms(const dr_spec *s)
{
    return s->snapshot_time_ms;
}
dr_residual_mode dr_spec_residual_mode(const dr_spec *s)
{
    return s->residual_mode;
}
bool dr_spec_use_arrow_reader(const dr_spec *s)
{
    return s->use_arrow_reader;
}
int64_t dr_spec_arrow_batch_size(const dr_spec *s)
{
    return s->arrow_batch_size;
}
const char *dr_spec_data_source(const dr_spec *s)
{
    return s->data_source;
}
const dr_timestamp_spec *dr_spec_timestamp_spec(const dr_spec *s)
{
    return &s->ts;
}
const dr_dimensions_spec *dr_spec_dimensions(const dr_spec *s)
{
    return &s->dims;
}
const dr_granularity_spec *dr_spec_granularity(const dr_spec *s)
{
    return &s->gran;
}
const json_t *dr_spec_metrics(const dr_spec *s)
{
    return s->metrics;
}
const json_t *dr_spec_transform_spec(const dr_spec *s)
{
    return s->transform_spec;
}
const json_t *dr_spec_input_format(const dr_spec *s)
{
    return s->input_format;
}

const char *dr_spec_input_format_type(const dr_spec *s)
{
    return json_string_value(json_object_get(dr_spec_input_format(s), "type"));
}

bool dr_spec_binary_as_string(const dr_spec *s)
{
    const json_t *v = json_object_get(dr_spec_input_format(s), "binaryAsString");
    if (json_is_boolean(v)) return json_is_true(v);
    return json_is_string(v) && strcasecmp(json_string_value(v), "true") == 0;
}
bool dr_spec_append_to_existing(const dr_spec *s)
{
    return s->append_to_existing;
}
bool dr_spec_drop_existing(const dr_spec *s)
{
    return s->drop_existing;
}
int64_t dr_spec_max_parse_exceptions(const dr_spec *s)
{
    return s->max_parse_exceptions;
}
int64_t dr_spec_max_num_concurrent_subtasks(const dr_spec *s)
{
    return s->max_subtasks;
}
const json_t *dr_spec_tuning_config(const dr_spec *s)
{
    return s->tuning;
}

const json_t *dr_spec_transform_filter(const dr_spec *s)
{
    return icd_json_field(s->transform_spec, "filter");
}

const json_t *dr_spec_transforms(const dr_spec *s)
{
    return icd_json_field(s->transform_spec, "transforms");
}

size_t dr_spec_metric_fields(const dr_spec *s, const char *const **names)
{
    *names = s->metric_fields;
    return s->n_metric_fields;
}

const char *dr_residual_mode_name(dr_residual_mode m)
{
    return m == DR_RESIDUAL_FAIL ? "fail" : m == DR_RESIDUAL_WARN ? "warn" : "ignore";
}

int dr_spec_filter_pred(const dr_spec *s, dr_pred **out, icd_error *err)
{
    return dr_filter_to_pred(s->filter, out, err);
}

int dr_spec_rewrite_exclusions(const dr_spec *s, json_t **out, icd_error *err)
{
    json_t *a = json_array();
    if (!a) return icd_fail_nomem(err);
    const char *col = s->ts.column;
    bool add = col && strcmp(col, "__time") != 0;
    for (size_t i = 0; i < s->dims.n_dims && add; i++)
        add = strcmp(s->dims.dims[i].name, col) != 0;
    for (size_t i = 0; i < s->dims.n_exclusions; i++) {
        if (json_array_append_new(a, json_string(s->dims.exclusions[i])) < 0) goto oom;
        if (add && strcmp(s->dims.exclusions[i], col) == 0) add = false;
    }
    if (add && json_array_append_new(a, json_string(col)) < 0) goto oom;
    *out = a;
    return 0;
oom:
    json_decref(a);
    return icd_fail_nomem(err);
}

/* Whether an aggregator's inputs are known without Druid's expression language: its
 * fieldName / fieldNames only (no expression, nested aggregator or filter). */
static bool aggregator_inputs_known(const json_t *agg)
{
    static const char *const opaque[] = {"expression", "fieldExpression", "aggregator",
                                         "filter",     "fnAggregate",     "fnCombine",
                                         "fields",     "foldExpression",  "combineExpression"};
    if (!json_is_object(agg)) return false;
    for (size_t i = 0; i < sizeof opaque / sizeof opaque[0]; i++)
        if (json_object_get(agg, opaque[i])) return false;
    return true;
}

static bool name_in(const char *name, char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], name)) return true;
    return false;
}

int dr_spec_columns_filter(const dr_spec *s, const ice_schema *schema, const char ***names,
                           size_t *n, icd_error *err)
{
    *names = NULL;
    *n = 0;
    if (!schema) return 0;
    const dr_dimensions_spec *d = dr_spec_dimensions(s);
    const json_t *fmt = dr_spec_input_format(s);
    const json_t *metrics = dr_spec_metrics(s);
    if (json_array_size(dr_spec_transforms(s)) || dr_spec_transform_filter(s) ||
        json_array_size(d->spatial) || (fmt && json_object_get(fmt, "flattenSpec")))
        return 0;
    for (size_t i = 0; i < json_array_size(metrics); i++)
        if (!aggregator_inputs_known(json_array_get(metrics, i))) return 0;
    const char *ts = dr_spec_timestamp_spec(s)->column;
    const char *const *mf;
    size_t nmf = dr_spec_metric_fields(s, &mf);
    bool inclusion = d->n_dims > 0 && !d->include_all_dimensions;
    const ice_field *fields = schema->root.fields;
    size_t nf = schema->root.nfields;
    const char **out = calloc(nf ? nf : 1, sizeof *out);
    if (!out) return icd_fail_nomem(err);
    size_t k = 0;
    for (size_t i = 0; i < nf; i++) {
        const char *c = fields[i].name;
        bool metric = name_in(c, (char *const *)mf, nmf), keep;
        if (inclusion) {
            keep = !strcmp(c, ts) || metric;
            for (size_t j = 0; !keep && j < d->n_dims; j++)
                keep = !strcmp(d->dims[j].name, c);
        } else {
            keep = !strcmp(c, ts) || metric || !name_in(c, d->exclusions, d->n_exclusions);
        }
        if (keep) out[k++] = c;
    }
    if (k == nf) { /* nothing pruned */
        free(out);
        return 0;
    }
    *names = out;
    *n = k;
    return 0;
}

bool dr_spec_timestamp_column_shipped(const dr_spec *s, const ice_schema *schema)
{
    const dr_dimensions_spec *d = dr_spec_dimensions(s);
    const char *ts = dr_spec_timestamp_spec(s)->column;
    const char **names = NULL;
    size_t n = 0;
    icd_error err;
    if (dr_spec_columns_filter(s, schema, &names, &n, &err) || !names) return true;
    free(names);
    if (!d->n_dims || d->include_all_dimensions) return true;
    for (size_t i = 0; i < d->n_dims; i++)
        if (!strcmp(d->dims[i].name, ts)) return true;
    const char *const *mf;
    size_t nmf = dr_spec_metric_fields(s, &mf);
    return name_in(ts, (char *const *)mf, nmf);
}

static bool undiscovered_by(const ice_type *t, dr_reader_kind reader)
{
    bool list = t->kind == ICE_T_LIST;
    bool prim_elem = list && t->element && ice_type_is_primitive(t->element->type);
    switch (reader) {
    case DR_READER_PARQUET:
        return list;
    case DR_READER_ORC:
        return !ice_type_is_primitive(t) && !prim_elem;
    case DR_READER_AVRO:
        if (t->kind == ICE_T_BOOLEAN) return true;
        if (list)
            return !prim_elem || !t->element->required || t->element->type->kind == ICE_T_BOOLEAN;
        return !ice_type_is_primitive(t);
    }
    return false;
}

int dr_spec_parquet_undiscovered(const dr_spec *s, const ice_schema *schema, const char ***names,
                                 size_t *n, icd_error *err)
{
    return dr_spec_undiscovered(s, schema, DR_READER_PARQUET, names, n, err);
}

int dr_spec_undiscovered(const dr_spec *s, const ice_schema *schema, dr_reader_kind reader,
                         const char ***names, size_t *n, icd_error *err)
{
    *names = NULL;
    *n = 0;
    const dr_dimensions_spec *d = dr_spec_dimensions(s);
    const json_t *fmt = dr_spec_input_format(s);
    if (!schema || (d->n_dims && !d->include_all_dimensions) || d->use_schema_discovery ||
        (fmt && json_object_get(fmt, "flattenSpec")) || json_array_size(dr_spec_transforms(s)) ||
        dr_spec_transform_filter(s))
        return 0;
    const char *ts = dr_spec_timestamp_spec(s)->column;
    const char *const *mf;
    size_t nmf = dr_spec_metric_fields(s, &mf);
    size_t nf = schema->root.nfields, k = 0;
    const char **out = calloc(nf ? nf : 1, sizeof *out);
    if (!out) return icd_fail_nomem(err);
    for (size_t i = 0; i < nf; i++) {
        const ice_field *f = &schema->root.fields[i];
        if (!undiscovered_by(f->type, reader) || !strcmp(f->name, ts) ||
            name_in(f->name, (char *const *)mf, nmf))
            continue;
        bool named = false;
        for (size_t j = 0; j < d->n_dims && !named; j++)
            named = !strcmp(d->dims[j].name, f->name);
        if (!named) out[k++] = f->name;
    }
    if (!k) {
        free(out);
        return 0;
    }
    *names = out;
    *n = k;
    return 0;
}
