/* Unit tests of druid/spec/spec.c over the example corpus tests/druid/specs/ (valid specs
 * mirroring Druid's documented shapes; invalid specs with the exact expected message in
 * invalid/expected.tsv) and inline documents for defaults and coercions. */
#include <stdlib.h>

#include "druid/spec/spec.h"
#include "test.h"

#define DAY 86400000LL
#define JUN1 (19875 * DAY) /* 2024-06-01T00:00:00Z */
#define NOW (JUN1 + 86400000LL)

static const dr_spec_opts opts = {true, NOW};

/* ICD_SOURCE_DIR (set by CTest), else the checkout this file was compiled from. */
static const char *src_dir(void)
{
    static char dir[1024];
    const char *d = getenv("ICD_SOURCE_DIR");
    if (d) return d;
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *cut = strstr(dir, "/tests/unit/druid/");
    if (cut)
        *cut = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    return dir;
}

static dr_spec *load(const char *rel)
{
    char path[2048];
    icd_error err;
    dr_spec *s = NULL;
    snprintf(path, sizeof path, "%s/tests/druid/specs/%s", src_dir(), rel);
    int rc = dr_spec_load(&s, path, &opts, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "  %s: %s\n", rel, err.message);
    return s;
}

static dr_spec *parse_text(const char *text, int *rc, icd_error *err)
{
    dr_spec *s = NULL;
    *rc = dr_spec_parse(&s, text, strlen(text), "inline.json", &opts, err);
    return s;
}

static const char *pred_json(const dr_spec *s)
{
    static char out[4096];
    dr_pred *p = NULL;
    icd_error err;
    CHECK_EQ_INT(dr_spec_filter_pred(s, &p, &err), 0);
    icd_buf b = ICD_BUF_INIT;
    dr_pred_to_json(p, &b);
    snprintf(out, sizeof out, "%s", b.data ? b.data : "");
    icd_buf_free(&b);
    dr_pred_free(p);
    return out;
}

static void test_task_local_interval(void)
{
    dr_spec *s = load("valid/task_local_interval.json");
    if (!s) return;
    CHECK_EQ_INT(dr_spec_shape(s), DR_DOC_TASK);
    CHECK_EQ_STR(dr_spec_table_name(s), "orders");
    CHECK_EQ_STR(dr_spec_namespace(s), "default");
    const dr_catalog *c = dr_spec_catalog(s);
    CHECK_EQ_INT(c->type, DR_CAT_LOCAL);
    CHECK_EQ_STR(c->type_name, "local");
    CHECK_EQ_STR(c->warehouse_path, "/data/iceberg/warehouse");
    CHECK(c->catalog_uri == NULL);
    CHECK(json_is_object(c->properties) && json_object_size(c->properties) == 0);
    CHECK(dr_spec_case_sensitive(s));
    const dr_filter *f = dr_spec_filter(s);
    CHECK(f && f->type == DR_F_INTERVAL && f->n_intervals == 1);
    CHECK_EQ_STR(f->column, "event_ts");
    CHECK_EQ_INT(f->intervals[0].start, JUN1);
    CHECK_EQ_INT(f->intervals[0].end, JUN1 + DAY);
    CHECK_EQ_STR(pred_json(s),
                 "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"event_ts\",\"timestamp_"
                 "micros\":1717200000000000},"
                 "{\"op\":\"lt\",\"column\":\"event_ts\",\"timestamp_micros\":1717286400000000}]}");
    CHECK_EQ_STR(dr_spec_warehouse_source_type(s), "local");
    CHECK(!dr_spec_has_snapshot_time(s));
    CHECK_EQ_INT(dr_spec_residual_mode(s), DR_RESIDUAL_IGNORE);
    CHECK(!dr_spec_use_arrow_reader(s));
    CHECK_EQ_INT(dr_spec_arrow_batch_size(s), 1024);
    CHECK_EQ_STR(dr_spec_data_source(s), "orders");
    const dr_timestamp_spec *ts = dr_spec_timestamp_spec(s);
    CHECK_EQ_STR(ts->column, "event_ts");
    CHECK_EQ_INT(ts->format, DR_TS_MILLIS);
    CHECK(!ts->has_missing);
    const dr_dimensions_spec *d = dr_spec_dimensions(s);
    CHECK_EQ_INT(d->n_dims, 3);
    CHECK_EQ_STR(d->dims[0].name, "product");
    CHECK_EQ_STR(d->dims[0].type, "string");
    CHECK_EQ_STR(d->dims[1].name, "order_id");
    CHECK_EQ_STR(d->dims[1].type, "long");
    CHECK_EQ_STR(d->dims[2].type, "double");
    CHECK(!d->use_schema_discovery && !d->include_all_dimensions && d->n_exclusions == 0);
    const dr_granularity_spec *g = dr_spec_granularity(s);
    CHECK_EQ_STR(g->type, "uniform");
    CHECK_EQ_STR(g->segment.name, "DAY");
    CHECK_EQ_INT(g->query.kind, DR_GRAN_NONE);
    CHECK(!g->rollup);
    CHECK_EQ_INT(g->n_intervals, 0);
    CHECK_EQ_INT(dr_spec_max_parse_exceptions(s), 0);
    CHECK_EQ_INT(dr_spec_max_num_concurrent_subtasks(s), 2);
    CHECK_EQ_STR(json_string_value(json_object_get(dr_spec_input_format(s), "type")), "parquet");
    CHECK(!dr_spec_append_to_existing(s) && !dr_spec_drop_existing(s));
    CHECK(dr_spec_metrics(s) == NULL && dr_spec_transform_spec(s) == NULL);
    /* the inputSource pointer lies inside the kept document */
    json_t *doc = dr_spec_document(s);
    CHECK(
        dr_spec_input_source(s) ==
        json_object_get(json_object_get(json_object_get(doc, "spec"), "ioConfig"), "inputSource"));
    CHECK_EQ_STR(dr_spec_input_source_path(s), "spec.ioConfig.inputSource");
    json_t *ex;
    icd_error err;
    CHECK_EQ_INT(dr_spec_rewrite_exclusions(s, &ex, &err), 0);
    char *t = json_dumps(ex, JSON_COMPACT);
    CHECK_EQ_STR(t, "[\"event_ts\"]");
    free(t);
    json_decref(ex);
    /* a rewrite replaces the input source and keeps the rest */
    json_t *http =
        json_pack("{s:s, s:[s]}", "type", "http", "uris", "http://127.0.0.1:8080/split/0");
    json_object_set_new(json_object_get(json_object_get(doc, "spec"), "ioConfig"), "inputSource",
                        http);
    t = json_dumps(doc, JSON_COMPACT);
    CHECK(strstr(t, "\"inputSource\":{\"type\":\"http\"") != NULL);
    CHECK(strstr(t, "\"maxNumConcurrentSubTasks\":2") != NULL);
    free(t);
    dr_spec_free(s);
}

