/* Unit tests of druid/phase2/emit.c: the phase-2 re-ingestion emitters. Diffs are built by hand;
 * specs are inline documents, plus the example tables under examples/warehouse for the
 * plan-dependent parts (v1 pinning and pruning on demo/events, v2 served splits on
 * demo/orders). MSQ statements are checked by structure, and their EXTERN arguments are
 * un-escaped and parsed back as JSON, which is what Druid's SQL layer does with them. */
#include <jansson.h>
#include <stdlib.h>

#include "druid/phase2/emit.h"
#include "test.h"

#define DAY 86400000LL
#define HOUR 3600000LL
#define JUN1 (19875 * DAY) /* 2024-06-01T00:00:00Z: 19875 days after 1970-01-01 */

static const dr_spec_opts sopts = {true, JUN1};

/* __time of a millis column: NULL (the row is dropped) outside Druid's ETERNITY, as the
 * native parser's parse exception */
#define MS_GUARD(x) "WHEN " x " BETWEEN -4611686018427387904 AND 4611686018427387902"
#define TS_MILLIS "CASE " MS_GUARD("\"ts\"") " THEN MILLIS_TO_TIMESTAMP(\"ts\") END"

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

static dr_spec *parse(const char *text)
{
    dr_spec *s = NULL;
    icd_error err;
    int rc = dr_spec_parse(&s, text, strlen(text), "inline.json", &sopts, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "  spec: %s\n", err.message);
    return s;
}

/* A diff with the given replace and append intervals (pairs of start, end). */
static dr_diff make_diff(const int64_t *rep, size_t nrep, const int64_t *app, size_t napp)
{
    dr_diff d;
    memset(&d, 0, sizeof d);
    d.from_snapshot = 1;
    d.to_snapshot = 2;
    d.replace = calloc(nrep + 1, sizeof *d.replace);
    d.append = calloc(napp + 1, sizeof *d.append);
    for (size_t i = 0; i < nrep; i++)
        d.replace[i] = (dr_diff_interval){rep[2 * i], rep[2 * i + 1], 1, 0};
    for (size_t i = 0; i < napp; i++)
        d.append[i] = (dr_diff_interval){app[2 * i], app[2 * i + 1], 0, 1};
    d.n_replace = nrep;
    d.n_append = napp;
    return d;
}

static void free_diff(dr_diff *d)
{
    free(d->replace);
    free(d->append);
}

#define SPEC_HEAD                                                                                  \
    "{\"type\":\"index_parallel\",\"spec\":{\"dataSchema\":{\"dataSource\":\"o'rd\\\"ers\","

static const char *BASIC_SPEC =
    SPEC_HEAD "\"timestampSpec\":{\"column\":\"ts\",\"format\":\"millis\"},"
              "\"dimensionsSpec\":{\"dimensions\":[\"name\",{\"type\":\"long\",\"name\":\"id\"}]},"
              "\"granularitySpec\":{\"segmentGranularity\":\"day\",\"queryGranularity\":\"none\","
              "\"rollup\":false}},"
              "\"ioConfig\":{\"type\":\"index_parallel\",\"inputSource\":{\"type\":\"iceberg\","
              "\"tableName\":\"it's\",\"namespace\":\"db\",\"icebergCatalog\":{\"type\":\"local\","
              "\"warehousePath\":\"/wh\"},\"warehouseSource\":{\"type\":\"local\"}},"
              "\"inputFormat\":{\"type\":\"parquet\"}},"
              "\"tuningConfig\":{\"type\":\"index_parallel\",\"maxParseExceptions\":7}}}";

static void test_sql_quoting(void)
{
    icd_buf b = ICD_BUF_INIT;
    dr_sql_string(&b, "it's 'x'", 8);
    CHECK_EQ_STR(b.data, "'it''s ''x'''");
    icd_buf_clear(&b);
    dr_sql_ident(&b, "a\"b");
    CHECK_EQ_STR(b.data, "\"a\"\"b\"");
    icd_buf_clear(&b);
    dr_fmt_iso_ms(&b, JUN1 + 9 * HOUR + 15 * 60000 + 7);
    CHECK_EQ_STR(b.data, "2024-06-01T09:15:00.007Z");
    icd_buf_clear(&b);
    dr_fmt_sql_ts(&b, 0);
    CHECK_EQ_STR(b.data, "1970-01-01 00:00:00.000");
    icd_buf_clear(&b);
    dr_fmt_iso_ms(&b, -1); /* the last milli before the epoch */
    CHECK_EQ_STR(b.data, "1969-12-31T23:59:59.999Z");
    icd_buf_free(&b);
}

