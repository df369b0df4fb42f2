/*
 * The request headers of `serve`'s file route (druid/serve/server.h): Range (RFC 9110 14.1.2:
 * bytes=N-, bytes=N-M, bytes=-K; what is ignored, what is 416) and the entity-tag lists
 * of If-None-Match / If-Range.
 */
#include "druid/serve/server.h"
#include "test.h"

static int range(const char *h, uint64_t size, uint64_t *a, uint64_t *b)
{
    *a = *b = 12345;
    return dr_http_parse_range(h, size, a, b);
}

static void test_ranges(void)
{
    uint64_t a, b;
    CHECK_EQ_INT(range("bytes=0-", 100, &a, &b), 1);
    CHECK(a == 0 && b == 99);
    CHECK_EQ_INT(range("bytes=40-", 100, &a, &b), 1);
    CHECK(a == 40 && b == 99);
    CHECK_EQ_INT(range("bytes=99-", 100, &a, &b), 1);
    CHECK(a == 99 && b == 99);
    CHECK_EQ_INT(range("bytes=10-19", 100, &a, &b), 1);
    CHECK(a == 10 && b == 19);
    CHECK_EQ_INT(range("bytes=10-1000", 100, &a, &b), 1); /* last clipped to the size */
    CHECK(a == 10 && b == 99);
    CHECK_EQ_INT(range("bytes=-10", 100, &a, &b), 1);
    CHECK(a == 90 && b == 99);
    CHECK_EQ_INT(range("bytes=-1000", 100, &a, &b), 1); /* the whole file */
    CHECK(a == 0 && b == 99);
    CHECK_EQ_INT(range("BYTES=5-", 100, &a, &b), 1); /* the unit is case-insensitive */
    CHECK(a == 5);
    /* unsatisfiable: 416 */
    CHECK_EQ_INT(range("bytes=100-", 100, &a, &b), -1);
    CHECK_EQ_INT(range("bytes=100-200", 100, &a, &b), -1);
    CHECK_EQ_INT(range("bytes=-0", 100, &a, &b), -1);
    CHECK_EQ_INT(range("bytes=0-", 0, &a, &b), -1);
    /* ignored (the whole file, 200) */
    CHECK_EQ_INT(range("items=0-5", 100, &a, &b), 0);
    CHECK_EQ_INT(range("bytes=5-4", 100, &a, &b), 0);
    CHECK_EQ_INT(range("bytes=0-1,5-6", 100, &a, &b), 0);
    CHECK_EQ_INT(range("bytes=", 100, &a, &b), 0);
    CHECK_EQ_INT(range("bytes=-", 100, &a, &b), 0);
    CHECK_EQ_INT(range("bytes=x-", 100, &a, &b), 0);
    CHECK_EQ_INT(range("bytes=1-2x", 100, &a, &b), 0);
    CHECK_EQ_INT(range("bytes=99999999999999999999-", 100, &a, &b), 0); /* overflow */
    CHECK_EQ_INT(range("bytes=+5-", 100, &a, &b), 0);
}

static void test_etags(void)
{
    CHECK(dr_http_etag_listed("\"abc\"", "abc", true));
    CHECK(dr_http_etag_listed("W/\"abc\"", "abc", true));
    CHECK(dr_http_etag_listed("\"x\", \"abc\"", "abc", true));
    CHECK(dr_http_etag_listed("*", "abc", true));
    CHECK(!dr_http_etag_listed("*", "abc", false));
    CHECK(!dr_http_etag_listed("\"abcd\"", "abc", true));
    CHECK(!dr_http_etag_listed("\"ab\"", "abc", true));
    CHECK(!dr_http_etag_listed("abc", "abc", true)); /* not a quoted tag */
    CHECK(!dr_http_etag_listed("\"abc", "abc", true));
    CHECK(!dr_http_etag_listed("", "abc", true));
}

TEST_MAIN(TEST(test_ranges), TEST(test_etags))
