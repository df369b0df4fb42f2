/*
 * The public Druid API (include/icedruid/druid.h) used as a client would, on the bundled
 * example table examples/warehouse/demo/orders (v2: 5 rows appended on 2024-06-01, then a
 * position delete of 2 rows, then an equality delete of 1) and the example spec's shape:
 * only public headers are included here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <icedruid/icedruid.h>

#include "test.h"

#define SNAP_APPEND 368824057566305891LL
#define SNAP_EQDEL 3097981595695220017LL
#define DAY_2024_06_01 1717200000000LL

static char warehouse[4096];

static icd_storage *storage(void)
{
    const char *src = getenv("ICD_SOURCE_DIR");
    snprintf(warehouse, sizeof warehouse, "%s/examples/warehouse", src ? src : ".");
    icd_storage *s = NULL;
    icd_error err;
    CHECK_EQ_INT(icd_storage_new(&s, &err), 0);
    CHECK_EQ_INT(icd_storage_add_remap(s, "/tmp/icedruid-example/warehouse", warehouse, &err), 0);
    return s;
}

/* The example spec (examples/orders.spec.json) with the warehouse where it lies. */
static icd_druid_spec *spec(const char *granularity)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"type\":\"index_parallel\",\"spec\":{\"dataSchema\":{\"dataSource\":\"orders\","
             "\"timestampSpec\":{\"column\":\"event_ts\",\"format\":\"auto\"},"
             "\"dimensionsSpec\":{\"dimensions\":[{\"type\":\"long\",\"name\":\"order_id\"},"
             "\"customer\",\"product\",{\"type\":\"double\",\"name\":\"amount\"},"
             "{\"type\":\"long\",\"name\":\"quantity\"}]},"
             "\"granularitySpec\":{\"segmentGranularity\":\"%s\",\"rollup\":false}},"
             "\"ioConfig\":{\"type\":\"index_parallel\",\"inputSource\":{\"type\":\"iceberg\","
             "\"tableName\":\"orders\",\"namespace\":\"demo\",\"icebergCatalog\":{\"type\":"
             "\"local\",\"warehousePath\":\"%s\"},\"warehouseSource\":{\"type\":\"local\"}},"
             "\"inputFormat\":{\"type\":\"parquet\"}}}}",
             granularity, warehouse);
    icd_druid_spec *s = NULL;
    icd_error err;
    int rc = icd_druid_spec_parse(&s, text, strlen(text), "orders.spec.json", &err);
    if (rc) fprintf(stderr, "spec: %s\n", err.message);
    CHECK_EQ_INT(rc, 0);
    return s;
}

typedef struct text {
    char data[1 << 16];
    size_t len, calls;
    int fail_with; /* non-zero: refuse the write with this code */
} text;

static int collect(void *ctx, const char *data, size_t len, icd_error *err)
{
    text *t = ctx;
    t->calls++;
    if (t->fail_with) {
        snprintf(err->message, sizeof err->message, "the disk is full");
        err->code = t->fail_with;
        return t->fail_with;
    }
    CHECK(t->len + len < sizeof t->data);
    memcpy(t->data + t->len, data, len);
    t->len += len;
    t->data[t->len] = '\0';
    return 0;
}

static void test_spec(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    CHECK_EQ_STR(icd_druid_spec_data_source(s), "orders");
    CHECK_EQ_STR(icd_druid_spec_namespace(s), "demo");
    CHECK_EQ_STR(icd_druid_spec_table_name(s), "orders");
    icd_druid_spec_free(s);

    /* Druid's own refusal, one line naming the field */
    const char *bad = "{\"type\":\"iceberg\",\"namespace\":\"demo\"}";
    icd_error err;
    icd_druid_spec *b = (icd_druid_spec *)1;
    CHECK_EQ_INT(icd_druid_spec_parse(&b, bad, strlen(bad), "bad.json", &err), ICD_EINVALID);
    CHECK(b == NULL);
    CHECK(strstr(err.message, "tableName") != NULL);
    CHECK_EQ_INT(icd_druid_spec_load(&b, "/nonexistent/spec.json", &err), ICD_ENOTFOUND);
    CHECK(strstr(err.file, "/nonexistent/spec.json") != NULL);
    icd_storage_free(st);
}

