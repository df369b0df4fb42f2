/*
 * Partition transforms: every hash test vector of spec Appendix B (plus the "34" string
 * example of "Schema Evolution"), the truncate examples of "Truncate Transform Details",
 * temporal transforms around and before the epoch (expected values computed by hand /
 * with Python's datetime), bucket arithmetic, transform parsing and the
 * unpartitioned-spec rule.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "iceberg/literal.h"
#include "iceberg/partition.h"
#include "iceberg/transform.h"
#include "test.h"

static icd_arena arena = ICD_ARENA_INIT;

/* Parses a JSON single-value string as `type_name` (a primitive type). */
static ice_literal lit(const char *type_name, const char *json)
{
    ice_type t;
    icd_error err;
    ice_literal l = ice_lit_null(ICE_T_UNKNOWN);
    CHECK(ice_type_parse_primitive(type_name, &arena, &t, &err) == 0);
    json_error_t jerr;
    json_t *j = json_loads(json, JSON_DECODE_ANY, &jerr);
    CHECK(j != NULL);
    int rc = ice_literal_from_json(j, &t, &arena, &l, &err);
    if (rc) fprintf(stderr, "parse %s as %s: %s\n", json, type_name, err.message);
    CHECK(rc == 0);
    json_decref(j);
    return l;
}

static int32_t hash_of(ice_literal l)
{
    int32_t h = 0;
    icd_error err;
    CHECK(ice_literal_hash(&l, &h, &err) == 0);
    return h;
}

static void test_appendix_b_vectors(void)
{
    CHECK_EQ_INT(hash_of(lit("int", "34")), 2017239379);
    CHECK_EQ_INT(hash_of(lit("long", "34")), 2017239379);
    CHECK_EQ_INT(hash_of(lit("decimal(4,2)", "\"14.20\"")), -500754589);
    CHECK_EQ_INT(hash_of(lit("date", "\"2017-11-16\"")), -653330422);
    CHECK_EQ_INT(hash_of(lit("time", "\"22:31:08\"")), -662762989);
    CHECK_EQ_INT(hash_of(lit("timestamp", "\"2017-11-16T22:31:08\"")), -2047944441);
    CHECK_EQ_INT(hash_of(lit("timestamp", "\"2017-11-16T22:31:08.000001\"")), -1207196810);
    CHECK_EQ_INT(hash_of(lit("timestamptz", "\"2017-11-16T14:31:08-08:00\"")), -2047944441);
    CHECK_EQ_INT(hash_of(lit("timestamptz", "\"2017-11-16T14:31:08.000001-08:00\"")), -1207196810);
    CHECK_EQ_INT(hash_of(lit("timestamp_ns", "\"2017-11-16T22:31:08\"")), -2047944441);
    CHECK_EQ_INT(hash_of(lit("timestamp_ns", "\"2017-11-16T22:31:08.000001001\"")), -1207196810);
    CHECK_EQ_INT(hash_of(lit("timestamptz_ns", "\"2017-11-16T14:31:08-08:00\"")), -2047944441);
    CHECK_EQ_INT(hash_of(lit("timestamptz_ns", "\"2017-11-16T14:31:08.000001001-08:00\"")),
                 -1207196810);
    CHECK_EQ_INT(hash_of(lit("string", "\"iceberg\"")), 1210000089);
    CHECK_EQ_INT(hash_of(lit("uuid", "\"f79c3e09-677c-4bbd-a479-3f349cb785e7\"")), 1488055340);
    CHECK_EQ_INT(hash_of(lit("fixed[4]", "\"00010203\"")), -188683207);
    CHECK_EQ_INT(hash_of(lit("binary", "\"00010203\"")), -188683207);
    /* The second table: types not valid for bucketing, hashes defined anyway. */
    CHECK_EQ_INT(hash_of(lit("boolean", "true")), 1392991556);
    CHECK_EQ_INT(hash_of(ice_lit_float(1.0f)), -142385009);
    CHECK_EQ_INT(hash_of(ice_lit_float(0.0f)), 1669671676);
    CHECK_EQ_INT(hash_of(ice_lit_float(-0.0f)), 1669671676);
    CHECK_EQ_INT(hash_of(ice_lit_double(1.0)), -142385009);
    CHECK_EQ_INT(hash_of(ice_lit_double(0.0)), 1669671676);
    CHECK_EQ_INT(hash_of(ice_lit_double(-0.0)), 1669671676);
    /* "Schema Evolution": bucket[N] hashes 34 and "34" differently. */
    CHECK_EQ_INT(hash_of(lit("string", "\"34\"")), -427558391);
    /* The uuid bytes of note 4. */
    ice_literal u = lit("uuid", "\"f79c3e09-677c-4bbd-a479-3f349cb785e7\"");
    static const uint8_t UB[16] = {0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD,
                                   0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7};
    CHECK(u.v.bytes.len == 16 && !memcmp(u.v.bytes.ptr, UB, 16));
    /* Decimal hashing uses the minimal two's complement: a padded form hashes the same. */
    static const uint8_t PADDED[] = {0x00, 0x00, 0x05, 0x8C}; /* 1420 */
    CHECK_EQ_INT(hash_of(ice_lit_decimal(PADDED, 4, 2)), -500754589);
    /* All NaNs hash alike. */
    CHECK_EQ_INT(hash_of(ice_lit_double(NAN)), hash_of(ice_lit_double(-NAN)));
    icd_error err;
    int32_t h;
    ice_literal n = ice_lit_null(ICE_T_INT);
    CHECK(ice_literal_hash(&n, &h, &err) == ICD_EINVALID);
}

