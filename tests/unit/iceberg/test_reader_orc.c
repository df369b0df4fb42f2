/*
 * Unit tests of the ORC path of the merge-on-read reader (src/iceberg/data_orc.c) that
 * `scan` cannot reach: stripe pruning with ice_scan_reader_set_filter. Reads the corpus
 * table hadoop_catalog/iceberg_partitioned_orc (20 ORC files of one stripe each, columns
 * id / user / action) through the library: first without a filter, recording every row's
 * file and values; then with filters, where the rows read must be exactly those of the
 * files whose real value range (computed here from the unfiltered rows, not from any
 * statistics) can satisfy the filter (v2.metadata.json is the current version; skipped
 * without $ICD_SHARED). Then a generated table (tests/tools/make_orc_prune_table.py: one
 * ORC file, 4 stripes of 25 rows, disjoint increasing ranges) prunes by long, timestamptz,
 * date, decimal and string statistics, with counts known by construction.
 */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "iceberg/expr.h"
#include "iceberg/reader.h"
#include "iceberg/scan_plan.h"
#include "io/fileio.h"
#include "test.h"

#define TABLE                                                                                      \
    "corpus/impala/hadoop_catalog/iceberg_partitioned_orc/functional_parquet/"                     \
    "iceberg_partitioned_orc"
#define LOCATION                                                                                   \
    "/test-warehouse/iceberg_test/hadoop_catalog/iceberg_partitioned_orc/"                         \
    "functional_parquet/iceberg_partitioned_orc"
#define MAXROWS 64

typedef struct row {
    char file[512];
    long long id;
    char user[32];
} row;

typedef struct collect {
    row rows[MAXROWS];
    size_t n;
    int field; /* 1 id, 2 user, 0 other */
} collect;

static void c_begin(void *ctx, const char *file, int64_t pos)
{
    collect *c = ctx;
    (void)pos;
    if (c->n < MAXROWS) {
        snprintf(c->rows[c->n].file, sizeof c->rows[c->n].file, "%s", file);
        c->rows[c->n].id = -1;
        c->rows[c->n].user[0] = 0;
    }
}
static void c_field(void *ctx, const char *name, size_t n)
{
    collect *c = ctx;
    c->field = (n == 2 && !memcmp(name, "id", 2))     ? 1
               : (n == 4 && !memcmp(name, "user", 4)) ? 2
                                                      : 0;
}
static void c_i64(void *ctx, int64_t v)
{
    collect *c = ctx;
    if (c->field == 1 && c->n < MAXROWS) c->rows[c->n].id = v;
}
static void c_string(void *ctx, const char *s, size_t n)
{
    collect *c = ctx;
    if (c->field == 2 && c->n < MAXROWS)
        snprintf(c->rows[c->n].user, sizeof c->rows[c->n].user, "%.*s", (int)n, s);
}
static int c_end(void *ctx, icd_error *err)
{
    collect *c = ctx;
    (void)err;
    c->n++;
    return 0;
}
static void n_void(void *ctx)
{
    (void)ctx;
}
static void n_bool(void *ctx, bool v)
{
    (void)ctx;
    (void)v;
}
static void n_f32(void *ctx, float v)
{
    (void)ctx;
    (void)v;
}
static void n_f64(void *ctx, double v)
{
    (void)ctx;
    (void)v;
}
static void n_dec(void *ctx, int64_t v, int s)
{
    (void)ctx;
    (void)v;
    (void)s;
}
static void n_decbe(void *ctx, const uint8_t *p, size_t n, int s)
{
    (void)ctx;
    (void)p;
    (void)n;
    (void)s;
}
static void n_date(void *ctx, int32_t v)
{
    (void)ctx;
    (void)v;
}
static void n_time(void *ctx, int64_t v)
{
    (void)ctx;
    (void)v;
}
static void n_ts(void *ctx, int64_t v, int d, bool u)
{
    (void)ctx;
    (void)v;
    (void)d;
    (void)u;
}
static void n_uuid(void *ctx, const uint8_t v[16])
{
    (void)ctx;
    (void)v;
}
static void n_bin(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    (void)p;
    (void)n;
}
static void n_raw(void *ctx, const char *p, size_t n)
{
    (void)ctx;
    (void)p;
    (void)n;
}