static void test_spec_rest_timewindow(void)
{
    dr_spec *s = load("valid/spec_rest_timewindow.json");
    if (!s) return;
    CHECK_EQ_INT(dr_spec_shape(s), DR_DOC_SPEC);
    CHECK_EQ_STR(dr_spec_input_source_path(s), "ioConfig.inputSource");
    const dr_catalog *c = dr_spec_catalog(s);
    CHECK_EQ_INT(c->type, DR_CAT_REST);
    CHECK_EQ_STR(c->catalog_uri, "https://rest-catalog.example.com/api/catalog");
    CHECK(c->warehouse_path == NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(c->properties, "warehouse")), "my_warehouse");
    CHECK_EQ_INT(json_object_size(c->properties), 4);
    const dr_filter *f = dr_spec_filter(s);
    CHECK(f && f->type == DR_F_TIME_WINDOW);
    CHECK_EQ_INT(f->lookback_ms, DAY);
    CHECK_EQ_INT(f->base_ms, NOW);
    CHECK_EQ_STR(pred_json(s),
                 "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"event_ts\",\"timestamp_"
                 "micros\":1717200000000000},"
                 "{\"op\":\"le\",\"column\":\"event_ts\",\"timestamp_micros\":1717286400000000}]}");
    CHECK_EQ_STR(dr_spec_warehouse_source_type(s), "s3");
    const json_t *w = dr_spec_warehouse_source(s);
    CHECK_EQ_STR(
        json_string_value(json_object_get(json_object_get(w, "endpointConfig"), "signingRegion")),
        "us-east-1");
    CHECK(dr_spec_has_snapshot_time(s));
    CHECK_EQ_INT(dr_spec_snapshot_time_ms(s), JUN1 + DAY);
    CHECK_EQ_INT(dr_spec_residual_mode(s), DR_RESIDUAL_FAIL);
    const dr_timestamp_spec *ts = dr_spec_timestamp_spec(s);
    CHECK_EQ_STR(ts->column, "event_ts");
    CHECK_EQ_INT(ts->format, DR_TS_AUTO);
    const dr_granularity_spec *g = dr_spec_granularity(s);
    CHECK_EQ_STR(g->segment.name, "HOUR");
    CHECK_EQ_STR(g->query.name, "MINUTE");
    CHECK(g->rollup); /* default */
    CHECK_EQ_INT(dr_spec_max_parse_exceptions(s), INT64_MAX);
    CHECK_EQ_INT(dr_spec_max_num_concurrent_subtasks(s), 1);
    json_t *ex;
    icd_error err;
    CHECK_EQ_INT(dr_spec_rewrite_exclusions(s, &ex, &err), 0);
    char *t = json_dumps(ex, JSON_COMPACT);
    CHECK_EQ_STR(t, "[\"internal_id\",\"event_ts\"]");
    free(t);
    json_decref(ex);
    dr_spec_free(s);
}

