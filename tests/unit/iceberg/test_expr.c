/*
 * Iceberg filter expressions: binding (every literal conversion and its errors), NOT
 * push-down and constant folding, inclusive and strict projection through every
 * transform (temporal ones across the epoch), manifest-summary and column-metrics
 * evaluation, residuals. Expected values are computed by hand (day 19723 is 2024-01-01;
 * bucket values from the spec's hash test vectors).
 */
#include <math.h>
#include <stdlib.h>

#include "iceberg/content_file.h"
#include "iceberg/expr.h"
#include "iceberg/manifest.h"
#include "iceberg/partition.h"
#include "iceberg/schema.h"
#include "test.h"

static icd_arena arena = ICD_ARENA_INIT;
static ice_schema *schema;

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":3,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":4,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":5,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":6,\"name\":\"dt\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":7,\"name\":\"tm\",\"required\":false,\"type\":\"time\"},"
    "{\"id\":8,\"name\":\"ts\",\"required\":false,\"type\":\"timestamp\"},"
    "{\"id\":9,\"name\":\"tstz\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":10,\"name\":\"tsns\",\"required\":false,\"type\":\"timestamp_ns\"},"
    "{\"id\":11,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":12,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":13,\"name\":\"b\",\"required\":false,\"type\":\"boolean\"},"
    "{\"id\":14,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":15,\"name\":\"inner\",\"required\":true,\"type\":\"int\"}]}},"
    "{\"id\":16,\"name\":\"lst\",\"required\":false,\"type\":{\"type\":\"list\","
    "\"element-id\":17,\"element\":\"int\",\"element-required\":false}},"
    "{\"id\":18,\"name\":\"MixedCase\",\"required\":false,\"type\":\"string\"}]}";

/* ---- building unbound expressions ----------------------------------------------------- */

static ice_expr *node(ice_expr_op op)
{
    ice_expr *e = icd_arena_calloc(&arena, sizeof *e);
    e->op = op;
    return e;
}
static ice_expr_value VS(const char *s)
{
    return (ice_expr_value){ICE_VALUE_STRING, s, 0, 0, 0};
}
static ice_expr_value VL(int64_t v)
{
    return (ice_expr_value){ICE_VALUE_LONG, NULL, v, 0, 0};
}
static ice_expr_value VD(double v)
{
    return (ice_expr_value){ICE_VALUE_DOUBLE, NULL, 0, v, 0};
}
static ice_expr_value VB(bool v)
{
    return (ice_expr_value){ICE_VALUE_BOOL, NULL, 0, 0, v};
}
static ice_expr_value VT(int64_t us)
{
    return (ice_expr_value){ICE_VALUE_TIMESTAMP_MICROS, NULL, us, 0, 0};
}
static const ice_expr *cmp(ice_expr_op op, const char *col, ice_expr_value v)
{
    ice_expr *e = node(op);
    e->column = col;
    e->value = v;
    return e;
}
static const ice_expr *isnull(const char *col, bool negated)
{
    ice_expr *e = node(negated ? ICE_EXPR_NOT_NULL : ICE_EXPR_IS_NULL);
    e->column = col;
    return e;
}
static const ice_expr *bin(ice_expr_op op, const ice_expr *l, const ice_expr *r)
{
    ice_expr *e = node(op);
    e->left = l;
    e->right = r;
    return e;
}
static const ice_expr *not_(const ice_expr *l)
{
    ice_expr *e = node(ICE_EXPR_NOT);
    e->left = l;
    return e;
}

static const ice_bound_expr *bind(const ice_expr *e)
{
    ice_bound_expr *b = NULL;
    icd_error err;
    int rc = ice_expr_bind(e, schema, true, &arena, &b, &err);
    if (rc) fprintf(stderr, "bind: %s\n", err.message);
    CHECK(rc == 0);
    return b;
}

static int bind_error(const ice_expr *e, char *msg, size_t n)
{
    ice_bound_expr *b = NULL;
    icd_error err;
    icd_error_clear(&err);
    int rc = ice_expr_bind(e, schema, true, &arena, &b, &err);
    snprintf(msg, n, "%s", err.message);
    return rc;
}

static char text_buf[2048];
static const char *text(const ice_bound_expr *e)
{
    icd_buf b = ICD_BUF_INIT;
    if (e) ice_bound_expr_to_text(&b, e);
    snprintf(text_buf, sizeof text_buf, "%s", b.data ? b.data : "(null)");
    icd_buf_free(&b);
    return text_buf;
}

static const int64_t DAY = 86400000000LL, HOUR = 3600000000LL;
static const int64_t D2024 = 19723LL * 86400000000LL; /* 2024-01-01T00:00:00 */

/* ---- binding ------------------------------------------------------------------------- */

