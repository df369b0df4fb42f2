/* Unit tests of druid/rows/timestamp.c and druid/rows/joda.c: Druid timestampSpec formats, ISO-8601
 * as Joda reads it, Joda patterns, Java number text. Expected instants are computed by
 * hand (days since 1970-01-01 x 86400000 + time of day) or are well-known epoch values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/javanum.h"
#include "druid/rows/joda.h"
#include "druid/rows/timestamp.h"
#include "test.h"

#define DAY 86400000LL
#define HOUR 3600000LL
/* 2024-06-01T00:00:00Z: 19875 days after the epoch. */
#define JUN1 (19875 * DAY)
/* 2025-03-01T00:00:00Z, the fixed "now" of these tests (two-digit-year pivot 1995). */
#define NOW (20148 * DAY)

static int64_t iso(const char *s, unsigned flags, int *rc)
{
    icd_error err;
    int64_t ms = INT64_MIN;
    *rc = dr_parse_iso_datetime(s, strlen(s), flags, &ms, &err);
    return ms;
}

#define CHECK_ISO(s, flags, want)                                                                  \
    do {                                                                                           \
        int rc_;                                                                                   \
        int64_t got_ = iso(s, flags, &rc_);                                                        \
        CHECK_EQ_INT(rc_, 0);                                                                      \
        CHECK_EQ_INT(got_, want);                                                                  \
    } while (0)

#define CHECK_ISO_FAILS(s, flags)                                                                  \
    do {                                                                                           \
        int rc_;                                                                                   \
        iso(s, flags, &rc_);                                                                       \
        CHECK_EQ_INT(rc_, ICD_EINVALID);                                                           \
    } while (0)

static void test_iso_forms(void)
{
    CHECK_ISO("2024-06-01T00:00:00Z", 0, JUN1);
    CHECK_ISO("2024-06-01T00:00:00.000Z", 0, JUN1);
    CHECK_ISO("2024-06-01", 0, JUN1);
    CHECK_ISO("2024-06", 0, JUN1);
    CHECK_ISO("2024", 0, 19723 * DAY); /* 2024-01-01 */
    CHECK_ISO("2024-6-1", 0, JUN1);    /* Joda is lenient on digit counts */
    CHECK_ISO("2024-06-01T12", 0, JUN1 + 12 * HOUR);
    CHECK_ISO("2024-06-01T12:30", 0, JUN1 + 12 * HOUR + 30 * 60000);
    CHECK_ISO("2024-06-01T12:30:15", 0, JUN1 + 12 * HOUR + 30 * 60000 + 15000);
    CHECK_ISO("2024-06-01T12:30:15.123456789", 0, JUN1 + 12 * HOUR + 30 * 60000 + 15123);
    CHECK_ISO("2024-06-01T12:30:15,5", 0, JUN1 + 12 * HOUR + 30 * 60000 + 15500);
    CHECK_ISO("2024-06-01T12.5", 0, JUN1 + 12 * HOUR + 30 * 60000); /* fraction of hour */
    CHECK_ISO("2024-06-01T12:30.5", 0, JUN1 + 12 * HOUR + 30 * 60000 + 30000); /* of minute */
    CHECK_ISO("2024-06-01T", 0, JUN1);
    CHECK_ISO("2024-06-01t10:00z", 0, JUN1 + 10 * HOUR);
    CHECK_ISO("T10:15", 0, 10 * HOUR + 15 * 60000); /* time only: 1970-01-01 */
    CHECK_ISO("+2024-06-01", 0, JUN1);
    CHECK_ISO_FAILS("2024-06-01T12:30:15.1234567891", 0); /* more than 9 fraction digits */
    CHECK_ISO_FAILS("2024-06-01 10:00:00", 0);            /* ' ' only in "auto" */
    CHECK_ISO("2024-06-01 10:00:00", DR_ISO_SPACE, JUN1 + 10 * HOUR);
    CHECK_ISO_FAILS("T10:15", DR_ISO_SPACE);
    CHECK_ISO_FAILS("", 0);
    CHECK_ISO_FAILS("2024-06-01T10:00:00Zjunk", 0);
    CHECK_ISO_FAILS("2024-06-01T24:00", 0);
    CHECK_ISO_FAILS("2024-06-01T23:59:60", 0);
}