static void test_input_source_only(void)
{
    dr_spec *s = load("valid/inputsource_only.json");
    if (!s) return;
    CHECK_EQ_INT(dr_spec_shape(s), DR_DOC_INPUT_SOURCE);
    CHECK(dr_spec_input_source(s) == dr_spec_document(s));
    CHECK_EQ_STR(dr_spec_input_source_path(s), "");
    CHECK(!dr_spec_case_sensitive(s));
    CHECK_EQ_STR(pred_json(s), "{\"op\":\"eq\",\"column\":\"id\",\"value\":\"123988\"}");
    CHECK_EQ_STR(dr_spec_warehouse_source_type(s), "hdfs");
    CHECK_EQ_INT(dr_spec_snapshot_time_ms(s), 1685577600000LL); /* 2023-06-01 */
    CHECK(dr_spec_data_source(s) == NULL);
    CHECK_EQ_STR(dr_spec_timestamp_spec(s)->column, "timestamp");
    CHECK_EQ_INT(dr_spec_timestamp_spec(s)->format, DR_TS_AUTO);
    CHECK_EQ_STR(dr_spec_granularity(s)->segment.name, "DAY");
    CHECK_EQ_INT(dr_spec_max_parse_exceptions(s), INT64_MAX);
    dr_spec_free(s);
}

/* hive and glue catalogs parse with Druid's fields (the catalog is only contacted when the
 * table is loaded). */
static void test_hive_glue_catalogs(void)
{
    dr_spec *s = load("valid/task_hive_catalog.json");
    if (s) {
        const dr_catalog *c = dr_spec_catalog(s);
        CHECK_EQ_INT(c->type, DR_CAT_HIVE);
        CHECK_EQ_STR(c->type_name, "hive");
        CHECK_EQ_STR(c->warehouse_path, "hdfs://warehouse/path");
        CHECK_EQ_STR(c->catalog_uri, "thrift://hive-metastore.x.com:8970");
        CHECK_EQ_STR(
            json_string_value(json_object_get(c->properties, "hive.metastore.connect.retries")),
            "1");
        CHECK(c->case_sensitive);
        dr_spec_free(s);
    }
    s = load("valid/task_glue_catalog.json");
    if (s) {
        const dr_catalog *c = dr_spec_catalog(s);
        CHECK_EQ_INT(c->type, DR_CAT_GLUE);
        CHECK(c->warehouse_path == NULL && c->catalog_uri == NULL);
        CHECK_EQ_STR(json_string_value(json_object_get(c->properties, "warehouse")), "s3://b/w");
        CHECK(!c->case_sensitive);
        CHECK(!dr_spec_case_sensitive(s));
        dr_spec_free(s);
    }
}

