/* Unit tests of iceberg/puffin: footer parsing (plain and LZ4), blob reads with lz4/zstd
 * codecs, and clear errors for every malformed footer. */
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "iceberg/deletes/puffin.h"
#include "puffin_testutil.h"
#include "test.h"

/* Blob area: "hello" at 4 (5 bytes), a zstd frame of `text`, an LZ4 frame of `text`. */
static const char text[] = "the quick brown fox jumps over the lazy dog, again and again and again";

typedef struct fixture {
    icd_buf blobs;
    size_t zoff, zlen, loff, llen;
} fixture;

static void make_blobs(fixture *f)
{
    f->blobs = (icd_buf)ICD_BUF_INIT;
    icd_buf_append(&f->blobs, "hello", 5);
    char z[256];
    size_t zl = ZSTD_compress(z, sizeof z, text, sizeof text - 1, 3);
    f->zoff = 4 + f->blobs.len;
    f->zlen = zl;
    icd_buf_append(&f->blobs, z, zl);
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.contentSize = sizeof text - 1;
    char l[512];
    size_t ll = LZ4F_compressFrame(l, sizeof l, text, sizeof text - 1, &prefs);
    f->loff = 4 + f->blobs.len;
    f->llen = ll;
    icd_buf_append(&f->blobs, l, ll);
}

static char *footer_json(const fixture *f)
{
    icd_buf j = ICD_BUF_INIT;
    icd_buf_printf(&j,
                   "{\"blobs\":["
                   "{\"type\":\"raw\",\"fields\":[1,2],\"snapshot-id\":7,\"sequence-number\":3,"
                   "\"offset\":4,\"length\":5,\"properties\":{\"k\":\"v\",\"k2\":\"\"}},"
                   "{\"type\":\"apache-datasketches-theta-v1\",\"fields\":[],\"snapshot-id\":-1,"
                   "\"sequence-number\":-1,\"offset\":%zu,\"length\":%zu,"
                   "\"compression-codec\":\"zstd\"},"
                   "{\"type\":\"x\",\"fields\":[-5],\"snapshot-id\":1,\"sequence-number\":1,"
                   "\"offset\":%zu,\"length\":%zu,\"compression-codec\":\"lz4\","
                   "\"future-field\":{\"a\":[1]}}"
                   "],\"properties\":{\"created-by\":\"unit test\"}}",
                   f->zoff, f->zlen, f->loff, f->llen);
    return icd_buf_detach(&j);
}

static void check_footer(ice_puffin *p, const fixture *f)
{
    CHECK_EQ_INT(p->nblobs, 3);
    CHECK_EQ_INT(p->footer_offset, 4 + f->blobs.len);
    const ice_puffin_blob *b = &p->blobs[0];
    CHECK_EQ_STR(b->type, "raw");
    CHECK(b->nfields == 2 && b->fields[0] == 1 && b->fields[1] == 2);
    CHECK(b->snapshot_id == 7 && b->sequence_number == 3);
    CHECK(b->offset == 4 && b->length == 5 && b->codec == NULL);
    CHECK_EQ_STR(ice_puffin_prop_get(b->props, b->nprops, "k"), "v");
    CHECK_EQ_STR(ice_puffin_prop_get(b->props, b->nprops, "k2"), "");
    CHECK(ice_puffin_prop_get(b->props, b->nprops, "nope") == NULL);
    CHECK_EQ_STR(p->blobs[1].codec, "zstd");
    CHECK(p->blobs[1].nfields == 0 && p->blobs[1].snapshot_id == -1);
    CHECK_EQ_STR(p->blobs[2].codec, "lz4");
    CHECK(p->blobs[2].nfields == 1 && p->blobs[2].fields[0] == -5);
    CHECK_EQ_STR(ice_puffin_prop_get(p->props, p->nprops, "created-by"), "unit test");
    CHECK(ice_puffin_find_blob(p, f->loff) == &p->blobs[2]);
    CHECK(ice_puffin_find_blob(p, 5) == NULL);

    icd_error err;
    uint8_t *out;
    size_t len;
    CHECK(ice_puffin_read_blob(p, &p->blobs[0], 100, &out, &len, &err) == 0);
    CHECK(len == 5 && !memcmp(out, "hello", 5));
    free(out);
    for (int i = 1; i <= 2; i++) {
        CHECK(ice_puffin_read_blob(p, &p->blobs[i], 1000, &out, &len, &err) == 0);
        CHECK(len == sizeof text - 1 && !memcmp(out, text, len));
        free(out);
        /* Larger than the caller allows: refused, not truncated. */
        CHECK(ice_puffin_read_blob(p, &p->blobs[i], 10, &out, &len, &err) == ICD_EUNSUPPORTED);
        CHECK(out == NULL);
    }
    CHECK(ice_puffin_read_blob(p, &p->blobs[0], 4, &out, &len, &err) == ICD_EUNSUPPORTED);
}