static void test_plan(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    icd_error err;
    icd_druid_plan_options po;
    icd_druid_plan_options_init(&po);
    icd_druid_plan *p = NULL;
    CHECK_EQ_INT(icd_druid_plan_open(&p, s, st, &po, &err), 0);
    CHECK_EQ_INT(icd_druid_plan_is_v2(p), 1); /* deletes apply to the one data file */
    CHECK_EQ_INT((int)icd_druid_plan_file_count(p), 1);
    CHECK_EQ_INT(icd_druid_plan_residual(p, NULL), 0);
    static text whole;
    CHECK_EQ_INT(icd_druid_plan_write(p, collect, &whole, &err), 0);
    CHECK(strstr(whole.data, "\"mode\":\"v2\"") != NULL);
    CHECK(strstr(whole.data, "\"snapshotId\":3097981595695220017") != NULL);
    CHECK(strstr(whole.data, "00001-data.parquet") != NULL);

    /* a write refused by the caller stops the writer with the caller's code and words */
    static text refuse = {.fail_with = ICD_EIO};
    CHECK_EQ_INT(icd_druid_plan_write(p, collect, &refuse, &err), ICD_EIO);
    CHECK_EQ_STR(err.message, "the disk is full");
    icd_druid_plan_free(p);

    /* streamed: the same document, nothing per file kept */
    po.stream = 1;
    CHECK_EQ_INT(icd_druid_plan_open(&p, s, st, &po, &err), 0);
    CHECK_EQ_INT((int)icd_druid_plan_file_count(p), 0);
    static text streamed;
    CHECK_EQ_INT(icd_druid_plan_write(p, collect, &streamed, &err), 0);
    CHECK_EQ_STR(streamed.data, whole.data);
    char *doc = NULL;
    icd_druid_rewrite_options ro;
    icd_druid_rewrite_options_init(&ro);
    ro.serve_url = "http://icedruid:8000";
    CHECK_EQ_INT(icd_druid_rewrite(&doc, NULL, p, &ro, &err), ICD_EINVALID);
    CHECK(doc == NULL);
    icd_druid_plan_free(p);

    po.version = 99;
    CHECK_EQ_INT(icd_druid_plan_open(&p, s, st, &po, &err), ICD_EINVALID);
    CHECK(p == NULL);
    icd_druid_spec_free(s);
    icd_storage_free(st);
}

static void test_rewrite(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    icd_error err;
    icd_druid_plan *p = NULL;
    CHECK_EQ_INT(icd_druid_plan_open(&p, s, st, NULL, &err), 0);
    icd_druid_rewrite_options ro;
    icd_druid_rewrite_options_init(&ro);
    char *doc = NULL;
    size_t orc = 9;
    /* v2 without a serve URL: the file with deletes would have nowhere to come from */
    CHECK_EQ_INT(icd_druid_rewrite(&doc, &orc, p, &ro, &err), ICD_EINVALID);
    CHECK(strstr(err.message, "serve") != NULL);
    ro.serve_url = "http://icedruid:8000";
    CHECK_EQ_INT(icd_druid_rewrite(&doc, &orc, p, &ro, &err), 0);
    CHECK_EQ_INT((int)orc, 0);
    CHECK(strstr(doc, "\"http\"") != NULL); /* no raw file: no combining source */
    CHECK(strstr(doc, "http://icedruid:8000/files/demo.orders/3097981595695220017/") != NULL);
    CHECK(strstr(doc, "\"parquet\"") != NULL); /* the user's inputFormat, untouched */
    icd_string_free(doc);
    ro.rows = 1; /* NDJSON splits */
    ro.auth_user = "druid";
    ro.auth_password_env = "ICEDRUID_PASSWORD";
    CHECK_EQ_INT(icd_druid_rewrite(&doc, NULL, p, &ro, &err), 0);
    CHECK(strstr(doc, "\"ICEDRUID_PASSWORD\"") != NULL);
    CHECK(strstr(doc, "\"json\"") != NULL);
    icd_string_free(doc);
    ro.auth_password_env = NULL;
    CHECK_EQ_INT(icd_druid_rewrite(&doc, NULL, p, &ro, &err), ICD_EINVALID);
    icd_druid_plan_free(p);
    icd_druid_spec_free(s);
    icd_storage_free(st);
}