static ice_literal apply(const char *transform, ice_literal in)
{
    ice_transform t;
    ice_transform_parse(transform, &t);
    ice_literal out = ice_lit_null(ICE_T_UNKNOWN);
    icd_error err;
    int rc = ice_transform_apply(&t, &in, &arena, &out, &err);
    if (rc) fprintf(stderr, "%s: %s\n", transform, err.message);
    CHECK(rc == 0);
    return out;
}

static void test_bucket(void)
{
    /* (2017239379 & INT_MAX) % 16 = 3; (-653330422 & INT_MAX) = 1494153226, % 16 = 10. */
    CHECK_EQ_INT(apply("bucket[16]", ice_lit_int(34)).v.i32, 3);
    CHECK_EQ_INT(apply("bucket[16]", ice_lit_long(34)).v.i32, 3);
    ice_literal b = apply("bucket[16]", lit("date", "\"2017-11-16\""));
    CHECK(b.kind == ICE_T_INT && b.v.i32 == 10);
    CHECK_EQ_INT(apply("bucket[1]", lit("string", "\"iceberg\"")).v.i32, 0);
    CHECK_EQ_INT(apply("bucket[1000]", lit("string", "\"iceberg\"")).v.i32, 1210000089 % 1000);
    CHECK(apply("bucket[16]", ice_lit_null(ICE_T_INT)).is_null);
    /* float is not a bucket source type. */
    ice_transform t;
    ice_transform_parse("bucket[4]", &t);
    ice_literal f = ice_lit_float(1.0f), out;
    icd_error err;
    CHECK(ice_transform_apply(&t, &f, &arena, &out, &err) == ICD_EINVALID);
}

static void test_truncate_examples(void)
{
    CHECK_EQ_INT(apply("truncate[10]", ice_lit_int(1)).v.i32, 0);
    CHECK_EQ_INT(apply("truncate[10]", ice_lit_int(-1)).v.i32, -10);
    CHECK_EQ_INT(apply("truncate[10]", ice_lit_long(1)).v.i64, 0);
    CHECK_EQ_INT(apply("truncate[10]", ice_lit_long(-1)).v.i64, -10);
    CHECK_EQ_INT(apply("truncate[10]", ice_lit_long(-10)).v.i64, -10);
    CHECK_EQ_INT(apply("truncate[10]", ice_lit_long(25)).v.i64, 20);
    /* W=50, s=2: 10.65 -> 10.50 */
    ice_literal d = apply("truncate[50]", lit("decimal(9,2)", "\"10.65\""));
    ice_literal want = lit("decimal(9,2)", "\"10.50\"");
    CHECK(d.kind == ICE_T_DECIMAL && d.scale == 2 && ice_literal_cmp(&d, &want) == 0);
    /* negative decimal: -0.05 with W=10 (s=2) -> -0.10 */
    d = apply("truncate[10]", lit("decimal(9,2)", "\"-0.05\""));
    want = lit("decimal(9,2)", "\"-0.10\"");
    CHECK(ice_literal_cmp(&d, &want) == 0);
    /* L=3: iceberg -> ice */
    ice_literal s = apply("truncate[3]", ice_lit_string("iceberg", 7));
    CHECK(s.v.bytes.len == 3 && !memcmp(s.v.bytes.ptr, "ice", 3));
    /* strings truncate by code points: "€uro" (3+1+1+1 bytes) to 2 -> "€u" (4 bytes);
     * a 4-byte emoji counts as one. */
    s = apply("truncate[2]", ice_lit_string("\xe2\x82\xac"
                                            "uro",
                                            6));
    CHECK_EQ_INT(s.v.bytes.len, 4);
    s = apply("truncate[1]", ice_lit_string("\xf0\x9f\x98\x80"
                                            "x",
                                            5));
    CHECK_EQ_INT(s.v.bytes.len, 4);
    s = apply("truncate[10]", ice_lit_string("ab", 2));
    CHECK_EQ_INT(s.v.bytes.len, 2);
    /* binary L=3: 01 02 03 04 05 -> 01 02 03 */
    static const uint8_t B[] = {1, 2, 3, 4, 5};
    ice_literal bin = apply("truncate[3]", ice_lit_bytes(ICE_T_BINARY, B, 5));
    CHECK(bin.v.bytes.len == 3 && !memcmp(bin.v.bytes.ptr, B, 3));
    /* int overflow corner: wraps as Java's int arithmetic would */
    CHECK_EQ_INT(apply("truncate[10]", ice_lit_int(INT32_MIN)).v.i32, 2147483646);
}

