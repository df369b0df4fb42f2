/* Unit tests of druid/spec/period.c: ISO periods, intervals, granularities and their buckets.
 * Expected instants are computed by hand from day counts. */
#include "druid/spec/period.h"
#include "druid/rows/timestamp.h"
#include "test.h"

#define DAY 86400000LL
#define HOUR 3600000LL
#define JUN1 (19875 * DAY) /* 2024-06-01T00:00:00Z, a Saturday */

static int64_t iso(const char *s)
{
    icd_error err;
    int64_t ms = 0;
    CHECK_EQ_INT(dr_parse_iso_datetime(s, strlen(s), 0, &ms, &err), 0);
    return ms;
}

static void test_periods(void)
{
    dr_period p;
    icd_error err;
    CHECK_EQ_INT(dr_parse_period("P1Y2M3W4DT5H6M7.5S", 18, &p, &err), 0);
    CHECK(p.years == 1 && p.months == 2 && p.weeks == 3 && p.days == 4 && p.hours == 5 &&
          p.minutes == 6 && p.seconds == 7 && p.millis == 500);
    CHECK_EQ_INT(dr_parse_period("PT0.001S", 8, &p, &err), 0);
    CHECK_EQ_INT(p.millis, 1);
    CHECK_EQ_INT(dr_parse_period("pt1h", 4, &p, &err), 0);
    CHECK_EQ_INT(p.hours, 1);
    int64_t ms;
    CHECK_EQ_INT(dr_parse_period("P2W", 3, &p, &err), 0);
    CHECK_EQ_INT(dr_period_to_ms(&p, &ms, &err), 0);
    CHECK_EQ_INT(ms, 14 * DAY);
    CHECK_EQ_INT(dr_parse_period("P1M", 3, &p, &err), 0);
    CHECK_EQ_INT(dr_period_to_ms(&p, &ms, &err), ICD_EINVALID);
    const char *bad[] = {"P", "PT", "1D", "P1S", "P1H", "PT1D", "P1.5D", "P1D2Y", "P1DT", "PX"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ_INT(dr_parse_period(bad[i], strlen(bad[i]), &p, &err), ICD_EINVALID);
}

static void test_period_add(void)
{
    dr_period p;
    icd_error err;
    int64_t out;
    CHECK_EQ_INT(dr_parse_period("P1M", 3, &p, &err), 0);
    CHECK_EQ_INT(dr_period_add(&p, iso("2024-01-31"), 1, &out, &err), 0);
    CHECK_EQ_INT(out, iso("2024-02-29"));
    CHECK_EQ_INT(dr_period_add(&p, iso("2023-01-31T10:00:00Z"), 1, &out, &err), 0);
    CHECK_EQ_INT(out, iso("2023-02-28T10:00:00Z"));
    CHECK_EQ_INT(dr_period_add(&p, iso("2024-03-31"), -1, &out, &err), 0);
    CHECK_EQ_INT(out, iso("2024-02-29"));
    CHECK_EQ_INT(dr_parse_period("P1Y", 3, &p, &err), 0);
    CHECK_EQ_INT(dr_period_add(&p, iso("2024-02-29"), 1, &out, &err), 0);
    CHECK_EQ_INT(out, iso("2025-02-28"));
    CHECK_EQ_INT(dr_parse_period("P1DT1H", 6, &p, &err), 0);
    CHECK_EQ_INT(dr_period_add(&p, 0, -1, &out, &err), 0);
    CHECK_EQ_INT(out, -DAY - HOUR);
}

static void test_intervals(void)
{
    dr_interval iv;
    icd_error err;
    const char *s = "2024-06-01/2024-06-02";
    CHECK_EQ_INT(dr_parse_interval(s, strlen(s), &iv, &err), 0);
    CHECK(iv.start == JUN1 && iv.end == JUN1 + DAY);
    s = "2024-06-01T00:00:00Z/P1M";
    CHECK_EQ_INT(dr_parse_interval(s, strlen(s), &iv, &err), 0);
    CHECK(iv.start == JUN1 && iv.end == JUN1 + 30 * DAY);
    s = "PT6H/2024-06-01";
    CHECK_EQ_INT(dr_parse_interval(s, strlen(s), &iv, &err), 0);
    CHECK(iv.start == JUN1 - 6 * HOUR && iv.end == JUN1);
    s = "2024-06-01/2024-06-01"; /* empty intervals are allowed */
    CHECK_EQ_INT(dr_parse_interval(s, strlen(s), &iv, &err), 0);
    s = "2024-06-01";
    CHECK_EQ_INT(dr_parse_interval(s, strlen(s), &iv, &err), ICD_EINVALID);
    CHECK_EQ_STR(err.message, "Format requires a '/' separator: 2024-06-01");
    s = "/2024";
    CHECK_EQ_INT(dr_parse_interval(s, strlen(s), &iv, &err), ICD_EINVALID);
    CHECK_EQ_STR(err.message, "Format invalid: /2024");
    s = "2024-06-02/2024-06-01";
    CHECK_EQ_INT(dr_parse_interval(s, strlen(s), &iv, &err), ICD_EINVALID);
}

static void bucket(const char *gran_json, const char *t, const char *start, const char *next)
{
    json_error_t je;
    json_t *v = json_loads(gran_json, JSON_DECODE_ANY, &je);
    CHECK(v != NULL);
    dr_granularity g;
    icd_error err;
    int rc = dr_granularity_parse(&g, v, &err);
    json_decref(v);
    CHECK_EQ_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "  %s: %s\n", gran_json, err.message);
        return;
    }
    int64_t s, n;
    rc = dr_granularity_bucket(&g, iso(t), &s, &n, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "  %s: %s\n", gran_json, err.message);
    CHECK_EQ_INT(s, iso(start));
    CHECK_EQ_INT(n, iso(next));
}