typedef struct progress_log {
    size_t calls, last_done, total;
    uint64_t bytes_total;
} progress_log;

static void on_progress(void *ctx, size_t done, size_t total, uint64_t bytes_done,
                        uint64_t bytes_total)
{
    progress_log *l = ctx;
    CHECK(done <= total && bytes_done <= bytes_total);
    l->calls++;
    l->last_done = done;
    l->total = total;
    l->bytes_total = bytes_total;
}

static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_read(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    icd_error err;
    icd_druid_plan *p = NULL;
    CHECK_EQ_INT(icd_druid_plan_open(&p, s, st, NULL, &err), 0);
    icd_druid_read_options o;
    icd_druid_read_options_init(&o);
    progress_log pl = {0};
    o.on_progress = on_progress;
    o.ctx = &pl;
    o.threads = 2;
    static text rows;
    icd_scan_stats stats;
    CHECK_EQ_INT(icd_druid_read_plan(p, st, &o, collect, &rows, &stats, &err), 0);
    /* orders 1001 and 1003 survive: 1002 and 1004 by position, 1005 by equality */
    CHECK_EQ_INT((int)lines(rows.data), 2);
    CHECK(strstr(rows.data, "{\"__time\":1717233300000,\"order_id\":1001,") == rows.data);
    CHECK(strstr(rows.data, "\"order_id\":1003") != NULL);
    CHECK(strstr(rows.data, "1002") == NULL && strstr(rows.data, "1005") == NULL);
    CHECK(stats.rows_read == 5 && stats.rows_emitted == 2 && stats.rows_unparseable == 0);
    CHECK(stats.rows_deleted_position == 2 && stats.rows_deleted_equality == 1);
    CHECK_EQ_INT((int)pl.calls, 2); /* before the first file, after the one file */
    CHECK_EQ_INT((int)pl.last_done, 1);
    CHECK_EQ_INT((int)pl.total, 1);
    CHECK(pl.bytes_total > 0);

    static text one;
    o.limit = 1;
    CHECK_EQ_INT(icd_druid_read_plan(p, st, &o, collect, &one, &stats, &err), 0);
    CHECK_EQ_INT((int)lines(one.data), 1);
    o.limit = 0;

    static text refuse = {.fail_with = ICD_EIO};
    CHECK_EQ_INT(icd_druid_read_plan(p, st, &o, collect, &refuse, NULL, &err), ICD_EIO);
    CHECK_EQ_STR(err.message, "the disk is full");

    /* the split of the plan's one data file gives the same rows */
    char *split = NULL;
    CHECK_EQ_INT(icd_druid_plan_split(&split, p, 1, &err), ICD_EINVALID);
    CHECK_EQ_INT(icd_druid_plan_split(&split, p, 0, &err), 0);
    static text from_split;
    int rc = icd_druid_read_split(s, st, split, strlen(split), "split.json", &o, collect,
                                  &from_split, &stats, &err);
    if (rc) fprintf(stderr, "split: %s\n", err.message);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(from_split.data, rows.data);
    icd_string_free(split);
    CHECK_EQ_INT(icd_druid_read_split(s, st, "{}", 2, "bad.json", &o, collect, &one, NULL, &err),
                 ICD_EINVALID);
    CHECK_EQ_INT(
        icd_druid_read_split_file(s, st, "/nonexistent/split.json", &o, collect, &one, NULL, &err),
        ICD_ENOTFOUND);
    icd_druid_plan_free(p);
    icd_druid_spec_free(s);
    icd_storage_free(st);
}