static void test_nested_filters_and_schema(void)
{
    dr_spec *s = load("valid/task_index_nested_filters.json");
    if (!s) return;
    const dr_filter *f = dr_spec_filter(s);
    CHECK(f && f->type == DR_F_AND);
    CHECK_EQ_INT(f->n_children, 3); /* flattened; the repeated equals is dropped */
    CHECK_EQ_STR(
        pred_json(s),
        "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"clicks\",\"value\":10},"
        "{\"op\":\"lt\",\"column\":\"clicks\",\"value\":100},"
        "{\"op\":\"eq\",\"column\":\"country\",\"value\":\"DE\"},"
        "{\"op\":\"or\",\"args\":["
        "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"ts\",\"timestamp_micros\":"
        "1704067200000000},"
        "{\"op\":\"lt\",\"column\":\"ts\",\"timestamp_micros\":1704153600000000}]},"
        "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"ts\",\"timestamp_micros\":"
        "1704412800000000},"
        "{\"op\":\"lt\",\"column\":\"ts\",\"timestamp_micros\":1704456000000000}]},"
        "{\"op\":\"not\",\"args\":[{\"op\":\"eq\",\"column\":\"bot\",\"value\":\"true\"}]}]}]}");
    const dr_timestamp_spec *ts = dr_spec_timestamp_spec(s);
    CHECK_EQ_INT(ts->format, DR_TS_PATTERN);
    CHECK(ts->has_missing);
    CHECK_EQ_INT(ts->missing_ms, 946684800000LL);
    const dr_dimensions_spec *d = dr_spec_dimensions(s);
    CHECK(d->use_schema_discovery && d->include_all_dimensions && d->n_dims == 0);
    CHECK(json_is_array(d->spatial));
    const char *const *names;
    size_t n = dr_spec_metric_fields(s, &names);
    CHECK_EQ_INT(n, 4);
    if (n == 4) {
        CHECK_EQ_STR(names[0], "clicks");
        CHECK_EQ_STR(names[1], "cost");
        CHECK_EQ_STR(names[2], "user_id");
        CHECK_EQ_STR(names[3], "views");
    }
    CHECK_EQ_STR(json_string_value(json_object_get(dr_spec_transform_filter(s), "type")),
                 "selector");
    CHECK_EQ_INT(json_array_size(dr_spec_transforms(s)), 1);
    const dr_granularity_spec *g = dr_spec_granularity(s);
    CHECK_EQ_INT(g->segment.kind, DR_GRAN_PERIOD);
    CHECK_EQ_INT(g->segment.period.months, 1);
    CHECK_EQ_INT(g->query.kind, DR_GRAN_DURATION);
    CHECK_EQ_INT(g->query.duration_ms, 3600000);
    CHECK_EQ_INT(g->query.origin_ms, 1800000);
    CHECK_EQ_INT(g->n_intervals, 2);
    if (g->n_intervals == 2) {
        CHECK_EQ_INT(g->intervals[0].start, 19723 * DAY);        /* 2024-01-01 */
        CHECK_EQ_INT(g->intervals[0].end, (19723 + 31) * DAY);   /* 2024-02-01 */
        CHECK_EQ_INT(g->intervals[1].start, (19723 + 60) * DAY); /* 2024-03-01 */
        CHECK_EQ_INT(g->intervals[1].end, (19723 + 91) * DAY);   /* 2024-04-01 */
    }
    CHECK_EQ_INT(dr_spec_snapshot_time_ms(s), 1717200000000LL);
    CHECK_EQ_INT(dr_spec_residual_mode(s), DR_RESIDUAL_WARN);
    CHECK(!dr_spec_append_to_existing(s) && dr_spec_drop_existing(s));
    CHECK_EQ_INT(dr_spec_max_parse_exceptions(s), 25);
    CHECK_EQ_STR(dr_spec_catalog(s)->warehouse_path, "/wh");
    dr_spec_free(s);
}

static void test_arrow_reader(void)
{
    dr_spec *s = load("valid/task_arrow_reader.json");
    if (!s) return;
    CHECK(dr_spec_use_arrow_reader(s));
    CHECK_EQ_INT(dr_spec_arrow_batch_size(s), 1024); /* 0 falls back to the default */
    CHECK(dr_spec_warehouse_source(s) == NULL);
    CHECK_EQ_STR(dr_spec_namespace(s), "ns.with.dots"); /* one level, never split */
    CHECK_EQ_INT(dr_spec_max_parse_exceptions(s), 0);   /* reportParseExceptions */
    CHECK_EQ_INT(dr_spec_timestamp_spec(s)->format, DR_TS_POSIX);
    CHECK(dr_spec_filter(s) == NULL);
    CHECK_EQ_STR(pred_json(s), "{\"op\":\"true\"}");
    dr_spec_free(s);
}

static void test_invalid_corpus(void)
{
    char path[2048], line[1024];
    snprintf(path, sizeof path, "%s/tests/druid/specs/invalid/expected.tsv", src_dir());
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return;
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = '\0';
        char *name = line, *code = strchr(name, '\t');
        if (!code) continue;
        *code++ = '\0';
        char *msg = strchr(code, '\t');
        if (!msg) continue;
        *msg++ = '\0';
        char file[4096];
        snprintf(file, sizeof file, "%s/tests/druid/specs/invalid/%s", src_dir(), name);
        dr_spec *s = NULL;
        icd_error err;
        int rc = dr_spec_load(&s, file, &opts, &err);
        int want = strcmp(code, "EUNSUPPORTED") == 0 ? ICD_EUNSUPPORTED : ICD_EINVALID;
        CHECK_EQ_INT(rc, want);
        CHECK(s == NULL);
        size_t ml = strlen(msg);
        bool prefix = ml > 3 && strcmp(msg + ml - 3, "...") == 0;
        bool ok = prefix ? strncmp(err.message, msg, ml - 3) == 0 : strcmp(err.message, msg) == 0;
        CHECK(ok);
        if (!ok || rc != want)
            fprintf(stderr, "  %s: got %d \"%s\"\n     want %s \"%s\"\n", name, rc, err.message,
                    code, msg);
        CHECK(strstr(err.file, name) != NULL); /* errors name the spec file */
        cases++;
    }
    fclose(f);
    CHECK(cases >= 40);
}