static void test_granularities(void)
{
    bucket("\"DAY\"", "2024-06-01T10:00:00Z", "2024-06-01", "2024-06-02");
    bucket("\"day\"", "1969-12-31T23:00:00Z", "1969-12-31", "1970-01-01");
    bucket("\"HOUR\"", "2024-06-01T10:59:59.999Z", "2024-06-01T10:00Z", "2024-06-01T11:00Z");
    bucket("\"SIX_HOUR\"", "2024-06-01T11:00:00Z", "2024-06-01T06:00Z", "2024-06-01T12:00Z");
    bucket("\"EIGHT_HOUR\"", "2024-06-01T23:00:00Z", "2024-06-01T16:00Z", "2024-06-02");
    bucket("\"FIFTEEN_MINUTE\"", "2024-06-01T10:44:00Z", "2024-06-01T10:30Z", "2024-06-01T10:45Z");
    bucket("\"THIRTY_MINUTE\"", "2024-06-01T10:44:00Z", "2024-06-01T10:30Z", "2024-06-01T11:00Z");
    bucket("\"FIVE_MINUTE\"", "1969-12-31T23:58:00Z", "1969-12-31T23:55Z", "1970-01-01");
    bucket("\"TEN_MINUTE\"", "2024-06-01T10:09:00Z", "2024-06-01T10:00Z", "2024-06-01T10:10Z");
    bucket("\"MINUTE\"", "2024-06-01T10:09:30Z", "2024-06-01T10:09Z", "2024-06-01T10:10Z");
    bucket("\"SECOND\"", "2024-06-01T10:09:30.5Z", "2024-06-01T10:09:30Z", "2024-06-01T10:09:31Z");
    bucket("\"WEEK\"", "2024-06-01T10:00:00Z", "2024-05-27", "2024-06-03"); /* Monday */
    bucket("\"MONTH\"", "2024-06-30T23:00:00Z", "2024-06-01", "2024-07-01");
    bucket("\"QUARTER\"", "2024-06-01T00:00:00Z", "2024-04-01", "2024-07-01");
    bucket("\"QUARTER\"", "1969-12-15T00:00:00Z", "1969-10-01", "1970-01-01");
    bucket("\"YEAR\"", "2024-06-01T00:00:00Z", "2024-01-01", "2025-01-01");
    bucket("{\"type\":\"period\",\"period\":\"P1D\",\"timeZone\":\"+02:00\"}",
           "2024-06-01T23:00:00Z", "2024-06-01T22:00:00Z", "2024-06-02T22:00:00Z");
    bucket("{\"type\":\"period\",\"period\":\"P2D\",\"origin\":\"2024-01-02T00:00:00Z\"}",
           "2024-06-01T10:00:00Z", "2024-05-31", "2024-06-02"); /* 151 days after origin */
    bucket("{\"type\":\"period\",\"period\":\"PT1H\",\"origin\":\"1970-01-01T00:30:00Z\","
           "\"timeZone\":\"UTC\"}",
           "2024-06-01T10:10:00Z", "2024-06-01T09:30Z", "2024-06-01T10:30Z");
    bucket("{\"type\":\"duration\",\"duration\":3600000,\"origin\":\"1970-01-01T00:30:00Z\"}",
           "2024-06-01T10:10:00Z", "2024-06-01T09:30Z", "2024-06-01T10:30Z");
    bucket("{\"type\":\"period\",\"period\":\"P1DT12H\"}", "1970-01-02T13:00:00Z",
           "1970-01-02T12:00Z", "1970-01-04T00:00Z");

    dr_granularity g;
    icd_error err;
    int64_t s, n;
    CHECK_EQ_INT(dr_granularity_named(&g, "all", &err), 0);
    CHECK_EQ_INT(g.kind, DR_GRAN_ALL);
    CHECK_EQ_INT(dr_granularity_bucket(&g, 5, &s, &n, &err), 0);
    CHECK(s == INT64_MIN && n == INT64_MAX);
    CHECK_EQ_INT(dr_granularity_named(&g, "None", &err), 0);
    CHECK_EQ_STR(g.name, "NONE");
    CHECK_EQ_INT(dr_granularity_bucket(&g, 5, &s, &n, &err), 0);
    CHECK(s == 5 && n == 6);
    CHECK_EQ_INT(dr_granularity_named(&g, "fortnight", &err), ICD_EINVALID);
    json_t *v = json_loads(
        "{\"type\":\"period\",\"period\":\"P1D\",\"timeZone\":\"America/Los_Angeles\"}", 0, NULL);
    CHECK_EQ_INT(dr_granularity_parse(&g, v, &err), 0); /* parsed and kept ... */
    CHECK_EQ_STR(g.time_zone, "America/Los_Angeles");
    CHECK_EQ_INT(dr_granularity_bucket(&g, 0, &s, &n, &err),
                 ICD_EUNSUPPORTED); /* ... not bucketed */
    json_decref(v);
    v = json_loads("{\"type\":\"period\"}", 0, NULL);
    CHECK_EQ_INT(dr_granularity_parse(&g, v, &err), ICD_EINVALID);
    json_decref(v);
    v = json_loads("{\"type\":\"duration\",\"duration\":0}", 0, NULL);
    CHECK_EQ_INT(dr_granularity_parse(&g, v, &err), ICD_EINVALID);
    json_decref(v);
    v = json_loads("{\"type\":\"uniform\"}", 0, NULL);
    CHECK_EQ_INT(dr_granularity_parse(&g, v, &err), ICD_EINVALID);
    json_decref(v);
}

TEST_MAIN(TEST(test_periods), TEST(test_period_add), TEST(test_intervals), TEST(test_granularities))
