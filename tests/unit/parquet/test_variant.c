/*
 * Variant binary decoding (formats/parquet/variant.c). Every value is a byte string built
 * by hand from the Parquet VariantEncoding.md layout (header byte = basic_type |
 * value_header << 2; little-endian sizes and offsets), and every expected JSON text is
 * worked out by hand from the spec and design.md §3 (dates, timestamps and the 10^20
 * decimal were computed independently with Python's datetime / int.to_bytes).
 */
#include <stdlib.h>

#include "formats/parquet/variant.h"
#include "test.h"

/* Metadata with an empty dictionary: version 1, 1-byte offsets, size 0, offsets [0]. */
static const uint8_t EMPTY_META[] = {0x01, 0x00, 0x00};
/* Dictionary ["a", "b"]. */
static const uint8_t AB_META[] = {0x01, 0x02, 0x00, 0x01, 0x02, 'a', 'b'};

static char *render(const uint8_t *m, size_t mn, const uint8_t *v, size_t vn, int *rc)
{
    static icd_buf out = ICD_BUF_INIT;
    static char text[4096];
    icd_error err;
    icd_error_clear(&err);
    icd_buf_clear(&out);
    icd_buf_puts(&out, "<");
    *rc = pq_variant_to_json(&out, m, mn, v, vn, &err);
    if (*rc) {
        /* a failure leaves the buffer as it was */
        snprintf(text, sizeof text, "ERR %d %s|%s", *rc, err.message, out.data);
    } else {
        snprintf(text, sizeof text, "%s", out.data + 1);
    }
    return text;
}

#define PRIM(bytes, expect)                                                                        \
    do {                                                                                           \
        static const uint8_t v_[] = bytes;                                                         \
        int rc_;                                                                                   \
        CHECK_EQ_STR(render(EMPTY_META, sizeof EMPTY_META, v_, sizeof v_, &rc_), expect);          \
        CHECK_EQ_INT(rc_, 0);                                                                      \
    } while (0)
#define B(...)                                                                                     \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