static void test_iso_offsets(void)
{
    CHECK_ISO("2024-06-01T10:00:00+02:00", 0, JUN1 + 8 * HOUR);
    CHECK_ISO("2024-06-01T10:00:00-08:00", 0, JUN1 + 18 * HOUR);
    CHECK_ISO("2024-06-01T10:00:00+0530", 0, JUN1 + 10 * HOUR - 5 * HOUR - 30 * 60000);
    CHECK_ISO("2024-06-01T10:00:00+05", 0, JUN1 + 5 * HOUR);
    CHECK_ISO("2024-06-01T00:00:00-00:30", 0, JUN1 + 30 * 60000);
    CHECK_ISO("2024-06-01T+01:00", 0, JUN1 - HOUR); /* offset right after 'T' */
    CHECK_ISO_FAILS("2024-06-01T10:00:00+5", 0);    /* offsets need two-digit hours */
    CHECK_ISO_FAILS("2024-06-01Z", 0);              /* an offset only after a time part */
}

static void test_iso_calendar(void)
{
    /* leap years */
    CHECK_ISO("2024-02-29", 0, 19782 * DAY);
    CHECK_ISO("2000-02-29", 0, 11016 * DAY);
    CHECK_ISO_FAILS("2023-02-29", 0);
    CHECK_ISO_FAILS("1900-02-29", 0);
    icd_error err;
    int64_t ms;
    CHECK_EQ_INT(dr_parse_iso_datetime("2023-02-29", 10, 0, &ms, &err), ICD_EINVALID);
    CHECK_EQ_STR(
        err.message,
        "Cannot parse \"2023-02-29\": Value 29 for dayOfMonth must be in the range [1,28]");
    CHECK_EQ_INT(dr_parse_iso_datetime("2024-06-01x", 11, 0, &ms, &err), ICD_EINVALID);
    CHECK_EQ_STR(err.message, "Invalid format: \"2024-06-01x\" is malformed at \"x\"");
    /* negative epochs and old dates */
    CHECK_ISO("1969-12-31T23:59:59.999Z", 0, -1);
    CHECK_ISO("1900-01-01T00:00:00Z", 0, -2208988800000LL);
    CHECK_ISO("0000-01-01T00:00:00Z", 0, -62167219200000LL);
    CHECK_ISO("-0001-12-31", 0, -62167219200000LL - DAY);
    /* week dates: 2024-01-01 is a Monday, 2020 has 53 ISO weeks */
    CHECK_ISO("2024-W01-1", 0, 19723 * DAY);
    CHECK_ISO("2024-W01", 0, 19723 * DAY);
    CHECK_ISO("2020-W53-7", 0, 18630 * DAY); /* 2021-01-03 */
    CHECK_ISO_FAILS("2021-W53", 0);
    /* ordinal dates */
    CHECK_ISO("2024-060", 0, 19782 * DAY); /* 29 Feb in a leap year */
    CHECK_ISO("2023-060", 0, 19417 * DAY); /* 1 Mar otherwise */
    CHECK_ISO_FAILS("2023-366", 0);
    CHECK_ISO("2024-366", 0, 20088 * DAY); /* 2024-12-31 */
    CHECK_ISO_FAILS("292278994-01-01", 0); /* beyond Joda's year range */
}

static dr_timestamp_spec spec_of(const char *format, const char *missing)
{
    dr_timestamp_spec ts;
    icd_error err;
    int rc = dr_timestamp_spec_init(&ts, "ts", format, missing, NOW, &err);
    CHECK_EQ_INT(rc, 0);
    return ts;
}

static int64_t text_ms(const char *format, const char *s, int *rc, icd_error *err)
{
    dr_timestamp_spec ts = spec_of(format, NULL);
    int64_t ms = INT64_MIN;
    *rc = dr_timestamp_parse_text(&ts, s, strlen(s), &ms, err);
    dr_timestamp_spec_clear(&ts);
    return ms;
}

