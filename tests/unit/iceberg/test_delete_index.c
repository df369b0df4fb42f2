/*
 * The delete-file index against the spec's rules, case by case (each expectation worked
 * out from the rule table in src/iceberg/delete_index.h, not from the program's output).
 */
#include <stdlib.h>

#include "iceberg/deletes/delete_index.h"
#include "test.h"

static ice_content_file data(const char *path, int spec, const char *part, int64_t seq)
{
    ice_content_file f = {0};
    f.content = ICE_CONTENT_DATA;
    f.format = ICE_FORMAT_PARQUET;
    f.path = path;
    f.spec_id = spec;
    f.partition_key = (const uint8_t *)part;
    f.partition_key_len = (uint32_t)strlen(part);
    f.data_seq = seq;
    f.content_offset = f.content_size = -1;
    return f;
}

static ice_content_file posdel(const char *path, int spec, const char *part, int64_t seq,
                               const char *ref)
{
    ice_content_file f = data(path, spec, part, seq);
    f.content = ICE_CONTENT_POSITION_DELETES;
    f.referenced_data_file = ref;
    return f;
}

static ice_content_file eqdel(const char *path, int spec, const char *part, int64_t seq)
{
    ice_content_file f = data(path, spec, part, seq);
    f.content = ICE_CONTENT_EQUALITY_DELETES;
    return f;
}

static ice_content_file dv(const char *path, const char *ref, int64_t seq, int64_t off)
{
    ice_content_file f = posdel(path, 0, "", seq, ref);
    f.format = ICE_FORMAT_PUFFIN;
    f.content_offset = off;
    f.content_size = 40;
    return f;
}

static const ice_spec_info SPECS[] = {{0, true}, {1, false}, {2, true /* all void */}};

/* Names of the deletes applying to `d`, comma-joined in index order. */
static const char *applied(const ice_delete_index *ix, const ice_content_file *d)
{
    static char out[1024];
    const ice_content_file **v = NULL;
    size_t n = 0, cap = 0;
    icd_error err;
    out[0] = '\0';
    if (ice_delete_index_for(ix, d, &v, &n, &cap, &err) != 0) return "ERROR";
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(out, ",");
        strcat(out, v[i]->path);
    }
    free((void *)v);
    return out;
}

static ice_delete_index *build(const ice_content_file *files, size_t n)
{
    const ice_content_file **p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = &files[i];
    ice_delete_index *ix = NULL;
    icd_error err;
    int rc = ice_delete_index_build(p, n, SPECS, 3, &ix, &err);
    free(p);
    if (rc) fprintf(stderr, "build failed: %s\n", err.message);
    return ix;
}

static void test_sequence_boundaries(void)
{
    /* Same sequence number: position deletes apply, equality deletes do not. */
    ice_content_file dels[] = {
        posdel("pos5", 1, "p=a", 5, NULL),
        eqdel("eq5", 1, "p=a", 5),
        eqdel("eq6", 1, "p=a", 6),
        posdel("pos4", 1, "p=a", 4, NULL),
    };
    ice_delete_index *ix = build(dels, 4);
    CHECK(ix != NULL);
    ice_content_file d5 = data("d5", 1, "p=a", 5);
    CHECK_EQ_STR(applied(ix, &d5), "pos5,eq6");
    ice_content_file d4 = data("d4", 1, "p=a", 4);
    CHECK_EQ_STR(applied(ix, &d4), "pos4,pos5,eq5,eq6");
    ice_content_file d7 = data("d7", 1, "p=a", 7);
    CHECK_EQ_STR(applied(ix, &d7), "");
    ice_delete_index_free(ix);
}