static void test_period_text(void)
{
    const char *names[] = {"DAY", "HOUR", "FIFTEEN_MINUTE", "WEEK", "QUARTER", "YEAR"};
    const char *want[] = {"P1D", "PT1H", "PT15M", "P1W", "P3M", "P1Y"};
    for (size_t i = 0; i < 6; i++) {
        dr_granularity g;
        icd_error err;
        CHECK_EQ_INT(dr_granularity_named(&g, names[i], &err), 0);
        icd_buf b = ICD_BUF_INIT;
        CHECK(dr_granularity_period_text(&g, &b));
        CHECK_EQ_STR(b.data, want[i]);
        icd_buf_free(&b);
    }
}

static void test_ranges(void)
{
    dr_spec *s = parse(BASIC_SPEC);
    if (!s) return;
    /* hour-granular diff intervals widen to days, touching ranges merge */
    int64_t rep[] = {JUN1 + 10 * HOUR, JUN1 + 11 * HOUR, JUN1 + 4 * DAY, JUN1 + 4 * DAY + HOUR};
    int64_t app[] = {JUN1 + DAY + 23 * HOUR, JUN1 + 2 * DAY};
    dr_diff d = make_diff(rep, 2, app, 1);
    dr_interval *r = NULL;
    size_t n = 0;
    icd_error err;
    CHECK_EQ_INT(dr_emit_ranges(s, &d, false, &r, &n, &err), 0);
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK_EQ_INT(r[0].start, JUN1);
        CHECK_EQ_INT(r[0].end, JUN1 + 2 * DAY);
        CHECK_EQ_INT(r[1].start, JUN1 + 4 * DAY);
        CHECK_EQ_INT(r[1].end, JUN1 + 5 * DAY);
    }
    free(r);
    CHECK_EQ_INT(dr_emit_ranges(s, &d, true, &r, &n, &err), 0);
    CHECK_EQ_INT(n, 2);
    if (n == 2) CHECK_EQ_INT(r[0].end, JUN1 + DAY);
    free(r);
    free_diff(&d);
    dr_spec_free(s);
}

/* The text of the k-th SQL string literal after `from`, quotes un-doubled. */
static char *nth_literal(const char *sql, const char *from, int k)
{
    const char *p = strstr(sql, from);
    if (!p) return NULL;
    for (int i = 0; i <= k; i++) {
        p = strchr(p, '\'');
        if (!p) return NULL;
        icd_buf b = ICD_BUF_INIT;
        for (p++; *p; p++) {
            if (*p == '\'' && p[1] == '\'') {
                icd_buf_putc(&b, '\'');
                p++;
            } else if (*p == '\'') {
                break;
            } else {
                icd_buf_putc(&b, *p);
            }
        }
        if (!*p) {
            icd_buf_free(&b);
            return NULL;
        }
        p++;
        if (i == k) return icd_buf_detach(&b);
        icd_buf_free(&b);
    }
    return NULL;
}

static json_t *literal_json(const char *sql, int k)
{
    char *t = nth_literal(sql, "EXTERN(", k);
    json_t *v = t ? json_loads(t, 0, NULL) : NULL;
    free(t);
    return v;
}