#define CHECK_TEXT(format, s, want)                                                                \
    do {                                                                                           \
        int rc_;                                                                                   \
        icd_error e_;                                                                              \
        int64_t got_ = text_ms(format, s, &rc_, &e_);                                              \
        CHECK_EQ_INT(rc_, 0);                                                                      \
        if (rc_) fprintf(stderr, "  %s / %s: %s\n", format, s, e_.message);                        \
        CHECK_EQ_INT(got_, want);                                                                  \
    } while (0)

#define CHECK_TEXT_FAILS(format, s)                                                                \
    do {                                                                                           \
        int rc_;                                                                                   \
        icd_error e_;                                                                              \
        text_ms(format, s, &rc_, &e_);                                                             \
        CHECK_EQ_INT(rc_, ICD_EINVALID);                                                           \
    } while (0)

static void test_format_auto(void)
{
    CHECK_TEXT("auto", "1717200000000", JUN1);
    CHECK_TEXT("AUTO", "1717200000000", JUN1); /* format names are case-insensitive */
    CHECK_TEXT("auto", "2024-06-01T00:00:00Z", JUN1);
    CHECK_TEXT("auto", "2024-06-01 10:00:00", JUN1 + 10 * HOUR);
    CHECK_TEXT("auto", "2024-06-01", JUN1);
    CHECK_TEXT("auto", "\"2024-06-01\"", JUN1);
    CHECK_TEXT("auto", " 2024-06-01 ", JUN1);
    CHECK_TEXT("auto", "2024-06-01T10:00:00+02:00", JUN1 + 8 * HOUR);
    /* a trailing zone id is dropped and then ignored (withZone keeps the instant) */
    CHECK_TEXT("auto", "2024-06-01 10:00:00 America/New_York", JUN1 + 10 * HOUR);
    CHECK_TEXT("auto", "2024-06-01 10:00:00 UTC", JUN1 + 10 * HOUR);
    /* Java's legacy three-letter ids count too (no zoneinfo file); an offset is no Java id,
     * so it stays in the text and the value fails (was wrongly accepted as UTC before) */
    CHECK_TEXT("auto", "2024-06-01 10:00:00 PST", JUN1 + 10 * HOUR);
    CHECK_TEXT("auto", "2024-06-01 10:00:00 Japan", JUN1 + 10 * HOUR);
    CHECK_TEXT_FAILS("auto", "2024-06-01 10:00:00 +05:00");
    CHECK_TEXT_FAILS("auto", "2024-06-01 10:00:00 Asia/Nowhere");
    CHECK_TEXT_FAILS("auto", "2024-06-01 10:00:00 nowhere");
    CHECK_TEXT_FAILS("auto", "99999999999999999999"); /* digits beyond a long */
    CHECK_TEXT_FAILS("auto", "yesterday");
    CHECK_TEXT_FAILS("auto", "1.5e12"); /* a numeric string that is not all digits */
    int rc;
    icd_error err;
    text_ms("auto", "", &rc, &err);
    CHECK_EQ_INT(rc, ICD_EINVALID);
    CHECK_EQ_STR(err.message, "Timestamp[] is unparseable! (null timestamp)");
    text_ms("auto", "junk", &rc, &err);
    CHECK_EQ_STR(
        err.message,
        "Timestamp[junk] is unparseable! (Invalid format: \"junk\" is malformed at \"junk\")");
}

static void test_format_iso_numeric(void)
{
    CHECK_TEXT("iso", "2024-06-01T10:00:00Z", JUN1 + 10 * HOUR);
    CHECK_TEXT_FAILS("iso", "2024-06-01 10:00:00");
    /* DateTimes.of falls back to Long.valueOf: epoch millis (was wrongly a failure before) */
    CHECK_TEXT("iso", "1717200000000", JUN1);
    CHECK_TEXT("iso", "2024", 19723 * 86400000LL); /* a short digit run is a year */
    CHECK_TEXT("millis", "1717200000000", JUN1);
    CHECK_TEXT("millis", "\"-1\"", -1);
    CHECK_TEXT_FAILS("millis", "1717200000000.0");
    CHECK_TEXT("posix", "1717200000", JUN1);
    CHECK_TEXT("posix", "-1", -1000);
    CHECK_TEXT("micro", "1717200000000123", JUN1);
    CHECK_TEXT("micro", "-1500", -1); /* Java division truncates toward zero */
    CHECK_TEXT("nano", "1717200000123456789", JUN1 + 123);
    CHECK_TEXT("nano", "-1999999", -1);
    CHECK_TEXT("ruby", "1717200000.5", JUN1 + 500);
    CHECK_TEXT("ruby", "1.5e3", 1500000);
    CHECK_TEXT("ruby", "-0.0015", -1);
    CHECK_TEXT_FAILS("ruby", "0x10");
    CHECK_TEXT_FAILS("ruby", "ten");
    int rc;
    icd_error err;
    text_ms("millis", "abc", &rc, &err);
    CHECK_EQ_STR(err.message, "Timestamp[abc] is unparseable! (not an integer)");
}