static void test_partition_scoping(void)
{
    ice_content_file dels[] = {
        eqdel("eq-a", 1, "p=a", 9),         eqdel("eq-b", 1, "p=b", 9),
        posdel("pos-a", 1, "p=a", 9, NULL), eqdel("eq-global", 0, "", 9),
        eqdel("eq-void", 2, "\x01", 9), /* all-void spec: global too */
        eqdel("eq-spec3", 1, "p=a", 3),
    };
    ice_delete_index *ix = build(dels, 6);
    ice_content_file da = data("da", 1, "p=a", 2);
    CHECK_EQ_STR(applied(ix, &da), "pos-a,eq-spec3,eq-a,eq-global,eq-void");
    ice_content_file db = data("db", 1, "p=b", 2);
    CHECK_EQ_STR(applied(ix, &db), "eq-b,eq-global,eq-void");
    /* Same tuple bytes under another spec id: partition-scoped deletes do not apply. */
    ice_content_file other = data("dother", 0, "p=a", 2);
    CHECK_EQ_STR(applied(ix, &other), "eq-global,eq-void");
    ice_delete_index_free(ix);
}

static void test_file_scoped_and_dv(void)
{
    ice_content_file dels[] = {
        posdel("pos-ref-x", 1, "p=a", 5, "x"),
        posdel("pos-ref-y", 1, "p=a", 5, "y"),
        dv("dv-x", "x", 6, 4),
        dv("dv-z-old", "z", 1, 44), /* older than z's data: does not apply */
        posdel("pos-part", 1, "p=a", 5, NULL),
    };
    ice_delete_index *ix = build(dels, 5);
    ice_content_file x = data("x", 1, "p=a", 3);
    CHECK_EQ_STR(applied(ix, &x), "dv-x"); /* the DV replaces position files */
    ice_content_file y = data("y", 1, "p=a", 3);
    CHECK_EQ_STR(applied(ix, &y), "pos-ref-y,pos-part");
    ice_content_file z = data("z", 1, "p=a", 2);
    CHECK_EQ_STR(applied(ix, &z), "pos-part");
    ice_content_file x_late = data("x", 1, "p=a", 7); /* re-added later: nothing applies */
    CHECK_EQ_STR(applied(ix, &x_late), "");
    ice_delete_index_free(ix);
}

static void test_file_path_bounds(void)
{
    /* Equal bounds make a delete file-scoped; differing bounds prune by range. */
    ice_col_stats eq_bounds = {
        ICE_FIELD_DELETE_FILE_PATH,   3, 0, -1,   (const uint8_t *)"s3://t/f2",
        (const uint8_t *)"s3://t/f2", 9, 9, true, true};
    ice_col_stats range = {ICE_FIELD_DELETE_FILE_PATH,   3, 0, -1,   (const uint8_t *)"s3://t/f3",
                           (const uint8_t *)"s3://t/f5", 9, 9, true, true};
    ice_content_file dels[] = {
        posdel("by-bounds", 0, "", 5, NULL),
        posdel("by-range", 0, "", 5, NULL),
    };
    dels[0].stats = &eq_bounds;
    dels[0].nstats = 1;
    dels[1].stats = &range;
    dels[1].nstats = 1;
    ice_delete_index *ix = build(dels, 2);
    size_t len;
    CHECK(ice_position_delete_target(&dels[0], &len) != NULL && len == 9);
    CHECK(ice_position_delete_target(&dels[1], &len) == NULL);
    ice_content_file f2 = data("s3://t/f2", 0, "", 1);
    CHECK_EQ_STR(applied(ix, &f2), "by-bounds");
    ice_content_file f4 = data("s3://t/f4", 0, "", 1);
    CHECK_EQ_STR(applied(ix, &f4), "by-range");
    ice_content_file f9 = data("s3://t/f9", 0, "", 1);
    CHECK_EQ_STR(applied(ix, &f9), "");
    ice_delete_index_free(ix);
}

static void test_errors(void)
{
    ice_content_file two[] = {dv("p1", "x", 5, 4), dv("p2", "x", 6, 4)};
    const ice_content_file *p[] = {&two[0], &two[1]};
    ice_delete_index *ix = NULL;
    icd_error err;
    CHECK(ice_delete_index_build(p, 2, SPECS, 3, &ix, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "two deletion vectors") != NULL);
    ice_content_file unknown = eqdel("e", 42, "", 3);
    const ice_content_file *q[] = {&unknown};
    CHECK(ice_delete_index_build(q, 1, SPECS, 3, &ix, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "spec id 42") != NULL);
}