static void test_msq_v1_structure(void)
{
    dr_spec *s = parse(BASIC_SPEC);
    if (!s) return;
    int64_t rep[] = {JUN1, JUN1 + DAY, JUN1 + 3 * DAY, JUN1 + 4 * DAY};
    dr_diff d = make_diff(rep, 2, NULL, 0);
    dr_emit_list l;
    icd_error err;
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_MSQ, s, &d, NULL, &l, &err), 0);
    CHECK_EQ_INT(l.n, 2); /* two ranges that do not touch: two statements */
    for (size_t i = 0; i < l.n; i++) {
        const char *q = l.items[i].sql;
        CHECK(q && !strncmp(q, "REPLACE INTO \"o'rd\"\"ers\"\nOVERWRITE WHERE \"__time\" >= ", 53));
        CHECK(strstr(q, TS_MILLIS " AS \"__time\""));
        CHECK(strstr(q, "PARTITIONED BY DAY"));
        CHECK(!strstr(q, "GROUP BY"));
        /* the payload carries the same statement */
        CHECK_EQ_STR(json_string_value(json_object_get(l.items[i].payload, "query")), q);
        CHECK(json_is_object(json_object_get(l.items[i].payload, "context")));
    }
    const char *q0 = l.items[0].sql;
    CHECK(q0 && strstr(q0, "OVERWRITE WHERE \"__time\" >= TIMESTAMP '2024-06-01 00:00:00.000' "
                           "AND \"__time\" < TIMESTAMP '2024-06-02 00:00:00.000'"));
    CHECK(q0 && strstr(q0, "\nWHERE " TS_MILLIS " >= TIMESTAMP '2024-06-01 "
                           "00:00:00.000' AND " TS_MILLIS " < TIMESTAMP "
                           "'2024-06-02 00:00:00.000'"));
    CHECK(l.n == 2 && strstr(l.items[1].sql, "TIMESTAMP '2024-06-04 00:00:00.000'"));
    /* EXTERN arguments: the spec's input source (the quote in tableName survived), the
     * input format, the signature */
    json_t *src = q0 ? literal_json(q0, 0) : NULL;
    json_t *fmt = q0 ? literal_json(q0, 1) : NULL;
    json_t *sig = q0 ? literal_json(q0, 2) : NULL;
    CHECK_EQ_STR(json_string_value(json_object_get(src, "tableName")), "it's");
    CHECK_EQ_STR(json_string_value(json_object_get(src, "type")), "iceberg");
    CHECK(!json_object_get(src, "snapshotTime")); /* no plan: no pin */
    CHECK_EQ_STR(json_string_value(json_object_get(fmt, "type")), "parquet");
    CHECK_EQ_INT(json_array_size(sig), 3);
    const char *names[] = {"ts", "name", "id"}, *types[] = {"long", "string", "long"};
    for (size_t i = 0; i < 3; i++) {
        json_t *e = json_array_get(sig, i);
        CHECK_EQ_STR(json_string_value(json_object_get(e, "name")), names[i]);
        CHECK_EQ_STR(json_string_value(json_object_get(e, "type")), types[i]);
    }
    json_decref(src);
    json_decref(fmt);
    json_decref(sig);
    /* the terminal text: no ';' after a statement (Druid's SQL API rejects it; the old
     * expectation of a trailing ';' was wrong) */
    icd_buf b = ICD_BUF_INIT;
    CHECK_EQ_INT(dr_emit_write(&l, &b, &err), 0);
    CHECK(b.data && strstr(b.data, "PARTITIONED BY DAY\n\nREPLACE INTO"));
    CHECK(b.data && !strchr(b.data, ';'));
    icd_buf_free(&b);
    dr_emit_list_free(&l);
    free_diff(&d);
    dr_spec_free(s);
}

