/*
 * The Parquet reader's read budget (pq_reader_set_read_budget): a budget smaller than a
 * column chunk (and smaller than a page) gives the same rows as reading whole chunks.
 * Every row is rendered as JSON (pq_json) and compared byte for byte:
 *   - files with large pages written by our writer (pages of ~256 KiB and one page per
 *     chunk, uncompressed and SNAPPY, dictionary and PLAIN, nulls, byte arrays), read with
 *     windows smaller than a page, a few pages, and a whole chunk;
 *   - every .parquet file of the fuzz seeds and of ../shared/corpus (when present).
 * The chunk bytes held stay within the budget plus the largest page.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "formats/parquet/json.h"
#include "formats/parquet/parquet.h"
#include "formats/parquet/writer.h"
#include "io/memfile.h"
#include "test.h"

static int buf_write(void *ctx, const void *p, size_t n, icd_error *err)
{
    icd_buf_append(ctx, p, n);
    return icd_buf_ok(ctx) ? 0 : icd_fail_nomem(err);
}

/* Every row of `pf` as JSON lines with the given budget; rc of the read (rows up to a
 * failure are kept). *held receives the most chunk bytes the reader held. */
static int render(pq_file *pf, size_t budget, icd_buf *out, size_t *held, icd_error *err)
{
    pq_reader *r = NULL;
    pq_json_writer *w = NULL;
    *held = 0;
    int rc = pq_reader_open(pf, NULL, 0, 0, &r, err);
    if (!rc) pq_reader_set_read_budget(r, budget);
    if (!rc) rc = pq_json_writer_new(pq_file_schema(pf), NULL, 0, &w, err);
    while (!rc) {
        pq_batch *b;
        rc = pq_reader_next(r, &b, err);
        if (rc || !b) break;
        size_t h = pq_reader_read_bytes(r);
        if (h > *held) *held = h;
        pq_json_begin(w, b);
        for (size_t i = 0; i < b->num_rows && !rc; i++) {
            rc = pq_json_row(w, out, err);
            icd_buf_putc(out, '\n');
        }
        if (!rc) rc = pq_json_end(w, err);
    }
    pq_json_writer_free(w);
    pq_reader_close(r);
    return rc;
}

static pq_file *open_buf(const icd_buf *b)
{
    icd_error err;
    icd_error_clear(&err);
    icd_file *f;
    pq_file *pf = NULL;
    if (icd_memfile_open(b->data, b->len, "mem.parquet", &f, &err) == 0 &&
        pq_file_open_file(f, &pf, &err) != 0)
        fprintf(stderr, "open: %s\n", err.message);
    return pf;
}

/* Largest compressed page size bound: the largest chunk of the file. */
static size_t largest_chunk(const pq_file *pf)
{
    size_t m = 0;
    for (uint32_t g = 0; g < pq_file_num_row_groups(pf); g++) {
        const pq_row_group *rg = pq_file_row_group(pf, g);
        for (uint32_t i = 0; i < rg->num_columns; i++) {
            int64_t n = rg->columns[i].meta.total_compressed_size;
            if (n > 0 && (size_t)n > m) m = (size_t)n;
        }
    }
    return m;
}

/* Reads pf whole and with each budget; the rows must be the same. Returns false when the
 * whole read fails (a corrupt file: then every budget must fail too). */
static void compare(pq_file *pf, const char *name, const size_t *budgets, size_t nb)
{
    icd_error err;
    icd_error_clear(&err);
    icd_buf want = ICD_BUF_INIT;
    size_t held;
    int rc0 = render(pf, 0, &want, &held, &err);
    size_t big = largest_chunk(pf);
    for (size_t k = 0; k < nb; k++) {
        icd_buf got = ICD_BUF_INIT;
        icd_error e2;
        icd_error_clear(&e2);
        int rc = render(pf, budgets[k], &got, &held, &e2);
        bool same = (rc != 0) == (rc0 != 0) && got.len == want.len &&
                    (got.len == 0 || memcmp(got.data, want.data, got.len) == 0);
        if (!same)
            fprintf(stderr, "%s: budget %zu: rc %d (whole: %d), %zu bytes (whole: %zu) %s\n", name,
                    budgets[k], rc, rc0, got.len, want.len, e2.message);
        CHECK(same);
        /* windows (at least 16 KiB each) + one page buffer */
        size_t ncols = pq_file_schema(pf)->num_leaves;
        size_t limit = budgets[k] + ncols * 16 * 1024 + big + 4096;
        if (held > limit)
            fprintf(stderr, "%s: budget %zu: held %zu > %zu\n", name, budgets[k], held, limit);
        CHECK(held <= limit);
        icd_buf_free(&got);
    }
    icd_buf_free(&want);
}

static pq_schema_element group(const char *name, int rep, int children)
{
    pq_schema_element e;
    memset(&e, 0, sizeof e);
    e.name.ptr = name;
    e.name.len = (uint32_t)strlen(name);
    e.has_repetition = rep >= 0;
    e.repetition = rep;
    e.has_num_children = true;
    e.num_children = children;
    e.converted = PQ_CONV_NONE;
    return e;
}

static pq_schema_element leaf(const char *name, int rep, int type, int id)
{
    pq_schema_element e = group(name, rep, 0);
    e.has_num_children = false;
    e.has_type = true;
    e.type = type;
    e.has_field_id = true;
    e.field_id = id;
    return e;
}

#define N 120000

/* id INT64, s BYTE_ARRAY optional (dictionary unless no_dict), t BYTE_ARRAY (unique),
 * d DOUBLE optional. Pages of page_bytes; row groups of 60,000 rows. */