static void check_value(const char *format, dr_ts_value v, int64_t want)
{
    dr_timestamp_spec ts = spec_of(format, NULL);
    icd_error err;
    int64_t ms = INT64_MIN;
    CHECK_EQ_INT(dr_timestamp_extract(&ts, &v, &ms, &err), 0);
    CHECK_EQ_INT(ms, want);
    dr_timestamp_spec_clear(&ts);
}

static void test_values(void)
{
    dr_ts_value l = {DR_TSV_LONG, 1717200000000, 0, NULL, 0};
    check_value("auto", l, JUN1);
    check_value("millis", l, JUN1);
    dr_ts_value secs = {DR_TSV_LONG, 1717200000, 0, NULL, 0};
    check_value("posix", secs, JUN1);
    check_value("ruby", secs, JUN1);
    dr_ts_value d = {DR_TSV_DOUBLE, 0, 1717200000000.9, NULL, 0};
    check_value("auto", d, JUN1); /* Number.longValue() truncates */
    dr_ts_value dsec = {DR_TSV_DOUBLE, 0, 1.9, NULL, 0};
    check_value("posix", dsec, 1000);
    check_value("ruby", dsec, 1900);
    /* a number under a pattern format goes through its string form */
    dr_ts_value y = {DR_TSV_LONG, 2024, 0, NULL, 0};
    check_value("yyyy", y, 19723 * DAY);
    dr_ts_value s = {DR_TSV_STRING, 0, 0, "2024-06-01", 10};
    check_value("auto", s, JUN1);

    /* null: missingValue, or a parse error */
    dr_timestamp_spec ts = spec_of("auto", "2000-01-01T00:00:00Z");
    CHECK(ts.has_missing);
    dr_ts_value n = {DR_TSV_NULL, 0, 0, NULL, 0};
    icd_error err;
    int64_t ms;
    CHECK_EQ_INT(dr_timestamp_extract(&ts, &n, &ms, &err), 0);
    CHECK_EQ_INT(ms, 946684800000LL);
    /* missingValue is not used for an empty string (Druid parses it and fails) */
    dr_ts_value e = {DR_TSV_STRING, 0, 0, "", 0};
    CHECK_EQ_INT(dr_timestamp_extract(&ts, &e, &ms, &err), ICD_EINVALID);
    dr_timestamp_spec_clear(&ts);
    ts = spec_of(NULL, NULL);
    CHECK_EQ_STR(ts.column, "ts");
    CHECK_EQ_STR(ts.format_text, "auto");
    CHECK_EQ_INT(dr_timestamp_extract(&ts, &n, &ms, &err), ICD_EINVALID);
    CHECK_EQ_STR(err.message, "Timestamp[null] is unparseable!");
    dr_timestamp_spec_clear(&ts);
    CHECK_EQ_INT(dr_timestamp_spec_init(&ts, NULL, NULL, NULL, NOW, &err), 0);
    CHECK_EQ_STR(ts.column, "timestamp");
    dr_timestamp_spec_clear(&ts);
    CHECK_EQ_INT(dr_timestamp_spec_init(&ts, NULL, "auto", "not a date", NOW, &err), ICD_EINVALID);
    CHECK(strncmp(err.message, "missingValue: ", 14) == 0);
}

