/*
 * Typed reads through the public API (icd_batch, include/icedruid/scan.h) on the bundled
 * example table examples/warehouse/demo/orders (v2: 5 rows appended, then a position
 * delete of 2 rows, then an equality delete of 1). Only public headers are included.
 *
 * The rows of the append snapshot are the reference: every row surviving a later
 * snapshot must carry the values of the appended row at the same file position, and the
 * positions left out must be exactly the deleted ones.
 */
#include <stdlib.h>
#include <string.h>

#include <icedruid/icedruid.h>

#include "test.h"

#define SNAP_APPEND 368824057566305891LL
#define SNAP_POSDEL 8995662997182064039LL

enum { ORDER_ID, EVENT_TS, CUSTOMER, PRODUCT, AMOUNT, QUANTITY, NCOLS };

static char table_dir[4200], warehouse[4096];

static icd_storage *storage(void)
{
    const char *src = getenv("ICD_SOURCE_DIR");
    snprintf(warehouse, sizeof warehouse, "%s/examples/warehouse", src ? src : ".");
    snprintf(table_dir, sizeof table_dir, "%s/demo/orders", warehouse);
    icd_storage *s = NULL;
    icd_error err;
    CHECK_EQ_INT(icd_storage_new(&s, &err), 0);
    CHECK_EQ_INT(icd_storage_add_remap(s, "/tmp/icedruid-example/warehouse", warehouse, &err), 0);
    return s;
}

/* One row as read: its position and values (strings copied out of the batch). */
typedef struct row {
    int64_t pos;
    icd_value v[NCOLS];
    char text[NCOLS][64];
} row;

typedef struct rows {
    row r[16];
    size_t n, batches;
    size_t task;
} rows;

static int collect(void *ctx, const icd_batch *b, icd_error *err)
{
    (void)err;
    rows *rs = ctx;
    rs->batches++;
    rs->task = icd_batch_task(b);
    CHECK_EQ_INT(icd_batch_column_count(b), NCOLS);
    CHECK(strstr(icd_batch_data_file(b), "/demo/orders/data/") != NULL);
    CHECK(icd_batch_row_count(b) > 0);
    for (size_t i = 0; i < icd_batch_row_count(b) && rs->n < 16; i++) {
        row *r = &rs->r[rs->n++];
        r->pos = icd_batch_position(b, i);
        for (size_t c = 0; c < NCOLS; c++) {
            icd_batch_get(b, i, c, &r->v[c]);
            if (r->v[c].kind == ICD_VALUE_BYTES && r->v[c].n < 64) {
                memcpy(r->text[c], r->v[c].p, r->v[c].n);
                r->text[c][r->v[c].n] = '\0';
                r->v[c].p = r->text[c];
            }
        }
    }
    /* outside the batch: a null value, position -1 */
    icd_value v;
    icd_batch_get(b, icd_batch_row_count(b), 0, &v);
    CHECK_EQ_INT(v.kind, ICD_VALUE_NULL);
    icd_batch_get(b, 0, NCOLS, &v);
    CHECK_EQ_INT(v.kind, ICD_VALUE_NULL);
    CHECK_EQ_INT(icd_batch_position(b, icd_batch_row_count(b)), -1);
    return 0;
}

static void read_at(icd_table *t, int64_t snapshot, int threads, rows *out)
{
    icd_error err;
    icd_scan_options o;
    icd_scan_options_init(&o);
    if (snapshot) {
        o.snapshot = ICD_SNAPSHOT_ID;
        o.snapshot_id = snapshot;
    }
    icd_scan *scan = NULL;
    memset(out, 0, sizeof *out);
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), 0);
    if (!scan) return;
    if (threads)
        CHECK_EQ_INT(icd_scan_run_batches(scan, threads, collect, out, &err), 0);
    else
        CHECK_EQ_INT(icd_scan_read_task_batches(scan, 0, collect, out, &err), 0);
    icd_scan_stats st;
    icd_scan_get_stats(scan, &st);
    CHECK_EQ_INT(st.rows_emitted, out->n);
    icd_scan_free(scan);
}

