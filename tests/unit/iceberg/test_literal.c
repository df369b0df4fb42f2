/*
 * ice_literal: JSON single-value parsing (Appendix D) for every primitive and nested type,
 * Iceberg ordering (signed ints, IEEE totalOrder for floats, unsigned bytes, decimals by
 * value), promotions, and the date/time text parsers. Expected values are hand-computed.
 */
#include <jansson.h>
#include <math.h>

#include "iceberg/literal.h"
#include "iceberg/schema.h"
#include "test.h"

static icd_arena arena = ICD_ARENA_INIT;

static int parse(const char *type_name, const char *json, ice_literal *out, icd_error *err)
{
    ice_type t;
    if (ice_type_parse_primitive(type_name, &arena, &t, err)) return -100;
    json_error_t jerr;
    json_t *j = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!j) return -101;
    int rc = ice_literal_from_json(j, &t, &arena, out, err);
    json_decref(j);
    return rc;
}

static ice_literal ok(const char *type_name, const char *json)
{
    ice_literal l = ice_lit_null(ICE_T_UNKNOWN);
    icd_error err;
    int rc = parse(type_name, json, &l, &err);
    if (rc) fprintf(stderr, "%s as %s: %s\n", json, type_name, err.message);
    CHECK(rc == 0);
    return l;
}

static bool fails(const char *type_name, const char *json)
{
    ice_literal l;
    icd_error err;
    return parse(type_name, json, &l, &err) == ICD_ECORRUPT;
}

static void test_primitives(void)
{
    CHECK(ok("boolean", "true").v.b == true);
    CHECK_EQ_INT(ok("int", "-34").v.i32, -34);
    CHECK(fails("int", "2147483648"));
    CHECK(fails("int", "\"34\""));
    CHECK_EQ_INT(ok("long", "-9223372036854775808").v.i64, INT64_MIN);
    CHECK(ok("float", "1.5").v.f32 == 1.5f);
    CHECK(ok("double", "8.88").v.f64 == 8.88);
    CHECK(ok("double", "3").v.f64 == 3.0);
    CHECK_EQ_INT(ok("date", "\"2017-11-16\"").v.i32, 17486);
    CHECK_EQ_INT(ok("date", "\"1969-12-31\"").v.i32, -1);
    CHECK_EQ_INT(ok("date", "\"2016-02-29\"").v.i32, 16860);
    CHECK(fails("date", "\"2017-02-29\""));
    CHECK(fails("date", "\"2017-1-01\""));
    CHECK_EQ_INT(ok("time", "\"22:31:08\"").v.i64, 81068000000LL);
    CHECK_EQ_INT(ok("time", "\"22:31:08.123456\"").v.i64, 81068123456LL);
    CHECK(fails("time", "\"24:00:00\""));
    CHECK_EQ_INT(ok("timestamp", "\"2017-11-16T22:31:08.123456\"").v.i64, 1510871468123456LL);
    CHECK_EQ_INT(ok("timestamp", "\"1970-01-01T00:00:00\"").v.i64, 0);
    CHECK_EQ_INT(ok("timestamp", "\"1969-12-31T23:59:59.123456\"").v.i64, -876544);
    CHECK(fails("timestamp", "\"2017-11-16T22:31:08+00:00\"")); /* no zone allowed */
    CHECK(fails("timestamptz", "\"2017-11-16T22:31:08\""));     /* zone required */
    CHECK_EQ_INT(ok("timestamptz", "\"2017-11-16T22:31:08.123456+00:00\"").v.i64,
                 1510871468123456LL);
    CHECK_EQ_INT(ok("timestamptz", "\"2017-11-17T00:31:08.123456+02:00\"").v.i64,
                 1510871468123456LL);
    CHECK_EQ_INT(ok("timestamp_ns", "\"2017-11-16T22:31:08.123456789\"").v.i64,
                 1510871468123456789LL);
    CHECK_EQ_INT(ok("timestamptz_ns", "\"1969-12-31T23:59:59.999999999+00:00\"").v.i64, -1);
    ice_literal s = ok("string", "\"ice\\u0000berg\"");
    CHECK(s.v.bytes.len == 8 && !memcmp(s.v.bytes.ptr, "ice\0berg", 8));
    ice_literal u = ok("uuid", "\"f79c3e09-677c-4bbd-a479-3f349cb785e7\"");
    CHECK(u.v.bytes.len == 16 && u.v.bytes.ptr[0] == 0xF7 && u.v.bytes.ptr[15] == 0xE7);
    CHECK(fails("uuid", "\"f79c3e09677c4bbda4793f349cb785e7\""));
    ice_literal f = ok("fixed[4]", "\"000102ff\"");
    CHECK(f.v.bytes.len == 4 && f.v.bytes.ptr[3] == 0xFF);
    CHECK(fails("fixed[3]", "\"000102ff\""));
    CHECK(fails("binary", "\"0g\""));
    CHECK(fails("binary", "\"012\""));
    CHECK(ok("binary", "\"\"").v.bytes.len == 0);
    CHECK(ok("int", "null").is_null);
    /* v3 types: only null defaults */
    CHECK(ok("variant", "null").is_null);
    CHECK(fails("variant", "1"));
    CHECK(fails("unknown", "\"x\""));
    CHECK(fails("geometry(srid:4326)", "\"POINT (30 10)\""));
}

