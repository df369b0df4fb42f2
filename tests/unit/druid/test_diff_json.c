/*
 * dr_diff_write_json / dr_diff_interval_text: the text `icedruid diff` prints, checked
 * against hand-written Druid interval strings (Joda's ISO format: millisecond digits, 'Z',
 * years past 9999 without a sign; granularity ALL is Druid's ETERNITY).
 */
#include <stdlib.h>

#include "druid/phase2/diff.h"
#include "test.h"

static char *interval(int64_t s, int64_t e)
{
    icd_buf b = ICD_BUF_INIT;
    dr_diff_interval iv = {s, e, 0, 0};
    dr_diff_interval_text(&b, &iv);
    icd_buf_putc(&b, '\0');
    return b.data;
}

static void test_interval_text(void)
{
    char *t = interval(1704067200000LL, 1704153600000LL);
    CHECK_EQ_STR(t, "2024-01-01T00:00:00.000Z/2024-01-02T00:00:00.000Z");
    free(t);
    t = interval(-3600000LL, 0);
    CHECK_EQ_STR(t, "1969-12-31T23:00:00.000Z/1970-01-01T00:00:00.000Z");
    free(t);
    t = interval(1704067200123LL, 1704067200124LL);
    CHECK_EQ_STR(t, "2024-01-01T00:00:00.123Z/2024-01-01T00:00:00.124Z");
    free(t);
    /* 9999-01-01 and 10000-01-01 (days 2932532 and 2932897) */
    t = interval(2932532LL * 86400000, 2932897LL * 86400000);
    CHECK_EQ_STR(t, "9999-01-01T00:00:00.000Z/10000-01-01T00:00:00.000Z");
    free(t);
    t = interval(INT64_MIN, INT64_MAX);
    CHECK_EQ_STR(t, "-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z");
    free(t);
}

static void test_json(void)
{
    dr_diff_interval rep[2] = {{0, 3600000, 3, 0}, {7200000, 10800000, 0, 5}};
    dr_diff_interval app[1] = {{3600000, 7200000, 0, 2}};
    dr_diff d = {0};
    d.from_snapshot = 1;
    d.to_snapshot = 2;
    icd_error err;
    CHECK_EQ_INT(dr_granularity_named(&d.granularity, "hour", &err), 0);
    d.replace = rep;
    d.n_replace = 2;
    d.append = app;
    d.n_append = 1;
    d.files_read = 4;
    d.bytes_read = 1000;
    d.data_source = "ds";
    icd_buf b = ICD_BUF_INIT;
    CHECK_EQ_INT(dr_diff_write_json(&d, &b, &err), 0);
    icd_buf_putc(&b, '\0');
    const char *h0 = "1970-01-01T00:00:00.000Z/1970-01-01T01:00:00.000Z";
    const char *h1 = "1970-01-01T01:00:00.000Z/1970-01-01T02:00:00.000Z";
    const char *h2 = "1970-01-01T02:00:00.000Z/1970-01-01T03:00:00.000Z";
    char want[2048];
    snprintf(want, sizeof want,
             "{\"dataSource\":\"ds\",\"fromSnapshot\":1,\"toSnapshot\":2,\"fromSnapshotStr\":\"1\","
             "\"toSnapshotStr\":\"2\",\"granularity\":\"HOUR\","
             "\"replaceIntervals\":[\"%s\",\"%s\"],\"appendIntervals\":[\"%s\"],"
             "\"rowsRemoved\":{\"%s\":3,\"%s\":0},\"rowsAdded\":{\"%s\":2,\"%s\":5},"
             "\"filesRead\":4,\"bytesRead\":1000,\"filesDecidedByStatistics\":0,"
             "\"rowsUnparseable\":0}\n",
             h0, h2, h1, h0, h2, h1, h2);
    CHECK_EQ_STR(b.data, want);
    icd_buf_free(&b);
}

TEST_MAIN({"interval_text", test_interval_text}, {"json", test_json})