static void test_msq_formats(void)
{
    static const struct {
        const char *format;
        const char *expr;
        const char *sig;
    } cases[] = {
        {"posix",
         "CASE WHEN \"ts\" BETWEEN -4611686018427387 AND 4611686018427387 THEN "
         "MILLIS_TO_TIMESTAMP(\"ts\" * 1000) END",
         "long"},
        {"micro", "CASE " MS_GUARD("\"ts\" / 1000") " THEN MILLIS_TO_TIMESTAMP(\"ts\" / 1000) END",
         "long"},
        {"nano",
         "CASE " MS_GUARD("\"ts\" / 1000000") " THEN MILLIS_TO_TIMESTAMP(\"ts\" / 1000000) END",
         "long"},
        {"ruby",
         "CASE " MS_GUARD("CAST(\"ts\" * 1000 AS BIGINT)") " THEN MILLIS_TO_TIMESTAMP(CAST(\"ts\" "
                                                           "* 1000 AS BIGINT)) END",
         "double"},
        /* TIME_PARSE is not Druid's native parse (no quote stripping, no numeric fallback,
         * NULL on failure): iso and Joda patterns are refused (they were emitted before) */
        {"iso", NULL, NULL},
        {"yyyy-MM-dd'T'HH", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2048];
        snprintf(text, sizeof text,
                 SPEC_HEAD
                 "\"timestampSpec\":{\"column\":\"ts\",\"format\":\"%s\"},"
                 "\"dimensionsSpec\":{\"dimensions\":[\"a\"]},"
                 "\"granularitySpec\":{\"segmentGranularity\":\"hour\"}},"
                 "\"ioConfig\":{\"inputSource\":{\"type\":\"iceberg\",\"tableName\":\"t\","
                 "\"namespace\":\"db\",\"icebergCatalog\":{\"type\":\"local\","
                 "\"warehousePath\":\"/wh\"},\"warehouseSource\":{\"type\":\"local\"}},"
                 "\"inputFormat\":{\"type\":\"parquet\"}}}}",
                 cases[i].format);
        dr_spec *s = parse(text);
        if (!s) continue;
        icd_buf b = ICD_BUF_INIT;
        icd_error err;
        if (!cases[i].expr) {
            CHECK_EQ_INT(dr_emit_msq(s, NULL, NULL, &b, &err), ICD_EUNSUPPORTED);
            CHECK(strstr(err.message, "--emit native"));
            icd_buf_free(&b);
            dr_spec_free(s);
            continue;
        }
        CHECK_EQ_INT(dr_emit_msq(s, NULL, NULL, &b, &err), 0);
        char want[512];
        snprintf(want, sizeof want, "SELECT\n  %s AS \"__time\"", cases[i].expr);
        CHECK(b.data && strstr(b.data, want));
        if (!b.data || !strstr(b.data, want)) fprintf(stderr, "  %s\n", b.data ? b.data : "");
        CHECK(b.data && strstr(b.data, "OVERWRITE ALL")); /* full ingestion */
        /* rows Druid's parser rejects (NULL __time) are left out of a full ingestion too */
        snprintf(want, sizeof want, "\nWHERE %s IS NOT NULL\n", cases[i].expr);
        CHECK(b.data && strstr(b.data, want));
        CHECK(b.data && strstr(b.data, "PARTITIONED BY HOUR\n"));
        json_t *sig = b.data ? literal_json(b.data, 2) : NULL;
        CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(sig, 0), "type")),
                     cases[i].sig);
        json_decref(sig);
        icd_buf_free(&b);
        dr_spec_free(s);
    }
}