static void expect_error(const char *text, int code, const char *message)
{
    int rc;
    icd_error err;
    dr_spec *s = parse_text(text, &rc, &err);
    CHECK_EQ_INT(rc, code);
    CHECK(s == NULL);
    CHECK_EQ_STR(err.message, message);
    dr_spec_free(s);
}

#define IS_HEAD                                                                                    \
    "{\"type\":\"iceberg\",\"tableName\":\"t\",\"namespace\":\"n\",\"icebergCatalog\":{\"type\":"  \
    "\"local\",\"warehousePath\":\"/w\"},\"warehouseSource\":{\"type\":\"local\"}"

static void test_residual_modes(void)
{
    const char *modes[] = {"ignore", "IGNORE", "Warn", "warn", "fail", "FaIl"};
    dr_residual_mode want[] = {DR_RESIDUAL_IGNORE, DR_RESIDUAL_IGNORE, DR_RESIDUAL_WARN,
                               DR_RESIDUAL_WARN,   DR_RESIDUAL_FAIL,   DR_RESIDUAL_FAIL};
    for (size_t i = 0; i < 6; i++) {
        char text[1024];
        snprintf(text, sizeof text, IS_HEAD ",\"residualFilterMode\":\"%s\"}", modes[i]);
        int rc;
        icd_error err;
        dr_spec *s = parse_text(text, &rc, &err);
        CHECK_EQ_INT(rc, 0);
        if (s) CHECK_EQ_INT(dr_spec_residual_mode(s), want[i]);
        dr_spec_free(s);
    }
    CHECK_EQ_STR(dr_residual_mode_name(DR_RESIDUAL_WARN), "warn");
    expect_error(IS_HEAD ",\"residualFilterMode\":\"strict\"}", ICD_EINVALID,
                 "residualFilterMode: Unknown residualFilterMode: strict. Valid values are: "
                 "ignore, warn, fail");
    /* null means the default */
    int rc;
    icd_error err;
    dr_spec *s = parse_text(IS_HEAD ",\"residualFilterMode\":null}", &rc, &err);
    CHECK(s && dr_spec_residual_mode(s) == DR_RESIDUAL_IGNORE);
    dr_spec_free(s);
}

static void test_coercions_and_defaults(void)
{
    int rc;
    icd_error err;
    /* Jackson-style coercions: numbers to strings, strings to booleans and numbers */
    dr_spec *s =
        parse_text("{\"type\":\"iceberg\",\"tableName\":123,\"namespace\":\"n\","
                   "\"icebergCatalog\":{\"type\":\"local\",\"warehousePath\":\"/"
                   "w\",\"caseSensitive\":\"false\"},"
                   "\"warehouseSource\":{\"type\":\"s3\"},\"useArrowReader\":\"true\","
                   "\"arrowBatchSize\":\"4096\","
                   "\"snapshotTime\":\"  \",\"v2DeleteHandling\":\"skip\",\"unknownField\":[1,2]}",
                   &rc, &err);
    CHECK_EQ_INT(rc, 0);
    if (s) {
        CHECK_EQ_STR(dr_spec_table_name(s), "123");
        CHECK(!dr_spec_case_sensitive(s));
        CHECK(dr_spec_use_arrow_reader(s));
        CHECK_EQ_INT(dr_spec_arrow_batch_size(s), 4096);
        CHECK(!dr_spec_has_snapshot_time(s));
    }
    dr_spec_free(s);
    s = parse_text(IS_HEAD ",\"arrowBatchSize\":-5,\"snapshotTime\":\"2024-06-01T02:00:00+02:00\"}",
                   &rc, &err);
    CHECK(s && dr_spec_arrow_batch_size(s) == 1024 && dr_spec_snapshot_time_ms(s) == JUN1);
    dr_spec_free(s);
    /* a rest catalog keeps caseSensitive and properties */
    s = parse_text(
        "{\"type\":\"iceberg\",\"tableName\":\"t\",\"namespace\":\"n\",\"icebergCatalog\":"
        "{\"type\":\"rest\",\"catalogUri\":\"http://localhost:8181\",\"caseSensitive\":false},"
        "\"warehouseSource\":{\"type\":\"http\"}}",
        &rc, &err);
    CHECK(s && dr_spec_catalog(s)->type == DR_CAT_REST && !dr_spec_case_sensitive(s) &&
          json_object_size(dr_spec_catalog(s)->properties) == 0);
    dr_spec_free(s);
    /* the timestamp column listed as a dimension stays out of the rewrite exclusions */
    s = parse_text(
        "{\"dataSchema\":{\"dataSource\":\"d\",\"timestampSpec\":{\"column\":\"ts\"},"
        "\"dimensionsSpec\":{\"dimensions\":[\"ts\",\"a\"]}},\"ioConfig\":{\"inputSource\":" IS_HEAD
        "}}}",
        &rc, &err);
    CHECK_EQ_INT(rc, 0);
    if (s) {
        json_t *ex;
        CHECK_EQ_INT(dr_spec_rewrite_exclusions(s, &ex, &err), 0);
        CHECK_EQ_INT(json_array_size(ex), 0);
        json_decref(ex);
    }
    dr_spec_free(s);
    /* missingValue as Druid's DateTime deserializer reads it: a JSON integer is epoch
     * millis (not year -1), a blank string is no missingValue, spaces are trimmed */
    const char *mvs[] = {"-1", "\"  \"", "\" 2000-01-01T00:00:00+01:00 \""};
    const bool has[] = {true, false, true};
    const int64_t want[] = {-1, 0, 946684800000LL - 3600000};
    for (int k = 0; k < 3; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"dataSchema\":{\"dataSource\":\"d\",\"timestampSpec\":{\"missingValue\":%s}},"
                 "\"ioConfig\":{\"inputSource\":" IS_HEAD "}}}",
                 mvs[k]);
        s = parse_text(text, &rc, &err);
        CHECK_EQ_INT(rc, 0);
        if (s) {
            CHECK_EQ_INT(dr_spec_timestamp_spec(s)->has_missing, has[k]);
            if (has[k]) CHECK_EQ_INT(dr_spec_timestamp_spec(s)->missing_ms, want[k]);
        }
        dr_spec_free(s);
    }
    /* granularity "all" and an arbitrary granularitySpec */
    s = parse_text(
        "{\"dataSchema\":{\"dataSource\":\"d\",\"granularitySpec\":{\"type\":\"arbitrary\","
        "\"queryGranularity\":\"all\",\"intervals\":[\"2024-06-01/"
        "P1D\"]}},\"ioConfig\":{\"inputSource\":" IS_HEAD "}}}",
        &rc, &err);
    CHECK_EQ_INT(rc, 0);
    if (s) {
        CHECK_EQ_STR(dr_spec_granularity(s)->type, "arbitrary");
        CHECK_EQ_INT(dr_spec_granularity(s)->query.kind, DR_GRAN_ALL);
        CHECK_EQ_INT(dr_spec_granularity(s)->intervals[0].end, JUN1 + DAY);
    }
    dr_spec_free(s);
}