static void test_primitives(void)
{
    PRIM(B(0x00), "null");
    PRIM(B(0x04), "true");
    PRIM(B(0x08), "false");
    PRIM(B(0x0C, 0xFB), "-5");                                           /* int8 */
    PRIM(B(0x10, 0xD4, 0xFE), "-300");                                   /* int16 */
    PRIM(B(0x14, 0x40, 0xE2, 0x01, 0x00), "123456");                     /* int32 */
    PRIM(B(0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF), "-1"); /* int64 */
    PRIM(B(0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80), "-9223372036854775808");
    PRIM(B(0x1C, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F), "1.5"); /* double */
    PRIM(B(0x1C, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F), "\"NaN\"");
    PRIM(B(0x1C, 0, 0, 0, 0, 0, 0, 0xF0, 0xFF), "\"-Infinity\"");
    PRIM(B(0x20, 0x02, 0x39, 0x30, 0x00, 0x00), "\"123.45\""); /* decimal4 */
    PRIM(B(0x20, 0x00, 0xF9, 0xFF, 0xFF, 0xFF), "\"-7\"");
    PRIM(B(0x24, 0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF),
         "\"-0.001\""); /* decimal8 */
    PRIM(B(0x28, 0x00, 0x00, 0x00, 0x10, 0x63, 0x2d, 0x5e, 0xc7, 0x6b, 0x05, 0, 0, 0, 0, 0, 0, 0),
         "\"100000000000000000000\""); /* decimal16: 10^20 */
    PRIM(B(0x28, 0x02, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
           0xFF, 0xFF, 0xFF),
         "\"-0.02\"");
    PRIM(B(0x2C, 0x38, 0x4A, 0x00, 0x00), "\"2022-01-08\""); /* date 19000 */
    /* timestamp micros 1700000000123456 = 0x00060A24_18202240 */
    PRIM(B(0x30, 0x40, 0x22, 0x20, 0x18, 0x24, 0x0A, 0x06, 0x00),
         "\"2023-11-14T22:13:20.123456+00:00\"");
    PRIM(B(0x34, 0x40, 0x22, 0x20, 0x18, 0x24, 0x0A, 0x06, 0x00), "\"2023-11-14T22:13:20.123456\"");
    PRIM(B(0x34, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF), "\"1969-12-31T23:59:59.999999\"");
    PRIM(B(0x38, 0x00, 0x00, 0x80, 0x3E), "0.25");                    /* float */
    PRIM(B(0x3C, 0x03, 0x00, 0x00, 0x00, 'a', 'b', 'c'), "\"YWJj\""); /* binary */
    PRIM(B(0x3C, 0x03, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x10), "\"AP8Q\"");
    PRIM(B(0x40, 0x06, 0x00, 0x00, 0x00, 'h', 0xC3, 0xA9, 'l', 'l', 'o'), "\"h\xC3\xA9llo\"");
    PRIM(B(0x40, 0x02, 0x00, 0x00, 0x00, 'x', 0xFF), "\"x\\ufffd\""); /* invalid UTF-8 */
    /* time 3723000001 us = 0xDDE878C1 */
    PRIM(B(0x44, 0xC1, 0x78, 0xE8, 0xDD, 0x00, 0x00, 0x00, 0x00), "\"01:02:03.000001\"");
    PRIM(B(0x48, 0x01, 0, 0, 0, 0, 0, 0, 0), "\"1970-01-01T00:00:00.000000001+00:00\"");
    PRIM(B(0x4C, 0x01, 0, 0, 0, 0, 0, 0, 0), "\"1970-01-01T00:00:00.000000001\"");
    PRIM(B(0x50, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
           0xcd, 0xef),
         "\"12345678-9abc-def0-0123-456789abcdef\"");
    PRIM(B(0x09, 'h', 'i'), "\"hi\""); /* short string */
    PRIM(B(0x01), "\"\"");
    PRIM(B(0x05, '"'), "\"\\\"\"");
}