static void test_bind_text_conversions(void)
{
    const ice_bound_expr *b;
    b = bind(cmp(ICE_EXPR_EQ, "i", VS("-42")));
    CHECK(b->op == ICE_EXPR_EQ && b->lit.kind == ICE_T_INT && b->lit.v.i32 == -42);
    CHECK_EQ_INT(b->field_id, 2);
    b = bind(cmp(ICE_EXPR_EQ, "id", VS("9007199254740993")));
    CHECK(b->lit.kind == ICE_T_LONG && b->lit.v.i64 == 9007199254740993LL);
    b = bind(cmp(ICE_EXPR_LT, "f", VS("1.5")));
    CHECK(b->lit.kind == ICE_T_FLOAT && b->lit.v.f32 == 1.5f);
    b = bind(cmp(ICE_EXPR_LT, "d", VS("-2.25e3")));
    CHECK(b->lit.kind == ICE_T_DOUBLE && b->lit.v.f64 == -2250.0);
    b = bind(cmp(ICE_EXPR_EQ, "dec", VS("12.3")));
    CHECK_EQ_STR(text(b), "dec == \"12.30\"");
    b = bind(cmp(ICE_EXPR_EQ, "dt", VS("2024-01-01")));
    CHECK(b->lit.kind == ICE_T_DATE && b->lit.v.i32 == 19723);
    b = bind(cmp(ICE_EXPR_EQ, "tm", VS("01:02:03.5")));
    CHECK(b->lit.kind == ICE_T_TIME && b->lit.v.i64 == 3723500000LL);
    b = bind(cmp(ICE_EXPR_EQ, "ts", VS("2024-01-01T01:00:00")));
    CHECK(b->lit.kind == ICE_T_TIMESTAMP && b->lit.v.i64 == D2024 + HOUR);
    b = bind(cmp(ICE_EXPR_EQ, "tstz", VS("2024-01-01T01:00:00+01:00")));
    CHECK(b->lit.kind == ICE_T_TIMESTAMPTZ && b->lit.v.i64 == D2024);
    b = bind(cmp(ICE_EXPR_EQ, "tsns", VS("2024-01-01T00:00:00.000000001")));
    CHECK(b->lit.kind == ICE_T_TIMESTAMP_NS && b->lit.v.i64 == D2024 * 1000 + 1);
    b = bind(cmp(ICE_EXPR_EQ, "u", VS("f79c3e09-677c-4bbd-a479-3f349cb785e7")));
    CHECK(b->lit.kind == ICE_T_UUID && b->lit.v.bytes.len == 16 && b->lit.v.bytes.ptr[0] == 0xf7 &&
          b->lit.v.bytes.ptr[15] == 0xe7);
    b = bind(cmp(ICE_EXPR_EQ, "b", VS("TRUE")));
    CHECK(b->lit.kind == ICE_T_BOOLEAN && b->lit.v.b);
    b = bind(cmp(ICE_EXPR_EQ, "s", VS("abc")));
    CHECK_EQ_STR(text(b), "s == \"abc\"");
    /* nested struct path, case-insensitive lookup */
    b = bind(cmp(ICE_EXPR_EQ, "st.inner", VS("7")));
    CHECK(b->field_id == 15 && b->lit.v.i32 == 7);
    ice_bound_expr *ci = NULL;
    icd_error err;
    CHECK(ice_expr_bind(cmp(ICE_EXPR_EQ, "mixedcase", VS("x")), schema, false, &arena, &ci, &err) ==
          0);
    CHECK(ci && ci->field_id == 18);
    CHECK(ice_expr_bind(cmp(ICE_EXPR_EQ, "mixedcase", VS("x")), schema, true, &arena, &ci, &err) ==
          ICD_EINVALID);
}

static void test_bind_decimal_text_beyond_scale(void)
{
    /* 1.005 is not a decimal(9,2) value: == matches nothing, < is <= 1.00, > is >= 1.01 */
    CHECK(bind(cmp(ICE_EXPR_EQ, "dec", VS("1.005")))->op == ICE_EXPR_FALSE);
    CHECK(bind(not_(cmp(ICE_EXPR_EQ, "dec", VS("1.005"))))->op == ICE_EXPR_TRUE);
    CHECK_EQ_STR(text(bind(cmp(ICE_EXPR_LT, "dec", VS("1.005")))), "dec <= \"1.00\"");
    CHECK_EQ_STR(text(bind(cmp(ICE_EXPR_GT, "dec", VS("1.005")))), "dec >= \"1.01\"");
    CHECK_EQ_STR(text(bind(cmp(ICE_EXPR_GE, "dec", VS("-1.005")))), "dec >= \"-1.00\"");
    CHECK_EQ_STR(text(bind(cmp(ICE_EXPR_LE, "dec", VS("-1.005")))), "dec <= \"-1.01\"");
}

static void test_bind_long_conversions(void)
{
    const ice_bound_expr *b;
    b = bind(cmp(ICE_EXPR_EQ, "i", VL(2147483647)));
    CHECK(b->op == ICE_EXPR_EQ && b->lit.v.i32 == 2147483647);
    /* beyond int: Java's aboveMax / belowMin folding */
    CHECK(bind(cmp(ICE_EXPR_LT, "i", VL(2147483648LL)))->op == ICE_EXPR_TRUE);
    CHECK(bind(cmp(ICE_EXPR_EQ, "i", VL(2147483648LL)))->op == ICE_EXPR_FALSE);
    CHECK(bind(cmp(ICE_EXPR_GE, "i", VL(2147483648LL)))->op == ICE_EXPR_FALSE);
    CHECK(bind(cmp(ICE_EXPR_GT, "i", VL(-2147483649LL)))->op == ICE_EXPR_TRUE);
    CHECK(bind(cmp(ICE_EXPR_LE, "i", VL(-2147483649LL)))->op == ICE_EXPR_FALSE);
    CHECK(bind(not_(cmp(ICE_EXPR_LE, "i", VL(-2147483649LL))))->op == ICE_EXPR_TRUE);
    CHECK(bind(cmp(ICE_EXPR_EQ, "i", VS("3000000000")))->op == ICE_EXPR_FALSE);
    b = bind(cmp(ICE_EXPR_EQ, "id", VL(-5)));
    CHECK(b->lit.kind == ICE_T_LONG && b->lit.v.i64 == -5);
    b = bind(cmp(ICE_EXPR_EQ, "f", VL(3)));
    CHECK(b->lit.kind == ICE_T_FLOAT && b->lit.v.f32 == 3.0f);
    b = bind(cmp(ICE_EXPR_EQ, "d", VL(3)));
    CHECK(b->lit.kind == ICE_T_DOUBLE && b->lit.v.f64 == 3.0);
    CHECK_EQ_STR(text(bind(cmp(ICE_EXPR_EQ, "dec", VL(-7)))), "dec == \"-7.00\"");
    b = bind(cmp(ICE_EXPR_EQ, "dt", VL(19723)));
    CHECK(b->lit.kind == ICE_T_DATE && b->lit.v.i32 == 19723);
    b = bind(cmp(ICE_EXPR_EQ, "ts", VL(123)));
    CHECK(b->lit.kind == ICE_T_TIMESTAMP && b->lit.v.i64 == 123);
    b = bind(cmp(ICE_EXPR_EQ, "tstz", VL(123)));
    CHECK(b->lit.kind == ICE_T_TIMESTAMPTZ && b->lit.v.i64 == 123);
    b = bind(cmp(ICE_EXPR_EQ, "tsns", VL(123)));
    CHECK(b->lit.kind == ICE_T_TIMESTAMP_NS && b->lit.v.i64 == 123000);
    b = bind(cmp(ICE_EXPR_EQ, "tm", VL(5)));
    CHECK(b->lit.kind == ICE_T_TIME && b->lit.v.i64 == 5);
}