static void test_inline_errors(void)
{
    expect_error("{\"type\":\"iceberg\"}", ICD_EINVALID, "tableName: tableName cannot be null");
    expect_error("{\"type\":\"iceberg\",\"tableName\":\"t\",\"namespace\":[\"a\"]}", ICD_EINVALID,
                 "namespace: expected a string, found an array");
    expect_error("{\"type\":\"iceberg\",\"tableName\":\"t\",\"namespace\":\"n\",\"icebergCatalog\":"
                 "\"local\"}",
                 ICD_EINVALID, "icebergCatalog: expected an object, found a string");
    expect_error(IS_HEAD ",\"snapshotTime\":true}", ICD_EINVALID,
                 "snapshotTime: expected an ISO-8601 date-time");
    expect_error(
        "{\"type\":\"iceberg\",\"tableName\":\"t\",\"namespace\":\"n\",\"icebergCatalog\":"
        "{\"type\":\"local\",\"warehousePath\":\"/w\"},\"warehouseSource\":{\"type\":\"ftp\"}}",
        ICD_EINVALID,
        "warehouseSource: Could not resolve type id 'ftp' as a subtype of InputSourceFactory: "
        "known type ids = [azure, azureStorage, google, hdfs, http, local, s3]");
    expect_error("{\"foo\":1}", ICD_EINVALID,
                 "not a Druid ingestion task, ingestion spec or iceberg inputSource (no \"spec\", "
                 "\"ioConfig\" or \"type\")");
    expect_error("{\"spec\":{}}", ICD_EINVALID,
                 "type: missing type id when trying to resolve subtype of Task: missing type id "
                 "property 'type'");
    expect_error(
        "{\"type\":\"index_parallel\",\"spec\":{\"ioConfig\":{\"firehose\":{\"type\":\"local\"}}}}",
        ICD_EUNSUPPORTED,
        "spec.ioConfig: firehose ingestion is not supported; use an iceberg inputSource");
    expect_error("{\"dataSchema\":{\"dataSource\":\"d\",\"parser\":{}},\"ioConfig\":{"
                 "\"inputSource\":" IS_HEAD "}}}",
                 ICD_EUNSUPPORTED,
                 "dataSchema: the legacy \"parser\" is not supported; use timestampSpec, "
                 "dimensionsSpec and inputFormat");
    expect_error(
        "{\"dataSchema\":{\"dataSource\":\"d\",\"timestampSpec\":{\"missingValue\":\"never\"}},"
        "\"ioConfig\":{\"inputSource\":" IS_HEAD "}}}",
        ICD_EINVALID,
        "dataSchema.timestampSpec: missingValue: Invalid format: \"never\" is malformed at "
        "\"never\"");
    expect_error(
        "{\"dataSchema\":{\"dataSource\":\"d\"},\"ioConfig\":{\"inputSource\":" IS_HEAD "}},"
        "\"tuningConfig\":{\"maxNumConcurrentSubTasks\":0}}",
        ICD_EINVALID,
        "tuningConfig.maxNumConcurrentSubTasks: maxNumConcurrentSubTasks must be at least 1");
    int rc;
    icd_error err;
    dr_spec *s = NULL;
    rc = dr_spec_load(&s, "/nonexistent/spec.json", &opts, &err);
    CHECK_EQ_INT(rc, ICD_ENOTFOUND);
    CHECK_EQ_STR(err.file, "/nonexistent/spec.json");
    rc = dr_spec_parse(&s, "{\"type\":", 8, "x.json", &opts, &err);
    CHECK_EQ_INT(rc, ICD_EINVALID);
    CHECK_EQ_INT(err.offset, 8);
}

