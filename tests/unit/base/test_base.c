/* Unit tests of base/: value formatting, calendar arithmetic, buffers, arenas. */
#include <math.h>
#include <stdlib.h>

#include "base/arena.h"
#include "base/datetime.h"
#include "base/jsonw.h"
#include "test.h"

#define FMT(call)                                                                                  \
    ({                                                                                             \
        icd_buf b_ = ICD_BUF_INIT;                                                                 \
        call;                                                                                      \
        static char out_[256];                                                                     \
        snprintf(out_, sizeof out_, "%s", b_.data ? b_.data : "");                                 \
        icd_buf_free(&b_);                                                                         \
        out_;                                                                                      \
    })

static void test_strings(void)
{
    CHECK_EQ_STR(FMT(icd_json_str(&b_, "a\"b\\c\n", 6)), "\"a\\\"b\\\\c\\n\"");
    CHECK_EQ_STR(FMT(icd_json_str(&b_, "\x01", 1)), "\"\\u0001\"");
    CHECK_EQ_STR(FMT(icd_json_str(&b_, "h\xc3\xa9", 3)), "\"h\xc3\xa9\"");
    CHECK_EQ_STR(FMT(icd_json_str(&b_,
                                  "a\xff"
                                  "b",
                                  3)),
                 "\"a\\ufffdb\"");
    CHECK_EQ_STR(FMT(icd_json_str(&b_, "\xc3", 1)), "\"\\ufffd\""); /* truncated seq */
    CHECK_EQ_STR(FMT(icd_json_str(&b_, "\xed\xa0\x80", 3)), "\"\\ufffd\\ufffd\\ufffd\"");
    CHECK_EQ_STR(FMT(icd_json_base64(&b_, (const uint8_t *)"ab", 2)), "\"YWI=\"");
    CHECK_EQ_STR(FMT(icd_json_base64(&b_, (const uint8_t *)"abc", 3)), "\"YWJj\"");
    CHECK_EQ_STR(FMT(icd_json_base64(&b_, (const uint8_t *)"a", 1)), "\"YQ==\"");
}

static void test_numbers(void)
{
    CHECK_EQ_STR(FMT(icd_json_i64(&b_, INT64_MIN)), "-9223372036854775808");
    /* every digit count, the 32-bit edge, negatives: icd_json_i64_at writes the same */
    static const int64_t vs[] = {0,          7,       10,       99,        100,
                                 12345,      4000090, 99999999, 100000000, 4294967295,
                                 4294967296, -1,      -4000090, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        char at[ICD_JSON_I64_MAX + 1];
        char *e = icd_json_i64_at(at, vs[i]);
        *e = '\0';
        char want[32];
        snprintf(want, sizeof want, "%lld", (long long)vs[i]);
        CHECK_EQ_STR(at, want);
        CHECK_EQ_STR(FMT(icd_json_i64(&b_, vs[i])), want);
    }
    CHECK_EQ_STR(FMT(icd_json_u64(&b_, UINT64_MAX)), "18446744073709551615");
    CHECK_EQ_STR(FMT(icd_json_double(&b_, 0.1)), "0.1");
    CHECK_EQ_STR(FMT(icd_json_double(&b_, -0.0)), "-0.0");
    CHECK_EQ_STR(FMT(icd_json_double(&b_, 3.0)), "3.0");
    CHECK_EQ_STR(FMT(icd_json_double(&b_, NAN)), "\"NaN\"");
    CHECK_EQ_STR(FMT(icd_json_double(&b_, -INFINITY)), "\"-Infinity\"");
    CHECK_EQ_STR(FMT(icd_json_float(&b_, 1.1f)), "1.1");
    CHECK(strtod(FMT(icd_json_double(&b_, 1.0 / 3)), NULL) == 1.0 / 3);
    CHECK_EQ_STR(FMT(icd_json_decimal_i64(&b_, 12340, 2)), "\"123.40\"");
    CHECK_EQ_STR(FMT(icd_json_decimal_i64(&b_, -5, 3)), "\"-0.005\"");
    CHECK_EQ_STR(FMT(icd_json_decimal_i64(&b_, 7, 0)), "\"7\"");
    const uint8_t be[2] = {0xff, 0x85}; /* -123 */
    CHECK_EQ_STR(FMT(icd_json_decimal_be(&b_, be, 2, 1)), "\"-12.3\"");
    /* 16 bytes: -(2^64) = 0xff..ff 00..00 */
    uint8_t big[16];
    memset(big, 0xff, 8);
    memset(big + 8, 0, 8);
    CHECK_EQ_STR(FMT(icd_json_decimal_be(&b_, big, 16, 2)), "\"-184467440737095516.16\"");
    uint8_t pos[16] = {0};
    pos[7] = 1; /* 2^64 */
    CHECK_EQ_STR(FMT(icd_json_decimal_be(&b_, pos, 16, 0)), "\"18446744073709551616\"");
}