static void test_plain_and_lz4_footers(void)
{
    fixture f;
    make_blobs(&f);
    char *json = footer_json(&f);
    for (int compress = 0; compress <= 1; compress++) {
        icd_buf file = ICD_BUF_INIT;
        tu_puffin_file(&file, (const uint8_t *)f.blobs.data, f.blobs.len, json, compress);
        icd_error err;
        ice_puffin *p;
        /* From memory ... */
        CHECK(ice_puffin_open_buffer((const uint8_t *)file.data, file.len, "mem.puffin", &p,
                                     &err) == 0);
        if (p) {
            CHECK(p->compressed == (compress == 1));
            check_footer(p, &f);
            ice_puffin_close(p);
        }
        /* ... and from a file. */
        char path[] = "/tmp/icd_puffin_XXXXXX";
        int fd = mkstemp(path);
        close(fd);
        CHECK(tu_write_file(path, file.data, file.len) == 0);
        icd_fileio *io;
        icd_fileio_new(&io, &err);
        CHECK(ice_puffin_open(io, path, &p, &err) == 0);
        if (p) {
            check_footer(p, &f);
            ice_puffin_close(p);
        }
        icd_fileio_free(io);
        unlink(path);
        icd_buf_free(&file);
    }
    free(json);
    icd_buf_free(&f.blobs);
}

/* Opens `file` from memory and expects an error of class `code` mentioning `what`. */
static void expect_fail(const icd_buf *file, int code, const char *what, int64_t at, int line)
{
    icd_error err;
    icd_error_clear(&err);
    ice_puffin *p = (ice_puffin *)1;
    int rc = ice_puffin_open_buffer((const uint8_t *)file->data, file->len, "bad.puffin", &p, &err);
    if (rc != code || p != NULL || !strstr(err.message, what) || strcmp(err.file, "bad.puffin") ||
        (at >= 0 && err.offset != at)) {
        fprintf(stderr, "line %d: rc %d offset %lld: %s\n", line, rc, (long long)err.offset,
                err.message);
        CHECK(0);
    } else {
        CHECK(1);
    }
}
#define EXPECT_FAIL(file, code, what, at) expect_fail(file, code, what, at, __LINE__)

static void with_json(icd_buf *file, const char *json)
{
    icd_buf_clear(file);
    tu_puffin_file(file, (const uint8_t *)"0123456789", 10, json, 0);
}