static void test_nested(void)
{
    int rc;
    /* {"a":1,"b":[true,null]} */
    static const uint8_t obj[] = {0x02, 0x02, 0x00, 0x01, 0x00, 0x02, 0x09, 0x0C,
                                  0x01, 0x03, 0x02, 0x00, 0x01, 0x02, 0x04, 0x00};
    CHECK_EQ_STR(render(AB_META, sizeof AB_META, obj, sizeof obj, &rc),
                 "{\"a\":1,\"b\":[true,null]}");
    /* values stored out of order: "b" (2) first, then "a" ("x") */
    static const uint8_t ooo[] = {0x02, 0x02, 0x00, 0x01, 0x02, 0x00, 0x04, 0x0C, 0x02, 0x05, 'x'};
    CHECK_EQ_STR(render(AB_META, sizeof AB_META, ooo, sizeof ooo, &rc), "{\"a\":\"x\",\"b\":2}");
    /* empty object and array */
    static const uint8_t eo[] = {0x02, 0x00, 0x00}, ea[] = {0x03, 0x00, 0x00};
    CHECK_EQ_STR(render(EMPTY_META, sizeof EMPTY_META, eo, sizeof eo, &rc), "{}");
    CHECK_EQ_STR(render(EMPTY_META, sizeof EMPTY_META, ea, sizeof ea, &rc), "[]");
    /* is_large array (4-byte count), 2-byte offsets: [[], "z"] */
    static const uint8_t big[] = {0x03 | (((1 << 2) | 1) << 2),
                                  0x02,
                                  0,
                                  0,
                                  0,
                                  0x00,
                                  0x00,
                                  0x03,
                                  0x00,
                                  0x05,
                                  0x00,
                                  0x03,
                                  0x00,
                                  0x00,
                                  0x05,
                                  'z'};
    CHECK_EQ_STR(render(EMPTY_META, sizeof EMPTY_META, big, sizeof big, &rc), "[[],\"z\"]");
    /* metadata with 2-byte offsets; object with 2-byte ids and 3-byte offsets, is_large:
     * {"key":{"b":[]}} with dictionary ["key", "b"] */
    static const uint8_t meta2[] = {0x41, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00,
                                    0x04, 0x00, 'k',  'e',  'y',  'b'};
    static const uint8_t obj2b[] = {0x02 | ((1 << 4 | 1 << 2 | 2) << 2),
                                    0x01,
                                    0,
                                    0,
                                    0,
                                    0x00,
                                    0x00,
                                    0x00,
                                    0x00,
                                    0x00,
                                    0x08,
                                    0x00,
                                    0x00,
                                    0x02,
                                    0x01,
                                    0x01,
                                    0x00,
                                    0x03,
                                    0x03,
                                    0x00,
                                    0x00};
    CHECK_EQ_STR(render(meta2, sizeof meta2, obj2b, sizeof obj2b, &rc), "{\"key\":{\"b\":[]}}");
    CHECK_EQ_INT(rc, 0);
    /* arrays nested 100 deep (under the limit) */
    enum { DEEP = 100 };
    uint8_t *deep = malloc(4 + 6 * DEEP);
    size_t len = 1;
    size_t start = 6 * DEEP + 3;
    deep[start] = 0x00;
    for (int i = 0; i < DEEP; i++) {
        /* 0x07: array, 2-byte offsets; count 1; offsets 0, len */
        start -= 6;
        deep[start] = 0x07;
        deep[start + 1] = 0x01;
        deep[start + 2] = 0x00;
        deep[start + 3] = 0x00;
        deep[start + 4] = (uint8_t)(len & 0xff);
        deep[start + 5] = (uint8_t)(len >> 8);
        len += 6;
    }
    char expect[2 * DEEP + 8];
    memset(expect, '[', DEEP);
    memcpy(expect + DEEP, "null", 4);
    memset(expect + DEEP + 4, ']', DEEP);
    expect[2 * DEEP + 4] = '\0';
    CHECK_EQ_STR(render(EMPTY_META, sizeof EMPTY_META, deep + start, len, &rc), expect);
    free(deep);
}

#define BAD(meta, bytes, code, text)                                                               \
    do {                                                                                           \
        static const uint8_t v_[] = bytes;                                                         \
        int rc_;                                                                                   \
        const char *got_ = render(meta, sizeof meta, v_, sizeof v_, &rc_);                         \
        CHECK_EQ_INT(rc_, code);                                                                   \
        CHECK(strstr(got_, text) != NULL);                                                         \
        CHECK(strstr(got_, "|<") != NULL); /* buffer restored */                                   \
        if (!strstr(got_, text)) fprintf(stderr, "  got: %s\n", got_);                             \
    } while (0)