static void test_decimals(void)
{
    ice_literal d = ok("decimal(4,2)", "\"14.20\"");
    CHECK(d.scale == 2 && d.v.bytes.len == 2 && d.v.bytes.ptr[0] == 0x05 &&
          d.v.bytes.ptr[1] == 0x8C); /* 1420 */
    d = ok("decimal(5,2)", "\"-0.01\"");
    CHECK(d.v.bytes.len == 1 && d.v.bytes.ptr[0] == 0xFF);
    d = ok("decimal(5,2)", "\"-1.28\""); /* -128 fits one byte */
    CHECK(d.v.bytes.len == 1 && d.v.bytes.ptr[0] == 0x80);
    d = ok("decimal(5,2)", "\"1.28\""); /* 128 needs 00 80 */
    CHECK(d.v.bytes.len == 2 && d.v.bytes.ptr[0] == 0x00 && d.v.bytes.ptr[1] == 0x80);
    d = ok("decimal(38,0)", "\"2E+20\"");
    ice_i128 v;
    CHECK(ice_decimal_to_i128(d.v.bytes.ptr, d.v.bytes.len, &v) &&
          v == (ice_i128)200000000000000000LL * 1000);
    d = ok("decimal(5,1)", "\"1.20\""); /* trailing zero dropped: 12 at scale 1 */
    CHECK(d.v.bytes.len == 1 && d.v.bytes.ptr[0] == 12);
    CHECK(fails("decimal(5,2)", "\"1.234\""));  /* loses a digit */
    CHECK(fails("decimal(5,0)", "\"123456\"")); /* precision */
    CHECK(fails("decimal(5,2)", "\"1.2.3\""));
    CHECK(fails("decimal(5,2)", "1.5")); /* decimals are strings */
    d = ok("decimal(10,2)", "12");       /* an integer is accepted */
    CHECK(d.v.bytes.len == 2 && d.v.bytes.ptr[0] == 0x04 && d.v.bytes.ptr[1] == 0xB0);
    /* 38 nines fits, 39 digits do not */
    CHECK(!fails("decimal(38,0)", "\"99999999999999999999999999999999999999\""));
    CHECK(fails("decimal(38,0)", "\"999999999999999999999999999999999999999\""));
    /* round trip through i128 */
    uint8_t be[16];
    size_t n = ice_decimal_from_i128(-1, be);
    CHECK(n == 1 && be[0] == 0xFF);
    n = ice_decimal_from_i128(0, be);
    CHECK(n == 1 && be[0] == 0);
    n = ice_decimal_from_i128(255, be);
    CHECK(n == 2 && be[0] == 0 && be[1] == 0xFF);
}

static int cmp(ice_literal a, ice_literal b)
{
    CHECK(ice_literal_comparable(&a, &b));
    return ice_literal_cmp(&a, &b);
}

