/*
 * The public API (include/icedruid/) used as a client would, on the bundled example table
 * examples/warehouse/demo/orders (v2: 5 rows appended, then a position delete of 2 rows,
 * then an equality delete of 1): only public headers are included here.
 */
#include <stdlib.h>
#include <string.h>

#include <icedruid/icedruid.h>

#include "test.h"

#define SNAP_APPEND 368824057566305891LL
#define SNAP_POSDEL 8995662997182064039LL
#define SNAP_EQDEL 3097981595695220017LL

static char table_dir[4200], warehouse[4096];

static void paths(void)
{
    const char *src = getenv("ICD_SOURCE_DIR");
    snprintf(warehouse, sizeof warehouse, "%s/examples/warehouse", src ? src : ".");
    snprintf(table_dir, sizeof table_dir, "%s/demo/orders", warehouse);
}

static icd_storage *storage(void)
{
    icd_storage *s = NULL;
    icd_error err;
    paths();
    CHECK_EQ_INT(icd_storage_new(&s, &err), 0);
    CHECK_EQ_INT(icd_storage_add_remap(s, "/tmp/icedruid-example/warehouse", warehouse, &err), 0);
    return s;
}

typedef struct collected {
    size_t lines, calls;
    char first[512];
} collected;

static int collect(void *ctx, const char *ndjson, size_t len, icd_error *err)
{
    (void)err;
    collected *c = ctx;
    c->calls++;
    CHECK(len > 0 && ndjson[len - 1] == '\n');
    for (size_t i = 0; i < len; i++) {
        if (ndjson[i] != '\n') continue;
        if (c->lines++ == 0) {
            size_t n = i < sizeof c->first - 1 ? i : sizeof c->first - 1;
            memcpy(c->first, ndjson, n);
            c->first[n] = '\0';
        }
    }
    return 0;
}

static uint64_t count_at(icd_table *t, icd_snapshot_kind kind, int64_t id, int threads)
{
    icd_error err;
    icd_scan_options o;
    icd_scan_options_init(&o);
    o.snapshot = kind;
    o.snapshot_id = id;
    icd_scan *scan = NULL;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), 0);
    if (!scan) return UINT64_MAX;
    CHECK_EQ_INT(icd_scan_run(scan, threads, NULL, NULL, &err), 0);
    icd_scan_stats st;
    icd_scan_get_stats(scan, &st);
    CHECK_EQ_INT(st.rows_read - st.rows_deleted_position - st.rows_deleted_equality,
                 st.rows_emitted);
    icd_scan_free(scan);
    return st.rows_emitted;
}

static void test_counts_per_snapshot(void)
{
    icd_storage *s = storage();
    icd_table *t = NULL;
    icd_error err;
    CHECK_EQ_INT(icd_table_open(&t, s, table_dir, &err), 0);
    CHECK_EQ_INT(icd_table_format_version(t), 2);
    CHECK(strstr(icd_table_metadata_location(t), "/metadata/v4.metadata.json") != NULL);
    CHECK_EQ_STR(icd_table_location(t), "/tmp/icedruid-example/warehouse/demo/orders");
    int64_t cur = 0;
    CHECK_EQ_INT(icd_table_current_snapshot(t, &cur, &err), 0);
    CHECK_EQ_INT(cur, SNAP_EQDEL);
    CHECK_EQ_INT(count_at(t, ICD_SNAPSHOT_ID, SNAP_APPEND, 1), 5);
    CHECK_EQ_INT(count_at(t, ICD_SNAPSHOT_ID, SNAP_POSDEL, 1), 3);
    CHECK_EQ_INT(count_at(t, ICD_SNAPSHOT_ID, SNAP_EQDEL, 1), 2);
    CHECK_EQ_INT(count_at(t, ICD_SNAPSHOT_CURRENT, 0, 2), 2);
    icd_table_free(t);
    icd_storage_free(s);
}

