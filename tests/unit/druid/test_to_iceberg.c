/*
 * Druid icebergFilter -> Iceberg expression: each filter type turns into the expression
 * Druid builds with Iceberg's Expressions factory (interval = OR of [start, end) pairs in
 * timestamptz micros, range bounds by JSON kind, equals values as text), checked through
 * the rendered text and the value kinds.
 */
#include <jansson.h>

#include "druid/plan/to_iceberg.h"
#include "test.h"

static icd_arena arena = ICD_ARENA_INIT;

static const ice_expr *conv(const char *json, int *rc_out)
{
    json_error_t jerr;
    json_t *j = json_loads(json, 0, &jerr);
    CHECK(j != NULL);
    const ice_expr *e = NULL;
    icd_error err;
    icd_error_clear(&err);
    int rc = dr_filter_json_to_ice_expr(j, "icebergFilter", 86400000LL, &arena, &e, &err);
    json_decref(j);
    if (rc_out)
        *rc_out = rc;
    else if (rc)
        fprintf(stderr, "%s: %s\n", json, err.message);
    return e;
}

static char buf[1024];
static const char *text(const ice_expr *e)
{
    icd_buf b = ICD_BUF_INIT;
    ice_expr_to_text(&b, e);
    snprintf(buf, sizeof buf, "%s", b.data ? b.data : "");
    icd_buf_free(&b);
    return buf;
}

static void test_equals_and_range(void)
{
    const ice_expr *e =
        conv("{\"type\":\"equals\",\"filterColumn\":\"a\",\"filterValue\":\"5\"}", NULL);
    CHECK(e && e->op == ICE_EXPR_EQ && e->value.kind == ICE_VALUE_STRING);
    CHECK_EQ_STR(text(e), "a == \"5\"");
    e = conv("{\"type\":\"range\",\"filterColumn\":\"n\",\"lower\":3,\"upper\":7.5,"
             "\"upperOpen\":true}",
             NULL);
    CHECK(e && e->op == ICE_EXPR_AND);
    CHECK(e->left->op == ICE_EXPR_GE && e->left->value.kind == ICE_VALUE_LONG &&
          e->left->value.i64 == 3);
    CHECK(e->right->op == ICE_EXPR_LT && e->right->value.kind == ICE_VALUE_DOUBLE &&
          e->right->value.f64 == 7.5);
    e = conv("{\"type\":\"range\",\"filterColumn\":\"b\",\"lower\":true,\"lowerOpen\":true}", NULL);
    CHECK(e && e->op == ICE_EXPR_GT && e->value.kind == ICE_VALUE_BOOL && e->value.b);
    e = conv("{\"type\":\"range\",\"filterColumn\":\"s\",\"upper\":\"m\"}", NULL);
    CHECK_EQ_STR(text(e), "s <= \"m\"");
}

static void test_interval_time_window_and_logic(void)
{
    const ice_expr *e = conv("{\"type\":\"interval\",\"filterColumn\":\"ts\",\"intervals\":["
                             "\"2024-01-01T00:00:00Z/2024-01-02T00:00:00Z\","
                             "\"2024-02-01T00:00:00Z/P1D\"]}",
                             NULL);
    CHECK_EQ_STR(text(e), "((ts >= \"2024-01-01T00:00:00.000000+00:00\" and ts < "
                          "\"2024-01-02T00:00:00.000000+00:00\") or (ts >= "
                          "\"2024-02-01T00:00:00.000000+00:00\" and ts < "
                          "\"2024-02-02T00:00:00.000000+00:00\"))");
    CHECK(e && e->left->left->value.kind == ICE_VALUE_TIMESTAMP_MICROS &&
          e->left->left->value.i64 == 1704067200000000LL);
    /* baseTime defaults to the injected now (86400000 ms = 1970-01-02) */
    e = conv("{\"type\":\"timeWindow\",\"filterColumn\":\"ts\"}", NULL);
    CHECK_EQ_STR(text(e), "(ts >= \"1970-01-01T00:00:00.000000+00:00\" and ts <= "
                          "\"1970-01-02T00:00:00.000000+00:00\")");
    e = conv("{\"type\":\"not\",\"filter\":{\"type\":\"or\",\"filters\":["
             "{\"type\":\"equals\",\"filterColumn\":\"a\",\"filterValue\":\"x\"},"
             "{\"type\":\"equals\",\"filterColumn\":\"b\",\"filterValue\":\"y\"},"
             "{\"type\":\"equals\",\"filterColumn\":\"c\",\"filterValue\":\"z\"}]}}",
             NULL);
    CHECK_EQ_STR(text(e), "not(((a == \"x\" or b == \"y\") or c == \"z\"))");
    int rc = 0;
    e = conv("{\"type\":\"equals\",\"filterColumn\":\"a\"}", &rc);
    CHECK(rc == ICD_EINVALID && e == NULL);
}

static void teardown(void)
{
    icd_arena_free(&arena);
}

TEST_MAIN(TEST(test_equals_and_range), TEST(test_interval_time_window_and_logic), TEST(teardown))