static void test_msq_rollup(void)
{
    const char *text =
        SPEC_HEAD "\"timestampSpec\":{\"column\":\"ts\",\"format\":\"millis\","
                  "\"missingValue\":\"2000-01-01T00:00:00Z\"},"
                  "\"dimensionsSpec\":{\"dimensions\":[\"a\"]},"
                  "\"metricsSpec\":[{\"type\":\"count\",\"name\":\"cnt\"},"
                  "{\"type\":\"longSum\",\"name\":\"sum_x\",\"fieldName\":\"x\"},"
                  "{\"type\":\"doubleMax\",\"name\":\"max_y\",\"fieldName\":\"y\"}],"
                  "\"granularitySpec\":{\"segmentGranularity\":\"week\",\"queryGranularity\":"
                  "\"hour\",\"rollup\":true}},"
                  "\"ioConfig\":{\"inputSource\":{\"type\":\"iceberg\",\"tableName\":\"t\","
                  "\"namespace\":\"db\",\"icebergCatalog\":{\"type\":\"local\","
                  "\"warehousePath\":\"/wh\"},\"warehouseSource\":{\"type\":\"local\"}},"
                  "\"inputFormat\":{\"type\":\"parquet\"}},"
                  "\"tuningConfig\":{\"partitionsSpec\":{\"type\":\"range\","
                  "\"partitionDimensions\":[\"a\"]}}}}";
    dr_spec *s = parse(text);
    if (!s) return;
    /* 2024-06-05 is a Wednesday: the week bucket is Monday 2024-06-03 .. 2024-06-10 */
    int64_t rep[] = {JUN1 + 4 * DAY, JUN1 + 5 * DAY};
    dr_diff d = make_diff(rep, 1, NULL, 0);
    dr_emit_list l;
    icd_error err;
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_MSQ, s, &d, NULL, &l, &err), 0);
    CHECK_EQ_INT(l.n, 1);
    const char *q = l.n ? l.items[0].sql : "";
    const char *ts = "CASE WHEN \"ts\" IS NULL THEN TIMESTAMP '2000-01-01 00:00:00.000' " MS_GUARD(
        "\"ts\"") " THEN MILLIS_TO_TIMESTAMP(\"ts\") END";
    char want[512];
    snprintf(want, sizeof want, "TIME_FLOOR(%s, 'PT1H') AS \"__time\"", ts);
    CHECK(strstr(q, want));
    CHECK(strstr(q, "TIMESTAMP '2024-06-03 00:00:00.000' AND \"__time\" < TIMESTAMP "
                    "'2024-06-10 00:00:00.000'"));
    CHECK(strstr(q, "COUNT(*) AS \"cnt\""));
    CHECK(strstr(q, "SUM(CAST(\"x\" AS BIGINT)) AS \"sum_x\""));
    CHECK(strstr(q, "MAX(CAST(\"y\" AS DOUBLE)) AS \"max_y\""));
    CHECK(strstr(q, "\nGROUP BY 1, 2\n"));
    CHECK(strstr(q, "PARTITIONED BY TIME_FLOOR(\"__time\", 'P1W')\nCLUSTERED BY \"a\""));
    const json_t *ctx = l.n ? json_object_get(l.items[0].payload, "context") : NULL;
    CHECK(json_is_false(json_object_get(ctx, "finalizeAggregations")));
    dr_emit_list_free(&l);
    free_diff(&d);
    dr_spec_free(s);

    /* an aggregator without a SQL form is refused, not dropped */
    const char *bad = SPEC_HEAD "\"timestampSpec\":{\"column\":\"ts\",\"format\":\"millis\"},"
                                "\"dimensionsSpec\":{\"dimensions\":[\"a\"]},"
                                "\"metricsSpec\":[{\"type\":\"hyperUnique\",\"name\":\"u\","
                                "\"fieldName\":\"a\"}]},"
                                "\"ioConfig\":{\"inputSource\":{\"type\":\"iceberg\",\"tableName\":"
                                "\"t\",\"namespace\":\"db\",\"icebergCatalog\":{\"type\":\"local\","
                                "\"warehousePath\":\"/wh\"},\"warehouseSource\":{\"type\":"
                                "\"local\"}},\"inputFormat\":{\"type\":\"parquet\"}}}}";
    s = parse(bad);
    if (!s) return;
    icd_buf b = ICD_BUF_INIT;
    CHECK_EQ_INT(dr_emit_msq(s, NULL, NULL, &b, &err), ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "hyperUnique") && strstr(err.message, "--emit native"));
    icd_buf_free(&b);
    /* ... while native keeps the metricsSpec as written */
    CHECK_EQ_INT(dr_emit_native(s, NULL, NULL, &b, &err), 0);
    CHECK(b.data && strstr(b.data, "hyperUnique"));
    icd_buf_free(&b);
    dr_spec_free(s);
}

