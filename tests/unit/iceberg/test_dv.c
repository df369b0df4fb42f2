/* Unit tests of iceberg/dv: deletion vectors written with CRoaring's portable serializer
 * (array, bitmap and run containers, both cookies, keys above 2^32, empty), read back by
 * offset/length, and every kind of corruption reported as a clear ICD_ECORRUPT error. */
#include <stdlib.h>
#include <unistd.h>

#include "iceberg/deletes/dv.h"
#include "puffin_testutil.h"
#include "test.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* Decodes a blob and returns the error code; *set is the result on success. */
static int decode(const icd_buf *b, int64_t card, ice_posset **set, ice_dv_info *info,
                  icd_error *err)
{
    icd_error_clear(err);
    return ice_dv_decode((const uint8_t *)b->data, b->len, "t.puffin", 1000, card, 0, set, info,
                         err);
}

static void test_array_no_run(void)
{
    roaring_bitmap_t *bm = roaring_bitmap_of(4, 1, 5, 100, 65537);
    uint32_t key = 0;
    icd_buf b = ICD_BUF_INIT;
    tu_dv_blob(&b, &key, &bm, 1);
    CHECK((uint8_t)b.data[20] == 0x3a && (uint8_t)b.data[21] == 0x30); /* cookie 12346 */
    icd_error err;
    ice_posset *s;
    ice_dv_info info;
    CHECK(decode(&b, 4, &s, &info, &err) == 0);
    CHECK_EQ_INT(info.cardinality, 4);
    CHECK_EQ_INT(info.nbitmaps, 1);
    CHECK(info.crc_ok && !info.has_run_containers);
    CHECK_EQ_INT(ice_posset_cardinality(s), 4);
    CHECK(ice_posset_contains(s, 65537) && ice_posset_contains(s, 1));
    CHECK(!ice_posset_contains(s, 2));
    ice_posset_free(s);
    /* Unknown cardinality is fine; a wrong one is not. */
    CHECK(decode(&b, -1, &s, NULL, &err) == 0);
    ice_posset_free(s);
    CHECK(decode(&b, 5, &s, NULL, &err) == ICD_ECORRUPT);
    CHECK(s == NULL);
    CHECK(strstr(err.message, "holds 4 positions but the metadata says 5") != NULL);
    CHECK_EQ_STR(err.file, "t.puffin");
    icd_buf_free(&b);
    roaring_bitmap_free(bm);
}

static void test_bitmap_and_runs(void)
{
    /* Key 0: a bitmap container (10000 values in one 64K chunk) and an array container;
     * key 1: runs (with >= 4 containers, so the run cookie carries offsets); key 3: a run
     * bitmap with < 4 containers (no offset header). */
    roaring_bitmap_t *bms[3];
    bms[0] = roaring_bitmap_create();
    for (uint32_t i = 0; i < 10000; i++)
        roaring_bitmap_add(bms[0], (uint32_t)(rnd() % 65536));
    roaring_bitmap_add(bms[0], 200000);
    roaring_bitmap_remove_run_compression(bms[0]);
    bms[1] = roaring_bitmap_create();
    roaring_bitmap_add_range(bms[1], 1000, 300000);
    roaring_bitmap_add(bms[1], 400000);
    roaring_bitmap_add(bms[1], 4000000000u);
    roaring_bitmap_run_optimize(bms[1]);
    bms[2] = roaring_bitmap_create();
    roaring_bitmap_add_range(bms[2], 7, 70);
    roaring_bitmap_run_optimize(bms[2]);
    uint32_t keys[3] = {0, 1, 3};
    icd_buf b = ICD_BUF_INIT;
    tu_dv_blob(&b, keys, bms, 3);
    uint64_t card = 0;
    for (int i = 0; i < 3; i++)
        card += roaring_bitmap_get_cardinality(bms[i]);
    icd_error err;
    ice_posset *s;
    ice_dv_info info;
    CHECK(decode(&b, (int64_t)card, &s, &info, &err) == 0);
    CHECK(info.has_run_containers);
    CHECK_EQ_INT(info.nbitmaps, 3);
    CHECK_EQ_INT(ice_posset_cardinality(s), card);
    /* Every position agrees with the source bitmaps, including above 2^32. */
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        roaring_uint32_iterator_t it;
        roaring_init_iterator(bms[i], &it);
        for (; it.has_value; roaring_advance_uint32_iterator(&it))
            bad += !ice_posset_contains(s, (uint64_t)keys[i] << 32 | it.current_value);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(ice_posset_contains(s, 4294967296ULL + 1000));
    CHECK(ice_posset_contains(s, 4294967296ULL + 4000000000ULL));
    CHECK(!ice_posset_contains(s, 4294967296ULL + 999));
    CHECK(ice_posset_contains(s, 3 * 4294967296ULL + 69));
    CHECK(!ice_posset_contains(s, 2 * 4294967296ULL + 1000));
    ice_posset_free(s);
    icd_buf_free(&b);
    for (int i = 0; i < 3; i++)
        roaring_bitmap_free(bms[i]);
}