/* Druid's ColumnsFilter (InputRowSchemas.createColumnsFilter) over a table schema */
static void test_columns_filter(void)
{
    const char *sj =
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
        "{\"id\":2,\"name\":\"a\",\"required\":false,\"type\":\"string\"},"
        "{\"id\":3,\"name\":\"b\",\"required\":false,\"type\":\"string\"},"
        "{\"id\":4,\"name\":\"x\",\"required\":false,\"type\":\"long\"},"
        "{\"id\":5,\"name\":\"y\",\"required\":false,\"type\":\"double\"},"
        "{\"id\":6,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":"
        "\"list\",\"element-id\":7,\"element\":\"string\",\"element-required\":false}}]}";
    ice_schema *sc = NULL;
    icd_error err;
    CHECK_EQ_INT(ice_schema_parse(sj, strlen(sj), "schema.json", &sc, &err), 0);
    if (!sc) return;
    static const struct {
        const char *data_schema; /* inside dataSchema, after dataSource */
        const char *want;        /* kept columns, "*" = all */
        bool ts_shipped;
        const char *parquet_undiscovered; /* "" = none */
    } cases[] = {
        /* fixed dimensions: inclusion (timestamp column, dimensions, metric inputs) */
        {"\"timestampSpec\":{\"column\":\"ts\"},\"dimensionsSpec\":{\"dimensions\":[\"a\"]},"
         "\"metricsSpec\":[{\"type\":\"longSum\",\"name\":\"s\",\"fieldName\":\"x\"}]",
         "ts,a,x", false, ""},
        /* the timestamp column as a dimension is shipped */
        {"\"timestampSpec\":{\"column\":\"ts\"},\"dimensionsSpec\":{\"dimensions\":[\"ts\",\"b\"]}",
         "ts,b", true, ""},
        /* schemaless: exclusions, never the timestamp column or a metric input */
        {"\"timestampSpec\":{\"column\":\"ts\"},\"dimensionsSpec\":{\"dimensionExclusions\":"
         "[\"ts\",\"a\",\"x\"]},\"metricsSpec\":[{\"type\":\"doubleSum\",\"name\":\"s\","
         "\"fieldName\":\"x\"}]",
         "ts,b,x,y,tags", true, "tags"},
        /* includeAllDimensions: exclusion-based too */
        {"\"timestampSpec\":{\"column\":\"ts\"},\"dimensionsSpec\":{\"dimensions\":[\"a\"],"
         "\"includeAllDimensions\":true,\"dimensionExclusions\":[\"y\"]}",
         "ts,a,b,x,tags", true, "tags"},
        /* a transform (expressions): every column */
        {"\"timestampSpec\":{\"column\":\"ts\"},\"dimensionsSpec\":{\"dimensions\":[\"a\"]},"
         "\"transformSpec\":{\"transforms\":[{\"type\":\"expression\",\"name\":\"z\","
         "\"expression\":\"b\"}]}",
         "*", true, ""},
        /* an aggregator with an expression: every column */
        {"\"timestampSpec\":{\"column\":\"ts\"},\"dimensionsSpec\":{\"dimensions\":[\"a\"]},"
         "\"metricsSpec\":[{\"type\":\"longSum\",\"name\":\"s\",\"expression\":\"x+y\"}]",
         "*", true, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "{\"dataSchema\":{\"dataSource\":\"d\",%s},\"ioConfig\":{\"inputSource\":" IS_HEAD
                 "}}}",
                 cases[i].data_schema);
        int rc;
        dr_spec *s = parse_text(text, &rc, &err);
        CHECK_EQ_INT(rc, 0);
        if (!s) continue;
        const char **names = NULL;
        size_t n = 0;
        CHECK_EQ_INT(dr_spec_columns_filter(s, sc, &names, &n, &err), 0);
        icd_buf got = ICD_BUF_INIT;
        if (!names) icd_buf_puts(&got, "*");
        for (size_t k = 0; k < n; k++)
            icd_buf_printf(&got, "%s%s", k ? "," : "", names[k]);
        CHECK_EQ_STR(got.data, cases[i].want);
        CHECK_EQ_INT(dr_spec_timestamp_column_shipped(s, sc), cases[i].ts_shipped);
        icd_buf_free(&got);
        free(names);
        /* list columns Druid's Parquet reader does not discover (schemaless only) */
        CHECK_EQ_INT(dr_spec_parquet_undiscovered(s, sc, &names, &n, &err), 0);
        icd_buf_clear(&got);
        icd_buf_puts(&got, "");
        for (size_t k = 0; k < n; k++)
            icd_buf_printf(&got, "%s%s", k ? "," : "", names[k]);
        CHECK_EQ_STR(got.data ? got.data : "", cases[i].parquet_undiscovered);
        icd_buf_free(&got);
        free(names);
        dr_spec_free(s);
    }
    ice_schema_free(sc);
}