static void test_ordering(void)
{
    CHECK(cmp(ice_lit_int(-5), ice_lit_int(3)) < 0);
    CHECK(cmp(ice_lit_int(7), ice_lit_long(7)) == 0);
    CHECK(cmp(ice_lit_long(INT64_MIN), ice_lit_int(INT32_MIN)) < 0);
    CHECK(cmp(ice_lit_int(17486), ice_lit_date(17486)) == 0);
    CHECK(cmp(ice_lit_bool(false), ice_lit_bool(true)) < 0);
    /* -NaN < -Inf < -1 < -0 < 0 < 1 < Inf < NaN */
    double order[] = {-NAN, -INFINITY, -1.0, -0.0, 0.0, 1.0, INFINITY, NAN};
    for (int i = 0; i + 1 < 8; i++)
        CHECK(cmp(ice_lit_double(order[i]), ice_lit_double(order[i + 1])) < 0);
    CHECK(cmp(ice_lit_double(NAN), ice_lit_double(NAN)) == 0);
    CHECK(cmp(ice_lit_float(1.5f), ice_lit_double(1.5)) == 0);
    CHECK(cmp(ice_lit_float(NAN), ice_lit_double(INFINITY)) > 0);
    /* strings: unsigned bytes, then length */
    CHECK(cmp(ice_lit_string("a", 1), ice_lit_string("b", 1)) < 0);
    CHECK(cmp(ice_lit_string("b", 1), ice_lit_string("ba", 2)) < 0);
    CHECK(cmp(ice_lit_string("\xc3\xa9", 2), ice_lit_string("z", 1)) > 0);
    CHECK(cmp(ice_lit_string("", 0), ice_lit_string("", 0)) == 0);
    static const uint8_t B1[] = {0x7F}, B2[] = {0x80};
    CHECK(cmp(ice_lit_bytes(ICE_T_BINARY, B1, 1), ice_lit_bytes(ICE_T_BINARY, B2, 1)) < 0);
    /* decimals by value, also across scales and byte lengths */
    ice_literal a = ok("decimal(9,1)", "\"1.5\""), b = ok("decimal(9,2)", "\"1.50\"");
    CHECK(cmp(a, b) == 0);
    CHECK(cmp(ok("decimal(9,1)", "\"-1.5\""), ok("decimal(9,2)", "\"1.49\"")) < 0);
    CHECK(cmp(ok("decimal(9,2)", "\"-0.01\""), ok("decimal(9,2)", "\"0.00\"")) < 0);
    CHECK(cmp(ok("decimal(38,0)", "\"-99999999999999999999999999999999999999\""),
              ok("decimal(38,37)", "\"-9.9999999999999999999999999999999999999\"")) < 0);
    static const uint8_t P[] = {0x00, 0x00, 0x05, 0x8C};
    CHECK(cmp(ice_lit_decimal(P, 4, 2), ok("decimal(4,2)", "\"14.20\"")) == 0);
    /* nulls first */
    CHECK(cmp(ice_lit_null(ICE_T_INT), ice_lit_int(INT32_MIN)) < 0);
    CHECK(cmp(ice_lit_null(ICE_T_INT), ice_lit_null(ICE_T_INT)) == 0);
    /* incomparable pairs */
    ice_literal s = ice_lit_string("1", 1), i = ice_lit_int(1), dd = ice_lit_double(1);
    CHECK(!ice_literal_comparable(&s, &i));
    CHECK(!ice_literal_comparable(&i, &dd));
}

static void test_promotion(void)
{
    icd_error err;
    ice_type t;
    ice_literal out;
    CHECK(ice_type_parse_primitive("long", &arena, &t, &err) == 0);
    ice_literal i = ice_lit_int(-7);
    CHECK(ice_literal_promote(&i, &t, &out, &err) == 0 && out.kind == ICE_T_LONG &&
          out.v.i64 == -7);
    CHECK(ice_type_parse_primitive("double", &arena, &t, &err) == 0);
    ice_literal f = ice_lit_float(0.1f);
    CHECK(ice_literal_promote(&f, &t, &out, &err) == 0 && out.v.f64 == (double)0.1f);
    CHECK(ice_type_parse_primitive("timestamp", &arena, &t, &err) == 0);
    ice_literal d = ice_lit_date(-1);
    CHECK(ice_literal_promote(&d, &t, &out, &err) == 0 && out.v.i64 == -86400000000LL);
    CHECK(ice_type_parse_primitive("timestamp_ns", &arena, &t, &err) == 0);
    CHECK(ice_literal_promote(&d, &t, &out, &err) == 0 && out.v.i64 == -86400000000000LL);
    CHECK(ice_type_parse_primitive("decimal(10,2)", &arena, &t, &err) == 0);
    ice_literal dec = ok("decimal(5,2)", "\"1.25\"");
    CHECK(ice_literal_promote(&dec, &t, &out, &err) == 0 && out.scale == 2);
    CHECK(ice_type_parse_primitive("decimal(10,3)", &arena, &t, &err) == 0);
    CHECK(ice_literal_promote(&dec, &t, &out, &err) == ICD_EINVALID);
    CHECK(ice_type_parse_primitive("int", &arena, &t, &err) == 0);
    ice_literal l = ice_lit_long(1);
    CHECK(ice_literal_promote(&l, &t, &out, &err) == ICD_EINVALID);
}

