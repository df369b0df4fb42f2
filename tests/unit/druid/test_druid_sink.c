/* Unit tests of druid/rows/druid_sink.c (the reader -> Druid row adapter: nested scan-JSON
 * values replayed with their Iceberg types, parse exceptions, cancellation) and of
 * dr_warehouse_source_create (what Druid's InputSourceFactory.create(paths) builds per
 * warehouseSource type). Expected rows are written out by hand from Druid's rules. */
#include <jansson.h>
#include <stdlib.h>

#include "druid/rows/druid_sink.h"
#include "druid/plan/plan.h"
#include "iceberg/metadata.h"
#include "iceberg/reader.h"
#include "test.h"

static const char *METADATA =
    "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    "\"location\":\"/wh/t\",\"last-sequence-number\":0,\"last-updated-ms\":0,"
    "\"last-column-id\":30,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
    "\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":3,\"name\":\"s\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":10,\"name\":\"a\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":11,\"name\":\"t\",\"required\":false,\"type\":\"timestamp\"},"
    "{\"id\":12,\"name\":\"d\",\"required\":false,\"type\":\"decimal(5,2)\"},"
    "{\"id\":13,\"name\":\"tm\",\"required\":false,\"type\":\"time\"}]}},"
    "{\"id\":4,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\","
    "\"element-id\":14,\"element-required\":false,\"element\":\"date\"}},"
    "{\"id\":5,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":15,"
    "\"key\":\"string\",\"value-id\":16,\"value-required\":false,\"value\":\"long\"}},"
    "{\"id\":6,\"name\":\"mt\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":17,"
    "\"key\":\"int\",\"value-id\":18,\"value-required\":false,\"value\":\"timestamptz\"}},"
    "{\"id\":7,\"name\":\"ld\",\"required\":false,\"type\":{\"type\":\"list\","
    "\"element-id\":19,\"element-required\":false,\"element\":\"double\"}},"
    "{\"id\":8,\"name\":\"r\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":20,\"name\":\"renamed\",\"required\":false,\"type\":\"int\"}]}}"
    "]}],\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
    "\"last-partition-id\":999,\"default-sort-order-id\":0,"
    "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}]}";

typedef struct fx {
    icd_fileio *io;
    ice_metadata *md;
    ice_scan_reader *r;
    dr_timestamp_spec ts;
    icd_buf out;
    dr_sink sink;
    ice_row_sink rs;
    icd_error err;
    int exceptions;
} fx;

static void setup(fx *f)
{
    memset(f, 0, sizeof *f);
    CHECK_EQ_INT(icd_fileio_new(&f->io, &f->err), 0);
    CHECK_EQ_INT(ice_metadata_parse(METADATA, strlen(METADATA), "m.json", &f->md, &f->err), 0);
    CHECK_EQ_INT(ice_scan_reader_new(f->io, f->md, ice_metadata_current_schema(f->md), NULL, 0,
                                     &f->r, &f->err),
                 0);
    CHECK_EQ_INT(dr_timestamp_spec_init(&f->ts, "ts", "auto", NULL, 0, &f->err), 0);
    CHECK_EQ_INT(dr_sink_init(&f->sink, &f->ts, f->r, &f->out, &f->err), 0);
    dr_sink_row_sink(&f->sink, &f->rs);
}

static void teardown(fx *f)
{
    dr_sink_clear(&f->sink);
    dr_timestamp_spec_clear(&f->ts);
    ice_scan_reader_free(f->r);
    ice_metadata_free(f->md);
    icd_fileio_free(f->io);
    icd_buf_free(&f->out);
}

static void field(fx *f, const char *name)
{
    f->rs.field(f->rs.ctx, name, strlen(name));
}
static void raw(fx *f, const char *json)
{
    f->rs.raw_json(f->rs.ctx, json, strlen(json));
}