static void test_bind_double_and_instant_conversions(void)
{
    const ice_bound_expr *b;
    b = bind(cmp(ICE_EXPR_EQ, "f", VD(0.5)));
    CHECK(b->lit.kind == ICE_T_FLOAT && b->lit.v.f32 == 0.5f);
    CHECK(bind(cmp(ICE_EXPR_LT, "f", VD(1e300)))->op == ICE_EXPR_TRUE);
    CHECK(bind(cmp(ICE_EXPR_LT, "f", VD(-1e300)))->op == ICE_EXPR_FALSE);
    b = bind(cmp(ICE_EXPR_EQ, "d", VD(0.1)));
    CHECK(b->lit.kind == ICE_T_DOUBLE && b->lit.v.f64 == 0.1);
    /* BigDecimal.valueOf(1.005) = 1.005 -> HALF_UP at scale 2 = 1.01 */
    CHECK_EQ_STR(text(bind(cmp(ICE_EXPR_EQ, "dec", VD(1.005)))), "dec == \"1.01\"");
    CHECK_EQ_STR(text(bind(cmp(ICE_EXPR_EQ, "dec", VD(-2.125)))), "dec == \"-2.13\"");
    CHECK_EQ_STR(text(bind(cmp(ICE_EXPR_EQ, "dec", VD(1234.5)))), "dec == \"1234.50\"");
    /* instants */
    b = bind(cmp(ICE_EXPR_GE, "ts", VT(D2024)));
    CHECK(b->lit.kind == ICE_T_TIMESTAMP && b->lit.v.i64 == D2024);
    b = bind(cmp(ICE_EXPR_GE, "tstz", VT(D2024)));
    CHECK(b->lit.kind == ICE_T_TIMESTAMPTZ && b->lit.v.i64 == D2024);
    b = bind(cmp(ICE_EXPR_GE, "tsns", VT(-1)));
    CHECK(b->lit.kind == ICE_T_TIMESTAMP_NS && b->lit.v.i64 == -1000);
    b = bind(cmp(ICE_EXPR_GE, "dt", VT(-1))); /* floors: 1969-12-31 */
    CHECK(b->lit.kind == ICE_T_DATE && b->lit.v.i32 == -1);
    b = bind(cmp(ICE_EXPR_GE, "dt", VT(D2024 + DAY - 1)));
    CHECK(b->lit.v.i32 == 19723);
    b = bind(cmp(ICE_EXPR_EQ, "b", VB(false)));
    CHECK(b->lit.kind == ICE_T_BOOLEAN && !b->lit.v.b);
}

static void test_bind_errors(void)
{
    char msg[1100];
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "nope", VS("1")), msg, sizeof msg) == ICD_EINVALID);
    CHECK_EQ_STR(msg, "filter column 'nope' not found in the table schema");
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "i", VS("abc")), msg, sizeof msg) == ICD_EINVALID);
    CHECK(strstr(msg, "'i'") && strstr(msg, "\"abc\"") && strstr(msg, "int"));
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "i", VS("1.5")), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "i", VB(true)), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "i", VD(1.0)), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "s", VT(0)), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "id", VT(0)), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "s", VL(1)), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "d", VD(NAN)), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "dt", VS("2024-13-01")), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "ts", VS("2024-01-01T00:00:00Z")), msg, sizeof msg) ==
          ICD_EINVALID); /* a local timestamp takes no zone */
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "u", VS("not-a-uuid")), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "b", VS("yes")), msg, sizeof msg) == ICD_EINVALID);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "tsns", VL(INT64_MAX / 10)), msg, sizeof msg) ==
          ICD_EINVALID); /* micros -> nanos overflows */
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "st", VS("1")), msg, sizeof msg) == ICD_EUNSUPPORTED);
    CHECK(bind_error(cmp(ICE_EXPR_EQ, "lst.element", VS("1")), msg, sizeof msg) ==
          ICD_EUNSUPPORTED);
    /* an error inside a NOT or an OR still surfaces */
    CHECK(bind_error(
              not_(bin(ICE_EXPR_OR, cmp(ICE_EXPR_EQ, "i", VL(1)), cmp(ICE_EXPR_EQ, "zz", VL(1)))),
              msg, sizeof msg) == ICD_EINVALID);
}