static void test_stage(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    icd_error err;
    icd_druid_plan *p = NULL;
    CHECK_EQ_INT(icd_druid_plan_open(&p, s, st, NULL, &err), 0);
    size_t files = 0;
    uint64_t bytes = 0;
    CHECK_EQ_INT(icd_druid_plan_materialized(p, &files, &bytes, &err), 0);
    CHECK_EQ_INT((int)files, 1);
    CHECK(bytes > 0);
    char dir[] = "/tmp/icd_api_stage2_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    icd_druid_stage_options o;
    icd_druid_stage_options_init(&o);
    char *doc = NULL;
    icd_druid_stage_stats stats;
    CHECK_EQ_INT(icd_druid_stage(&doc, &stats, p, st, &o, &err), ICD_EINVALID); /* no `to` */
    o.to = dir;
    CHECK_EQ_INT(icd_druid_stage(&doc, &stats, p, st, &o, &err), 0);
    CHECK(strstr(doc, dir) != NULL && strstr(doc, ".parquet") != NULL);
    CHECK_EQ_INT((int)stats.staged_files, 1);
    CHECK_EQ_INT((int)stats.written_files, 1);
    CHECK_EQ_INT((int)stats.raw_files, 0);
    /* 5 rows, 2 removed by the position delete, 1 by the equality delete */
    CHECK(stats.read.rows_read == 5 && stats.read.rows_emitted == 2);
    CHECK(stats.read.rows_deleted_position == 2 && stats.read.rows_deleted_equality == 1);
    CHECK(stats.rows_written == 2);
    icd_string_free(doc);
    CHECK_EQ_INT(icd_druid_stage(&doc, &stats, p, st, &o, &err), 0);
    CHECK_EQ_INT((int)stats.written_files, 0);
    CHECK_EQ_INT((int)stats.skipped_files, 1);
    icd_string_free(doc);
    size_t removed = 9, kept = 9;
    CHECK_EQ_INT(icd_druid_stage_gc(p, st, dir, SNAP_APPEND, &removed, &kept, &err), 0);
    CHECK_EQ_INT((int)removed, 0); /* the current snapshot needs it */
    CHECK_EQ_INT((int)kept, 1);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
    icd_druid_plan_free(p);
    icd_druid_spec_free(s);
    icd_storage_free(st);
}

/* GET url with curl (installed by scripts/install-deps.sh): the body into out. */
static int http_get(const char *url, char *out, size_t n)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "curl -sf '%s'", url);
    FILE *fp = popen(cmd, "r");
    if (!fp) return -1;
    size_t len = fread(out, 1, n - 1, fp);
    out[len] = '\0';
    return pclose(fp);
}

typedef struct access_log {
    int requests, last_status;
} access_log;

static void on_access(void *ctx, const icd_druid_access *rec)
{
    access_log *l = ctx;
    l->requests++;
    l->last_status = rec->status;
}