static void test_nested_values(void)
{
    fx f;
    setup(&f);
    void *c = f.rs.ctx;
    f.rs.begin_file(c, "/wh/t/data/a.parquet", ICE_FORMAT_PARQUET);
    f.rs.begin_row(c, "/wh/t/data/a.parquet", 0);
    field(&f, "id");
    f.rs.i64(c, 1);
    field(&f, "ts");
    f.rs.timestamp(c, 1717233300000000LL, 6, true); /* 2024-06-01T09:15:00Z */
    field(&f, "s");
    raw(&f, "{\"a\":7,\"t\":\"2024-06-01T09:15:00.123456\",\"d\":\"12.30\","
            "\"tm\":\"14:30:00.000000\"}");
    field(&f, "l");
    raw(&f, "[\"2024-06-01\",null]");
    field(&f, "m");
    raw(&f, "[{\"key\":\"x\",\"value\":1},{\"key\":\"y\",\"value\":null}]");
    field(&f, "mt");
    raw(&f, "[{\"key\":3,\"value\":\"1970-01-01T00:00:00.001999+00:00\"}]");
    field(&f, "ld");
    raw(&f, "[\"NaN\",1.5,\"-Infinity\"]");
    field(&f, "r");
    raw(&f, "{\"old_name\":5}");
    CHECK_EQ_INT(f.rs.end_row(c, &f.err), 0);
    CHECK_EQ_STR(f.out.data,
                 "{\"__time\":1717233300000,\"id\":1,\"ts\":1717233300000,"
                 "\"s\":{\"a\":7,\"t\":1717233300123,\"d\":12.3,\"tm\":52200000000},"
                 "\"l\":[1717200000000,null],\"m\":{\"x\":1,\"y\":null},\"mt\":{\"3\":1},"
                 "\"ld\":[NaN,1.5,-Infinity],\"r\":{\"renamed\":5}}\n");
    CHECK_EQ_INT(f.sink.rows, 1);
    teardown(&f);
}

static void test_bad_nested_json_fails(void)
{
    fx f;
    setup(&f);
    void *c = f.rs.ctx;
    f.rs.begin_file(c, "/wh/t/data/a.parquet", ICE_FORMAT_PARQUET);
    f.rs.begin_row(c, "/wh/t/data/a.parquet", 3);
    field(&f, "ts");
    f.rs.timestamp(c, 0, 6, true);
    field(&f, "s");
    raw(&f, "{\"d\":\"not a decimal\"}");
    int rc = f.rs.end_row(c, &f.err);
    CHECK(rc < 0);
    CHECK(strstr(f.err.message, "decimal") != NULL);
    CHECK_EQ_STR(f.err.file, "/wh/t/data/a.parquet");
    CHECK_EQ_INT(f.out.len, 0);
    teardown(&f);
}

static int count_exception(void *ctx, const icd_error *row_err, icd_error *err)
{
    fx *f = ctx;
    (void)err;
    f->exceptions++;
    CHECK(strstr(row_err->message, "row 4") != NULL);
    CHECK(strstr(row_err->message, "Timestamp[null] is unparseable") != NULL);
    return 0;
}

static void test_parse_exception_skips(void)
{
    fx f;
    setup(&f);
    void *c = f.rs.ctx;
    f.rs.begin_file(c, "/wh/t/data/a.parquet", ICE_FORMAT_PARQUET);
    f.rs.begin_row(c, "/wh/t/data/a.parquet", 4);
    field(&f, "id");
    f.rs.i64(c, 9);
    field(&f, "ts");
    f.rs.null_value(c);
    /* without a handler: the exception stops the read */
    CHECK_EQ_INT(f.rs.end_row(c, &f.err), ICD_EINVALID);
    CHECK_EQ_INT(f.out.len, 0);
    f.sink.on_parse_exception = count_exception;
    f.sink.ctx = &f;
    f.rs.begin_file(c, "/wh/t/data/a.parquet", ICE_FORMAT_PARQUET);
    f.rs.begin_row(c, "/wh/t/data/a.parquet", 4);
    field(&f, "ts");
    f.rs.null_value(c);
    CHECK_EQ_INT(f.rs.end_row(c, &f.err), 1); /* skipped */
    CHECK_EQ_INT(f.exceptions, 1);
    CHECK_EQ_INT(f.sink.parse_exceptions, 1);
    CHECK_EQ_INT(f.out.len, 0);
    teardown(&f);
}