static void test_not_pushdown_and_folding(void)
{
    const ice_expr *a = cmp(ICE_EXPR_EQ, "i", VL(1)), *b = cmp(ICE_EXPR_LT, "id", VL(5));
    CHECK_EQ_STR(text(bind(not_(bin(ICE_EXPR_AND, a, b)))), "(i != 1 or id >= 5)");
    CHECK_EQ_STR(text(bind(not_(bin(ICE_EXPR_OR, cmp(ICE_EXPR_LE, "i", VL(1)),
                                    cmp(ICE_EXPR_GT, "id", VL(5)))))),
                 "(i > 1 and id <= 5)");
    CHECK_EQ_STR(text(bind(not_(not_(b)))), "id < 5");
    CHECK_EQ_STR(text(bind(not_(isnull("i", false)))), "not_null(i)");
    CHECK_EQ_STR(text(bind(not_(isnull("i", true)))), "is_null(i)");
    /* required columns: null tests are decided */
    CHECK(bind(isnull("id", false))->op == ICE_EXPR_FALSE);
    CHECK(bind(isnull("id", true))->op == ICE_EXPR_TRUE);
    /* st.inner is required but its struct is optional: not decided */
    CHECK(bind(isnull("st.inner", false))->op == ICE_EXPR_IS_NULL);
    ice_expr *t = node(ICE_EXPR_TRUE), *f = node(ICE_EXPR_FALSE);
    CHECK(bind(not_(t))->op == ICE_EXPR_FALSE);
    CHECK_EQ_STR(text(bind(bin(ICE_EXPR_AND, t, a))), "i == 1");
    CHECK(bind(bin(ICE_EXPR_OR, t, a))->op == ICE_EXPR_TRUE);
    CHECK(bind(bin(ICE_EXPR_AND, f, a))->op == ICE_EXPR_FALSE);
    CHECK_EQ_STR(text(bind(not_(bin(ICE_EXPR_AND, t, not_(a))))), "i == 1");
    /* the evaluators never see NOT anywhere in the tree */
    const ice_bound_expr *deep = bind(not_(bin(ICE_EXPR_OR, not_(bin(ICE_EXPR_AND, a, b)), a)));
    CHECK_EQ_STR(text(deep), "((i == 1 and id < 5) and i != 1)");
}

/* ---- projection ---------------------------------------------------------------------- */

static ice_partition_spec *spec_of(const char *json)
{
    ice_partition_spec *s = NULL;
    icd_error err;
    int rc = ice_partition_spec_parse(json, strlen(json), 0, "spec.json", &s, &err);
    if (rc) fprintf(stderr, "spec: %s\n", err.message);
    CHECK(rc == 0);
    return s;
}

static const char *proj(const ice_partition_spec *s, const ice_expr *e, bool strict)
{
    const ice_bound_expr *out = NULL;
    icd_error err;
    CHECK(ice_expr_project(bind(e), s, schema, strict, &arena, &out, &err) == 0);
    return text(out);
}

static ice_partition_spec *one_field(const char *transform, int src, const char *name)
{
    char json[256];
    snprintf(json, sizeof json,
             "{\"spec-id\":0,\"fields\":[{\"name\":\"%s\",\"transform\":\"%s\",\"source-id\":%d,"
             "\"field-id\":1000}]}",
             name, transform, src);
    return spec_of(json);
}

static void test_project_identity_and_unpartitioned(void)
{
    ice_partition_spec *sp = one_field("identity", 11, "s");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "s", VS("m")), false), "s < \"m\"");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "s", VS("m")), true), "s == \"m\"");
    CHECK_EQ_STR(proj(sp, not_(cmp(ICE_EXPR_EQ, "s", VS("m"))), false), "s != \"m\"");
    CHECK_EQ_STR(proj(sp, isnull("s", false), false), "is_null(s)");
    /* other columns: inclusive TRUE, strict FALSE */
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "i", VL(1)), false), "true");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "i", VL(1)), true), "false");
    CHECK_EQ_STR(
        proj(sp, bin(ICE_EXPR_AND, cmp(ICE_EXPR_EQ, "i", VL(1)), cmp(ICE_EXPR_GE, "s", VS("k"))),
             false),
        "s >= \"k\"");
    CHECK_EQ_STR(
        proj(sp, bin(ICE_EXPR_OR, cmp(ICE_EXPR_EQ, "i", VL(1)), cmp(ICE_EXPR_GE, "s", VS("k"))),
             false),
        "true");
    ice_partition_spec_free(sp);
    sp = one_field("void", 11, "s_null");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "s", VS("m")), false), "true");
    CHECK_EQ_STR(proj(sp, isnull("s", false), false), "true");
    ice_partition_spec_free(sp);
    sp = one_field("zorder", 11, "z"); /* unknown transform */
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "s", VS("m")), false), "true");
    ice_partition_spec_free(sp);
}

