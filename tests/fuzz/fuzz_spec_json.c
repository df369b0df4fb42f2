/*
 * libFuzzer target: a Druid spec document from arbitrary bytes (spec.c, filter.c,
 * timestamp.c, joda.c, period.c). A parsed spec is driven further: its icebergFilter is
 * converted to predicates and rendered, its rewrite exclusions and granularity buckets
 * computed, and its timestampSpec applied to the table name. The raw bytes also go to
 * the ISO-8601, period and interval parsers directly. Any crash, leak or sanitizer report
 * is a bug; errors are expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "druid/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void drive_spec(dr_spec *s)
{
    icd_error err;
    dr_pred *p = NULL;
    if (dr_spec_filter_pred(s, &p, &err) == 0) {
        icd_buf b = ICD_BUF_INIT;
        dr_pred_to_json(p, &b);
        icd_buf_free(&b);
        dr_pred_free(p);
    }
    json_t *ex = NULL;
    if (dr_spec_rewrite_exclusions(s, &ex, &err) == 0)
        json_decref(ex);
    const dr_granularity_spec *g = dr_spec_granularity(s);
    const int64_t probes[] = {0, -1, 1717200000000LL, -62167219200000LL, INT64_MAX / 4};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        int64_t a, b;
        dr_granularity_bucket(&g->segment, probes[i], &a, &b, &err);
        dr_granularity_bucket(&g->query, probes[i], &a, &b, &err);
    }
    const char *name = dr_spec_table_name(s);
    int64_t ms;
    if (name)
        dr_timestamp_parse_text(dr_spec_timestamp_spec(s), name, strlen(name), &ms, &err);
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