static void test_empty(void)
{
    icd_buf b = ICD_BUF_INIT;
    tu_dv_blob(&b, NULL, NULL, 0);
    CHECK_EQ_INT(b.len, 20);
    icd_error err;
    ice_posset *s;
    CHECK(decode(&b, 0, &s, NULL, &err) == 0);
    CHECK(ice_posset_is_empty(s));
    ice_posset_free(s);
    /* One key with an empty 32-bit bitmap is still an empty set. */
    roaring_bitmap_t *e = roaring_bitmap_create();
    uint32_t key = 9;
    icd_buf_clear(&b);
    tu_dv_blob(&b, &key, &e, 1);
    CHECK(decode(&b, 0, &s, NULL, &err) == 0);
    CHECK(ice_posset_is_empty(s));
    ice_posset_free(s);
    roaring_bitmap_free(e);
    icd_buf_free(&b);
}

static void test_random_roundtrip(void)
{
    icd_error err;
    for (int round = 0; round < 20; round++) {
        size_t nk = 1 + rnd() % 4;
        uint32_t keys[4];
        roaring_bitmap_t *bms[4];
        uint32_t k = (uint32_t)(rnd() % 3);
        for (size_t i = 0; i < nk; i++) {
            keys[i] = k;
            k += 1 + (uint32_t)(rnd() % 1000);
            bms[i] = roaring_bitmap_create();
            size_t n = rnd() % 30000;
            uint32_t span = (uint32_t)(1 + rnd() % 2000000);
            for (size_t j = 0; j < n; j++)
                roaring_bitmap_add(bms[i], (uint32_t)(rnd() % span));
            if (rnd() & 1) roaring_bitmap_add_range(bms[i], span, span + rnd() % 100000);
            if (round & 1)
                roaring_bitmap_run_optimize(bms[i]);
            else
                roaring_bitmap_remove_run_compression(bms[i]);
        }
        icd_buf b = ICD_BUF_INIT;
        tu_dv_blob(&b, keys, bms, nk);
        ice_posset *s;
        uint64_t card = 0;
        for (size_t i = 0; i < nk; i++)
            card += roaring_bitmap_get_cardinality(bms[i]);
        CHECK(decode(&b, (int64_t)card, &s, NULL, &err) == 0);
        /* Listing the set gives each key's values in order. */
        uint64_t *got = malloc((card + 1) * sizeof *got);
        CHECK_EQ_INT(ice_posset_list(s, 0, got, card + 1), card);
        size_t at = 0;
        int bad = 0;
        for (size_t i = 0; i < nk; i++) {
            uint64_t c = roaring_bitmap_get_cardinality(bms[i]);
            uint32_t *vals = malloc((c + 1) * sizeof *vals);
            roaring_bitmap_to_uint32_array(bms[i], vals);
            for (uint64_t j = 0; j < c; j++)
                bad += got[at++] != ((uint64_t)keys[i] << 32 | vals[j]);
            free(vals);
            roaring_bitmap_free(bms[i]);
        }
        CHECK_EQ_INT(bad, 0);
        free(got);
        ice_posset_free(s);
        icd_buf_free(&b);
    }
}