static void test_server(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    icd_error err;
    icd_druid_plan *p = NULL;
    CHECK_EQ_INT(icd_druid_plan_open(&p, s, st, NULL, &err), 0);
    char dir[] = "/tmp/icd_api_serve_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    icd_druid_server_options o;
    icd_druid_server_options_init(&o);
    access_log log = {0};
    o.on_access = on_access;
    o.ctx = &log;
    icd_druid_server *srv = NULL;
    /* files mode needs somewhere to regenerate the files */
    CHECK_EQ_INT(icd_druid_server_start(&srv, p, st, &o, &err), ICD_EINVALID);
    CHECK(srv == NULL);
    o.cache_dir = dir;
    CHECK_EQ_INT(icd_druid_server_start(&srv, p, st, &o, &err), 0);
    CHECK_EQ_INT(icd_druid_server_serves_files(srv), 1);
    CHECK_EQ_INT((int)icd_druid_server_count(srv), 1);
    CHECK_EQ_INT((int)icd_druid_server_orc_files(srv), 0);
    const char *url = icd_druid_server_url(srv);
    CHECK(strncmp(url, "http://127.0.0.1:", 17) == 0);
    static char body[1 << 16];
    char u[300];
    snprintf(u, sizeof u, "%s/spec", url);
    CHECK_EQ_INT(http_get(u, body, sizeof body), 0);
    CHECK(strstr(body, "/files/demo.orders/3097981595695220017/") != NULL);
    CHECK_EQ_INT(icd_druid_server_drain(srv, 5), 0);
    icd_druid_server_stop(srv);
    CHECK(log.requests >= 1 && log.last_status == 200);

    /* rows mode: the split's rows as NDJSON */
    o.rows = 1;
    CHECK_EQ_INT(icd_druid_server_start(&srv, p, st, &o, &err), 0);
    CHECK_EQ_INT(icd_druid_server_serves_files(srv), 0);
    CHECK_EQ_INT((int)icd_druid_server_count(srv), 1);
    snprintf(u, sizeof u, "%s/splits/0", icd_druid_server_url(srv));
    CHECK_EQ_INT(http_get(u, body, sizeof body), 0);
    CHECK_EQ_INT((int)lines(body), 2);
    CHECK(strstr(body, "\"order_id\":1003") != NULL);
    icd_druid_server_stop(srv);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
    icd_druid_plan_free(p);
    icd_druid_spec_free(s);
    icd_storage_free(st);
}

typedef struct check_log {
    char lines[8][64];
    int n, failed;
} check_log;

static void on_check(void *ctx, const char *what, int ok, const char *detail)
{
    check_log *l = ctx;
    CHECK(detail != NULL);
    if (l->n < 8) snprintf(l->lines[l->n++], sizeof l->lines[0], "%s %s", ok ? "ok" : "FAIL", what);
    l->failed += !ok;
}

static void test_check(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    icd_error err;
    check_log log = {0};
    CHECK_EQ_INT(icd_druid_check(s, st, NULL, on_check, &log, &err), 0);
    CHECK_EQ_INT(log.n, 5);
    CHECK_EQ_STR(log.lines[0], "ok catalog");
    CHECK_EQ_STR(log.lines[1], "ok columns");
    CHECK_EQ_STR(log.lines[2], "ok plan");
    CHECK_EQ_STR(log.lines[3], "ok storage");
    CHECK_EQ_STR(log.lines[4], "ok locations");
    icd_storage_free(st);

    /* without the remap the table's files are not there: storage fails, the rest runs */
    icd_storage *bare = NULL;
    CHECK_EQ_INT(icd_storage_new(&bare, &err), 0);
    check_log fail = {0};
    CHECK_EQ_INT(icd_druid_check(s, bare, NULL, on_check, &fail, &err), ICD_EINVALID);
    CHECK(fail.failed >= 1);
    CHECK(err.code != 0);
    icd_storage_free(bare);
    icd_druid_spec_free(s);
}