static void test_native_v1(void)
{
    dr_spec *s = parse(BASIC_SPEC);
    if (!s) return;
    int64_t rep[] = {JUN1 + 3 * DAY, JUN1 + 4 * DAY};
    int64_t app[] = {JUN1, JUN1 + DAY};
    dr_diff d = make_diff(rep, 1, app, 1);
    icd_buf b = ICD_BUF_INIT;
    icd_error err;
    CHECK_EQ_INT(dr_emit_native(s, &d, NULL, &b, &err), 0);
    json_t *t = b.data ? json_loads(b.data, 0, NULL) : NULL;
    CHECK(t != NULL);
    json_t *spec = json_object_get(t, "spec");
    json_t *io = json_object_get(spec, "ioConfig");
    CHECK_EQ_STR(json_string_value(json_object_get(t, "type")), "index_parallel");
    CHECK(json_is_false(json_object_get(io, "appendToExisting")));
    CHECK(json_is_true(json_object_get(io, "dropExisting")));
    json_t *ivs = json_object_get(
        json_object_get(json_object_get(spec, "dataSchema"), "granularitySpec"), "intervals");
    CHECK_EQ_INT(json_array_size(ivs), 2);
    CHECK_EQ_STR(json_string_value(json_array_get(ivs, 0)),
                 "2024-06-01T00:00:00.000Z/2024-06-02T00:00:00.000Z");
    CHECK_EQ_STR(json_string_value(json_array_get(ivs, 1)),
                 "2024-06-04T00:00:00.000Z/2024-06-05T00:00:00.000Z");
    json_t *src = json_object_get(io, "inputSource");
    CHECK_EQ_STR(json_string_value(json_object_get(src, "type")), "iceberg");
    CHECK_EQ_STR(json_string_value(json_object_get(src, "tableName")), "it's");
    /* everything else as the user wrote it */
    CHECK_EQ_INT(json_integer_value(
                     json_object_get(json_object_get(spec, "tuningConfig"), "maxParseExceptions")),
                 7);
    json_decref(t);
    icd_buf_free(&b);
    /* replace_only: just the replace interval */
    dr_emit_opts o = {0};
    o.replace_only = true;
    dr_emit_list l;
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_NATIVE, s, &d, &o, &l, &err), 0);
    CHECK_EQ_INT(l.n_ranges, 1);
    dr_emit_list_free(&l);
    /* full: no intervals, dropExisting off (Druid requires intervals for it) */
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_NATIVE, s, NULL, NULL, &l, &err), 0);
    CHECK_EQ_INT(l.n, 1);
    if (l.n) {
        json_t *fio = json_object_get(json_object_get(l.items[0].payload, "spec"), "ioConfig");
        CHECK(json_is_false(json_object_get(fio, "dropExisting")));
        CHECK(json_is_false(json_object_get(fio, "appendToExisting")));
    }
    dr_emit_list_free(&l);
    /* an empty diff: nothing to submit */
    dr_diff empty = make_diff(NULL, 0, NULL, 0);
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_MSQ, s, &empty, NULL, &l, &err), 0);
    CHECK_EQ_INT(l.n, 0);
    dr_emit_list_free(&l);
    free_diff(&empty);
    free_diff(&d);
    dr_spec_free(s);
}

/* ---- with plans of the example tables --------------------------------------------------- */

static dr_spec *example_spec(const char *table, const char *extra_filter)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"type\":\"index_parallel\",\"spec\":{\"dataSchema\":{\"dataSource\":\"%s\","
             "\"timestampSpec\":{\"column\":\"event_ts\",\"format\":\"auto\"},"
             "\"dimensionsSpec\":{\"dimensions\":[]},"
             "\"granularitySpec\":{\"segmentGranularity\":\"day\",\"rollup\":false}},"
             "\"ioConfig\":{\"type\":\"index_parallel\",\"inputSource\":{\"type\":\"iceberg\","
             "\"tableName\":\"%s\",\"namespace\":\"demo\",\"icebergCatalog\":{\"type\":\"local\","
             "\"warehousePath\":\"%s/examples/warehouse\"},%s"
             "\"warehouseSource\":{\"type\":\"local\"}},\"inputFormat\":{\"type\":\"parquet\"}}}}",
             table, table, src_dir(), extra_filter);
    return parse(text);
}

static dr_plan *example_plan(const dr_spec *s, icd_fileio **io)
{
    icd_error err;
    char remap[1200];
    snprintf(remap, sizeof remap, "/tmp/icedruid-example/warehouse=%s/examples/warehouse",
             src_dir());
    dr_plan *p = NULL;
    if (icd_fileio_new(io, &err) || icd_fileio_add_remap_arg(*io, remap, &err) ||
        dr_plan_build(s, *io, NULL, &p, &err)) {
        fprintf(stderr, "  plan: %s\n", err.message);
        CHECK(0);
        return NULL;
    }
    return p;
}