/* Layout of the one-bitmap blob of {1, 5, 100} used below (offsets in the blob):
 * 0 length, 4 magic, 8 bitmap count, 16 key, 20 cookie, 24 container count,
 * 28 container key, 30 cardinality - 1, 32 container offset, 36 values, 42 CRC. */
static icd_buf small_blob(void)
{
    roaring_bitmap_t *bm = roaring_bitmap_of(3, 1, 5, 100);
    uint32_t key = 0;
    icd_buf b = ICD_BUF_INIT;
    tu_dv_blob(&b, &key, &bm, 1);
    roaring_bitmap_free(bm);
    return b;
}

/* Expects a corrupt error whose message contains `what`, at absolute file offset `at`
 * (blob offset 1000 + at; -1 = do not check). */
static void expect_corrupt(const icd_buf *b, const char *what, int64_t at, int line)
{
    icd_error err;
    ice_posset *s = (ice_posset *)1;
    int rc = decode(b, -1, &s, NULL, &err);
    if (rc != ICD_ECORRUPT || !strstr(err.message, what) || s != NULL ||
        (at >= 0 && err.offset != 1000 + at)) {
        fprintf(stderr, "line %d: rc %d offset %lld message: %s\n", line, rc, (long long)err.offset,
                err.message);
        CHECK(0);
    } else {
        CHECK(strstr(err.message, "deletion vector") != NULL);
    }
}
#define EXPECT_CORRUPT(b, what, at) expect_corrupt(b, what, at, __LINE__)

static void test_framing_errors(void)
{
    icd_buf b = small_blob();
    CHECK_EQ_INT(b.len, 46);
    uint8_t *p = (uint8_t *)b.data;
    /* wrong magic */
    p[5] ^= 1;
    EXPECT_CORRUPT(&b, "bad magic", 4);
    p[5] ^= 1;
    /* wrong CRC */
    p[44] ^= 0x10;
    EXPECT_CORRUPT(&b, "CRC-32 mismatch", 42);
    /* ... which ICE_DV_SKIP_CRC reports instead of failing */
    icd_error err;
    ice_dv_info info;
    ice_posset *s;
    CHECK(ice_dv_decode(p, b.len, "t", 0, 3, ICE_DV_SKIP_CRC, &s, &info, &err) == 0);
    CHECK(!info.crc_ok && info.crc_stored != info.crc_computed);
    ice_posset_free(s);
    p[44] ^= 0x10;
    /* a vector byte changed without fixing the CRC */
    p[37] ^= 1;
    EXPECT_CORRUPT(&b, "CRC-32 mismatch", 42);
    p[37] ^= 1;
    /* wrong length field */
    p[3] += 1;
    EXPECT_CORRUPT(&b, "length field is 39", 0);
    p[3] -= 1;
    /* truncated: every shorter prefix fails cleanly */
    int bad = 0;
    for (size_t n = 0; n < b.len; n++) {
        icd_buf t = ICD_BUF_INIT;
        icd_buf_append(&t, b.data, n);
        if (decode(&t, -1, &s, NULL, &err) != ICD_ECORRUPT || s) bad++;
        /* ... also when the length and CRC are made consistent with the cut */
        if (n >= 20) {
            tu_dv_fix((uint8_t *)t.data, n);
            if (decode(&t, -1, &s, NULL, &err) != ICD_ECORRUPT || s) bad++;
        }
        icd_buf_free(&t);
    }
    CHECK_EQ_INT(bad, 0);
    icd_buf_clear(&b);
    icd_buf_append(&b, "\0\0\0\x0c\xD1\xD3\x39\x64", 8); /* 19 bytes: below the minimum */
    icd_buf_append(&b, "\0\0\0\0\0\0\0\0\0\0\0", 11);
    EXPECT_CORRUPT(&b, "shorter than the minimum", 0);
    icd_buf_free(&b);
}

