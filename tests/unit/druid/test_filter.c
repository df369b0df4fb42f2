/* Unit tests of druid/spec/filter.c: icebergFilter parsing (fields, defaults, Druid's messages)
 * and the predicate trees handed to the planner. Instants are computed by hand. */
#include <stdlib.h>

#include "druid/spec/filter.h"
#include "test.h"

#define DAY 86400000LL
#define HOUR 3600000LL
#define JUN1 (19875 * DAY) /* 2024-06-01T00:00:00Z */
#define NOW (JUN1 + 12 * HOUR)

static dr_filter *parse(const char *text, int *rc, icd_error *err)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    CHECK(v != NULL);
    dr_filter *f = NULL;
    *rc = dr_filter_parse(&f, v, "icebergFilter", NOW, err);
    json_decref(v);
    return f;
}

static void check_error(const char *text, const char *message)
{
    int rc;
    icd_error err;
    dr_filter *f = parse(text, &rc, &err);
    CHECK_EQ_INT(rc, ICD_EINVALID);
    CHECK(f == NULL);
    CHECK_EQ_STR(err.message, message);
}

/* The predicate of a filter as compact JSON (static buffer). */
static const char *pred_text(const char *text)
{
    static char out[4096];
    int rc;
    icd_error err;
    dr_filter *f = parse(text, &rc, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err.message);
        return "";
    }
    dr_pred *p = NULL;
    CHECK_EQ_INT(dr_filter_to_pred(f, &p, &err), 0);
    icd_buf b = ICD_BUF_INIT;
    dr_pred_to_json(p, &b);
    snprintf(out, sizeof out, "%s", b.data ? b.data : "");
    icd_buf_free(&b);
    dr_pred_free(p);
    dr_filter_free(f);
    return out;
}