static void test_project_day_hour_month_year(void)
{
    ice_partition_spec *sp = one_field("day", 8, "ts_day");
    /* ts < 2024-01-02 -> day <= day(2024-01-01T23:59:59.999999) */
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "ts", VT(D2024 + DAY)), false), "ts_day <= 19723");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LE, "ts", VT(D2024 + DAY)), false), "ts_day <= 19724");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GT, "ts", VT(D2024 + DAY - 1)), false), "ts_day >= 19724");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "ts", VT(D2024 + 5)), false), "ts_day >= 19723");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "ts", VT(D2024 + 5)), false), "ts_day == 19723");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_NOT_EQ, "ts", VT(D2024)), false), "true");
    /* strict */
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "ts", VT(D2024)), true), "ts_day > 19722");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "ts", VT(D2024 + 1)), true), "ts_day > 19723");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "ts", VT(D2024)), true), "ts_day < 19723");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LE, "ts", VT(D2024 + DAY - 1)), true), "ts_day < 19724");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GT, "ts", VT(D2024)), true), "ts_day > 19723");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "ts", VT(D2024)), true), "false");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_NOT_EQ, "ts", VT(D2024)), true), "ts_day != 19723");
    /* before the epoch: periods may have been written one too high */
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "ts", VT(-DAY)), false), "ts_day <= -1");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LE, "ts", VT(-DAY - 1)), false), "ts_day <= -1");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LE, "ts", VT(-1)), false), "ts_day <= 0");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "ts", VT(-DAY - 1)), false), "ts_day >= -2");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "ts", VT(-DAY / 2)), false),
                 "(ts_day == -1 or ts_day == 0)");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "ts", VT(0)), false), "ts_day == 0");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GT, "ts", VT(-DAY - 1)), true), "ts_day > -1");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_NOT_EQ, "ts", VT(-1)), true),
                 "(ts_day != -1 and ts_day != 0)");
    ice_partition_spec_free(sp);

    sp = one_field("hour", 9, "h");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "tstz", VT(D2024 + HOUR + 1)), false), "h >= 473353");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "tstz", VT(D2024)), false), "h <= 473351");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "tstz", VT(-HOUR / 2)), false), "h >= -1");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "tstz", VT(-HOUR / 2)), false), "h <= 0");
    ice_partition_spec_free(sp);

    sp = one_field("month", 8, "m");
    /* 2024-03-01: month (2024-1970)*12+2 = 650 */
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "ts", VS("2024-03-01T00:00:00")), false), "m <= 649");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "ts", VS("2024-03-01T00:00:00")), true), "m > 649");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "ts", VS("1969-12-15T00:00:00")), false), "m >= -1");
    ice_partition_spec_free(sp);

    sp = one_field("year", 6, "y");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "dt", VS("2024-06-01")), false), "y >= 54");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "dt", VS("2024-01-01")), false), "y <= 53");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "dt", VS("1969-01-01")), false), "y <= -1");
    ice_partition_spec_free(sp);

    /* day of a date is the date itself: no epoch widening */
    sp = one_field("day", 6, "d");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "dt", VL(-3)), false), "d == -3");
    ice_partition_spec_free(sp);

    /* nanosecond timestamps step by one nanosecond */
    sp = one_field("day", 10, "nd");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "tsns", VT(D2024)), false), "nd <= 19722");
    ice_partition_spec_free(sp);
}

static void test_project_truncate_and_bucket(void)
{
    ice_partition_spec *sp = one_field("truncate[10]", 2, "it");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "i", VL(20)), false), "it <= 10");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "i", VL(25)), false), "it <= 20");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GT, "i", VL(29)), false), "it >= 30");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "i", VL(-5)), false), "it >= -10");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "i", VL(-5)), false), "it == -10");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "i", VL(20)), true), "it > 10");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LE, "i", VL(19)), true), "it < 20");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "i", VL(5)), true), "false");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_NOT_EQ, "i", VL(5)), true), "it != 0");
    /* no value below INT_MIN: no projection */
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "i", VL(INT32_MIN)), false), "true");
    ice_partition_spec_free(sp);

    sp = one_field("truncate[3]", 11, "st");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "s", VS("abcdef")), false), "st <= \"abc\"");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "s", VS("abcdef")), false), "st >= \"abc\"");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "s", VS("ab")), false), "st == \"ab\"");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LE, "s", VS("abcdef")), true), "st < \"abc\"");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GT, "s", VS("abcdef")), true), "st > \"abc\"");
    ice_partition_spec_free(sp);

    sp = one_field("truncate[50]", 5, "dt50");
    /* unscaled 12.34 = 1234; dec < 12.34 -> <= T(1233) = 1200 = "12.00" */
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "dec", VS("12.34")), false), "dt50 <= \"12.00\"");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "dec", VS("12.00")), false), "dt50 <= \"11.50\"");
    ice_partition_spec_free(sp);

    sp = one_field("bucket[16]", 1, "idb");
    /* hash(34) = 2017239379 (spec vector); 2017239379 mod 16 = 3 */
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "id", VL(34)), false), "idb == 3");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_LT, "id", VL(34)), false), "true");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_EQ, "id", VL(34)), true), "false");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_NOT_EQ, "id", VL(34)), true), "idb != 3");
    ice_partition_spec_free(sp);

    /* two fields on one column: inclusive ANDs, strict ORs */
    sp = spec_of("{\"spec-id\":1,\"fields\":["
                 "{\"name\":\"d\",\"transform\":\"day\",\"source-id\":8,\"field-id\":1000},"
                 "{\"name\":\"h\",\"transform\":\"hour\",\"source-id\":8,\"field-id\":1001}]}");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "ts", VT(D2024 + HOUR)), false),
                 "(d >= 19723 and h >= 473353)");
    CHECK_EQ_STR(proj(sp, cmp(ICE_EXPR_GE, "ts", VT(D2024 + HOUR)), true),
                 "(d > 19723 or h > 473352)");
    ice_partition_spec_free(sp);
}

/* ---- manifest summaries -------------------------------------------------------------- */