static void test_rows_and_tasks(void)
{
    icd_storage *s = storage();
    icd_table *t = NULL;
    icd_scan *scan = NULL;
    icd_error err;
    CHECK_EQ_INT(icd_table_open(&t, s, table_dir, &err), 0);
    const char *cols[] = {"order_id", "customer"};
    icd_scan_options o;
    icd_scan_options_init(&o);
    o.columns = cols;
    o.ncolumns = 2;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), 0);
    CHECK_EQ_INT(icd_scan_task_count(scan), 1);
    icd_task_info ti;
    CHECK_EQ_INT(icd_scan_next_task(scan, &ti, &err), 0);
    CHECK_EQ_INT(ti.index, 0);
    CHECK_EQ_STR(ti.file_format, "PARQUET");
    CHECK_EQ_INT(ti.record_count, 5);
    CHECK_EQ_INT(ti.position_deletes, 1);
    CHECK_EQ_INT(ti.equality_deletes, 1);
    CHECK_EQ_INT(ti.deletion_vectors, 0);
    CHECK(strstr(ti.data_file, "/demo/orders/data/") != NULL);
    CHECK_EQ_INT(icd_scan_next_task(scan, &ti, &err), ICD_ITEROVER);
    CHECK_EQ_INT(icd_scan_next_task(scan, &ti, &err), ICD_ITEROVER);
    collected c = {0};
    CHECK_EQ_INT(icd_scan_read_task(scan, 0, collect, &c, &err), 0);
    CHECK_EQ_INT(c.lines, 2);
    CHECK_EQ_INT(c.calls, 1);
    CHECK_EQ_STR(c.first, "{\"order_id\":1001,\"customer\":\"alice\"}");
    int64_t snap = 0;
    CHECK_EQ_INT(icd_scan_snapshot(scan, &snap, &err), 0);
    CHECK_EQ_INT(snap, SNAP_EQDEL);
    CHECK_EQ_INT(icd_scan_read_task(scan, 1, collect, &c, &err), ICD_EINVALID);
    icd_scan_free(scan);
    icd_table_free(t);
    icd_storage_free(s);
}

static int refuse(void *ctx, const char *ndjson, size_t len, icd_error *err)
{
    (void)ctx, (void)ndjson, (void)len, (void)err;
    return 7; /* a positive code: stop without saying why */
}

static void test_errors(void)
{
    icd_storage *s = storage();
    icd_table *t = NULL;
    icd_scan *scan = NULL;
    icd_error err;
    icd_error_clear(&err);
    CHECK_EQ_INT(icd_table_open(&t, s, "/nonexistent/table/dir", &err), ICD_ENOTFOUND);
    CHECK(t == NULL);
    CHECK(err.message[0] != '\0');
    CHECK_EQ_INT(icd_storage_add_remap(s, "", "x", &err), ICD_EINVALID);
    CHECK_EQ_INT(icd_table_open(&t, s, table_dir, &err), 0);
    icd_scan_options o;
    icd_scan_options_init(&o);
    o.snapshot = ICD_SNAPSHOT_ID;
    o.snapshot_id = 42;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), ICD_ENOTFOUND);
    CHECK(scan == NULL);
    icd_scan_options_init(&o);
    o.version = 99;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), ICD_EINVALID);
    icd_scan_options_init(&o);
    o.snapshot = ICD_SNAPSHOT_REF;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), ICD_EINVALID);
    o.ref = "no-such-branch";
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), ICD_ENOTFOUND);
    const char *bad[] = {"no_such_column"};
    icd_scan_options_init(&o);
    o.columns = bad;
    o.ncolumns = 1;
    CHECK(icd_scan_open(&scan, t, &o, &err) < 0);
    CHECK(scan == NULL);
    /* a callback that stops the read */
    icd_scan_options_init(&o);
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), 0);
    icd_error_clear(&err);
    CHECK_EQ_INT(icd_scan_run(scan, 2, refuse, NULL, &err), ICD_ECANCELED);
    CHECK(strstr(err.message, "callback") != NULL);
    icd_scan_free(scan);
    icd_table_free(t);
    /* catalog: a local warehouse; errors name the table as Druid does */
    char catalog[4200];
    snprintf(catalog, sizeof catalog, "{\"type\":\"local\",\"warehousePath\":\"%s\"}", warehouse);
    CHECK_EQ_INT(icd_table_open_catalog(&t, s, catalog, "demo", "orders", &err), 0);
    if (t) CHECK_EQ_INT(count_at(t, ICD_SNAPSHOT_CURRENT, 0, 1), 2);
    icd_table_free(t);
    t = NULL;
    CHECK(icd_table_open_catalog(&t, s, catalog, "demo", "nope", &err) < 0);
    CHECK(strstr(err.message, "demo.nope") != NULL);
    CHECK_EQ_INT(icd_table_open_catalog(&t, s, "{not json", "demo", "orders", &err), ICD_EINVALID);
    icd_storage_free(s);
    paths();
    char line[4096];
    err.code = ICD_ENOTFOUND;
    err.offset = 12;
    snprintf(err.file, sizeof err.file, "f.avro");
    snprintf(err.message, sizeof err.message, "gone");
    icd_error_format(&err, line, sizeof line);
    CHECK(strstr(line, "f.avro") && strstr(line, "12") && strstr(line, "gone"));
    CHECK_EQ_STR(icd_code_name(ICD_ITEROVER), "end of iteration");
    CHECK(strcmp(icd_version(), ICEDRUID_VERSION) == 0);
}