static void test_joda_patterns(void)
{
    CHECK_TEXT("yyyy-MM-dd HH:mm:ss", "2024-06-01 12:34:56", JUN1 + 12 * HOUR + 34 * 60000 + 56000);
    CHECK_TEXT("yyyy-MM-dd", "2024-6-1", JUN1);
    CHECK_TEXT("yyyyMMdd", "20240601", JUN1);
    CHECK_TEXT("yyyyMMddHHmmss", "20240601103000", JUN1 + 10 * HOUR + 30 * 60000);
    CHECK_TEXT("yyyy-MM-dd'T'HH:mm:ss.SSSZZ", "2024-06-01T10:00:00.250+02:00",
               JUN1 + 8 * HOUR + 250);
    CHECK_TEXT("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2024-06-01T10:00:00.250-0130",
               JUN1 + 11 * HOUR + 30 * 60000 + 250);
    CHECK_TEXT("yyyy-MM-dd'T'HH:mm:ssZ", "2024-06-01T10:00:00Z", JUN1 + 10 * HOUR);
    CHECK_TEXT("yyyy-MM-dd HH:mm:ss ZZZ", "2024-06-01 10:00:00 UTC", JUN1 + 10 * HOUR);
    CHECK_TEXT("yyyy-MM-dd't'HH", "2024-06-01T10", JUN1 + 10 * HOUR); /* literals ignore case */
    CHECK_TEXT("dd/MMM/yyyy:HH:mm:ss Z", "10/Oct/2000:13:55:36 -0700", 971211336000LL);
    CHECK_TEXT("dd MMMM yyyy", "01 june 2024", JUN1);
    CHECK_TEXT("dd MMM yyyy", "01 June 2024", JUN1); /* full names also match MMM */
    CHECK_TEXT("EEE, dd MMM yyyy HH:mm:ss", "Sat, 01 Jun 2024 10:00:00", JUN1 + 10 * HOUR);
    /* a day name that disagrees moves the date inside its ISO week, as Joda does */
    CHECK_TEXT("EEE yyyy-MM-dd", "Mon 2024-06-01", JUN1 - 5 * DAY);
    CHECK_TEXT("hh:mm a yyyy-MM-dd", "12:30 AM 2024-06-01", JUN1 + 30 * 60000);
    CHECK_TEXT("hh:mm a yyyy-MM-dd", "01:00 pm 2024-06-01", JUN1 + 13 * HOUR);
    CHECK_TEXT("kk:mm yyyy-MM-dd", "24:00 2024-06-01", JUN1);
    CHECK_TEXT("yyyy-DDD", "2024-366", 20088 * DAY);
    CHECK_TEXT("yyyy-MM-dd HH:mm:ss.S", "2024-06-01 00:00:00.5", JUN1 + 500);
    CHECK_TEXT("''yyyy''", "'2024'", 19723 * DAY);
    CHECK_TEXT("HH:mm", "10:15", 10 * HOUR + 15 * 60000); /* 1970-01-01 by default */
    /* two-digit years: pivot = 2025 - 30, so 1945..2044 */
    CHECK_TEXT("yy-MM-dd", "24-06-01", JUN1);
    CHECK_TEXT("yy-MM-dd", "70-01-01", 0);
    CHECK_TEXT("yy-MM-dd", "45-01-01", -788918400000LL); /* 1945 */
    CHECK_TEXT("yy-MM-dd", "44-01-01", 2335219200000LL); /* 2044 */
    CHECK_TEXT("yy-MM-dd", "2024-06-01", JUN1);          /* lenient: a full year */
    CHECK_TEXT_FAILS("yyMMdd", "2024061");               /* not lenient before a number */
    CHECK_TEXT("yyMMdd", "240601", JUN1);
    CHECK_TEXT_FAILS("yyyy-MM-dd HH:mm:ss.SSS", "2024-06-01 00:00:00.1234");
    CHECK_TEXT_FAILS("yyyy-MM-dd", "2024-02-30");
    CHECK_TEXT("yyyy-MM-dd", "2024-06-01 ", JUN1); /* stripQuotes trims first */
    CHECK_TEXT_FAILS("yyyy-MM-dd", "2024-06-01x");
    CHECK_TEXT_FAILS("HH:mm", "25:00");
    /* a zone id of the tz database: its rules at that wall time (CEST, +02:00 in June); a
     * wall time in the spring-forward gap is a parse failure, as in Joda; a word that is
     * no zone is a parse failure */
    {
        int64_t ms;
        icd_error e2;
        dr_timestamp_spec z;
        CHECK_EQ_INT(dr_timestamp_spec_init(&z, "t", "yyyy-MM-dd HH:mm:ss ZZZ", NULL, JUN1, &e2),
                     0);
        const char *paris = "2024-06-01 10:00:00 Europe/Paris";
        CHECK_EQ_INT(dr_timestamp_parse_text(&z, paris, strlen(paris), &ms, &e2), 0);
        CHECK_EQ_INT(ms, JUN1 + 8 * HOUR);
        const char *gmt5 = "2024-06-01 10:00:00 Etc/GMT+5"; /* POSIX sign: UTC-5 */
        CHECK_EQ_INT(dr_timestamp_parse_text(&z, gmt5, strlen(gmt5), &ms, &e2), 0);
        CHECK_EQ_INT(ms, JUN1 + 15 * HOUR);
        const char *gap = "2024-03-10 02:30:00 America/New_York";
        CHECK_EQ_INT(dr_timestamp_parse_text(&z, gap, strlen(gap), &ms, &e2), ICD_EINVALID);
        /* the overlap takes the earlier offset (EDT, -04:00): 05:30Z */
        const char *overlap = "2024-11-03 01:30:00 America/New_York";
        CHECK_EQ_INT(dr_timestamp_parse_text(&z, overlap, strlen(overlap), &ms, &e2), 0);
        CHECK_EQ_INT(ms, 1730611800000LL);
        const char *nowhere = "2024-06-01 10:00:00 Nowhere";
        CHECK_EQ_INT(dr_timestamp_parse_text(&z, nowhere, strlen(nowhere), &ms, &e2), ICD_EINVALID);
        dr_timestamp_spec_clear(&z);
    }
    /* Joda's two-pass field resolution: a week of the year 2024 is its Monday; a lone day
     * of week lands in the default year 2000's last week with that day (2000-12-25) */
    CHECK_TEXT("yyyy-ww", "2024-22", JUN1 - 5 * DAY);
    CHECK_TEXT("E", "Mon", 977702400000LL);
    CHECK_TEXT("G yyyy-MM-dd", "AD 2024-06-01", JUN1);
    CHECK_TEXT_FAILS("MMM dd yyyy", "jUN 01 2024"); /* names: as written, lower or upper */
    CHECK_TEXT("MMM dd yyyy", "JUN 01 2024", JUN1);

    icd_error err;
    dr_timestamp_spec ts;
    CHECK_EQ_INT(dr_timestamp_spec_init(&ts, NULL, "yyyy-qq", NULL, NOW, &err), ICD_EINVALID);
    CHECK_EQ_STR(err.message,
                 "Unable to parse timestamps with format [yyyy-qq]: Illegal pattern component: qq");
    CHECK_EQ_INT(dr_timestamp_spec_init(&ts, NULL, "yyyy-'MM", NULL, NOW, &err), ICD_EINVALID);
}