static void test_footer_errors(void)
{
    icd_buf file = ICD_BUF_INIT;
    const char *good = "{\"blobs\":[]}";
    with_json(&file, good);
    icd_error err;
    ice_puffin *p;
    CHECK(ice_puffin_open_buffer((const uint8_t *)file.data, file.len, "x", &p, &err) == 0);
    CHECK(p && p->nblobs == 0);
    ice_puffin_close(p);
    size_t n = file.len;
    /* Magic at the start, at the end, and before the payload. */
    file.data[0] = 'X';
    EXPECT_FAIL(&file, ICD_ECORRUPT, "no PFA1 magic at the start", 0);
    file.data[0] = 'P';
    file.data[n - 1] = 'X';
    EXPECT_FAIL(&file, ICD_ECORRUPT, "no PFA1 magic at the end", (int64_t)n - 4);
    file.data[n - 1] = '1';
    file.data[n - 12] += 1; /* payload size one larger: the footer magic is not where said */
    EXPECT_FAIL(&file, ICD_ECORRUPT, "does not start with the PFA1 magic", 13);
    file.data[n - 12] = (char)0xff; /* size 0x..ff: beyond the file */
    file.data[n - 11] = (char)0x7f;
    EXPECT_FAIL(&file, ICD_ECORRUPT, "does not fit", (int64_t)n - 12);
    file.data[n - 11] = 0;
    file.data[n - 12] = (char)strlen(good);
    file.data[n - 7] = 0x10; /* a flag bit nobody defined */
    EXPECT_FAIL(&file, ICD_EUNSUPPORTED, "unknown flags", (int64_t)n - 8);
    file.data[n - 7] = 0;
    file.data[n - 8] = 1; /* "compressed", but the payload is plain JSON */
    EXPECT_FAIL(&file, ICD_ECORRUPT, "LZ4", -1);
    file.data[n - 8] = 0;
    /* Every truncation fails cleanly. */
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        icd_buf t = ICD_BUF_INIT;
        icd_buf_append(&t, file.data, k);
        if (ice_puffin_open_buffer((const uint8_t *)t.data, t.len, "t", &p, &err) != ICD_ECORRUPT)
            bad++;
        icd_buf_free(&t);
    }
    CHECK_EQ_INT(bad, 0);

    /* JSON problems; the first points into the payload (at 18) just past the bad token,
     * the '}' at payload byte 10 (jansson counts the bytes it has read). */
    with_json(&file, "{\"blobs\":[}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "not valid JSON", 18 + 11);
    with_json(&file, "[]");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "no \"blobs\" list", 18);
    with_json(&file, "{\"blobs\":{}}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "no \"blobs\" list", -1);
    with_json(&file, "{\"blobs\":[],\"blobs\":[]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "not valid JSON", -1);
    with_json(&file, "{\"blobs\":[5]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "blob 0 is not a JSON object", -1);
    with_json(&file, "{\"blobs\":[{\"fields\":[],\"snapshot-id\":1,\"sequence-number\":1,"
                     "\"offset\":4,\"length\":1}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "no string \"type\"", -1);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"snapshot-id\":1,\"sequence-number\":1,"
                     "\"offset\":4,\"length\":1}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "no \"fields\" list", -1);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[1.5],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":4,\"length\":1}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "not a 32-bit integer", -1);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[4294967296],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":4,\"length\":1}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "not a 32-bit integer", -1);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"sequence-number\":1,"
                     "\"offset\":4,\"length\":1}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "lacks the required field \"snapshot-id\"", -1);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":\"4\",\"length\":1}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "\"offset\" is not an integer", -1);
    /* Blob bounds: the blob area is [4, 14). */
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":4,\"length\":10}]}");
    CHECK(ice_puffin_open_buffer((const uint8_t *)file.data, file.len, "x", &p, &err) == 0);
    ice_puffin_close(p);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":4,\"length\":11}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "outside the blob area [4, 14)", 4);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":0,\"length\":1}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "outside the blob area", 0);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":9223372036854775807,\"length\":"
                     "9223372036854775807}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "outside the blob area", -1);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":5,\"length\":-1}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "outside the blob area", -1);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":4,\"length\":1,\"properties\":{\"a\":1}}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "property \"a\" is not a string", -1);
    with_json(&file, "{\"blobs\":[],\"properties\":[]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "file properties are not a JSON object", -1);
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":4,\"length\":1,"
                     "\"compression-codec\":7}]}");
    EXPECT_FAIL(&file, ICD_ECORRUPT, "compression-codec is not a string", -1);
    /* An unknown codec parses (inspect can list it) but its blob cannot be read. */
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":4,\"length\":1,"
                     "\"compression-codec\":\"brotli\"}]}");
    CHECK(ice_puffin_open_buffer((const uint8_t *)file.data, file.len, "x", &p, &err) == 0);
    uint8_t *out;
    size_t len;
    CHECK(ice_puffin_read_blob(p, &p->blobs[0], 100, &out, &len, &err) == ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "brotli") != NULL);
    ice_puffin_close(p);
    /* A zstd blob whose bytes are not a frame. */
    with_json(&file, "{\"blobs\":[{\"type\":\"t\",\"fields\":[],\"snapshot-id\":1,"
                     "\"sequence-number\":1,\"offset\":4,\"length\":10,"
                     "\"compression-codec\":\"zstd\"}]}");
    CHECK(ice_puffin_open_buffer((const uint8_t *)file.data, file.len, "x", &p, &err) == 0);
    CHECK(ice_puffin_read_blob(p, &p->blobs[0], 100, &out, &len, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "Zstandard") != NULL);
    ice_puffin_close(p);
    icd_buf_free(&file);
}

static void test_codec_errors(void)
{
    uint8_t *out;
    size_t len;
    icd_error err;
    char z[256];
    size_t zl = ZSTD_compress(z, sizeof z, text, sizeof text - 1, 3);
    /* Truncated and padded frames. */
    CHECK(ice_puffin_decompress("zstd", (uint8_t *)z, zl - 1, 1000, "f", 8, &out, &len, &err) ==
          ICD_ECORRUPT);
    z[zl] = 0;
    CHECK(ice_puffin_decompress("zstd", (uint8_t *)z, zl + 1, 1000, "f", 8, &out, &len, &err) ==
          ICD_ECORRUPT);
    CHECK(strstr(err.message, "after the end") != NULL);
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    char l[512];
    size_t ll = LZ4F_compressFrame(l, sizeof l, text, sizeof text - 1, &prefs); /* no size */
    CHECK(ice_puffin_decompress("lz4", (uint8_t *)l, ll, 1000, "f", 8, &out, &len, &err) == 0);
    CHECK(len == sizeof text - 1 && !memcmp(out, text, len));
    free(out);
    CHECK(ice_puffin_decompress("lz4", (uint8_t *)l, ll - 1, 1000, "f", 8, &out, &len, &err) ==
          ICD_ECORRUPT);
    CHECK(ice_puffin_decompress("lz4", (uint8_t *)l, ll, 20, "f", 8, &out, &len, &err) ==
          ICD_EUNSUPPORTED);
    CHECK(ice_puffin_decompress("snappy", (uint8_t *)l, ll, 20, "f", 8, &out, &len, &err) ==
          ICD_EUNSUPPORTED);
}

TEST_MAIN(TEST(test_plain_and_lz4_footers), TEST(test_footer_errors), TEST(test_codec_errors))