static void test_corrupt(void)
{
    static const uint8_t v2[] = {0x02, 0x00, 0x00};
    static const uint8_t toobig[] = {0x01, 0x05, 0x00};
    static const uint8_t pastend[] = {0x01, 0x01, 0x00, 0x09, 'a'};
    static const uint8_t truncated[] = {0x81, 0x01};
    BAD(v2, B(0x00), ICD_ECORRUPT, "version 2");
    BAD(toobig, B(0x00), ICD_ECORRUPT, "does not fit");
    BAD(pastend, B(0x00), ICD_ECORRUPT, "past the");
    BAD(truncated, B(0x00), ICD_ECORRUPT, "truncated header");
    BAD(EMPTY_META, B(0x14, 0x01, 0x02), ICD_ECORRUPT, "truncated primitive");
    BAD(EMPTY_META, B(0x40, 0x09, 0x00, 0x00, 0x00, 'a'), ICD_ECORRUPT, "past the end of a string");
    BAD(EMPTY_META, B(0x3C, 0x01, 0x00), ICD_ECORRUPT, "truncated length of a binary");
    BAD(EMPTY_META, B(0x0D, 'a'), ICD_ECORRUPT, "short string");
    BAD(EMPTY_META, B(0x20, 39, 0, 0, 0, 0), ICD_ECORRUPT, "scale above 38");
    BAD(EMPTY_META, B(0x44, 0x00, 0x60, 0xD7, 0x1D, 0x14, 0x00, 0x00, 0x00), ICD_ECORRUPT,
        "time of day");
    BAD(EMPTY_META, B(0x54), ICD_EUNSUPPORTED, "type id 21");
    BAD(EMPTY_META, B(0x02, 0x01, 0x00, 0x00, 0x01, 0x00), ICD_ECORRUPT, "field id 0");
    BAD(AB_META, B(0x02, 0x01, 0x00, 0x00, 0x05, 0x00), ICD_ECORRUPT, "last offset");
    BAD(AB_META, B(0x02, 0x02, 0x00, 0x01, 0x00), ICD_ECORRUPT, "field ids and offsets");
    BAD(AB_META, B(0x03, 0x02, 0x00, 0x01, 0x00), ICD_ECORRUPT, "element offset out of range");
    BAD(AB_META, B(0x03), ICD_ECORRUPT, "truncated element count");
    BAD(AB_META, B(0x13, 0x01, 0x00, 0x00), ICD_ECORRUPT, "truncated element count");
    /* an object whose key offsets are broken */
    static const uint8_t badkey[] = {0x01, 0x01, 0x02, 0x01, 'a', 'b'};
    BAD(badkey, B(0x02, 0x01, 0x00, 0x00, 0x01, 0x00), ICD_ECORRUPT, "bad offsets");
    int rc;
    CHECK(
        strstr(render(EMPTY_META, sizeof EMPTY_META, (const uint8_t *)"", 0, &rc), "empty value"));
    CHECK(strstr(render(EMPTY_META, 0, (const uint8_t *)"\0", 1, &rc), "metadata: empty"));

    /* 200 levels of nesting: over the limit */
    enum { DEEP = 200 };
    uint8_t *deep = malloc(6 * DEEP + 4);
    size_t start = 6 * DEEP + 3, len = 1;
    deep[start] = 0x00;
    for (int i = 0; i < DEEP; i++) {
        start -= 6;
        memcpy(deep + start,
               (uint8_t[]){0x07, 0x01, 0x00, 0x00, (uint8_t)(len & 0xff), (uint8_t)(len >> 8)}, 6);
        len += 6;
    }
    CHECK(strstr(render(EMPTY_META, sizeof EMPTY_META, deep + start, len, &rc), "nesting deeper"));
    CHECK_EQ_INT(rc, ICD_ECORRUPT);
    free(deep);

    /* arrays whose 200 elements all point at the same inner array: 200^2 values from 407
     * bytes; refused, not rendered */
    uint8_t inner[512];
    inner[0] = 0x00;
    /* level k: header, count 200, 201 one-byte offsets (all 0 but the last), level k-1 */
    size_t ilen = 1;
    for (int lvl = 0; lvl < 2; lvl++) {
        size_t o = 0;
        uint8_t tmp[sizeof inner];
        tmp[o++] = 0x03;
        tmp[o++] = 200;
        for (int i = 0; i < 200; i++)
            tmp[o++] = 0;
        tmp[o++] = (uint8_t)ilen;
        memcpy(tmp + o, inner, ilen);
        o += ilen;
        memcpy(inner, tmp, o);
        ilen = o;
        if (ilen > 255) break; /* the next level's one-byte offsets could not address it */
    }
    CHECK(strstr(render(EMPTY_META, sizeof EMPTY_META, inner, ilen, &rc), "overlap"));
    CHECK_EQ_INT(rc, ICD_ECORRUPT);
}

TEST_MAIN(TEST(test_primitives), TEST(test_nested), TEST(test_corrupt))