static void test_equals(void)
{
    int rc;
    icd_error err;
    dr_filter *f = parse("{\"type\":\"equals\",\"filterColumn\":\"id\",\"filterValue\":\"123988\"}",
                         &rc, &err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(f->type, DR_F_EQUALS);
    CHECK_EQ_STR(f->column, "id");
    CHECK_EQ_STR(f->value, "123988");
    dr_filter_free(f);
    /* Jackson coerces scalars to the String value */
    CHECK_EQ_STR(pred_text("{\"type\":\"equals\",\"filterColumn\":\"id\",\"filterValue\":123}"),
                 "{\"op\":\"eq\",\"column\":\"id\",\"value\":\"123\"}");
    CHECK_EQ_STR(pred_text("{\"type\":\"equals\",\"filterColumn\":\"ok\",\"filterValue\":true}"),
                 "{\"op\":\"eq\",\"column\":\"ok\",\"value\":\"true\"}");
    check_error(
        "{\"type\":\"equals\",\"filterValue\":\"x\"}",
        "icebergFilter.filterColumn: You must specify a filter column on the equals filter");
    check_error("{\"type\":\"equals\",\"filterColumn\":\"x\",\"filterValue\":null}",
                "icebergFilter.filterValue: You must specify a filter value on the equals filter");
    check_error("{\"type\":\"equals\",\"filterColumn\":{},\"filterValue\":\"1\"}",
                "icebergFilter.filterColumn: expected a string, found an object");
}

static void test_interval(void)
{
    int rc;
    icd_error err;
    dr_filter *f = parse("{\"type\":\"interval\",\"filterColumn\":\"ts\",\"intervals\":"
                         "[\"2024-06-01T00:00:00Z/2024-06-02T00:00:00Z\",\"P1D/2024-06-01\","
                         "\"2024-06-01T10:00:00+02:00/PT1H\"]}",
                         &rc, &err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(f->n_intervals, 3);
    CHECK_EQ_INT(f->intervals[0].start, JUN1);
    CHECK_EQ_INT(f->intervals[0].end, JUN1 + DAY);
    CHECK_EQ_INT(f->intervals[1].start, JUN1 - DAY);
    CHECK_EQ_INT(f->intervals[1].end, JUN1);
    CHECK_EQ_INT(f->intervals[2].start, JUN1 + 8 * HOUR);
    CHECK_EQ_INT(f->intervals[2].end, JUN1 + 9 * HOUR);
    dr_filter_free(f);
    /* one interval: ge/lt in timestamptz micros (or(false, x) = x) */
    CHECK_EQ_STR(pred_text("{\"type\":\"interval\",\"filterColumn\":\"ts\",\"intervals\":"
                           "[\"2024-06-01/2024-06-02\"]}"),
                 "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"ts\",\"timestamp_micros\":"
                 "1717200000000000},"
                 "{\"op\":\"lt\",\"column\":\"ts\",\"timestamp_micros\":1717286400000000}]}");
    /* several intervals are OR'd */
    CHECK_EQ_STR(
        pred_text("{\"type\":\"interval\",\"filterColumn\":\"ts\",\"intervals\":"
                  "[\"1970-01-01/1970-01-02\",\"1970-01-03/1970-01-04\"]}"),
        "{\"op\":\"or\",\"args\":["
        "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"ts\",\"timestamp_micros\":0},"
        "{\"op\":\"lt\",\"column\":\"ts\",\"timestamp_micros\":86400000000}]},"
        "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"ts\",\"timestamp_micros\":"
        "172800000000},"
        "{\"op\":\"lt\",\"column\":\"ts\",\"timestamp_micros\":259200000000}]}]}");
    check_error(
        "{\"type\":\"interval\",\"intervals\":[\"2024/2025\"]}",
        "icebergFilter.filterColumn: You must specify a filter column on the interval filter");
    check_error("{\"type\":\"interval\",\"filterColumn\":\"ts\",\"intervals\":[]}",
                "icebergFilter.intervals: You must specify intervals on the interval filter");
    check_error("{\"type\":\"interval\",\"filterColumn\":\"ts\"}",
                "icebergFilter.intervals: You must specify intervals on the interval filter");
    check_error("{\"type\":\"interval\",\"filterColumn\":\"ts\",\"intervals\":[\"P1D/P2D\"]}",
                "icebergFilter.intervals[0]: Interval composed of two durations: P1D/P2D");
    check_error("{\"type\":\"interval\",\"filterColumn\":\"ts\",\"intervals\":[5]}",
                "icebergFilter.intervals[0]: an interval must be an ISO-8601 string \"start/end\"");
}

static void test_range(void)
{
    CHECK_EQ_STR(pred_text("{\"type\":\"range\",\"filterColumn\":\"n\",\"lower\":10,\"upper\":20}"),
                 "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"n\",\"value\":10},"
                 "{\"op\":\"le\",\"column\":\"n\",\"value\":20}]}");
    CHECK_EQ_STR(
        pred_text("{\"type\":\"range\",\"filterColumn\":\"n\",\"lower\":1.5,\"lowerOpen\":true,"
                  "\"upper\":\"z\",\"upperOpen\":true}"),
        "{\"op\":\"and\",\"args\":[{\"op\":\"gt\",\"column\":\"n\",\"value\":1.5},"
        "{\"op\":\"lt\",\"column\":\"n\",\"value\":\"z\"}]}");
    CHECK_EQ_STR(
        pred_text("{\"type\":\"range\",\"filterColumn\":\"n\",\"lower\":null,\"upper\":7}"),
        "{\"op\":\"le\",\"column\":\"n\",\"value\":7}");
    CHECK_EQ_STR(pred_text("{\"type\":\"range\",\"filterColumn\":\"d\",\"lower\":\"2024-01-01\","
                           "\"lowerOpen\":\"true\"}"),
                 "{\"op\":\"gt\",\"column\":\"d\",\"value\":\"2024-01-01\"}");
    int rc;
    icd_error err;
    dr_filter *f = parse("{\"type\":\"range\",\"filterColumn\":\"n\",\"upper\":3}", &rc, &err);
    CHECK(f && !f->lower_open && !f->upper_open && f->lower == NULL);
    dr_filter_free(f);
    check_error("{\"type\":\"range\",\"filterColumn\":\"n\"}",
                "icebergFilter: Both lower and upper bounds cannot be empty");
    check_error("{\"type\":\"range\",\"lower\":1}",
                "icebergFilter.filterColumn: You must specify a filter column on the range filter");
    check_error("{\"type\":\"range\",\"filterColumn\":\"n\",\"lower\":[1]}",
                "icebergFilter.lower: a range bound must be a string, number or boolean");
    check_error("{\"type\":\"range\",\"filterColumn\":\"n\",\"lower\":1,\"lowerOpen\":\"maybe\"}",
                "icebergFilter.lowerOpen: expected a boolean, found a string");
}

static void test_and_or_not(void)
{
    int rc;
    icd_error err;
    /* nested ands are flattened, duplicates dropped */
    dr_filter *f = parse("{\"type\":\"and\",\"filters\":["
                         "{\"type\":\"and\",\"filters\":[{\"type\":\"equals\",\"filterColumn\":"
                         "\"a\",\"filterValue\":\"1\"},"
                         "{\"type\":\"and\",\"filters\":[{\"type\":\"equals\",\"filterColumn\":"
                         "\"b\",\"filterValue\":\"2\"}]}]},"
                         "{\"type\":\"equals\",\"filterColumn\":\"a\",\"filterValue\":\"1\"},"
                         "{\"type\":\"or\",\"filters\":[{\"type\":\"equals\",\"filterColumn\":"
                         "\"c\",\"filterValue\":\"3\"}]}]}",
                         &rc, &err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(f->type, DR_F_AND);
    CHECK_EQ_INT(f->n_children, 3);
    CHECK_EQ_STR(f->children[0]->column, "a");
    CHECK_EQ_STR(f->children[1]->column, "b");
    CHECK_EQ_INT(f->children[2]->type, DR_F_OR);
    dr_pred *p;
    CHECK_EQ_INT(dr_filter_to_pred(f, &p, &err), 0);
    icd_buf b = ICD_BUF_INIT;
    dr_pred_to_json(p, &b);
    CHECK_EQ_STR(b.data,
                 "{\"op\":\"and\",\"args\":[{\"op\":\"eq\",\"column\":\"a\",\"value\":\"1\"},"
                 "{\"op\":\"eq\",\"column\":\"b\",\"value\":\"2\"},"
                 "{\"op\":\"eq\",\"column\":\"c\",\"value\":\"3\"}]}");
    icd_buf_free(&b);
    dr_pred_free(p);
    dr_filter_free(f);
    /* ors flatten too */
    f = parse("{\"type\":\"or\",\"filters\":[{\"type\":\"or\",\"filters\":["
              "{\"type\":\"equals\",\"filterColumn\":\"a\",\"filterValue\":\"1\"},"
              "{\"type\":\"equals\",\"filterColumn\":\"b\",\"filterValue\":\"1\"}]},"
              "{\"type\":\"equals\",\"filterColumn\":\"b\",\"filterValue\":\"1\"}]}",
              &rc, &err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(f->n_children, 2);
    dr_filter_free(f);
    /* not(not(x)) = x; not of a range keeps its and */
    CHECK_EQ_STR(pred_text("{\"type\":\"not\",\"filter\":{\"type\":\"not\",\"filter\":"
                           "{\"type\":\"equals\",\"filterColumn\":\"a\",\"filterValue\":\"1\"}}}"),
                 "{\"op\":\"eq\",\"column\":\"a\",\"value\":\"1\"}");
    CHECK_EQ_STR(
        pred_text("{\"type\":\"not\",\"filter\":{\"type\":\"range\",\"filterColumn\":\"n\","
                  "\"lower\":1,\"upper\":2}}"),
        "{\"op\":\"not\",\"args\":[{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"n\","
        "\"value\":1},"
        "{\"op\":\"le\",\"column\":\"n\",\"value\":2}]}]}");
    check_error("{\"type\":\"and\",\"filters\":[]}",
                "icebergFilter.filters: filter requires atleast one field");
    check_error("{\"type\":\"or\"}", "icebergFilter.filters: filter requires atleast one field");
    check_error("{\"type\":\"not\"}", "icebergFilter.filter: filter cannot be null");
    check_error("{\"type\":\"and\",\"filters\":[null]}",
                "icebergFilter.filters[0]: an iceberg filter must be an object with a \"type\"");
    check_error(
        "{\"type\":\"or\",\"filters\":[{\"type\":\"equals\",\"filterColumn\":\"a\",\"filterValue\":"
        "\"1\"},"
        "{\"type\":\"interval\",\"filterColumn\":\"t\"}]}",
        "icebergFilter.filters[1].intervals: You must specify intervals on the interval filter");
    check_error("{\"filterColumn\":\"a\"}",
                "icebergFilter: missing type id when trying to resolve subtype of IcebergFilter: "
                "missing type id property 'type'");
    check_error("{\"type\":\"selector\"}", "icebergFilter: Could not resolve type id 'selector' as "
                                           "a subtype of IcebergFilter: known type ids = "
                                           "[and, equals, interval, not, or, range, timeWindow]");
    /* deep nesting is refused, not recursed without bound */
    char deep[4096] = "";
    for (int i = 0; i < 80; i++)
        strcat(deep, "{\"type\":\"not\",\"filter\":");
    strcat(deep, "{\"type\":\"equals\",\"filterColumn\":\"a\",\"filterValue\":\"1\"}");
    for (int i = 0; i < 80; i++)
        strcat(deep, "}");
    dr_filter *d = parse(deep, &rc, &err);
    CHECK_EQ_INT(rc, ICD_EINVALID);
    CHECK(d == NULL);
    CHECK(strstr(err.message, "nested more than 64 levels") != NULL);
}

static void test_time_window(void)
{
    int rc;
    icd_error err;
    dr_filter *f = parse("{\"type\":\"timeWindow\",\"filterColumn\":\"ts\"}", &rc, &err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(f->lookback_ms, DAY); /* P1D */
    CHECK_EQ_INT(f->lookahead_ms, 0);
    CHECK_EQ_INT(f->base_ms, NOW); /* the injected now */
    CHECK(!f->base_given);
    dr_filter_free(f);
    /* both bounds inclusive, in micros */
    CHECK_EQ_STR(pred_text("{\"type\":\"timeWindow\",\"filterColumn\":\"ts\"}"),
                 "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"ts\",\"timestamp_micros\":"
                 "1717156800000000},"
                 "{\"op\":\"le\",\"column\":\"ts\",\"timestamp_micros\":1717243200000000}]}");
    /* Druid's own test shape: base - P2D .. base + P1D */
    CHECK_EQ_STR(pred_text("{\"type\":\"timeWindow\",\"filterColumn\":\"ts\",\"baseTime\":\"2024-"
                           "06-01T00:00:00Z\","
                           "\"lookbackDuration\":\"P2D\",\"lookaheadDuration\":\"P1D\"}"),
                 "{\"op\":\"and\",\"args\":[{\"op\":\"ge\",\"column\":\"ts\",\"timestamp_micros\":"
                 "1717027200000000},"
                 "{\"op\":\"le\",\"column\":\"ts\",\"timestamp_micros\":1717286400000000}]}");
    /* Joda Duration forms: millis, and "PT<seconds>S" */
    f = parse("{\"type\":\"timeWindow\",\"filterColumn\":\"ts\",\"lookbackDuration\":7200000,"
              "\"lookaheadDuration\":\"PT90.5S\",\"baseTime\":1717200000000}",
              &rc, &err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(f->lookback_ms, 2 * HOUR);
    CHECK_EQ_INT(f->lookahead_ms, 90500);
    CHECK_EQ_INT(f->base_ms, JUN1);
    CHECK(f->base_given);
    dr_filter_free(f);
    check_error(
        "{\"type\":\"timeWindow\",\"lookbackDuration\":\"P1D\"}",
        "icebergFilter.filterColumn: You must specify a filter column on the timeWindow filter");
    check_error("{\"type\":\"timeWindow\",\"filterColumn\":\"ts\",\"lookbackDuration\":\"P1Y\"}",
                "icebergFilter.lookbackDuration: Cannot convert to Duration as this period "
                "contains years and years vary in length");
    check_error(
        "{\"type\":\"timeWindow\",\"filterColumn\":\"ts\",\"lookbackDuration\":\"1 day\"}",
        "icebergFilter.lookbackDuration: Invalid format: \"1 day\" is not an ISO-8601 period");
    check_error("{\"type\":\"timeWindow\",\"filterColumn\":\"ts\",\"baseTime\":\"noon\"}",
                "icebergFilter.baseTime: Invalid format: \"noon\" is malformed at \"noon\"");
}

static void test_no_filter(void)
{
    dr_pred *p;
    icd_error err;
    CHECK_EQ_INT(dr_filter_to_pred(NULL, &p, &err), 0);
    CHECK_EQ_INT(p->op, DR_P_TRUE);
    dr_pred_free(p);
    CHECK_EQ_STR(dr_filter_type_name(DR_F_TIME_WINDOW), "timeWindow");
    CHECK_EQ_STR(dr_pred_op_name(DR_P_GE), "ge");
}

TEST_MAIN(TEST(test_equals), TEST(test_interval), TEST(test_range), TEST(test_and_or_not),
          TEST(test_time_window), TEST(test_no_filter))