static void test_vector_errors(void)
{
    icd_buf b = small_blob();
    uint8_t *p = (uint8_t *)b.data;
    /* bitmap count too large for the bytes */
    p[8] = 200;
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "claims 200 bitmaps", 8);
    p[8] = 1;
    /* sign bit in the key */
    p[19] = 0x80;
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "makes positions negative", 16);
    p[19] = 0;
    /* unknown cookie */
    p[20] = 0x3c;
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "unknown Roaring cookie", 20);
    p[20] = 0x3a;
    /* container count larger than the bytes */
    p[24] = 9;
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "truncated", -1);
    p[24] = 1;
    /* wrong container offset */
    p[32] = 17;
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "offset 17, but it starts at 16", 32);
    p[32] = 16;
    /* array values out of order: 1, 100, 5 */
    p[38] = 100;
    p[40] = 5;
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "array values not increasing", 40);
    p[38] = 5;
    p[40] = 100;
    /* cardinality larger than the values present */
    p[30] = 3;
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "array of 4 values truncated", 36);
    p[30] = 2;
    tu_dv_fix(p, b.len);
    ice_posset *s;
    icd_error err;
    CHECK(decode(&b, 3, &s, NULL, &err) == 0); /* back to valid */
    ice_posset_free(s);
    /* bytes after the last bitmap */
    icd_buf t = ICD_BUF_INIT;
    icd_buf_append(&t, b.data, 42);
    icd_buf_append(&t, "\0\0\0\0\0\0", 6);
    tu_dv_fix((uint8_t *)t.data, t.len);
    EXPECT_CORRUPT(&t, "2 bytes after the last bitmap", 42);
    icd_buf_free(&t);
    icd_buf_free(&b);

    /* keys not increasing: equal, then decreasing */
    roaring_bitmap_t *bms[2] = {roaring_bitmap_of(1, 7), roaring_bitmap_of(1, 8)};
    uint32_t keys[2] = {5, 5};
    icd_buf k = ICD_BUF_INIT;
    tu_dv_blob(&k, keys, bms, 2);
    EXPECT_CORRUPT(&k, "key 5 is not greater than the previous key 5", -1);
    keys[1] = 3;
    icd_buf_clear(&k);
    tu_dv_blob(&k, keys, bms, 2);
    EXPECT_CORRUPT(&k, "key 3 is not greater", -1);
    icd_buf_free(&k);
    roaring_bitmap_free(bms[0]);
    roaring_bitmap_free(bms[1]);
}

static void test_container_errors(void)
{
    /* A bitmap container whose popcount disagrees with the header. */
    roaring_bitmap_t *bm = roaring_bitmap_create();
    roaring_bitmap_add_range(bm, 0, 5000);
    roaring_bitmap_remove_run_compression(bm);
    uint32_t key = 0;
    icd_buf b = ICD_BUF_INIT;
    tu_dv_blob(&b, &key, &bm, 1);
    CHECK_EQ_INT(b.len, 36 + 8192 + 4);
    b.data[36 + 8191] = 0x40; /* one more bit set: value 65534 */
    tu_dv_fix((uint8_t *)b.data, b.len);
    EXPECT_CORRUPT(&b, "bitmap holds 5001 values, header says 5000", 36);
    roaring_bitmap_free(bm);

    /* Run containers: two runs [10, 20) and [30, 40), run cookie, no offsets (1 container).
     * Blob layout: 20 cookie, 24 run flags, 25 key, 27 card - 1, 29 run count,
     * 31 start0, 33 len0, 35 start1, 37 len1, 39 CRC. */
    bm = roaring_bitmap_create();
    roaring_bitmap_add_range(bm, 10, 20);
    roaring_bitmap_add_range(bm, 30, 40);
    roaring_bitmap_run_optimize(bm);
    icd_buf_clear(&b);
    tu_dv_blob(&b, &key, &bm, 1);
    uint8_t *p = (uint8_t *)b.data;
    CHECK_EQ_INT(b.len, 43);
    CHECK(p[20] == 0x3b && p[21] == 0x30 && p[24] == 1); /* cookie 12347, run flag */
    CHECK(p[31] == 10 && p[33] == 9 && p[35] == 30);
    ice_posset *s;
    icd_error err;
    CHECK(decode(&b, 20, &s, NULL, &err) == 0);
    ice_posset_free(s);
    p[35] = 15; /* overlaps the first run */
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "runs overlap", 35);
    p[35] = 30;
    p[37] = 0xff; /* 30 + 0x09ff: the run sum no longer matches the header */
    p[38] = 0x09;
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "runs hold", 29);
    p[35] = 0xf0; /* start 0x09f0 ... */
    p[36] = 0xff; /* ... = 0xfff0, + 0x09ff passes 65535 */
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "passes 65535", 35);
    p[29] = 200; /* run count beyond the bytes */
    tu_dv_fix(p, b.len);
    EXPECT_CORRUPT(&b, "200 runs overrun", 29);
    roaring_bitmap_free(bm);
    icd_buf_free(&b);
}