static ice_row_sink make_sink(collect *c)
{
    ice_row_sink s = {.ctx = c,
                      .begin_row = c_begin,
                      .field = c_field,
                      .null_value = n_void,
                      .boolean = n_bool,
                      .i64 = c_i64,
                      .f32 = n_f32,
                      .f64 = n_f64,
                      .decimal_i64 = n_dec,
                      .decimal_be = n_decbe,
                      .date = n_date,
                      .time = n_time,
                      .timestamp = n_ts,
                      .string = c_string,
                      .uuid = n_uuid,
                      .binary = n_bin,
                      .struct_begin = n_void,
                      .struct_end = n_void,
                      .list_begin = n_void,
                      .list_end = n_void,
                      .map_begin = n_void,
                      .map_end = n_void,
                      .raw_json = n_raw,
                      .end_row = c_end};
    return s;
}

typedef struct fixture {
    icd_fileio *io;
    ice_metadata *md;
    ice_scan_plan *plan;
    icd_error err;
} fixture;

static bool open_table(fixture *f)
{
    const char *shared = getenv("ICD_SHARED");
    if (!shared) return false;
    char dir[1024], md[1200];
    snprintf(dir, sizeof dir, "%s/" TABLE, shared);
    snprintf(md, sizeof md, "%s/metadata/v2.metadata.json", dir);
    FILE *probe = fopen(md, "rb");
    if (!probe) return false;
    fclose(probe);
    icd_error_clear(&f->err);
    CHECK_EQ_INT(icd_fileio_new(&f->io, &f->err), 0);
    CHECK_EQ_INT(icd_fileio_add_remap(f->io, LOCATION, dir, &f->err), 0);
    CHECK_EQ_INT(ice_metadata_load(f->io, md, &f->md, &f->err), 0);
    ice_scan_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.case_sensitive = true;
    CHECK_EQ_INT(ice_scan_plan_build(f->io, f->md, &opts, &f->plan, &f->err), 0);
    return f->plan != NULL;
}

static void close_table(fixture *f)
{
    ice_scan_plan_free(f->plan);
    ice_metadata_free(f->md);
    icd_fileio_free(f->io);
}

/* Reads every task with an optional bound filter; returns the rows seen. */
static void read_all(fixture *f, const ice_bound_expr *filter, collect *c)
{
    memset(c, 0, sizeof *c);
    ice_scan_reader *r;
    CHECK_EQ_INT(
        ice_scan_reader_new(f->io, f->md, ice_scan_plan_schema(f->plan), NULL, 0, &r, &f->err), 0);
    ice_scan_reader_set_filter(r, filter);
    ice_row_sink s = make_sink(c);
    ice_read_stats st;
    memset(&st, 0, sizeof st);
    for (size_t i = 0; i < ice_scan_plan_task_count(f->plan); i++)
        CHECK_EQ_INT(ice_scan_reader_read_task(r, ice_scan_plan_task(f->plan, i), &s, &st, &f->err),
                     0);
    CHECK_EQ_INT(st.rows_read, c->n);
    ice_scan_reader_free(r);
}

/* A file "may match" when its real values (all rows seen unfiltered) can satisfy the
 * predicate by range: the truth a stripe's min/max statistics must reproduce. */
typedef bool (*range_pred)(long long idmin, long long idmax, const char *umin, const char *umax);

static size_t expected_rows(const collect *all, range_pred p)
{
    size_t n = 0;
    for (size_t i = 0; i < all->n; i++) {
        long long lo = all->rows[i].id, hi = lo;
        const char *ulo = all->rows[i].user, *uhi = ulo;
        for (size_t k = 0; k < all->n; k++) {
            if (strcmp(all->rows[k].file, all->rows[i].file)) continue;
            if (all->rows[k].id < lo) lo = all->rows[k].id;
            if (all->rows[k].id > hi) hi = all->rows[k].id;
            if (strcmp(all->rows[k].user, ulo) < 0) ulo = all->rows[k].user;
            if (strcmp(all->rows[k].user, uhi) > 0) uhi = all->rows[k].user;
        }
        if (p(lo, hi, ulo, uhi)) n++;
    }
    return n;
}