/* nd deletes over np partitions "p000", ...: delete i is in partition i % np with
 * sequence number 10 + i / np, an equality delete when i is odd, else a position delete
 * (names "del<i>" in names[]). */
static ice_content_file *spread_deletes(char (*parts)[8], int np, char (*names)[16], int nd)
{
    ice_content_file *dels = calloc((size_t)nd, sizeof *dels);
    for (int i = 0; i < np; i++)
        snprintf(parts[i], 8, "p%03d", i);
    for (int i = 0; i < nd && dels; i++) {
        snprintf(names[i], 16, "del%d", i);
        dels[i] = (i % 2) ? eqdel(names[i], 1, parts[i % np], 10 + i / np)
                          : posdel(names[i], 1, parts[i % np], 10 + i / np, NULL);
    }
    return dels;
}

static void test_scale(void)
{
    /* 10,000 data files in 100 partitions against 1,000 deletes: every lookup returns
     * exactly the deletes of its partition with a higher sequence number. */
    enum { NP = 100, ND = 1000 };
    static char parts[NP][8];
    static char names[ND][16];
    ice_content_file *dels = spread_deletes(parts, NP, names, ND);
    ice_delete_index *ix = build(dels, ND);
    size_t total = 0;
    const ice_content_file **v = NULL;
    size_t cap = 0;
    icd_error err;
    for (int j = 0; j < 10000; j++) {
        ice_content_file d = data("d", 1, parts[j % NP], 10 + j % 12);
        size_t n = 0;
        CHECK(ice_delete_index_for(ix, &d, &v, &n, &cap, &err) == 0);
        /* partition j%NP holds deletes i = j%NP + k*NP, seq 10+k, k=0..9; kind by parity */
        size_t expect = 0;
        for (int k = 0; k < 10; k++) {
            int i = j % NP + k * NP;
            int64_t s = 10 + k;
            if ((i % 2) ? s > d.data_seq : s >= d.data_seq) expect++;
        }
        CHECK_EQ_INT(n, expect);
        total += n;
    }
    CHECK(total > 0);
    free((void *)v);
    ice_delete_index_free(ix);
    free(dels);
}

/* Lookups through a memo give what lookups without one give: partition keys shared by
 * address (as a manifest's files share theirs), sequence numbers that differ between files
 * of one partition, the same key under another spec id, and a key address that holds
 * another partition after a clear (the next manifest's). */
static void test_memo(void)
{
    enum { NP = 20, ND = 200 };
    static char parts[NP][8], again[NP][8];
    static char names[ND][16];
    ice_content_file *dels = spread_deletes(parts, NP, names, ND);
    ice_delete_index *ix = build(dels, ND);
    ice_delete_memo *memo = ice_delete_memo_new();
    CHECK(ix != NULL && memo != NULL);
    const ice_content_file **v = NULL, **w = NULL;
    size_t cap = 0, capw = 0;
    icd_error err;
    for (int round = 0; round < 2; round++) {
        ice_delete_memo_clear(memo);
        /* the second round: each key address holds another partition's bytes */
        for (int i = 0; i < NP; i++)
            memcpy(again[i], parts[(i + round * 7) % NP], sizeof again[i]);
        for (int j = 0; j < 400; j++) {
            ice_content_file d = data("d", j % 5 == 0 ? 0 : 1, again[j % NP], 9 + j % 13);
            size_t n = 0, m = 0;
            CHECK(ice_delete_index_for(ix, &d, &v, &n, &cap, &err) == 0);
            CHECK(ice_delete_index_for_memo(ix, memo, &d, &w, &m, &capw, &err) == 0);
            CHECK_EQ_INT(m, n);
            for (size_t k = 0; k < n && k < m; k++)
                CHECK(v[k] == w[k]);
        }
    }
    free((void *)v);
    free((void *)w);
    ice_delete_memo_free(memo);
    ice_delete_index_free(ix);
    free(dels);
}

TEST_MAIN(TEST(test_sequence_boundaries), TEST(test_partition_scoping),
          TEST(test_file_scoped_and_dv), TEST(test_file_path_bounds), TEST(test_errors),
          TEST(test_scale), TEST(test_memo))