static void test_dates(void)
{
    CHECK_EQ_INT(icd_days_from_civil(1970, 1, 1), 0);
    CHECK_EQ_INT(icd_days_from_civil(2000, 3, 1), 11017);
    CHECK_EQ_INT(icd_days_from_civil(1969, 12, 31), -1);
    for (int64_t d = -800000; d < 800000; d += 37) {
        int64_t y;
        int m, dd;
        icd_civil_from_days(d, &y, &m, &dd);
        if (icd_days_from_civil(y, m, dd) != d) {
            CHECK(0);
            break;
        }
    }
    CHECK_EQ_STR(FMT(icd_json_date(&b_, 0)), "\"1970-01-01\"");
    CHECK_EQ_STR(FMT(icd_json_date(&b_, icd_days_from_civil(290000, 12, 30))), "\"+290000-12-30\"");
    CHECK_EQ_STR(FMT(icd_json_date(&b_, icd_days_from_civil(-1, 1, 1))), "\"-0001-01-01\"");
    CHECK_EQ_STR(FMT(icd_json_timestamp(&b_, -1, 6, false)), "\"1969-12-31T23:59:59.999999\"");
    CHECK_EQ_STR(FMT(icd_json_timestamp(&b_, 1704067200123LL, 3, true)),
                 "\"2024-01-01T00:00:00.123+00:00\"");
    CHECK_EQ_STR(FMT(icd_json_time(&b_, 3723000000001LL, 9)), "\"01:02:03.000000001\"");
    const uint8_t u[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
                           0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0};
    CHECK_EQ_STR(FMT(icd_json_uuid(&b_, u)), "\"12345678-9abc-def0-1234-56789abcdef0\"");
}

static void test_buf_arena(void)
{
    icd_buf b = ICD_BUF_INIT;
    for (int i = 0; i < 10000; i++)
        icd_buf_printf(&b, "%d,", i);
    CHECK(icd_buf_ok(&b));
    CHECK(b.len > 40000);
    char *s = icd_buf_detach(&b);
    CHECK(s && !strncmp(s, "0,1,2,", 6));
    free(s);

    icd_arena a = ICD_ARENA_INIT;
    char *p = icd_arena_alloc(&a, 10);
    CHECK(p && ((uintptr_t)p % 16) == 0);
    char *big = icd_arena_alloc(&a, 1 << 20);
    CHECK(big != NULL);
    memset(big, 1, 1 << 20);
    icd_arena_reset(&a);
    CHECK(icd_arena_strdup(&a, "x") != NULL);
    icd_arena_free(&a);
}

/* Writers may fill the room past len before they set it (a decompressor growing its
 * output): a growth keeps those bytes, across the huge-page threshold too. */
static void test_buf_room_kept(void)
{
    icd_buf b = ICD_BUF_INIT;
    size_t filled = 0, bad = 0;
    for (size_t want = 1000; want < ((size_t)12 << 20); want *= 3) {
        CHECK(icd_buf_grow(&b, want));
        for (; filled < want; filled++) /* len stays 0 */
            b.data[filled] = (char)(filled * 13 + 1);
    }
    for (size_t i = 0; i < filled; i++)
        bad += b.data[i] != (char)(i * 13 + 1);
    CHECK_EQ_INT(bad, 0);
    CHECK(b.cap >= ((size_t)12 << 20) / 3);
    icd_buf_free(&b);
}

TEST_MAIN(TEST(test_strings), TEST(test_numbers), TEST(test_dates), TEST(test_buf_arena),
          TEST(test_buf_room_kept))