static void test_cancel(void)
{
    fx f;
    setup(&f);
    atomic_bool cancel;
    atomic_init(&cancel, true);
    f.sink.cancel = &cancel;
    void *c = f.rs.ctx;
    f.rs.begin_file(c, "/wh/t/data/a.parquet", ICE_FORMAT_PARQUET);
    f.rs.begin_row(c, "/wh/t/data/a.parquet", 0);
    field(&f, "ts");
    f.rs.timestamp(c, 0, 6, true);
    CHECK_EQ_INT(f.rs.end_row(c, &f.err), ICD_ECANCELED);
    teardown(&f);
}

/* create(paths) of a warehouseSource given as JSON text; returns the result as text. */
static char *create(const char *ws_text, const char *const *paths, size_t n, int *rc)
{
    json_t *ws = json_loads(ws_text, 0, NULL);
    json_t *out = NULL;
    icd_error err;
    *rc = dr_warehouse_source_create(ws, paths, n, &out, &err);
    char *text = out ? json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(ws);
    json_decref(out);
    return text;
}

static void test_warehouse_sources(void)
{
    int rc;
    const char *local[] = {"/wh/a.parquet", "/wh/b.parquet"};
    char *t =
        create("{\"type\":\"local\",\"baseDir\":\"/x\",\"filter\":\"*.parquet\"}", local, 2, &rc);
    CHECK_EQ_STR(t, "{\"files\":[\"/wh/a.parquet\",\"/wh/b.parquet\"],\"type\":\"local\"}");
    free(t);
    const char *s3[] = {"s3a://bucket/wh/a.parquet", "s3://bucket/wh/b.parquet"};
    t = create("{\"type\":\"s3\",\"prefixes\":[\"s3://bucket/\"],"
               "\"properties\":{\"accessKeyId\":\"k\"},\"endpointConfig\":{\"url\":\"e\"}}",
               s3, 2, &rc);
    CHECK_EQ_STR(t, "{\"endpointConfig\":{\"url\":\"e\"},\"properties\":{\"accessKeyId\":\"k\"},"
                    "\"type\":\"s3\",\"uris\":[\"s3://bucket/wh/a.parquet\","
                    "\"s3://bucket/wh/b.parquet\"]}");
    free(t);
    const char *hdfs[] = {"hdfs://nn:8020/wh/a.parquet"};
    t = create("{\"type\":\"hdfs\",\"paths\":\"/old\"}", hdfs, 1, &rc);
    CHECK_EQ_STR(t, "{\"paths\":[\"hdfs://nn:8020/wh/a.parquet\"],\"type\":\"hdfs\"}");
    free(t);
    const char *gs[] = {"gs://b/wh/a.parquet"};
    t = create("{\"type\":\"google\"}", gs, 1, &rc);
    CHECK_EQ_STR(t, "{\"type\":\"google\",\"uris\":[\"gs://b/wh/a.parquet\"]}");
    free(t);
    const char *az[] = {"azureStorage://acct/c/wh/a.parquet"};
    t = create("{\"type\":\"azureStorage\"}", az, 1, &rc);
    CHECK_EQ_STR(t,
                 "{\"type\":\"azureStorage\",\"uris\":[\"azureStorage://acct/c/wh/a.parquet\"]}");
    free(t);
    t = create("{\"type\":\"local\"}", NULL, 0, &rc);
    CHECK_EQ_STR(t, "{\"files\":[],\"type\":\"local\"}");
    free(t);
    t = create("{\"type\":\"http\"}", local, 1, &rc);
    CHECK(t == NULL);
    CHECK_EQ_INT(rc, ICD_EUNSUPPORTED);
}