static void test_java_text(void)
{
    struct {
        double v;
        const char *want;
    } d[] = {{1.0, "1.0"},         {0.1, "0.1"},           {1e7, "1.0E7"},
             {1.5e-4, "1.5E-4"},   {0.001, "0.001"},       {123456.789, "123456.789"},
             {-2.5e10, "-2.5E10"}, {1e-3 * 0.5, "5.0E-4"}, {9999999.0, "9999999.0"},
             {0.0, "0.0"}};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        icd_buf b = ICD_BUF_INIT;
        icd_java_fmt_double(&b, d[i].v);
        CHECK_EQ_STR(b.data, d[i].want);
        icd_buf_free(&b);
    }
    icd_buf b = ICD_BUF_INIT;
    icd_java_fmt_float(&b, 1.1f);
    CHECK_EQ_STR(b.data, "1.1");
    icd_buf_clear(&b);
    icd_java_fmt_double(&b, NAN);
    CHECK_EQ_STR(b.data, "NaN");
    icd_buf_clear(&b);
    icd_java_fmt_double(&b, -INFINITY);
    CHECK_EQ_STR(b.data, "-Infinity");
    icd_buf_free(&b);

    int64_t v;
    CHECK(icd_java_parse_long("-9223372036854775808", 20, &v) && v == INT64_MIN);
    CHECK(icd_java_parse_long("+42", 3, &v) && v == 42);
    CHECK(!icd_java_parse_long("9223372036854775808", 19, &v));
    CHECK(!icd_java_parse_long("-", 1, &v));
    CHECK(!icd_java_parse_long("1 ", 2, &v));
    CHECK_EQ_INT(icd_java_d2l(NAN), 0);
    CHECK_EQ_INT(icd_java_d2l(1e300), INT64_MAX);
    CHECK_EQ_INT(icd_java_d2l(-1.9), -1);
}