static void test_temporal(void)
{
    /* 1970-01-01 and the day before the epoch. */
    ice_literal d0 = lit("date", "\"1970-01-01\""), dm1 = lit("date", "\"1969-12-31\"");
    CHECK_EQ_INT(apply("year", d0).v.i32, 0);
    CHECK_EQ_INT(apply("month", d0).v.i32, 0);
    CHECK_EQ_INT(apply("day", d0).v.i32, 0);
    CHECK_EQ_INT(apply("year", dm1).v.i32, -1);
    CHECK_EQ_INT(apply("month", dm1).v.i32, -1);
    CHECK_EQ_INT(apply("day", dm1).v.i32, -1);
    /* 1969-01-01: 365 days before; still year -1, month -12. */
    ice_literal d69 = lit("date", "\"1969-01-01\"");
    CHECK_EQ_INT(d69.v.i32, -365);
    CHECK_EQ_INT(apply("year", d69).v.i32, -1);
    CHECK_EQ_INT(apply("month", d69).v.i32, -12);
    /* 1900-03-01 = -25508 days (Python datetime); year -70, month (1900-1970)*12+2 = -838. */
    ice_literal d1900 = lit("date", "\"1900-03-01\"");
    CHECK_EQ_INT(d1900.v.i32, -25508);
    CHECK_EQ_INT(apply("year", d1900).v.i32, -70);
    CHECK_EQ_INT(apply("month", d1900).v.i32, -838);
    /* One microsecond before the epoch: every temporal transform gives -1. */
    ice_literal tsm1 = lit("timestamp", "\"1969-12-31T23:59:59.999999\"");
    CHECK_EQ_INT(tsm1.v.i64, -1);
    CHECK_EQ_INT(apply("hour", tsm1).v.i32, -1);
    CHECK_EQ_INT(apply("day", tsm1).v.i32, -1);
    CHECK_EQ_INT(apply("month", tsm1).v.i32, -1);
    CHECK_EQ_INT(apply("year", tsm1).v.i32, -1);
    ice_literal ns = ice_lit_i64(ICE_T_TIMESTAMP_NS, -1);
    CHECK_EQ_INT(apply("hour", ns).v.i32, -1);
    CHECK_EQ_INT(apply("day", ns).v.i32, -1);
    /* 2017-11-16T22:31:08: 47 years, 47*12+10 = 574 months, 17486 days, 17486*24+22 hours. */
    ice_literal ts = lit("timestamp", "\"2017-11-16T22:31:08\"");
    CHECK_EQ_INT(apply("year", ts).v.i32, 47);
    CHECK_EQ_INT(apply("month", ts).v.i32, 574);
    CHECK_EQ_INT(apply("day", ts).v.i32, 17486);
    CHECK_EQ_INT(apply("hour", ts).v.i32, 419686);
    /* The same instant written with a -08:00 offset. */
    ice_literal tz = lit("timestamptz", "\"2017-11-16T14:31:08-08:00\"");
    CHECK_EQ_INT(apply("hour", tz).v.i32, 419686);
    ice_literal tsns = lit("timestamptz_ns", "\"2017-11-16T22:31:08.123456789+00:00\"");
    CHECK_EQ_INT(apply("day", tsns).v.i32, 17486);
    /* 1969-12-31T22:30:00 = -1.5 h: hour floors to -2. */
    CHECK_EQ_INT(apply("hour", lit("timestamp", "\"1969-12-31T22:30:00\"")).v.i32, -2);
    /* hour does not accept dates */
    ice_transform t;
    ice_transform_parse("hour", &t);
    ice_literal out;
    icd_error err;
    CHECK(ice_transform_apply(&t, &d0, &arena, &out, &err) == ICD_EINVALID);
}