/* Schemaless specs: list columns Druid's Parquet reader does not discover are left out of
 * rows of Parquet files only (Druid's ORC reader discovers lists of primitives, and gives
 * their dates as DateTimes) */
static void test_parquet_undiscovered_lists(void)
{
    fx f;
    setup(&f);
    static const char *const drop[] = {"l", "ld"};
    f.sink.parquet_drop = drop;
    f.sink.n_parquet_drop = 2;
    void *c = f.rs.ctx;
    const char *files[] = {"/wh/t/data/a.parquet", "/wh/t/data/b.orc"};
    const ice_file_format fmts[] = {ICE_FORMAT_PARQUET, ICE_FORMAT_ORC};
    const char *want[] = {"{\"__time\":0,\"id\":1,\"ts\":0}\n",
                          "{\"__time\":0,\"id\":1,\"ts\":0,\"l\":[\"2024-06-01T00:00:00.000Z\"],"
                          "\"ld\":[1.5]}\n"};
    for (int k = 0; k < 2; k++) {
        icd_buf_clear(&f.out);
        f.rs.begin_file(c, files[k], fmts[k]);
        f.rs.begin_row(c, files[k], 0);
        field(&f, "id");
        f.rs.i64(c, 1);
        field(&f, "ts");
        f.rs.timestamp(c, 0, 6, true);
        field(&f, "l");
        raw(&f, "[\"2024-06-01\"]");
        field(&f, "ld");
        raw(&f, "[1.5]");
        CHECK_EQ_INT(f.rs.end_row(c, &f.err), 0);
        CHECK_EQ_STR(f.out.data, want[k]);
    }
    teardown(&f);
}

/* ... and columns Druid's ORC / Avro readers do not discover, from rows of their files */
static void test_orc_avro_undiscovered(void)
{
    fx f;
    setup(&f);
    static const char *const orc_drop[] = {"ld"};
    static const char *const avro_drop[] = {"id"};
    f.sink.orc_drop = orc_drop;
    f.sink.n_orc_drop = 1;
    f.sink.avro_drop = avro_drop;
    f.sink.n_avro_drop = 1;
    void *c = f.rs.ctx;
    const char *files[] = {"/wh/t/data/a.parquet", "/wh/t/data/b.orc", "/wh/t/data/c.avro"};
    const ice_file_format fmts[] = {ICE_FORMAT_PARQUET, ICE_FORMAT_ORC, ICE_FORMAT_AVRO};
    const char *want[] = {"{\"__time\":0,\"id\":1,\"ts\":0,\"ld\":[1.5]}\n",
                          "{\"__time\":0,\"id\":1,\"ts\":0}\n",
                          "{\"__time\":0,\"ts\":0,\"ld\":[1.5]}\n"};
    for (int k = 0; k < 3; k++) {
        icd_buf_clear(&f.out);
        f.rs.begin_file(c, files[k], fmts[k]);
        f.rs.begin_row(c, files[k], 0);
        field(&f, "id");
        f.rs.i64(c, 1);
        field(&f, "ts");
        f.rs.timestamp(c, 0, 6, true);
        field(&f, "ld");
        raw(&f, "[1.5]");
        CHECK_EQ_INT(f.rs.end_row(c, &f.err), 0);
        CHECK_EQ_STR(f.out.data, want[k]);
    }
    teardown(&f);
}

TEST_MAIN(TEST(test_parquet_undiscovered_lists), TEST(test_orc_avro_undiscovered),
          TEST(test_nested_values), TEST(test_bad_nested_json_fails),
          TEST(test_parse_exception_skips), TEST(test_cancel), TEST(test_warehouse_sources))
