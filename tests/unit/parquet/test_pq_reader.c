/*
 * The batch reader API over a small multi-row-group file written by DuckDB
 * (tests/fuzz/corpus/fuzz_parquet_file/row_groups_5.parquet, see
 * tests/node/gen_parquet_fuzz_seeds.mjs): 10000 rows, row groups of 2048 rows, columns
 * id = row position, small = id % 5, m = NULL when id % 7 == 0 else id % 3. Row positions,
 * row-group skipping, column selection and statistics are checked against those formulas.
 */
#include <stdlib.h>

#include "formats/parquet/parquet.h"
#include "test.h"

static pq_file *open_fixture(void)
{
    const char *src = getenv("ICD_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/fuzz_parquet_file/row_groups_5.parquet",
             src ? src : ".");
    icd_error err;
    icd_error_clear(&err);
    icd_fileio *io;
    pq_file *pf = NULL;
    if (icd_fileio_new(&io, &err) == 0) {
        if (pq_file_open(io, path, &pf, &err)) fprintf(stderr, "%s: %s\n", path, err.message);
        icd_fileio_free(io);
    }
    return pf;
}

static void test_positions_and_skipping(void)
{
    pq_file *pf = open_fixture();
    CHECK(pf != NULL);
    if (!pf) return;
    CHECK_EQ_INT(pq_file_num_rows(pf), 10000);
    CHECK_EQ_INT(pq_file_num_row_groups(pf), 5);
    CHECK_EQ_INT(pq_file_row_group_first_row(pf, 3), 3 * 2048);
    icd_error err;
    icd_error_clear(&err);
    /* select "small" and "m" by path, skip row groups 1 and 3 */
    const char *paths[] = {"m", "small"};
    pq_selection sel = {paths, 2, NULL, 0};
    int *leaves;
    size_t n;
    CHECK_EQ_INT(pq_file_select(pf, &sel, &leaves, &n, &err), 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(leaves[0], 1);
    CHECK_EQ_INT(leaves[1], 2);
    pq_reader *r;
    CHECK_EQ_INT(pq_reader_open(pf, leaves, n, 1000, &r, &err), 0);
    const uint8_t keep[] = {1, 0, 1, 0, 1};
    CHECK_EQ_INT(pq_reader_select_row_groups(r, keep, 5, &err), 0);
    size_t rows = 0, bad = 0, batches = 0;
    int64_t expect_next = 0;
    pq_batch *b;
    while (pq_reader_next(r, &b, &err) == 0 && b) {
        batches++;
        CHECK(b->num_rows <= 1000);
        CHECK(b->row_group == 0 || b->row_group == 2 || b->row_group == 4);
        if (b->first_row != expect_next &&
            b->first_row != pq_file_row_group_first_row(pf, b->row_group))
            bad++;
        const pq_column_batch *small = &b->columns[0], *m = &b->columns[1]; /* leaf order */
        CHECK_EQ_INT(small->num_levels, b->num_rows);
        const int64_t *sv = small->values, *mv = m->values;
        size_t mi = 0;
        for (size_t i = 0; i < b->num_rows; i++) {
            int64_t pos = b->first_row + (int64_t)i;
            if (sv[i] != pos % 5) /* small has no nulls: values are dense */
                bad++;
            bool null = m->def[i] == 0;
            if (null != (pos % 7 == 0)) bad++;
            if (!null && mv[mi++] != pos % 3) bad++;
        }
        CHECK_EQ_INT(mi, m->num_values);
        rows += b->num_rows;
        expect_next = b->first_row + (int64_t)b->num_rows;
    }
    CHECK_EQ_INT(err.code, 0);
    CHECK_EQ_INT(rows, 2048 + 2048 + 1808);
    CHECK_EQ_INT(bad, 0);
    CHECK(batches >= 7);
    pq_reader_close(r);
    free(leaves);

    /* unknown names and ids are reported */
    const char *missing[] = {"nope"};
    pq_selection sel2 = {missing, 1, NULL, 0};
    CHECK_EQ_INT(pq_file_select(pf, &sel2, &leaves, &n, &err), ICD_ENOTFOUND);
    pq_file_close(pf);
}

static void test_stats(void)
{
    pq_file *pf = open_fixture();
    CHECK(pf != NULL);
    if (!pf) return;
    icd_error err;
    icd_error_clear(&err);
    pq_column_stats st;
    /* row group 2 holds ids 4096..6143 */
    CHECK_EQ_INT(pq_file_column_stats(pf, 2, 0, &st, &err), 0);
    CHECK(st.has_min && st.has_max);
    CHECK_EQ_INT(st.min.kind, PQ_STAT_INT);
    CHECK_EQ_INT(st.min.i, 4096);
    CHECK_EQ_INT(st.max.i, 6143);
    CHECK(st.has_null_count);
    CHECK_EQ_INT(st.null_count, 0);
    /* m: nulls where id % 7 == 0 */
    CHECK_EQ_INT(pq_file_column_stats(pf, 2, 2, &st, &err), 0);
    int64_t nulls = 0;
    for (int64_t id = 4096; id < 6144; id++)
        nulls += id % 7 == 0;
    CHECK_EQ_INT(st.null_count, nulls);
    CHECK_EQ_INT(st.min.i, 0);
    CHECK_EQ_INT(st.max.i, 2);
    CHECK_EQ_INT(pq_file_column_stats(pf, 9, 0, &st, &err), ICD_EINVALID);
    pq_file_close(pf);
}

TEST_MAIN(TEST(test_positions_and_skipping), TEST(test_stats))