static void test_columns(void)
{
    icd_storage *s = storage();
    icd_table *t = NULL;
    icd_scan *scan = NULL;
    icd_error err;
    CHECK_EQ_INT(icd_table_open(&t, s, table_dir, &err), 0);
    CHECK_EQ_INT(icd_scan_open(&scan, t, NULL, &err), 0);
    CHECK_EQ_INT(icd_scan_column_count(scan), NCOLS);
    static const struct {
        const char *name;
        icd_type_id type;
    } want[NCOLS] = {{"order_id", ICD_TYPE_LONG},   {"event_ts", ICD_TYPE_TIMESTAMPTZ},
                     {"customer", ICD_TYPE_STRING}, {"product", ICD_TYPE_STRING},
                     {"amount", ICD_TYPE_DECIMAL},  {"quantity", ICD_TYPE_INT}};
    for (size_t i = 0; i < NCOLS; i++) {
        icd_column_info ci;
        CHECK_EQ_INT(icd_scan_column(scan, i, &ci, &err), 0);
        CHECK_EQ_STR(ci.name, want[i].name);
        CHECK_EQ_INT(ci.type, want[i].type);
        CHECK(ci.field_id > 0);
    }
    icd_column_info ci;
    CHECK_EQ_INT(icd_scan_column(scan, NCOLS, &ci, &err), ICD_EINVALID);
    CHECK(strstr(err.message, "column 6") != NULL);
    CHECK_EQ_INT(icd_scan_column(scan, 4, &ci, &err), 0);
    CHECK(ci.precision > 0 && ci.precision <= 18);
    CHECK_EQ_INT(ci.scale, 2);
    icd_scan_free(scan);
    /* a projection: the batch holds the chosen columns, in the schema's order */
    const char *cols[] = {"quantity", "customer"};
    icd_scan_options o;
    icd_scan_options_init(&o);
    o.columns = cols;
    o.ncolumns = 2;
    CHECK_EQ_INT(icd_scan_open(&scan, t, &o, &err), 0);
    CHECK_EQ_INT(icd_scan_column_count(scan), 2);
    CHECK_EQ_INT(icd_scan_column(scan, 0, &ci, &err), 0);
    CHECK_EQ_STR(ci.name, "customer");
    icd_scan_free(scan);
    icd_table_free(t);
    icd_storage_free(s);
}

