/* Unit tests of iceberg/deletes/eq_key: the one canonical key encoding (reader, planner,
 * diff). Java equals semantics on the Iceberg value: every NaN equals every NaN, -0.0
 * differs from +0.0, a float equals the double it promotes to, int equals long, decimals
 * by value whatever their width, null equals only null; the literal path (partition
 * tuples) gives the same bytes as the value path (data and delete files). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "iceberg/deletes/eq_key.h"
#include "test.h"

static int key_eq(const ice_tvalue *a, const ice_tvalue *b)
{
    icd_buf x = ICD_BUF_INIT, y = ICD_BUF_INIT;
    ice_key_put(&x, a);
    ice_key_put(&y, b);
    int eq = x.len == y.len && !memcmp(x.data, y.data, x.len);
    icd_buf_free(&x);
    icd_buf_free(&y);
    return eq;
}

static ice_tvalue tv_double(double d)
{
    ice_tvalue v = {0};
    v.cls = ICE_TV_DOUBLE;
    v.d = d;
    return v;
}

static ice_tvalue tv_float(float f)
{
    ice_tvalue v = {0};
    v.cls = ICE_TV_FLOAT;
    v.f = f;
    return v;
}

static double nan_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

static void test_floats(void)
{
    /* NaN: quiet, signalling-payload, negative, and a float NaN: all one value */
    ice_tvalue qn = tv_double(nan_bits(0x7ff8000000000000ull));
    ice_tvalue pn = tv_double(nan_bits(0x7ff0000000000001ull));
    ice_tvalue nn = tv_double(nan_bits(0xfff8000000000123ull));
    ice_tvalue fn = tv_float(nanf(""));
    CHECK(key_eq(&qn, &pn));
    CHECK(key_eq(&qn, &nn));
    CHECK(key_eq(&qn, &fn));
    CHECK_EQ_INT(ice_key_double_bits(-NAN), 0x7ff8000000000000ull);
    /* -0.0 and +0.0 differ (Double.equals) */
    ice_tvalue pz = tv_double(0.0), nz = tv_double(-0.0);
    CHECK(!key_eq(&pz, &nz));
    ice_tvalue fnz = tv_float(-0.0f);
    CHECK(key_eq(&nz, &fnz));
    /* a float equals its double promotion; a double that no float holds does not */
    ice_tvalue f15 = tv_float(1.5f), d15 = tv_double(1.5);
    CHECK(key_eq(&f15, &d15));
    ice_tvalue f01 = tv_float(0.1f), d01 = tv_double(0.1);
    CHECK(!key_eq(&f01, &d01));
    ice_tvalue inf = tv_double(INFINITY), finf = tv_float(INFINITY);
    CHECK(key_eq(&inf, &finf));
    CHECK(!key_eq(&inf, &qn));
}

static void test_other_types(void)
{
    ice_tvalue null = {0}, null2 = {0};
    ice_tvalue zero = {0};
    zero.cls = ICE_TV_INT;
    CHECK(key_eq(&null, &null2));
    CHECK(!key_eq(&null, &zero));
    /* decimals: 64-bit unscaled, and big-endian of two widths, same value */
    static const uint8_t be1[] = {0xff, 0x85};             /* -123 */
    static const uint8_t be2[] = {0xff, 0xff, 0xff, 0x85}; /* -123, wider */
    ice_tvalue d64 = {0}, dbe1 = {0}, dbe2 = {0};
    d64.cls = ICE_TV_DEC64;
    d64.i = -123;
    dbe1.cls = dbe2.cls = ICE_TV_DECBE;
    dbe1.p = be1;
    dbe1.n = sizeof be1;
    dbe2.p = be2;
    dbe2.n = sizeof be2;
    CHECK(key_eq(&d64, &dbe1));
    CHECK(key_eq(&dbe1, &dbe2));
    /* strings: tuple boundaries are part of the key ("ab","c") != ("a","bc") */
    ice_tvalue ab = {0}, c = {0}, a = {0}, bc = {0};
    ab.cls = c.cls = a.cls = bc.cls = ICE_TV_STRING;
    ab.p = (const uint8_t *)"ab", ab.n = 2;
    c.p = (const uint8_t *)"c", c.n = 1;
    a.p = (const uint8_t *)"a", a.n = 1;
    bc.p = (const uint8_t *)"bc", bc.n = 2;
    icd_buf x = ICD_BUF_INIT, y = ICD_BUF_INIT;
    ice_key_put(&x, &ab);
    ice_key_put(&x, &c);
    ice_key_put(&y, &a);
    ice_key_put(&y, &bc);
    CHECK(x.len != y.len || memcmp(x.data, y.data, x.len));
    icd_buf_free(&x);
    icd_buf_free(&y);
}

/* The planner's literal path gives the reader's bytes. */
static void test_literal_path(void)
{
    struct {
        ice_literal l;
        ice_tvalue v;
    } cases[8];
    memset(cases, 0, sizeof cases);
    cases[0].l = ice_lit_int(7); /* int partition value vs a long read from a file */
    cases[0].v.cls = ICE_TV_INT;
    cases[0].v.i = 7;
    cases[1].l = ice_lit_float(2.5f); /* float partition vs double (promoted column) */
    cases[1].v = tv_double(2.5);
    cases[2].l = ice_lit_double(nan_bits(0x7ff0000000000abcull));
    cases[2].v = tv_float(nanf(""));
    static const uint8_t be[] = {0x00, 0x00, 0x30, 0x39}; /* 12345, padded */
    cases[3].l = ice_lit_decimal(be, sizeof be, 2);
    cases[3].v.cls = ICE_TV_DEC64;
    cases[3].v.i = 12345;
    cases[4].l = ice_lit_string("x=1", 3);
    cases[4].v.cls = ICE_TV_STRING;
    cases[4].v.p = (const uint8_t *)"x=1";
    cases[4].v.n = 3;
    cases[5].l = ice_lit_null(ICE_T_LONG);
    cases[6].l = ice_lit_null(ICE_T_STRING); /* (strings take a shortcut: null and empty) */
    cases[7].l = ice_lit_string("", 0);
    cases[7].v.cls = ICE_TV_STRING;
    cases[7].v.p = (const uint8_t *)"";
    cases[7].v.n = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        icd_buf x = ICD_BUF_INIT, y = ICD_BUF_INIT;
        ice_key_put_literal(&x, &cases[i].l);
        ice_key_put(&y, &cases[i].v);
        CHECK(x.len == y.len && !memcmp(x.data, y.data, x.len));
        icd_buf_free(&x);
        icd_buf_free(&y);
    }
    /* and -0.0 stays distinct on the literal path too */
    ice_literal nz = ice_lit_double(-0.0), pz = ice_lit_double(0.0);
    icd_buf x = ICD_BUF_INIT, y = ICD_BUF_INIT;
    ice_key_put_literal(&x, &nz);
    ice_key_put_literal(&y, &pz);
    CHECK(x.len == y.len && memcmp(x.data, y.data, x.len));
    icd_buf_free(&x);
    icd_buf_free(&y);
}

TEST_MAIN(TEST(test_floats), TEST(test_other_types), TEST(test_literal_path))