/* The progress callback of icd_scan_run, the plan's and the storage's counters, column
 * names ignoring case (version 2 options), and version 1 options still accepted. */
typedef struct progress_seen {
    size_t calls;
    int64_t bytes;
    uint64_t last_rows;
} progress_seen;

static void on_progress(void *ctx, const icd_task_info *task, const icd_scan_stats *st)
{
    progress_seen *p = ctx;
    p->calls++;
    p->bytes += task->file_size;
    CHECK(st->rows_emitted >= p->last_rows);
    p->last_rows = st->rows_emitted;
}

static void test_progress_and_counters(void)
{
    icd_storage *s = storage();
    icd_table *t = NULL;
    icd_scan *scan = NULL;
    icd_error err;
    CHECK_EQ_INT(icd_table_open(&t, s, table_dir, &err), 0);
    const char *cols[] = {"ORDER_ID", "Customer"};
    icd_scan_options o;
    icd_scan_options_init(&o);
    o.columns = cols;
    o.ncolumns = 2;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), ICD_ENOTFOUND); /* case matters */
    o.case_insensitive = 1;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), 0);
    icd_scan_plan_info pi;
    icd_scan_get_plan_info(scan, &pi);
    CHECK_EQ_INT(pi.data_files, 1);
    CHECK(pi.data_bytes > 0);
    CHECK_EQ_INT(pi.delete_files, 2);
    CHECK_EQ_INT(pi.position_delete_files, 1);
    CHECK_EQ_INT(pi.equality_delete_files, 1);
    CHECK_EQ_INT(pi.deletion_vectors, 0);
    progress_seen p = {0};
    icd_scan_set_progress(scan, on_progress, &p);
    collected c = {0};
    CHECK_EQ_INT(icd_scan_run(scan, 2, collect, &c, &err), 0);
    CHECK_EQ_INT(p.calls, 1);
    CHECK_EQ_INT((uint64_t)p.bytes, pi.data_bytes);
    CHECK_EQ_INT(p.last_rows, 2);
    CHECK_EQ_INT(c.lines, 2);
    CHECK(strstr(c.first, "\"order_id\"") && strstr(c.first, "\"customer\""));
    icd_scan_stats st;
    icd_scan_get_stats(scan, &st);
    CHECK_EQ_INT(st.row_groups_read, 1);
    CHECK_EQ_INT(st.rows_deleted_dv, 0);
    icd_storage_stats io;
    icd_storage_get_stats(s, &io);
    CHECK(io.local_reads > 0 && io.local_bytes > 0);
    CHECK_EQ_INT(io.remote_requests, 0);
    icd_scan_free(scan);
    /* version 1 options: the fields after `threads` are not read */
    icd_scan_options v1;
    icd_scan_options_init(&v1);
    v1.version = 1;
    v1.case_insensitive = 12345;
    v1.columns = cols;
    v1.ncolumns = 2;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &v1, &err), ICD_ENOTFOUND);
    v1.version = 3;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &v1, &err), ICD_EINVALID);
    icd_table_free(t);
    icd_storage_free(s);
}

TEST_MAIN(TEST(test_counts_per_snapshot), TEST(test_rows_and_tasks), TEST(test_errors),
          TEST(test_progress_and_counters))