static void test_plan_v1_events(void)
{
    dr_spec *s = example_spec("events", "\"icebergFilter\":{\"type\":\"equals\",\"filterColumn\":"
                                        "\"event_type\",\"filterValue\":\"x\"},"
                                        "\"residualFilterMode\":\"warn\",");
    if (!s) return;
    icd_fileio *io = NULL;
    dr_plan *p = example_plan(s, &io);
    if (!p) {
        dr_spec_free(s);
        icd_fileio_free(io);
        return;
    }
    CHECK(!dr_plan_is_v2(p));
    int64_t rep[] = {JUN1 + DAY, JUN1 + 2 * DAY};
    dr_diff d = make_diff(rep, 1, NULL, 0);
    dr_emit_opts o = {0};
    o.plan = p;
    dr_emit_list l;
    icd_error err;
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_NATIVE, s, &d, &o, &l, &err), 0);
    CHECK(!l.v2);
    json_t *src = l.n ? json_object_get(json_object_get(json_object_get(l.items[0].payload, "spec"),
                                                        "ioConfig"),
                                        "inputSource")
                      : NULL;
    /* pinned to the current snapshot (its timestamp from the metadata) */
    const ice_snapshot *snap = ice_metadata_current_snapshot(dr_plan_metadata(p));
    icd_buf want = ICD_BUF_INIT;
    if (snap) dr_fmt_iso_ms(&want, snap->timestamp_ms);
    CHECK_EQ_STR(json_string_value(json_object_get(src, "snapshotTime")), want.data);
    icd_buf_free(&want);
    /* and(the spec's filter, interval on event_ts) */
    json_t *f = json_object_get(src, "icebergFilter");
    CHECK_EQ_STR(json_string_value(json_object_get(f, "type")), "and");
    json_t *fs = json_object_get(f, "filters");
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(fs, 0), "type")), "equals");
    json_t *iv = json_array_get(fs, 1);
    CHECK_EQ_STR(json_string_value(json_object_get(iv, "type")), "interval");
    CHECK_EQ_STR(json_string_value(json_object_get(iv, "filterColumn")), "event_ts");
    CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(iv, "intervals"), 0)),
                 "2024-06-02T00:00:00.000Z/2024-06-03T00:00:00.000Z");
    /* the user's residualFilterMode is kept (it was overwritten with "ignore" before) */
    CHECK_EQ_STR(json_string_value(json_object_get(src, "residualFilterMode")), "warn");
    dr_emit_list_free(&l);

    /* MSQ over a schemaless spec lists the discovered columns from the schema */
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_MSQ, s, &d, &o, &l, &err), 0);
    const char *q = l.n ? l.items[0].sql : "";
    CHECK(strstr(q, "THEN MILLIS_TO_TIMESTAMP(\"event_ts\") END AS \"__time\""));
    json_t *sig = literal_json(q, 2);
    const char *cols[] = {"event_ts", "event_id", "user_id", "event_type", "value"};
    CHECK_EQ_INT(json_array_size(sig), 5);
    for (size_t i = 0; i < 5; i++)
        CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(sig, i), "name")), cols[i]);
    json_decref(sig);
    dr_emit_list_free(&l);
    free_diff(&d);
    dr_plan_free(p);
    icd_fileio_free(io);
    dr_spec_free(s);
}