static void le32(uint8_t *p, int32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)((uint32_t)v >> (8 * i));
}
static void le64(uint8_t *p, int64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

static bool manifest_match(const ice_partition_spec *sp, const ice_manifest_file *mf,
                           const ice_expr *e)
{
    const ice_bound_expr *p = NULL;
    icd_error err;
    CHECK(ice_expr_project(bind(e), sp, schema, false, &arena, &p, &err) == 0);
    bool may = false;
    int rc = ice_manifest_may_match(p, mf, &may, &err);
    CHECK(rc == 0);
    return may;
}

static void test_manifest_summaries(void)
{
    ice_partition_spec *sp =
        spec_of("{\"spec-id\":0,\"fields\":["
                "{\"name\":\"d\",\"transform\":\"day\",\"source-id\":8,\"field-id\":1000},"
                "{\"name\":\"s\",\"transform\":\"identity\",\"source-id\":11,\"field-id\":1001}]}");
    uint8_t lo[4], hi[4];
    le32(lo, 19723);
    le32(hi, 19725);
    ice_field_summary sums[2] = {
        {0, -1, true, true, lo, hi, 4, 4},
        {1, 0, true, true, (const uint8_t *)"eu", (const uint8_t *)"us", 2, 2}};
    ice_manifest_file mf = {0};
    mf.path = "m.avro";
    mf.partitions = sums;
    mf.npartitions = 2;
    mf.has_partitions = true;
    CHECK(manifest_match(sp, &mf, cmp(ICE_EXPR_GE, "ts", VT(D2024 + 2 * DAY))));
    CHECK(!manifest_match(sp, &mf, cmp(ICE_EXPR_GE, "ts", VT(D2024 + 3 * DAY))));
    CHECK(!manifest_match(sp, &mf, cmp(ICE_EXPR_LT, "ts", VT(D2024))));
    CHECK(manifest_match(sp, &mf, cmp(ICE_EXPR_LT, "ts", VT(D2024 + 1))));
    CHECK(manifest_match(sp, &mf, cmp(ICE_EXPR_EQ, "ts", VT(D2024 + DAY + 5 * HOUR))));
    CHECK(!manifest_match(sp, &mf, cmp(ICE_EXPR_EQ, "ts", VT(D2024 + 9 * DAY))));
    CHECK(!manifest_match(sp, &mf, isnull("ts", false))); /* contains_null = 0 */
    CHECK(manifest_match(sp, &mf, isnull("s", false)));   /* contains_null = 1 */
    CHECK(manifest_match(sp, &mf, cmp(ICE_EXPR_EQ, "s", VS("fr"))));
    CHECK(!manifest_match(sp, &mf, cmp(ICE_EXPR_EQ, "s", VS("zz"))));
    CHECK(!manifest_match(sp, &mf, cmp(ICE_EXPR_LT, "s", VS("eu"))));
    CHECK(manifest_match(sp, &mf, cmp(ICE_EXPR_LE, "s", VS("eu"))));
    CHECK(!manifest_match(sp, &mf, cmp(ICE_EXPR_GT, "s", VS("us"))));
    CHECK(manifest_match(sp, &mf, not_(cmp(ICE_EXPR_EQ, "s", VS("us")))));
    CHECK(!manifest_match(
        sp, &mf,
        bin(ICE_EXPR_AND, cmp(ICE_EXPR_EQ, "s", VS("fr")), cmp(ICE_EXPR_LT, "ts", VT(D2024)))));
    CHECK(manifest_match(
        sp, &mf,
        bin(ICE_EXPR_OR, cmp(ICE_EXPR_EQ, "s", VS("fr")), cmp(ICE_EXPR_LT, "ts", VT(D2024)))));
    CHECK(manifest_match(sp, &mf, cmp(ICE_EXPR_EQ, "i", VL(1)))); /* not a partition column */
    /* missing bounds and unknown null flags: may match */
    sums[0].has_lower = sums[0].has_upper = false;
    sums[0].contains_null = -1;
    CHECK(manifest_match(sp, &mf, cmp(ICE_EXPR_GE, "ts", VT(D2024 + 30 * DAY))));
    CHECK(manifest_match(sp, &mf, isnull("ts", false)));
    /* no summaries at all */
    mf.has_partitions = false;
    CHECK(manifest_match(sp, &mf, cmp(ICE_EXPR_EQ, "s", VS("zz"))));
    /* a bound of the wrong width is corrupt */
    mf.has_partitions = true;
    sums[0].has_lower = true;
    sums[0].lower_len = 3;
    const ice_bound_expr *p = NULL;
    icd_error err;
    CHECK(ice_expr_project(bind(cmp(ICE_EXPR_GE, "ts", VT(D2024))), sp, schema, false, &arena, &p,
                           &err) == 0);
    bool may;
    CHECK(ice_manifest_may_match(p, &mf, &may, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "'d'") != NULL);
    ice_partition_spec_free(sp);
}

/* ---- column metrics ------------------------------------------------------------------ */

static ice_col_stats stat(int32_t id, int64_t values, int64_t nulls, int64_t nans,
                          const uint8_t *lo, uint32_t lo_len, const uint8_t *hi, uint32_t hi_len)
{
    ice_col_stats s = {id, values, nulls, nans, lo, hi, lo_len, hi_len, lo != NULL, hi != NULL};
    return s;
}

static bool metrics_match(const ice_content_file *f, const ice_expr *e)
{
    bool may = false;
    icd_error err;
    CHECK(ice_metrics_may_match(bind(e), f, &may, &err) == 0);
    return may;
}

static void test_metrics(void)
{
    static uint8_t id_lo[8], id_hi[8], i_lo[4], i_hi[4], d_lo[8], d_hi[8], nan8[8];
    le64(id_lo, 10);
    le64(id_hi, 20);
    le32(i_lo, 5);
    le32(i_hi, 9);
    double dv = -1.5, dh = 2.5, dn = NAN;
    memcpy(d_lo, &dv, 8);
    memcpy(d_hi, &dh, 8);
    memcpy(nan8, &dn, 8);
    ice_col_stats st[6];
    st[0] = stat(1, 10, 0, -1, id_lo, 8, id_hi, 8);
    st[1] = stat(2, 10, 10, -1, NULL, 0, NULL, 0); /* all null */
    st[2] = stat(4, 10, 0, 0, d_lo, 8, d_hi, 8);
    /* truncated string bounds: max "abcxyz" stored as "abd" (rounded up) */
    st[3] = stat(11, 10, 2, -1, (const uint8_t *)"abc", 3, (const uint8_t *)"abd", 3);
    st[4] = stat(13, 10, -1, -1, NULL, 0, NULL, 0);
    st[5] = stat(18, 10, 0, -1, NULL, 0, NULL, 0);
    ice_content_file f = {0};
    f.record_count = 10;
    f.manifest_path = "m.avro";
    f.stats = st;
    f.nstats = 6;
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_LT, "id", VL(10))));
    CHECK(metrics_match(&f, cmp(ICE_EXPR_LE, "id", VL(10))));
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_GT, "id", VL(20))));
    CHECK(metrics_match(&f, cmp(ICE_EXPR_GE, "id", VL(20))));
    CHECK(metrics_match(&f, cmp(ICE_EXPR_EQ, "id", VL(15))));
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_EQ, "id", VL(21))));
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_EQ, "id", VL(9))));
    CHECK(metrics_match(&f, not_(cmp(ICE_EXPR_EQ, "id", VL(15)))));
    /* all-null column: comparisons and not_null cannot match, is_null can */
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_EQ, "i", VL(1))));
    CHECK(!metrics_match(&f, isnull("i", true)));
    CHECK(metrics_match(&f, isnull("i", false)));
    /* no nulls: is_null cannot match; unknown null count: may */
    CHECK(!metrics_match(&f, isnull("d", false)));
    CHECK(metrics_match(&f, isnull("b", false)));
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_GT, "d", VD(2.5))));
    CHECK(metrics_match(&f, cmp(ICE_EXPR_LT, "d", VD(-1.0))));
    /* truncated string bounds never exclude a value between them */
    CHECK(metrics_match(&f, cmp(ICE_EXPR_EQ, "s", VS("abcxyz"))));
    CHECK(metrics_match(&f, cmp(ICE_EXPR_EQ, "s", VS("abd"))));
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_EQ, "s", VS("abd0"))));
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_EQ, "s", VS("ab"))));
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_LT, "s", VS("abc"))));
    CHECK(metrics_match(&f, cmp(ICE_EXPR_GT, "s", VS("abcz"))));
    /* no stats for a column: may match; and/or combine */
    CHECK(metrics_match(&f, cmp(ICE_EXPR_EQ, "MixedCase", VS("q"))));
    CHECK(metrics_match(&f, cmp(ICE_EXPR_EQ, "f", VD(1.0))));
    CHECK(!metrics_match(
        &f, bin(ICE_EXPR_AND, cmp(ICE_EXPR_EQ, "f", VD(1.0)), cmp(ICE_EXPR_GT, "id", VL(30)))));
    CHECK(metrics_match(
        &f, bin(ICE_EXPR_OR, cmp(ICE_EXPR_EQ, "f", VD(1.0)), cmp(ICE_EXPR_GT, "id", VL(30)))));

    /* NaN: a NaN-only column cannot match comparisons; a NaN lower bound is unreliable */
    st[2] = stat(4, 10, 0, 10, nan8, 8, nan8, 8);
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_GT, "d", VD(1.0))));
    st[2] = stat(4, 10, 0, 3, nan8, 8, d_hi, 8);
    CHECK(metrics_match(&f, cmp(ICE_EXPR_LT, "d", VD(-100.0))));
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_GT, "d", VD(100.0))));

    /* promoted int -> long: an old file's 4-byte bounds */
    st[0] = stat(1, 10, 0, -1, i_lo, 4, i_hi, 4);
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_GT, "id", VL(9))));
    CHECK(metrics_match(&f, cmp(ICE_EXPR_EQ, "id", VL(7))));
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_LT, "id", VL(5))));
    /* promoted float -> double: 4-byte bounds */
    float fl = 0.25f, fh = 0.75f;
    static uint8_t f_lo[4], f_hi[4];
    memcpy(f_lo, &fl, 4);
    memcpy(f_hi, &fh, 4);
    st[2] = stat(4, 10, 0, 0, f_lo, 4, f_hi, 4);
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_GT, "d", VD(0.75))));
    CHECK(metrics_match(&f, cmp(ICE_EXPR_EQ, "d", VD(0.5))));

    /* a bound whose width fits no encoding of the type is corrupt */
    st[0] = stat(1, 10, 0, -1, i_lo, 3, i_hi, 4);
    bool may;
    icd_error err;
    CHECK(ice_metrics_may_match(bind(cmp(ICE_EXPR_EQ, "id", VL(7))), &f, &may, &err) ==
          ICD_ECORRUPT);
    /* empty files match nothing; unknown record counts may */
    f.record_count = 0;
    CHECK(!metrics_match(&f, cmp(ICE_EXPR_EQ, "MixedCase", VS("q"))));
    f.record_count = -1;
    CHECK(metrics_match(&f, cmp(ICE_EXPR_EQ, "id", VL(7))));
}