static void test_iceberg_conversions(void)
{
    CHECK_EQ_INT(dr_millis_from_micros(1717200000000999), JUN1);
    CHECK_EQ_INT(dr_millis_from_micros(-1), -1); /* floor, like Instant.toEpochMilli */
    CHECK_EQ_INT(dr_millis_from_micros(-1000), -1);
    CHECK_EQ_INT(dr_millis_from_micros(-1001), -2);
    CHECK_EQ_INT(dr_millis_from_nanos(-1), -1);
    CHECK_EQ_INT(dr_millis_from_nanos(1717200000000000001), JUN1);
    CHECK_EQ_INT(dr_millis_from_date(19875), JUN1);
    CHECK_EQ_INT(dr_millis_from_date(-1), -DAY);
}

/* Java's plain notation by a search the formatter does not use: the fewest significant
 * digits (printf %.*e) that read back as the value, laid out as d...d.d...d. */
static void java_plain_reference(double v, bool is_float, char *out, size_t cap)
{
    char tmp[64];
    int hi = is_float ? 9 : 17, prec = 1;
    for (; prec < hi; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
        if (is_float ? strtof(tmp, NULL) == (float)v : strtod(tmp, NULL) == v) break;
    }
    int e = atoi(strchr(tmp, 'e') + 1);
    int frac = prec - 1 - e; /* fraction digits of the shortest form */
    snprintf(out, cap, "%.*f", frac > 0 ? frac : 1, v);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Values in Java's plain-notation range [1e-3, 1e7): random bit patterns (full-precision
 * doubles and floats), short decimals and integers, against the reference; where the texts
 * differ (the shortest text at a power of two's narrower lower gap, which the reference's
 * nearest-at-each-precision search skips) the formatter's must read back exactly and be no
 * longer. */
static void test_java_text_plain_range(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int differ = 0, n = 0;
    for (int i = 0; i < 300000; i++) {
        bool is_float = i % 3 == 2;
        double v;
        uint64_t r = xorshift(&seed);
        if (i % 5 == 0) { /* short decimals: prices, metrics */
            v = (double)(r % 100000000) / (double)(1u << (r >> 60) % 4) / 1000.0;
        } else if (is_float) {
            uint32_t bits = (uint32_t)r;
            float f;
            memcpy(&f, &bits, 4);
            v = f;
        } else {
            memcpy(&v, &r, 8);
        }
        v = fabs(v);
        if (is_float) v = (float)v;
        if (!(v >= 1e-3 && v < 1e7)) continue;
        if (r >> 63) v = -v;
        char want[64];
        java_plain_reference(v, is_float, want, sizeof want);
        icd_buf b = ICD_BUF_INIT;
        if (is_float)
            icd_java_fmt_float(&b, (float)v);
        else
            icd_java_fmt_double(&b, v);
        n++;
        if (strcmp(b.data, want) != 0) {
            differ++;
            bool back = is_float ? strtof(b.data, NULL) == (float)v : strtod(b.data, NULL) == v;
            if (!back || b.len > strlen(want) || !strchr(b.data, '.')) CHECK_EQ_STR(b.data, want);
        }
        icd_buf_free(&b);
    }
    printf("plain range: %d values, %d texts differ from the reference\n", n, differ);
    CHECK(n > 50000);
    CHECK(differ * 1000 < n); /* rare */
}

TEST_MAIN(TEST(test_iso_forms), TEST(test_iso_offsets), TEST(test_iso_calendar),
          TEST(test_format_auto), TEST(test_format_iso_numeric), TEST(test_values),
          TEST(test_joda_patterns), TEST(test_java_text), TEST(test_java_text_plain_range),
          TEST(test_iceberg_conversions))