static void test_plan_v2_orders(void)
{
    dr_spec *s = example_spec("orders", "");
    if (!s) return;
    icd_fileio *io = NULL;
    dr_plan *p = example_plan(s, &io);
    if (!p) {
        dr_spec_free(s);
        icd_fileio_free(io);
        return;
    }
    CHECK(dr_plan_is_v2(p));
    int64_t rep[] = {JUN1, JUN1 + DAY};
    dr_diff d = make_diff(rep, 1, NULL, 0);
    dr_emit_opts o = {0};
    o.plan = p;
    dr_emit_list l;
    icd_error err;
    /* Druid's iceberg source would resurrect the deleted rows: refuse without a server */
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_MSQ, s, &d, &o, &l, &err), ICD_EINVALID);
    CHECK(strstr(err.message, "--serve-url") != NULL);
    o.serve_url = "http://127.0.0.1:8200/";
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_MSQ, s, &d, &o, &l, &err), 0);
    CHECK(l.v2);
    const char *q = l.n ? l.items[0].sql : "";
    CHECK(strstr(q, "MILLIS_TO_TIMESTAMP(\"__time\") AS \"__time\""));
    json_t *src = literal_json(q, 0);
    json_t *fmt = literal_json(q, 1);
    CHECK_EQ_STR(json_string_value(json_object_get(src, "type")), "http");
    CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(src, "uris"), 0)),
                 "http://127.0.0.1:8200/splits/0");
    CHECK_EQ_STR(json_string_value(json_object_get(fmt, "type")), "json");
    json_decref(src);
    json_decref(fmt);
    dr_emit_list_free(&l);
    free_diff(&d);

    /* native: the rewritten v2 spec, with intervals */
    int64_t rep2[] = {JUN1 + 5 * DAY, JUN1 + 6 * DAY};
    d = make_diff(rep2, 1, NULL, 0);
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_NATIVE, s, &d, &o, &l, &err), 0);
    json_t *spec = l.n ? json_object_get(l.items[0].payload, "spec") : NULL;
    json_t *ts = json_object_get(json_object_get(spec, "dataSchema"), "timestampSpec");
    CHECK_EQ_STR(json_string_value(json_object_get(ts, "column")), "__time");
    json_t *nsrc = json_object_get(json_object_get(spec, "ioConfig"), "inputSource");
    CHECK_EQ_STR(json_string_value(json_object_get(nsrc, "type")), "http");
    /* orders' only data file holds 2024-06-01 rows: no split overlaps 2024-06-06, one is
     * kept anyway (an http source needs a URI; the interval filter drops its rows) */
    CHECK_EQ_INT(json_array_size(json_object_get(nsrc, "uris")), 1);
    dr_emit_list_free(&l);
    free_diff(&d);

    /* many MSQ ranges: one statement each; the splits are chosen once (with the table's
     * FileIO the snapshot is planned again with the time filter) */
    int64_t many[20];
    for (int i = 0; i < 10; i++) {
        many[2 * i] = JUN1 + 2 * i * DAY;
        many[2 * i + 1] = JUN1 + (2 * i + 1) * DAY;
    }
    d = make_diff(many, 10, NULL, 0);
    o.io = io;
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_MSQ, s, &d, &o, &l, &err), 0);
    CHECK_EQ_INT(l.n, 10);
    for (size_t i = 0; i < l.n; i++) {
        json_t *u = literal_json(l.items[i].sql, 0);
        CHECK_EQ_INT(json_array_size(json_object_get(u, "uris")), 1);
        json_decref(u);
    }
    dr_emit_list_free(&l);
    free_diff(&d);
    dr_plan_free(p);
    icd_fileio_free(io);
    dr_spec_free(s);
}

static void test_rollup_without_metrics_and_context(void)
{
    const char *text =
        SPEC_HEAD "\"timestampSpec\":{\"column\":\"ts\",\"format\":\"millis\"},"
                  "\"dimensionsSpec\":{\"dimensions\":[\"a\",\"b\"]}},"
                  "\"ioConfig\":{\"inputSource\":{\"type\":\"iceberg\",\"tableName\":\"t\","
                  "\"namespace\":\"db\",\"icebergCatalog\":{\"type\":\"local\","
                  "\"warehousePath\":\"/wh\"},\"warehouseSource\":{\"type\":\"local\"}},"
                  "\"inputFormat\":{\"type\":\"parquet\"}}}}";
    dr_spec *s = parse(text);
    if (!s) return;
    json_t *ctx = json_pack("{s:i}", "priority", 90);
    dr_emit_opts o = {0};
    o.context = ctx;
    dr_emit_list l;
    icd_error err;
    /* rollup defaults to true: identical rows collapse in native, so GROUP BY in SQL */
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_MSQ, s, NULL, &o, &l, &err), 0);
    CHECK(l.n == 1 && strstr(l.items[0].sql, "\nGROUP BY 1, 2, 3\n"));
    CHECK(l.n == 1 && json_integer_value(json_object_get(
                          json_object_get(l.items[0].payload, "context"), "priority")) == 90);
    dr_emit_list_free(&l);
    CHECK_EQ_INT(dr_emit_build(DR_EMIT_NATIVE, s, NULL, &o, &l, &err), 0);
    CHECK(l.n == 1 && json_integer_value(json_object_get(
                          json_object_get(l.items[0].payload, "context"), "priority")) == 90);
    dr_emit_list_free(&l);
    json_decref(ctx);
    dr_spec_free(s);
}

TEST_MAIN({"sql_quoting", test_sql_quoting}, {"period_text", test_period_text},
          {"ranges", test_ranges}, {"msq_v1_structure", test_msq_v1_structure},
          {"msq_formats", test_msq_formats}, {"msq_rollup", test_msq_rollup},
          {"native_v1", test_native_v1}, {"plan_v1_events", test_plan_v1_events},
          {"plan_v2_orders", test_plan_v2_orders},
          {"rollup_without_metrics_and_context", test_rollup_without_metrics_and_context})