static void test_diff(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    icd_error err;
    CHECK_EQ_INT(icd_druid_granularity_check("HOUR", &err), 0);
    CHECK_EQ_INT(icd_druid_granularity_check("{\"type\":\"period\",\"period\":\"P1D\"}", &err), 0);
    CHECK_EQ_INT(icd_druid_granularity_check("fortnight", &err), ICD_EINVALID);
    CHECK(strstr(err.message, "DAY") != NULL && strstr(err.message, "'fortnight'") != NULL);

    icd_druid_diff_options o;
    icd_druid_diff_options_init(&o);
    o.from_snapshot = SNAP_APPEND; /* B: the current snapshot */
    icd_druid_diff *d = NULL;
    CHECK_EQ_INT(icd_druid_diff_compute(&d, s, st, &o, &err), 0);
    CHECK(icd_druid_diff_from_snapshot(d) == SNAP_APPEND);
    CHECK(icd_druid_diff_to_snapshot(d) == SNAP_EQDEL);
    CHECK_EQ_INT((int)icd_druid_diff_count(d, ICD_DRUID_REPLACE), 1);
    CHECK_EQ_INT((int)icd_druid_diff_count(d, ICD_DRUID_APPEND), 0);
    const icd_druid_interval *iv = icd_druid_diff_interval(d, ICD_DRUID_REPLACE, 0);
    CHECK(iv && iv->start_ms == DAY_2024_06_01 && iv->end_ms == DAY_2024_06_01 + 86400000);
    CHECK(iv && iv->rows_removed == 3 && iv->rows_added == 0);
    CHECK(icd_druid_diff_interval(d, ICD_DRUID_REPLACE, 1) == NULL);
    CHECK(icd_druid_diff_rows_unparseable(d) == 0);
    static text j;
    CHECK_EQ_INT(icd_druid_diff_write(d, collect, &j, &err), 0);
    CHECK(strstr(j.data, "\"replaceIntervals\":[\"2024-06-01T00:00:00.000Z/2024-06-02") != NULL);
    icd_druid_diff_free(d);

    /* another granularity: the same change in hours */
    o.granularity = "hour";
    CHECK_EQ_INT(icd_druid_diff_compute(&d, s, st, &o, &err), 0);
    iv = icd_druid_diff_interval(d, ICD_DRUID_REPLACE, 0);
    CHECK(iv && iv->end_ms - iv->start_ms <= 3600000 * 24 && iv->start_ms >= DAY_2024_06_01);
    icd_druid_diff_free(d);

    /* A == B: nothing changed */
    o.granularity = NULL;
    o.has_to = 1;
    o.to_snapshot = SNAP_APPEND;
    CHECK_EQ_INT(icd_druid_diff_compute(&d, s, st, &o, &err), 0);
    CHECK_EQ_INT((int)icd_druid_diff_count(d, ICD_DRUID_REPLACE), 0);
    icd_druid_diff_free(d);

    o.has_to = 0;
    o.from_snapshot = 42; /* no such snapshot */
    CHECK(icd_druid_diff_compute(&d, s, st, &o, &err) != 0);
    CHECK(d == NULL);
    icd_druid_spec_free(s);
    icd_storage_free(st);
}

static void test_reingest(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    icd_error err;
    icd_druid_diff_options o;
    icd_druid_diff_options_init(&o);
    o.from_snapshot = SNAP_APPEND;
    icd_druid_reingest_options ro;
    icd_druid_reingest_options_init(&ro);
    icd_druid_reingest *r = NULL;
    /* files with deletes, nowhere to serve or stage them: refused before the diff */
    CHECK_EQ_INT(icd_druid_reingest_build(&r, s, st, &o, &ro, &err), ICD_EINVALID);
    CHECK(r == NULL);

    ro.serve_url = "http://icedruid:8000";
    CHECK_EQ_INT(icd_druid_reingest_build(&r, s, st, &o, &ro, &err), 0);
    CHECK_EQ_INT((int)icd_druid_reingest_count(r), 1);
    CHECK_EQ_INT((int)icd_druid_diff_count(icd_druid_reingest_diff(r), ICD_DRUID_REPLACE), 1);
    icd_druid_stage_info si;
    CHECK_EQ_INT(icd_druid_reingest_stage_info(r, &si), 0);
    static text msq;
    CHECK_EQ_INT(icd_druid_reingest_write(r, collect, &msq, &err), 0);
    CHECK(strstr(msq.data, "REPLACE INTO \"orders\"") != NULL);
    CHECK(strstr(msq.data, "TIMESTAMP '2024-06-01 00:00:00.000'") != NULL);
    CHECK(strstr(msq.data, "http://icedruid:8000/files/demo.orders/") != NULL);
    icd_druid_reingest_free(r);

    ro.kind = ICD_DRUID_NATIVE;
    CHECK_EQ_INT(icd_druid_reingest_build(&r, s, st, &o, &ro, &err), 0);
    static text native;
    CHECK_EQ_INT(icd_druid_reingest_write(r, collect, &native, &err), 0);
    CHECK(strstr(native.data, "\"index_parallel\"") != NULL);
    CHECK(strstr(native.data, "\"dropExisting\": true") != NULL ||
          strstr(native.data, "\"dropExisting\":true") != NULL);
    icd_druid_reingest_free(r);

    /* staged: the listed file is written once, then found */
    char dir[] = "/tmp/icd_api_stage_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    ro.kind = ICD_DRUID_MSQ;
    ro.serve_url = NULL;
    ro.stage_to = dir;
    CHECK_EQ_INT(icd_druid_reingest_build(&r, s, st, &o, &ro, &err), 0);
    CHECK_EQ_INT(icd_druid_reingest_stage_info(r, &si), 1);
    CHECK_EQ_INT((int)si.staged_files, 1);
    CHECK_EQ_INT((int)si.written_files, 1);
    CHECK(strstr(si.location, dir) != NULL);
    static text staged;
    CHECK_EQ_INT(icd_druid_reingest_write(r, collect, &staged, &err), 0);
    CHECK(strstr(staged.data, dir) != NULL); /* the statements read the staged file */
    icd_druid_reingest_free(r);
    CHECK_EQ_INT(icd_druid_reingest_build(&r, s, st, &o, &ro, &err), 0);
    CHECK_EQ_INT(icd_druid_reingest_stage_info(r, &si), 1);
    CHECK_EQ_INT((int)si.written_files, 0);
    CHECK_EQ_INT((int)si.skipped_files, 1);
    icd_druid_reingest_free(r);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);

    /* nothing changed: no statement */
    ro.stage_to = NULL;
    ro.serve_url = "http://icedruid:8000";
    o.has_to = 1;
    o.to_snapshot = SNAP_APPEND;
    o.from_snapshot = SNAP_APPEND;
    CHECK_EQ_INT(icd_druid_reingest_build(&r, s, st, &o, &ro, &err), 0);
    CHECK_EQ_INT((int)icd_druid_reingest_count(r), 0);
    icd_druid_reingest_free(r);
    icd_druid_spec_free(s);
    icd_storage_free(st);
}