static bool p_id5(long long lo, long long hi, const char *a, const char *b)
{
    (void)a;
    (void)b;
    return lo <= 5 && 5 <= hi;
}
static bool p_none(long long lo, long long hi, const char *a, const char *b)
{
    (void)lo;
    (void)hi;
    (void)a;
    (void)b;
    return false;
}
static bool p_lisa(long long lo, long long hi, const char *a, const char *b)
{
    (void)lo;
    (void)hi;
    return strcmp(a, "Lisa") <= 0 && strcmp("Lisa", b) <= 0;
}
static bool p_id_ge15_or_alan(long long lo, long long hi, const char *a, const char *b)
{
    (void)lo;
    return hi >= 15 || (strcmp(a, "Alan") <= 0 && strcmp("Alan", b) <= 0);
}
static bool p_all(long long lo, long long hi, const char *a, const char *b)
{
    (void)lo;
    (void)hi;
    (void)a;
    (void)b;
    return true;
}

static void check_filter(fixture *f, const collect *all, const ice_expr *e, range_pred p,
                         size_t min_expected)
{
    icd_arena a = ICD_ARENA_INIT;
    ice_bound_expr *b = NULL;
    CHECK_EQ_INT(ice_expr_bind(e, ice_scan_plan_schema(f->plan), true, &a, &b, &f->err), 0);
    collect *got = malloc(sizeof *got);
    read_all(f, b, got);
    size_t want = expected_rows(all, p);
    CHECK_EQ_INT(got->n, want);
    CHECK(want >= min_expected);
    icd_arena_free(&a);
    free(got);
}

static ice_expr cmp(ice_expr_op op, const char *col, ice_expr_value v)
{
    ice_expr e;
    memset(&e, 0, sizeof e);
    e.op = op;
    e.column = col;
    e.value = v;
    return e;
}

static void test_stripe_pruning(void)
{
    fixture f;
    memset(&f, 0, sizeof f);
    if (!open_table(&f)) {
        fprintf(stderr, "SKIP: corpus table %s not found (ICD_SHARED)\n", TABLE);
        return;
    }
    collect *all = malloc(sizeof *all);
    read_all(&f, NULL, all);
    CHECK_EQ_INT(all->n, 20); /* the table's 20 rows (oracle: corpus/expected) */

    ice_expr_value five = {ICE_VALUE_LONG, NULL, 5, 0, false};
    ice_expr_value big = {ICE_VALUE_LONG, NULL, 1000, 0, false};
    ice_expr_value fifteen = {ICE_VALUE_LONG, NULL, 15, 0, false};
    ice_expr_value lisa = {ICE_VALUE_STRING, "Lisa", 0, 0, false};
    ice_expr_value alan = {ICE_VALUE_STRING, "Alan", 0, 0, false};

    ice_expr e = cmp(ICE_EXPR_EQ, "id", five);
    check_filter(&f, all, &e, p_id5, 1);
    e = cmp(ICE_EXPR_GT, "id", big);
    check_filter(&f, all, &e, p_none, 0);
    e = cmp(ICE_EXPR_EQ, "user", lisa);
    check_filter(&f, all, &e, p_lisa, 1);
    ice_expr l = cmp(ICE_EXPR_GE, "id", fifteen), r = cmp(ICE_EXPR_EQ, "user", alan);
    ice_expr o = {ICE_EXPR_OR, &l, &r, NULL, {0}};
    check_filter(&f, all, &o, p_id_ge15_or_alan, 6);
    ice_expr isnull = cmp(ICE_EXPR_IS_NULL, "id", five);
    check_filter(&f, all, &isnull, p_none, 0); /* no file has a null id */
    ice_expr notnull = cmp(ICE_EXPR_NOT_NULL, "id", five);
    check_filter(&f, all, &notnull, p_all, 20);
    ice_expr ne = cmp(ICE_EXPR_EQ, "id", five);
    ice_expr neg = {ICE_EXPR_NOT, &ne, NULL, NULL, {0}}; /* != is never used to prune */
    check_filter(&f, all, &neg, p_all, 20);
    free(all);
    close_table(&f);
}

/* ---- a generated table: 4 stripes of 25 rows with disjoint, increasing ranges ---- */

/* Rows read with a filter (stats.rows_read: stripes skipped are never read). */
static long long rows_read(fixture *f, const ice_expr *e)
{
    icd_arena a = ICD_ARENA_INIT;
    ice_bound_expr *b = NULL;
    CHECK_EQ_INT(ice_expr_bind(e, ice_scan_plan_schema(f->plan), true, &a, &b, &f->err), 0);
    collect *got = malloc(sizeof *got);
    read_all(f, b, got);
    long long n = (long long)got->n;
    free(got);
    icd_arena_free(&a);
    return n;
}