/* A Puffin file with two DVs for two data files, read by offset/length (without the
 * footer) and through the validating variant. */
static void test_file_reads(void)
{
    roaring_bitmap_t *a = roaring_bitmap_of(2, 0, 9);
    roaring_bitmap_t *c = roaring_bitmap_of(3, 1, 2, 3);
    uint32_t key0 = 0, key5 = 5;
    icd_buf blobs = ICD_BUF_INIT;
    size_t off_a = 4 + tu_dv_blob(&blobs, &key0, &a, 1);
    size_t len_a = blobs.len;
    size_t off_c = 4 + tu_dv_blob(&blobs, &key5, &c, 1);
    size_t len_c = blobs.len + 4 - off_c;
    char json[1024];
    snprintf(json, sizeof json,
             "{\"blobs\":[{\"type\":\"deletion-vector-v1\",\"fields\":[2147483645],"
             "\"snapshot-id\":-1,\"sequence-number\":-1,\"offset\":%zu,\"length\":%zu,"
             "\"properties\":{\"referenced-data-file\":\"s3://b/a.parquet\",\"cardinality\":"
             "\"2\"}},{\"type\":\"deletion-vector-v1\",\"fields\":[2147483645],"
             "\"snapshot-id\":-1,\"sequence-number\":-1,\"offset\":%zu,\"length\":%zu,"
             "\"properties\":{\"referenced-data-file\":\"s3://b/c.parquet\",\"cardinality\":"
             "\"3\"}}],\"properties\":{\"created-by\":\"test\"}}",
             off_a, len_a, off_c, len_c);
    icd_buf file = ICD_BUF_INIT;
    tu_puffin_file(&file, (const uint8_t *)blobs.data, blobs.len, json, 0);
    char path[] = "/tmp/icd_dv_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK(tu_write_file(path, file.data, file.len) == 0);

    icd_error err;
    icd_fileio *io;
    CHECK(icd_fileio_new(&io, &err) == 0);
    ice_posset *s;
    CHECK(ice_dv_read(io, path, (int64_t)off_c, (int64_t)len_c, "s3://b/c.parquet", 3, &s, &err) ==
          0);
    CHECK(ice_posset_contains(s, (5ULL << 32) | 2) && !ice_posset_contains(s, 2));
    ice_posset_free(s);
    CHECK(ice_dv_read(io, path, (int64_t)off_a, (int64_t)len_a, NULL, 2, &s, &err) == 0);
    CHECK(ice_posset_contains(s, 9));
    ice_posset_free(s);
    CHECK(ice_dv_read_validated(io, path, (int64_t)off_a, (int64_t)len_a, "s3://b/a.parquet", 2, &s,
                                &err) == 0);
    CHECK_EQ_INT(ice_posset_cardinality(s), 2);
    ice_posset_free(s);
    /* The manifest's record_count disagrees. */
    CHECK(ice_dv_read(io, path, (int64_t)off_a, (int64_t)len_a, "s3://b/a.parquet", 3, &s, &err) ==
          ICD_ECORRUPT);
    CHECK(strstr(err.message, "for data file s3://b/a.parquet") != NULL);
    CHECK(strstr(err.message, "holds 2 positions but the metadata says 3") != NULL);
    CHECK_EQ_STR(err.file, path);
    /* The validating variant catches a DV of another data file ... */
    CHECK(ice_dv_read_validated(io, path, (int64_t)off_a, (int64_t)len_a, "s3://b/c.parquet", 2, &s,
                                &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "references 's3://b/a.parquet'") != NULL);
    /* ... a length that differs from the footer's ... */
    CHECK(ice_dv_read_validated(io, path, (int64_t)off_a, (int64_t)len_a - 1, NULL, -1, &s, &err) ==
          ICD_ECORRUPT);
    CHECK(strstr(err.message, "length of") != NULL);
    /* ... and an offset where no blob starts. */
    CHECK(ice_dv_read_validated(io, path, (int64_t)off_a + 1, 20, NULL, -1, &s, &err) ==
          ICD_ECORRUPT);
    CHECK(strstr(err.message, "no blob at offset") != NULL);
    /* Offsets from a bad manifest. */
    CHECK(ice_dv_read(io, path, -4, 20, NULL, -1, &s, &err) == ICD_ECORRUPT);
    CHECK(ice_dv_read(io, path, (int64_t)file.len - 10, 20, NULL, -1, &s, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "beyond the end of the file") != NULL);
    CHECK(ice_dv_read(io, path, (int64_t)off_a + 1, (int64_t)len_a, NULL, -1, &s, &err) ==
          ICD_ECORRUPT);
    CHECK_EQ_INT(err.offset, (int64_t)off_a + 1);
    CHECK(ice_dv_read(io, "/nonexistent/x.puffin", 4, 20, "d.parquet", -1, &s, &err) != 0);
    CHECK(s == NULL);
    icd_fileio_free(io);
    unlink(path);
    icd_buf_free(&file);
    icd_buf_free(&blobs);
    roaring_bitmap_free(a);
    roaring_bitmap_free(c);
}