static void test_nested_and_json(void)
{
    const char *schema =
        "{\"type\":\"struct\",\"schema-id\":3,\"fields\":["
        "{\"id\":1,\"name\":\"p\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
        "{\"id\":2,\"name\":\"x\",\"required\":false,\"type\":\"int\",\"initial-default\":0},"
        "{\"id\":3,\"name\":\"y\",\"required\":false,\"type\":\"int\"}]},"
        "\"initial-default\":{}, \"write-default\":{\"2\":5}},"
        "{\"id\":4,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":5,\"element-required\":true,\"element\":\"long\"},"
        "\"initial-default\":[1,2,3]},"
        "{\"id\":6,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":7,"
        "\"key\":\"string\",\"value-id\":8,\"value-required\":false,\"value\":\"binary\"},"
        "\"initial-default\":{\"keys\":[\"a\",\"b\"],\"values\":[\"00ff\",null]}}]}";
    ice_schema *s = NULL;
    icd_error err;
    int rc = ice_schema_parse(schema, strlen(schema), "s.json", &s, &err);
    if (rc) fprintf(stderr, "%s\n", err.message);
    CHECK(rc == 0);
    if (!s) return;
    const ice_field *p = ice_schema_field(s, 1);
    CHECK(p && p->initial_default && !p->initial_default->is_null &&
          p->initial_default->v.nested.n == 0);
    CHECK(p && p->write_default->v.nested.n == 1 && p->write_default->v.nested.ids[0] == 2 &&
          p->write_default->v.nested.items[0].v.i32 == 5);
    icd_buf b = ICD_BUF_INIT;
    ice_literal_to_json(&b, ice_schema_field(s, 4)->initial_default);
    CHECK_EQ_STR(b.data, "[1,2,3]");
    icd_buf_clear(&b);
    ice_literal_to_json(&b, ice_schema_field(s, 6)->initial_default);
    CHECK_EQ_STR(b.data, "[{\"key\":\"a\",\"value\":\"AP8=\"},{\"key\":\"b\",\"value\":null}]");
    icd_buf_clear(&b);
    ice_literal_to_single_value_json(&b, ice_schema_field(s, 6)->initial_default);
    CHECK_EQ_STR(b.data, "{\"keys\":[\"a\",\"b\"],\"values\":[\"00ff\",null]}");
    icd_buf_clear(&b);
    ice_literal_to_json(&b, p->write_default);
    CHECK_EQ_STR(b.data, "{\"2\":5}");
    icd_buf_free(&b);
    ice_schema_free(s);

    /* a struct default naming a field id the struct lacks is an error naming the field */
    const char *bad = "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"p\",\"required\":"
                      "false,\"type\":{\"type\":\"struct\",\"fields\":[{\"id\":2,\"name\":\"x\","
                      "\"required\":false,\"type\":\"int\"}]},\"initial-default\":{\"9\":1}}]}";
    CHECK(ice_schema_parse(bad, strlen(bad), "s.json", &s, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "'p'") && strstr(err.message, "initial-default"));
}

static void test_text_parsers(void)
{
    int64_t v;
    bool zone;
    CHECK(ice_parse_timestamp("2024-01-02T03:04:05.678Z", 24, 3, &zone, &v) && zone &&
          v == 1704164645678LL);
    CHECK(ice_parse_timestamp("2024-01-02 03:04:05", 19, 3, &zone, &v) && !zone &&
          v == 1704164645000LL);
    CHECK(ice_parse_timestamp("2024-01-02T03:04:05.678+0100", 28, 3, &zone, &v) &&
          v == 1704164645678LL - 3600000);
    CHECK(!ice_parse_timestamp("2024-01-02", 10, 3, &zone, &v));
    CHECK(!ice_parse_timestamp("2024-01-02T03:04:05x", 20, 3, &zone, &v));
    /* out of range for nanoseconds */
    CHECK(!ice_parse_timestamp("3000-01-01T00:00:00", 19, 9, &zone, &v));
    int32_t d;
    CHECK(ice_parse_date("-0001-01-01", 11, &d) && d == -719893);
    CHECK(ice_parse_date("+10000-01-01", 12, &d) && d == 2932897);
    int64_t ns;
    CHECK(ice_parse_time("00:00:00.000000001", 18, &ns) && ns == 1);
    CHECK(ice_parse_time("12:30", 5, &ns) && ns == 45000000000000LL);
}

static void cleanup(void)
{
    icd_arena_free(&arena);
}

TEST_MAIN(TEST(test_primitives), TEST(test_decimals), TEST(test_ordering), TEST(test_promotion),
          TEST(test_nested_and_json), TEST(test_text_parsers), TEST(cleanup))