static void test_stripe_pruning_types(void)
{
    const char *src = getenv("ICD_SOURCE_DIR");
    char dir[] = "/tmp/icd-orc-prune-XXXXXX";
    if (!src || !mkdtemp(dir)) {
        fprintf(stderr, "SKIP: ICD_SOURCE_DIR not set or no temp dir\n");
        return;
    }
    char cmd[2048], table[1100], md[1200];
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/tools/make_orc_prune_table.py' '%s'", src, dir);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(table, sizeof table, "%s/prune", dir);
    snprintf(md, sizeof md, "%s/metadata/v2.metadata.json", table);
    fixture f;
    memset(&f, 0, sizeof f);
    icd_error_clear(&f.err);
    CHECK_EQ_INT(icd_fileio_new(&f.io, &f.err), 0);
    CHECK_EQ_INT(icd_fileio_add_remap(f.io, "/tmp/icedruid-orc-prune/prune", table, &f.err), 0);
    CHECK_EQ_INT(ice_metadata_load(f.io, md, &f.md, &f.err), 0);
    ice_scan_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.case_sensitive = true;
    CHECK_EQ_INT(ice_scan_plan_build(f.io, f.md, &opts, &f.plan, &f.err), 0);
    if (f.plan) {
        collect *all = malloc(sizeof *all);
        read_all(&f, NULL, all);
        free(all);
        /* expected counts by construction: 25 rows per stripe kept (see the script) */
        ice_expr_value id30 = {ICE_VALUE_LONG, NULL, 30, 0, false};
        ice_expr_value ts60 = {ICE_VALUE_TIMESTAMP_MICROS, NULL,
                               1700000000000000LL + 60 * 3600000000LL, 0, false};
        ice_expr_value ts_before = {ICE_VALUE_TIMESTAMP_MICROS, NULL, 1700000000000000LL - 1, 0,
                                    false};
        ice_expr_value day80 = {ICE_VALUE_STRING, "2022-03-29", 0, 0, false}; /* 19080 */
        ice_expr_value p10 = {ICE_VALUE_STRING, "10.00", 0, 0, false};
        ice_expr_value p99 = {ICE_VALUE_STRING, "99.00", 0, 0, false};
        ice_expr_value n51 = {ICE_VALUE_STRING, "n051", 0, 0, false};
        ice_expr_value n99 = {ICE_VALUE_STRING, "n099", 0, 0, false};
        ice_expr e = cmp(ICE_EXPR_EQ, "id", id30);
        CHECK_EQ_INT(rows_read(&f, &e), 25);
        e = cmp(ICE_EXPR_GE, "ts", ts60);
        CHECK_EQ_INT(rows_read(&f, &e), 50);
        e = cmp(ICE_EXPR_LE, "ts", ts_before);
        CHECK_EQ_INT(rows_read(&f, &e), 0);
        e = cmp(ICE_EXPR_EQ, "day", day80);
        CHECK_EQ_INT(rows_read(&f, &e), 25);
        e = cmp(ICE_EXPR_LT, "price", p10);
        CHECK_EQ_INT(rows_read(&f, &e), 25);
        e = cmp(ICE_EXPR_GT, "price", p99);
        CHECK_EQ_INT(rows_read(&f, &e), 25);
        e = cmp(ICE_EXPR_EQ, "name", n51);
        CHECK_EQ_INT(rows_read(&f, &e), 25);
        e = cmp(ICE_EXPR_GT, "name", n99);
        CHECK_EQ_INT(rows_read(&f, &e), 0);
        ice_expr l = cmp(ICE_EXPR_EQ, "id", id30), r = cmp(ICE_EXPR_EQ, "day", day80);
        ice_expr both = {ICE_EXPR_AND, &l, &r, NULL, {0}}; /* stripes 1 and 3: none */
        CHECK_EQ_INT(rows_read(&f, &both), 0);
        ice_expr either = {ICE_EXPR_OR, &l, &r, NULL, {0}};
        CHECK_EQ_INT(rows_read(&f, &either), 50);
    }
    close_table(&f);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

TEST_MAIN({"stripe_pruning", test_stripe_pruning},
          {"stripe_pruning_types", test_stripe_pruning_types})
