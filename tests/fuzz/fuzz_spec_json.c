/*
 * libFuzzer target: a Druid spec document from arbitrary bytes (spec.c, filter.c,
 * timestamp.c, joda.c, period.c). A parsed spec is driven further: its icebergFilter is
 * converted to predicates and rendered, its rewrite exclusions and granularity buckets
 * computed, and its timestampSpec applied to the table name. The filter is also turned
 * into an Iceberg expression, bound to a small fixed schema (columns of many types, so
 * every literal conversion is reachable), projected through a fixed spec and rendered.
 * The raw bytes also go to
 * the ISO-8601, period and interval parsers directly. Any crash, leak or sanitizer report
 * is a bug; errors are expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "druid/spec/spec.h"
#include "druid/plan/to_iceberg.h"
#include "iceberg/partition.h"
#include "iceberg/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char SCHEMA[] =
    "{\"type\":\"struct\",\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":3,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":4,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":5,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":6,\"name\":\"dt\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":7,\"name\":\"tm\",\"required\":false,\"type\":\"time\"},"
    "{\"id\":8,\"name\":\"ts\",\"required\":false,\"type\":\"timestamp\"},"
    "{\"id\":9,\"name\":\"__time\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":10,\"name\":\"ns\",\"required\":false,\"type\":\"timestamp_ns\"},"
    "{\"id\":11,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":12,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":13,\"name\":\"b\",\"required\":false,\"type\":\"boolean\"}]}";
static const char SPEC[] =
    "{\"spec-id\":0,\"fields\":["
    "{\"name\":\"d\",\"transform\":\"day\",\"source-id\":9,\"field-id\":1000},"
    "{\"name\":\"h\",\"transform\":\"hour\",\"source-id\":8,\"field-id\":1001},"
    "{\"name\":\"m\",\"transform\":\"month\",\"source-id\":6,\"field-id\":1002},"
    "{\"name\":\"t\",\"transform\":\"truncate[4]\",\"source-id\":11,\"field-id\":1003},"
    "{\"name\":\"ti\",\"transform\":\"truncate[10]\",\"source-id\":2,\"field-id\":1004},"
    "{\"name\":\"td\",\"transform\":\"truncate[7]\",\"source-id\":5,\"field-id\":1005},"
    "{\"name\":\"b\",\"transform\":\"bucket[8]\",\"source-id\":1,\"field-id\":1006},"
    "{\"name\":\"y\",\"transform\":\"year\",\"source-id\":10,\"field-id\":1007}]}";

/* The spec's filter as an Iceberg expression, bound (both case modes) and projected. */
static void drive_iceberg(const dr_pred *p)
{
    static ice_schema *schema;
    static ice_partition_spec *spec;
    icd_error err;
    if (!schema && ice_schema_parse(SCHEMA, strlen(SCHEMA), "fuzz", &schema, &err)) return;
    if (!spec && ice_partition_spec_parse(SPEC, strlen(SPEC), 0, "fuzz", &spec, &err)) return;
    icd_arena a = ICD_ARENA_INIT;
    const ice_expr *e = NULL;
    if (dr_pred_to_ice_expr(p, &a, &e, &err) == 0) {
        icd_buf b = ICD_BUF_INIT;
        ice_expr_to_text(&b, e);
        for (int cs = 0; cs < 2; cs++) {
            ice_bound_expr *bound = NULL;
            if (ice_expr_bind(e, schema, cs == 1, &a, &bound, &err)) continue;
            ice_bound_expr_to_text(&b, bound);
            for (int strict = 0; strict < 2; strict++) {
                const ice_bound_expr *proj = NULL;
                if (ice_expr_project(bound, spec, schema, strict == 1, &a, &proj, &err) == 0)
                    ice_bound_expr_to_text(&b, proj);
            }
        }
        icd_buf_free(&b);
    }
    icd_arena_free(&a);
}

static void drive_spec(dr_spec *s)
{
    icd_error err;
    dr_pred *p = NULL;
    if (dr_spec_filter_pred(s, &p, &err) == 0) {
        icd_buf b = ICD_BUF_INIT;
        dr_pred_to_json(p, &b);
        icd_buf_free(&b);
        drive_iceberg(p);
        dr_pred_free(p);
    }
    json_t *ex = NULL;
    if (dr_spec_rewrite_exclusions(s, &ex, &err) == 0) json_decref(ex);
    const dr_granularity_spec *g = dr_spec_granularity(s);
    const int64_t probes[] = {0, -1, 1717200000000LL, -62167219200000LL, INT64_MAX / 4};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        int64_t a, b;
        dr_granularity_bucket(&g->segment, probes[i], &a, &b, &err);
        dr_granularity_bucket(&g->query, probes[i], &a, &b, &err);
    }
    const char *name = dr_spec_table_name(s);
    int64_t ms;
    if (name) dr_timestamp_parse_text(dr_spec_timestamp_spec(s), name, strlen(name), &ms, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icd_error err;
    const dr_spec_opts opts = {true, 1717200000000LL};
    dr_spec *s = NULL;
    if (dr_spec_parse(&s, (const char *)data, size, "fuzz.json", &opts, &err) == 0) {
        drive_spec(s);
        dr_spec_free(s);
    }
    if (size <= 256) {
        int64_t ms;
        dr_period per;
        dr_interval iv;
        dr_parse_iso_datetime((const char *)data, size, 0, &ms, &err);
        dr_parse_iso_datetime((const char *)data, size, DR_ISO_SPACE, &ms, &err);
        dr_parse_period((const char *)data, size, &per, &err);
        dr_parse_interval((const char *)data, size, &iv, &err);
    }
    return 0;
}
