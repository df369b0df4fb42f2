/* Unit tests of base/varint.h and base/bits.h: the one varint decoder every format uses
 * (bounds, the 10-byte and 64-bit limits, its word-at-a-time path, zigzag) and the
 * byte-order loads. */
#include <stdint.h>

#include "base/bits.h"
#include "base/varint.h"
#include "test.h"

static void test_roundtrip(void)
{
    const uint64_t vals[] = {
        0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t)1 << 63, UINT64_MAX};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        icd_buf b = ICD_BUF_INIT;
        icd_uleb128_put(&b, vals[i]);
        CHECK(icd_buf_ok(&b));
        const uint8_t *p = (const uint8_t *)b.data;
        uint64_t got = 0;
        int n = icd_uleb128_decode(p, p + b.len, &got);
        CHECK_EQ_INT(n, (int64_t)b.len);
        CHECK(got == vals[i]);
        /* Every shorter prefix is truncated, and *out stays as it was. */
        for (size_t k = 0; k < b.len; k++) {
            uint64_t keep = 42;
            CHECK_EQ_INT(icd_uleb128_decode(p, p + k, &keep), ICD_VARINT_TRUNCATED);
            CHECK(keep == 42);
        }
        icd_buf_free(&b);
    }
    /* UINT64_MAX takes exactly ten bytes, the last one 0x01. */
    icd_buf b = ICD_BUF_INIT;
    icd_uleb128_put(&b, UINT64_MAX);
    CHECK_EQ_INT(b.len, 10);
    CHECK_EQ_INT((uint8_t)b.data[9], 1);
    icd_buf_free(&b);
}

static void test_limits(void)
{
    uint64_t v = 0;
    /* Tenth byte 0x02: a bit beyond 64. */
    const uint8_t over[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    CHECK_EQ_INT(icd_uleb128_decode(over, over + 10, &v), ICD_VARINT_OVERFLOW);
    /* Tenth byte with the continuation bit: longer than 10 bytes. */
    const uint8_t longer[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00};
    CHECK_EQ_INT(icd_uleb128_decode(longer, longer + 11, &v), ICD_VARINT_OVERFLOW);
    /* A non-minimal encoding of 0 in ten bytes is accepted (writers pad). */
    const uint8_t padded[10] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    CHECK_EQ_INT(icd_uleb128_decode(padded, padded + 10, &v), 10);
    CHECK(v == 0);
    /* Empty input. */
    CHECK_EQ_INT(icd_uleb128_decode(padded, padded, &v), ICD_VARINT_TRUNCATED);
}

static void test_zigzag(void)
{
    CHECK(icd_zigzag64(0) == 0);
    CHECK(icd_zigzag64(-1) == 1);
    CHECK(icd_zigzag64(1) == 2);
    CHECK(icd_zigzag64(INT64_MIN) == UINT64_MAX);
    CHECK(icd_zigzag64(INT64_MAX) == UINT64_MAX - 1);
    const int64_t vals[] = {0, -1, 1, -64, 64, INT32_MIN, INT64_MIN, INT64_MAX};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        CHECK(icd_unzigzag64(icd_zigzag64(vals[i])) == vals[i]);
}

static void test_bits(void)
{
    const uint8_t p[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88};
    CHECK(icd_load_le16(p) == 0x0201u);
    CHECK(icd_load_le32(p) == 0x04030201u);
    CHECK(icd_load_be32(p) == 0x01020304u);
    CHECK(icd_load_le64(p) == 0x8807060504030201ull);
}

/* With ten bytes or more to read the decoder takes a word at a time: varints of every
 * length, followed by bytes of either kind, decode as they do with nothing after them. */
static void test_word_at_a_time(void)
{
    for (int bits = 0; bits <= 64; bits++) {
        uint64_t val = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        for (int tail = 0; tail < 2; tail++) {
            icd_buf b = ICD_BUF_INIT;
            icd_uleb128_put(&b, val);
            size_t len = b.len;
            for (int k = 0; k < 12; k++)
                icd_buf_putc(&b, tail ? (char)0xff : 0x01);
            CHECK(icd_buf_ok(&b));
            const uint8_t *p = (const uint8_t *)b.data;
            uint64_t got = 0;
            CHECK_EQ_INT(icd_uleb128_decode(p, p + b.len, &got), (int64_t)len);
            CHECK(got == val);
            icd_buf_free(&b);
        }
    }
}

TEST_MAIN(TEST(test_roundtrip), TEST(test_limits), TEST(test_zigzag), TEST(test_bits),
          TEST(test_word_at_a_time))