/* ---- partition tuples and residuals -------------------------------------------------- */

static const char *residual(const ice_partition_spec *sp, const ice_content_file *f,
                            const ice_expr *e)
{
    const ice_bound_expr *r = NULL;
    icd_error err;
    CHECK(ice_expr_residual(bind(e), sp, schema, f, &arena, &r, &err) == 0);
    return text(r);
}

static const ice_expr *interval(const char *col, int64_t start, int64_t end)
{
    return bin(ICE_EXPR_AND, cmp(ICE_EXPR_GE, col, VT(start)), cmp(ICE_EXPR_LT, col, VT(end)));
}

static void test_partition_eval_and_residuals(void)
{
    ice_partition_spec *sp =
        spec_of("{\"spec-id\":0,\"fields\":["
                "{\"name\":\"ts_day\",\"transform\":\"day\",\"source-id\":9,\"field-id\":1000},"
                "{\"name\":\"s\",\"transform\":\"identity\",\"source-id\":11,\"field-id\":1001}]}");
    ice_literal part[2] = {ice_lit_date(19724), ice_lit_string("eu", 2)}; /* 2024-01-02 */
    ice_content_file f = {0};
    f.partition = part;
    f.npartition = 2;
    f.record_count = 5;

    /* file pruning by the exact tuple */
    const ice_bound_expr *p = NULL;
    icd_error err;
    CHECK(ice_expr_project(bind(interval("tstz", D2024 + DAY, D2024 + 2 * DAY)), sp, schema, false,
                           &arena, &p, &err) == 0);
    CHECK(ice_partition_eval(p, &f, false));
    CHECK(ice_expr_project(bind(interval("tstz", D2024 + 2 * DAY, D2024 + 3 * DAY)), sp, schema,
                           false, &arena, &p, &err) == 0);
    CHECK(!ice_partition_eval(p, &f, false));
    CHECK(ice_expr_project(bind(cmp(ICE_EXPR_EQ, "s", VS("us"))), sp, schema, false, &arena, &p,
                           &err) == 0);
    CHECK(!ice_partition_eval(p, &f, false));

    /* an interval aligned to day boundaries decides the whole partition */
    CHECK_EQ_STR(residual(sp, &f, interval("tstz", D2024 + DAY, D2024 + 2 * DAY)), "true");
    CHECK_EQ_STR(residual(sp, &f, interval("tstz", D2024, D2024 + 3 * DAY)), "true");
    /* an unaligned one leaves a residual on its boundary partitions only */
    CHECK_EQ_STR(residual(sp, &f, interval("tstz", D2024 + DAY + HOUR, D2024 + 3 * DAY)),
                 "tstz >= \"2024-01-02T01:00:00.000000+00:00\"");
    CHECK_EQ_STR(residual(sp, &f, interval("tstz", D2024, D2024 + DAY + HOUR)),
                 "tstz < \"2024-01-02T01:00:00.000000+00:00\"");
    CHECK_EQ_STR(residual(sp, &f, interval("tstz", D2024 + HOUR, D2024 + 3 * DAY)), "true");
    /* a partition outside: FALSE */
    CHECK_EQ_STR(residual(sp, &f, interval("tstz", D2024 + 5 * DAY, D2024 + 6 * DAY)), "false");
    /* a non-partition column always stays */
    CHECK_EQ_STR(residual(sp, &f, cmp(ICE_EXPR_EQ, "i", VL(3))), "i == 3");
    CHECK_EQ_STR(
        residual(sp, &f,
                 bin(ICE_EXPR_AND, cmp(ICE_EXPR_EQ, "s", VS("eu")), cmp(ICE_EXPR_EQ, "i", VL(3)))),
        "i == 3");
    CHECK_EQ_STR(
        residual(sp, &f,
                 bin(ICE_EXPR_OR, cmp(ICE_EXPR_EQ, "s", VS("eu")), cmp(ICE_EXPR_EQ, "i", VL(3)))),
        "true");
    /* identity equality is decided by the partition */
    CHECK_EQ_STR(residual(sp, &f, cmp(ICE_EXPR_EQ, "s", VS("eu"))), "true");
    CHECK_EQ_STR(residual(sp, &f, cmp(ICE_EXPR_NOT_EQ, "s", VS("eu"))), "false");
    /* a null partition value proves no comparison strictly */
    part[1] = ice_lit_null(ICE_T_STRING);
    CHECK_EQ_STR(residual(sp, &f, cmp(ICE_EXPR_LT, "s", VS("zz"))), "s < \"zz\"");
    CHECK_EQ_STR(residual(sp, &f, isnull("s", false)), "true");
    CHECK_EQ_STR(residual(sp, &f, isnull("s", true)), "false");
    /* an unpartitioned spec keeps the whole filter */
    ice_partition_spec *un = spec_of("{\"spec-id\":0,\"fields\":[]}");
    f.npartition = 0;
    CHECK_EQ_STR(residual(un, &f, cmp(ICE_EXPR_EQ, "s", VS("eu"))), "s == \"eu\"");
    ice_partition_spec_free(un);
    ice_partition_spec_free(sp);
}