static void test_parse_and_types(void)
{
    ice_transform t;
    ice_transform_parse("bucket[16]", &t);
    CHECK(t.kind == ICE_TR_BUCKET && t.param == 16);
    ice_transform_parse("truncate[4]", &t);
    CHECK(t.kind == ICE_TR_TRUNCATE && t.param == 4);
    ice_transform_parse("Day", &t);
    CHECK(t.kind == ICE_TR_DAY);
    ice_transform_parse("bucket[0]", &t);
    CHECK(t.kind == ICE_TR_UNKNOWN);
    ice_transform_parse("zorder(a,b)", &t);
    CHECK(t.kind == ICE_TR_UNKNOWN && !strcmp(t.text, "zorder(a,b)"));
    ice_transform u2;
    ice_transform_parse("zorder(a,b)", &u2);
    CHECK(ice_transform_equal(&t, &u2));
    ice_transform_parse("zorder(b,a)", &u2);
    CHECK(!ice_transform_equal(&t, &u2));
    icd_error err;
    ice_literal out, in = ice_lit_int(1);
    ice_transform_parse("zorder(a,b)", &t);
    CHECK(ice_transform_apply(&t, &in, &arena, &out, &err) == ICD_EUNSUPPORTED);
    /* void gives null of the source type */
    ice_transform_parse("void", &t);
    CHECK(ice_transform_apply(&t, &in, &arena, &out, &err) == 0 && out.is_null &&
          out.kind == ICE_T_INT);
    /* result types */
    ice_type src, res;
    CHECK(ice_type_parse_primitive("decimal(9,2)", &arena, &src, &err) == 0);
    ice_transform_parse("truncate[10]", &t);
    CHECK(ice_transform_result_type(&t, &src, &res, &err) == 0 && res.kind == ICE_T_DECIMAL &&
          res.scale == 2);
    ice_transform_parse("bucket[8]", &t);
    CHECK(ice_transform_result_type(&t, &src, &res, &err) == 0 && res.kind == ICE_T_INT);
    ice_transform_parse("day", &t);
    CHECK(ice_transform_result_type(&t, &src, &res, &err) == ICD_EINVALID);
}

static ice_partition_spec *spec_of(const char *json)
{
    ice_partition_spec *s = NULL;
    icd_error err;
    int rc = ice_partition_spec_parse(json, strlen(json), 7, "spec.json", &s, &err);
    if (rc) fprintf(stderr, "%s\n", err.message);
    CHECK(rc == 0);
    return s;
}

static void test_unpartitioned_rule(void)
{
    ice_partition_spec *s = spec_of("{\"spec-id\":0,\"fields\":[]}");
    CHECK(s && ice_partition_spec_is_unpartitioned(s));
    ice_partition_spec_free(s);
    s = spec_of("{\"spec-id\":1,\"fields\":[{\"name\":\"a\",\"transform\":\"void\","
                "\"source-id\":1,\"field-id\":1000},{\"name\":\"b\",\"transform\":\"void\","
                "\"source-id\":2,\"field-id\":1001}]}");
    CHECK(s && s->spec_id == 1 && s->nfields == 2 && ice_partition_spec_is_unpartitioned(s));
    ice_partition_spec_free(s);
    s = spec_of("[{\"name\":\"a\",\"transform\":\"void\",\"source-id\":1},"
                "{\"name\":\"b_bucket\",\"transform\":\"bucket[4]\",\"source-id\":2}]");
    CHECK(s && s->spec_id == 7 && !ice_partition_spec_is_unpartitioned(s));
    /* field ids assigned 1000, 1001 when absent (v1) */
    CHECK(s && s->fields[0].field_id == 1000 && s->fields[1].field_id == 1001);
    CHECK(s && ice_partition_spec_field(s, 1001) == &s->fields[1]);
    ice_partition_spec_free(s);
    /* an unknown transform keeps the spec partitioned and keeps its text */
    s = spec_of("{\"spec-id\":2,\"fields\":[{\"name\":\"z\",\"transform\":\"zorder\","
                "\"source-ids\":[1,2],\"field-id\":1000}]}");
    CHECK(s && !ice_partition_spec_is_unpartitioned(s) && s->fields[0].n_source_ids == 2 &&
          s->fields[0].source_id == 1 && s->fields[0].transform.kind == ICE_TR_UNKNOWN);
    ice_partition_spec_free(s);
    /* missing transform -> error naming it */
    icd_error err;
    ice_partition_spec *bad = NULL;
    const char *j = "{\"spec-id\":0,\"fields\":[{\"name\":\"a\",\"source-id\":1}]}";
    CHECK(ice_partition_spec_parse(j, strlen(j), 0, "spec.json", &bad, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "transform") != NULL);
    CHECK_EQ_STR(err.file, "spec.json");
}

static void cleanup(void)
{
    icd_arena_free(&arena);
}

TEST_MAIN(TEST(test_appendix_b_vectors), TEST(test_bucket), TEST(test_truncate_examples),
          TEST(test_temporal), TEST(test_parse_and_types), TEST(test_unpartitioned_rule),
          TEST(cleanup))