static void write_big_pages(int codec, bool no_dict, size_t page_bytes, size_t page_rows,
                            icd_buf *out)
{
    pq_schema_element els[5] = {group("schema", -1, 4), leaf("id", PQ_REQUIRED, PQ_INT64, 1),
                                leaf("s", PQ_OPTIONAL, PQ_BYTE_ARRAY, 2),
                                leaf("t", PQ_REQUIRED, PQ_BYTE_ARRAY, 3),
                                leaf("d", PQ_OPTIONAL, PQ_DOUBLE, 4)};
    els[2].converted = PQ_CONV_UTF8;
    els[2].logical.kind = PQ_LT_STRING;
    els[3].converted = PQ_CONV_UTF8;
    els[3].logical.kind = PQ_LT_STRING;
    pq_write_options o = {
        .codec = codec, .no_dictionary = no_dict, .page_bytes = page_bytes, .page_rows = page_rows};
    icd_error err;
    icd_error_clear(&err);
    pq_writer *w = NULL;
    CHECK(pq_writer_new(els, 5, &o, buf_write, out, &w, &err) == 0);
    if (!w) return;
    enum { B = 2000 };
    static int64_t ids[B];
    static pq_bytes ss[B], ts[B];
    static double ds[B];
    static uint32_t d_s[B], d_d[B];
    static char sbuf[B][16], tbuf[B][40];
    for (int64_t base = 0; base < N; base += B) {
        size_t ns = 0, nd = 0;
        for (int i = 0; i < B; i++) {
            int64_t r = base + i;
            ids[i] = r * 31 + 7;
            d_s[i] = r % 9 != 0;
            if (d_s[i]) {
                int len = snprintf(sbuf[i], sizeof sbuf[i], "s%d", (int)(r % 113));
                ss[ns].ptr = (const uint8_t *)sbuf[i];
                ss[ns++].len = (uint32_t)len;
            }
            int len = snprintf(tbuf[i], sizeof tbuf[i], "row-%lld-%llx", (long long)r,
                               (unsigned long long)(r * 2654435761u));
            ts[i].ptr = (const uint8_t *)tbuf[i];
            ts[i].len = (uint32_t)len;
            d_d[i] = r % 4 != 1;
            if (d_d[i]) ds[nd++] = (double)r / 8 - 3;
        }
        pq_column_batch cb[4] = {
            {.num_levels = B, .num_values = B, .values = ids},
            {.num_levels = B, .def = d_s, .num_values = ns, .values = ss},
            {.num_levels = B, .num_values = B, .values = ts},
            {.num_levels = B, .def = d_d, .num_values = nd, .values = ds},
        };
        if (pq_writer_write_batch(w, cb, B, &err)) {
            fprintf(stderr, "write: %s\n", err.message);
            CHECK(0);
            break;
        }
        if ((base + B) % 60000 == 0) CHECK(pq_writer_flush_row_group(w, &err) == 0);
    }
    CHECK(pq_writer_close(w, &err) == 0);
    pq_writer_free(w);
}

static void test_large_pages(void)
{
    static const size_t budgets[] = {1, 20000, 100000, 300000, 1 << 20, 64 << 20};
    struct {
        int codec;
        bool no_dict;
        size_t page_bytes, page_rows;
    } cases[] = {
        {PQ_CODEC_UNCOMPRESSED, false, 256 * 1024, 60000}, /* pages larger than the window */
        {PQ_CODEC_SNAPPY, false, 256 * 1024, 60000},
        {PQ_CODEC_UNCOMPRESSED, true, 8 * 1024, 1000}, /* many small pages per window */
        {PQ_CODEC_ZSTD, true, 16 * 1024, 20000},
        {PQ_CODEC_SNAPPY, true, 4 << 20, 60000}, /* one page per chunk */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        icd_buf b = ICD_BUF_INIT;
        write_big_pages(cases[i].codec, cases[i].no_dict, cases[i].page_bytes, cases[i].page_rows,
                        &b);
        pq_file *pf = open_buf(&b);
        CHECK(pf != NULL);
        if (pf) {
            CHECK_EQ_INT(pq_file_num_rows(pf), N);
            char name[64];
            snprintf(name, sizeof name, "large pages case %zu", i);
            compare(pf, name, budgets, sizeof budgets / sizeof budgets[0]);
            pq_file_close(pf);
        }
        icd_buf_free(&b);
    }
}

static icd_fileio *g_io;
static size_t g_files;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    size_t n = strlen(path);
    if (type != FTW_F || n < 8 || strcmp(path + n - 8, ".parquet") != 0) return 0;
    if (st->st_size > 32 * 1024 * 1024) return 0;
    icd_error err;
    icd_error_clear(&err);
    pq_file *pf;
    if (pq_file_open(g_io, path, &pf, &err)) return 0; /* footer errors: not our concern */
    static const size_t budgets[] = {1, 40000};
    compare(pf, path, budgets, 2);
    pq_file_close(pf);
    g_files++;
    return 0;
}

static void test_corpus(void)
{
    icd_error err;
    icd_error_clear(&err);
    CHECK(icd_fileio_new(&g_io, &err) == 0);
    const char *src = getenv("ICD_SOURCE_DIR"), *shared = getenv("ICD_SHARED");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/fuzz_parquet_file", src ? src : ".");
    nftw(dir, visit, 16, FTW_PHYS);
    size_t seeds = g_files;
    CHECK(seeds >= 10);
    if (shared) {
        snprintf(dir, sizeof dir, "%s/corpus", shared);
        nftw(dir, visit, 16, FTW_PHYS);
    }
    fprintf(stderr, "read-budget: %zu seed files, %zu corpus files compared\n", seeds,
            g_files - seeds);
    icd_fileio_free(g_io);
}

TEST_MAIN(TEST(test_large_pages), TEST(test_corpus))