/* Schemaless discovery per reader (dr_spec_undiscovered): Parquet leaves lists out, ORC
 * structs, maps and lists of non-primitives, Avro also booleans and lists whose element is
 * optional (a ["null", T] union in the Avro file). */
static void test_undiscovered_by_reader(void)
{
    const char *sj =
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
        "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
        "{\"id\":3,\"name\":\"b\",\"required\":false,\"type\":\"boolean\"},"
        "{\"id\":4,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\","
        "\"fields\":[{\"id\":10,\"name\":\"q\",\"required\":false,\"type\":\"int\"}]}},"
        "{\"id\":5,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":11,"
        "\"key\":\"string\",\"value-id\":12,\"value\":\"int\",\"value-required\":false}},"
        "{\"id\":6,\"name\":\"lp\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":13,\"element\":\"int\",\"element-required\":true}},"
        "{\"id\":7,\"name\":\"lo\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":14,\"element\":\"int\",\"element-required\":false}},"
        "{\"id\":8,\"name\":\"ls\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":15,\"element\":{\"type\":\"struct\",\"fields\":[{\"id\":16,"
        "\"name\":\"r\",\"required\":false,\"type\":\"int\"}]},\"element-required\":true}}]}";
    ice_schema *sc = NULL;
    icd_error err;
    CHECK_EQ_INT(ice_schema_parse(sj, strlen(sj), "schema.json", &sc, &err), 0);
    if (!sc) return;
    char text[1024];
    snprintf(text, sizeof text,
             "{\"dataSchema\":{\"dataSource\":\"d\",\"timestampSpec\":{\"column\":\"ts\"},"
             "\"dimensionsSpec\":{\"dimensions\":[]}},\"ioConfig\":{\"inputSource\":" IS_HEAD
             "}}}");
    int rc;
    dr_spec *s = parse_text(text, &rc, &err);
    CHECK_EQ_INT(rc, 0);
    static const char *const want[3] = {"lp,lo,ls", "st,m,ls", "b,st,m,lo,ls"};
    for (int r = 0; s && r < 3; r++) {
        const char **names = NULL;
        size_t n = 0;
        CHECK_EQ_INT(dr_spec_undiscovered(s, sc, (dr_reader_kind)r, &names, &n, &err), 0);
        icd_buf got = ICD_BUF_INIT;
        icd_buf_puts(&got, "");
        for (size_t k = 0; k < n; k++)
            icd_buf_printf(&got, "%s%s", k ? "," : "", names[k]);
        CHECK_EQ_STR(got.data ? got.data : "", want[r]);
        icd_buf_free(&got);
        free(names);
    }
    dr_spec_free(s);
    ice_schema_free(sc);
}

TEST_MAIN(TEST(test_columns_filter), TEST(test_undiscovered_by_reader),
          TEST(test_task_local_interval), TEST(test_spec_rest_timewindow),
          TEST(test_input_source_only), TEST(test_nested_filters_and_schema),
          TEST(test_arrow_reader), TEST(test_invalid_corpus), TEST(test_hive_glue_catalogs),
          TEST(test_residual_modes), TEST(test_coercions_and_defaults), TEST(test_inline_errors))