static void test_unbound_text(void)
{
    icd_buf b = ICD_BUF_INIT;
    ice_expr_to_text(&b, not_(bin(ICE_EXPR_OR, cmp(ICE_EXPR_GE, "ts", VT(0)),
                                  cmp(ICE_EXPR_EQ, "s", VS("a\"b")))));
    CHECK_EQ_STR(b.data, "not((ts >= \"1970-01-01T00:00:00.000000+00:00\" or s == \"a\\\"b\"))");
    icd_buf_free(&b);
}

static void setup(void)
{
    icd_error err;
    CHECK(ice_schema_parse(SCHEMA, strlen(SCHEMA), "schema.json", &schema, &err) == 0);
}

static void teardown(void)
{
    ice_schema_free(schema);
    icd_arena_free(&arena);
}

TEST_MAIN(TEST(setup), TEST(test_bind_text_conversions), TEST(test_bind_decimal_text_beyond_scale),
          TEST(test_bind_long_conversions), TEST(test_bind_double_and_instant_conversions),
          TEST(test_bind_errors), TEST(test_not_pushdown_and_folding),
          TEST(test_project_identity_and_unpartitioned), TEST(test_project_day_hour_month_year),
          TEST(test_project_truncate_and_bucket), TEST(test_manifest_summaries), TEST(test_metrics),
          TEST(test_partition_eval_and_residuals), TEST(test_unbound_text), TEST(teardown))