static void test_sync(void)
{
    icd_storage *st = storage();
    icd_druid_spec *s = spec("day");
    icd_error err;
    char dir[] = "/tmp/icd_api_sync_XXXXXX", path[200];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/state.json", dir);
    icd_druid_state *state = NULL, *other = NULL;
    int busy = 7;
    CHECK_EQ_INT(icd_druid_state_open(&state, path, &busy, &err), 0);
    CHECK_EQ_INT(busy, 0);
    CHECK_EQ_INT(icd_druid_state_open(&other, path, &busy, &err), ICD_EIO); /* the lock */
    CHECK_EQ_INT(busy, 1);
    CHECK(other == NULL);
    int64_t snap = 0;
    CHECK_EQ_INT(icd_druid_state_lookup(state, "orders", &snap, NULL), 0);

    /* no entry: a full ingestion of the current snapshot */
    icd_druid_sync_options o;
    icd_druid_sync_options_init(&o);
    o.kind = ICD_DRUID_MSQ;
    o.serve_url = "http://icedruid:8000";
    icd_druid_sync *j = NULL;
    CHECK_EQ_INT(icd_druid_sync_prepare(&j, s, st, state, &o, &err), 0);
    icd_druid_sync_info info;
    icd_druid_sync_get_info(j, &info);
    CHECK_EQ_INT(info.status, ICD_DRUID_SYNC_FULL);
    CHECK_EQ_STR(info.data_source, "orders");
    CHECK_EQ_STR(info.table, "demo.orders");
    CHECK(info.to_snapshot == SNAP_EQDEL && !info.has_from);
    CHECK_EQ_INT((int)info.submissions, 1);
    CHECK(icd_druid_sync_diff(j) == NULL);
    static text full;
    CHECK_EQ_INT(icd_druid_sync_write(j, collect, &full, &err), 0);
    CHECK(strstr(full.data, "OVERWRITE ALL") != NULL);
    icd_druid_client c;
    icd_druid_client_init(&c);
    char *id = NULL;
    CHECK_EQ_INT(icd_druid_sync_submit(j, &c, 0, &id, &err), ICD_EINVALID); /* no URL */
    c.url = "http://127.0.0.1:9";
    CHECK_EQ_INT(icd_druid_sync_submit(j, &c, 1, &id, &err), ICD_EINVALID); /* no such item */
    icd_druid_sync_free(j);

    /* a baseline: A recorded, so the run re-ingests the day A -> C changed */
    CHECK(icd_druid_state_set_baseline(state, s, st, 42, &err) == ICD_ENOTFOUND);
    CHECK_EQ_INT(icd_druid_state_set_baseline(state, s, st, SNAP_APPEND, &err), 0);
    const char *table = NULL;
    CHECK_EQ_INT(icd_druid_state_lookup(state, "orders", &snap, &table), 1);
    CHECK(snap == SNAP_APPEND);
    CHECK_EQ_STR(table, "demo.orders");
    CHECK_EQ_INT(icd_druid_sync_prepare(&j, s, st, state, &o, &err), 0);
    icd_druid_sync_get_info(j, &info);
    CHECK_EQ_INT(info.status, ICD_DRUID_SYNC_CHANGES);
    CHECK(info.has_from && info.from_snapshot == SNAP_APPEND);
    CHECK_EQ_INT((int)info.submissions, 1);
    CHECK_EQ_INT((int)info.ranges, 1);
    const icd_druid_diff *d = icd_druid_sync_diff(j);
    CHECK(d && icd_druid_diff_count(d, ICD_DRUID_REPLACE) == 1);
    static text changes;
    CHECK_EQ_INT(icd_druid_sync_write(j, collect, &changes, &err), 0);
    CHECK(strstr(changes.data, "TIMESTAMP '2024-06-01 00:00:00.000'") != NULL);
    const char *ids[] = {"task-1"};
    CHECK_EQ_INT(icd_druid_sync_record(j, state, ids, 1, &err), 0);
    icd_druid_sync_free(j);

    /* recorded (and written: a new open sees it once the lock is free) */
    icd_druid_state_close(state);
    CHECK_EQ_INT(icd_druid_state_open(&state, path, &busy, &err), 0);
    CHECK_EQ_INT(icd_druid_state_lookup(state, "orders", &snap, NULL), 1);
    CHECK(snap == SNAP_EQDEL);
    CHECK_EQ_INT(icd_druid_sync_prepare(&j, s, st, state, &o, &err), 0);
    icd_druid_sync_get_info(j, &info);
    CHECK_EQ_INT(info.status, ICD_DRUID_SYNC_UP_TO_DATE);
    CHECK_EQ_INT((int)info.submissions, 0);
    icd_druid_sync_free(j);

    /* serve_later: the statements wait for the URL the caller serves at */
    CHECK_EQ_INT(icd_druid_state_set_baseline(state, s, st, SNAP_APPEND, &err), 0);
    o.serve_url = NULL;
    o.serve_later = 1;
    CHECK_EQ_INT(icd_druid_sync_prepare(&j, s, st, state, &o, &err), 0);
    icd_druid_sync_get_info(j, &info);
    CHECK_EQ_INT(info.needs_server, 1);
    CHECK_EQ_INT((int)info.submissions, 0);
    CHECK_EQ_INT(icd_druid_sync_emit(j, "http://127.0.0.1:8123", &err), 0);
    icd_druid_sync_get_info(j, &info);
    CHECK_EQ_INT((int)info.submissions, 1);
    static text later;
    CHECK_EQ_INT(icd_druid_sync_write(j, collect, &later, &err), 0);
    CHECK(strstr(later.data, "http://127.0.0.1:8123/files/") != NULL);
    icd_druid_sync_free(j);

    o.context_json = "[1]";
    CHECK_EQ_INT(icd_druid_sync_prepare(&j, s, st, state, &o, &err), ICD_EINVALID);
    icd_druid_state_close(state);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
    icd_druid_spec_free(s);
    icd_storage_free(st);
}

TEST_MAIN(TEST(test_spec), TEST(test_plan), TEST(test_rewrite), TEST(test_read), TEST(test_stage),
          TEST(test_server), TEST(test_check), TEST(test_diff), TEST(test_reingest),
          TEST(test_sync))