static void test_values_and_positions(void)
{
    icd_storage *s = storage();
    icd_table *t = NULL;
    icd_error err;
    CHECK_EQ_INT(icd_table_open(&t, s, table_dir, &err), 0);
    static rows all, posdel, cur, cur2;
    read_at(t, SNAP_APPEND, 0, &all);
    CHECK_EQ_INT(all.n, 5);
    CHECK_EQ_INT(all.batches, 1);
    for (size_t i = 0; i < all.n; i++) {
        CHECK_EQ_INT(all.r[i].pos, (int64_t)i);
        CHECK_EQ_INT(all.r[i].v[ORDER_ID].kind, ICD_VALUE_INT);
        CHECK_EQ_INT(all.r[i].v[ORDER_ID].i, 1001 + (int64_t)i);
        CHECK_EQ_INT(all.r[i].v[EVENT_TS].kind, ICD_VALUE_INT);
        CHECK_EQ_INT(all.r[i].v[CUSTOMER].kind, ICD_VALUE_BYTES);
        CHECK_EQ_INT(all.r[i].v[AMOUNT].kind, ICD_VALUE_INT);
        CHECK_EQ_INT(all.r[i].v[QUANTITY].kind, ICD_VALUE_INT);
    }
    /* the first row, worked out from `icedruid scan`'s line:
     * {"order_id":1001,"event_ts":"2024-06-01T09:15:00.000000+00:00","customer":"alice",
     *  "product":"widget","amount":"19.99","quantity":2} */
    const row *r0 = &all.r[0];
    CHECK_EQ_INT(r0->v[EVENT_TS].i, 1717233300000000LL); /* 2024-06-01T09:15:00Z in micros */
    CHECK_EQ_STR(r0->text[CUSTOMER], "alice");
    CHECK_EQ_INT(r0->v[CUSTOMER].n, 5);
    CHECK_EQ_STR(r0->text[PRODUCT], "widget");
    CHECK_EQ_INT(r0->v[AMOUNT].i, 1999);
    CHECK_EQ_INT(r0->v[QUANTITY].i, 2);
    /* later snapshots: the survivors keep their positions and values */
    read_at(t, SNAP_POSDEL, 0, &posdel);
    read_at(t, 0, 0, &cur);
    read_at(t, 0, 2, &cur2);
    CHECK_EQ_INT(posdel.n, 3);
    CHECK_EQ_INT(cur.n, 2);
    CHECK_EQ_INT(cur2.n, 2);
    const rows *later[] = {&posdel, &cur, &cur2};
    for (size_t k = 0; k < 3; k++) {
        int64_t prev = -1;
        for (size_t i = 0; i < later[k]->n; i++) {
            const row *r = &later[k]->r[i];
            CHECK(r->pos > prev && r->pos < 5);
            prev = r->pos;
            if (r->pos < 0 || r->pos >= 5) continue;
            const row *a = &all.r[r->pos];
            CHECK_EQ_INT(r->v[ORDER_ID].i, a->v[ORDER_ID].i);
            CHECK_EQ_INT(r->v[EVENT_TS].i, a->v[EVENT_TS].i);
            CHECK_EQ_STR(r->text[CUSTOMER], a->text[CUSTOMER]);
            CHECK_EQ_INT(r->v[AMOUNT].i, a->v[AMOUNT].i);
        }
    }
    /* the current snapshot keeps orders 1001 and 1003 (as `icedruid scan` prints) */
    CHECK_EQ_INT(cur.r[0].v[ORDER_ID].i, 1001);
    CHECK_EQ_INT(cur.r[1].v[ORDER_ID].i, 1003);
    CHECK_EQ_INT(cur.r[1].v[AMOUNT].i, 3998);
    icd_table_free(t);
    icd_storage_free(s);
}

static int stop(void *ctx, const icd_batch *b, icd_error *err)
{
    (void)b;
    int *code = ctx;
    if (*code < 0) {
        err->code = *code;
        snprintf(err->message, sizeof err->message, "enough rows");
    }
    return *code;
}

static void test_errors(void)
{
    icd_storage *s = storage();
    icd_table *t = NULL;
    icd_scan *scan = NULL;
    icd_error err;
    CHECK_EQ_INT(icd_table_open(&t, s, table_dir, &err), 0);
    CHECK_EQ_INT(icd_scan_open(&scan, t, NULL, &err), 0);
    int code = 3; /* a positive return: stopped without a reason */
    CHECK_EQ_INT(icd_scan_read_task_batches(scan, 0, stop, &code, &err), ICD_ECANCELED);
    CHECK(strstr(err.message, "batch callback") != NULL);
    code = ICD_EINVALID; /* the callback's own error is passed on */
    CHECK_EQ_INT(icd_scan_run_batches(scan, 2, stop, &code, &err), ICD_EINVALID);
    CHECK_EQ_STR(err.message, "enough rows");
    CHECK_EQ_INT(icd_scan_read_task_batches(scan, 1, stop, &code, &err), ICD_EINVALID);
    CHECK(strstr(err.message, "task 1") != NULL);
    CHECK_EQ_INT(icd_scan_read_task_batches(scan, 0, NULL, NULL, &err), ICD_EINVALID);
    CHECK_EQ_INT(icd_scan_run_batches(scan, 1, NULL, NULL, &err), ICD_EINVALID);
    icd_scan_free(scan);
    icd_table_free(t);
    icd_storage_free(s);
}

TEST_MAIN(TEST(test_columns), TEST(test_values_and_positions), TEST(test_errors))