/* Deletion vectors written by an independent encoder (tests/fuzz/gen_puffin_seeds.py, from
 * the format specifications) decode to the sets it was given. */
static void test_independent_writer(void)
{
    const char *src = getenv("ICD_SOURCE_DIR");
    if (!src) return; /* run outside CTest: nothing to compare against */
    struct {
        const char *name;
        uint64_t card, probe;
    } seeds[] = {{"dv_array.bin", 4, 1000},
                 {"dv_keys.bin", 32, 5ULL << 32 | 9},
                 {"dv_runs.bin", 32, 70000},
                 {"dv_empty.bin", 0, 0},
                 {"dv_bitmap.bin", 21846, 65535}};
    icd_error err;
    icd_fileio *io;
    CHECK(icd_fileio_new(&io, &err) == 0);
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/fuzz_puffin/%s", src, seeds[i].name);
        char *data;
        size_t len;
        CHECK(icd_fileio_read_small(io, path, 1 << 20, &data, &len, &err) == 0);
        ice_posset *s;
        CHECK(ice_dv_decode((uint8_t *)data, len, path, 0, (int64_t)seeds[i].card, 0, &s, NULL,
                            &err) == 0);
        if (s) {
            CHECK_EQ_INT(ice_posset_cardinality(s), seeds[i].card);
            CHECK(ice_posset_contains(s, seeds[i].probe) == (seeds[i].card > 0));
            CHECK(!ice_posset_contains(s, seeds[i].probe + 1));
            ice_posset_free(s);
        }
        free(data);
    }
    icd_fileio_free(io);
}

TEST_MAIN(TEST(test_array_no_run), TEST(test_bitmap_and_runs), TEST(test_empty),
          TEST(test_random_roundtrip), TEST(test_framing_errors), TEST(test_vector_errors),
          TEST(test_container_errors), TEST(test_file_reads), TEST(test_independent_writer))
