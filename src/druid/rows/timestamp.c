/*
 * Druid timestampSpec semantics (TimestampSpec + TimestampParser): turns the value of a
 * row's timestamp column into __time milliseconds, the way Druid's MapInputRowParser does
 * for the rows icedruid serves. Also the ISO-8601 reader used for every date-time of a
 * spec (snapshotTime, missingValue, filter intervals and baseTime, granularity origins).
 *
 * Data flow: spec.c builds a dr_timestamp_spec from dataSchema.timestampSpec; row.c hands
 * it the converted value of the timestamp column (a long, a double or a string, like the
 * Java object Druid would see) and writes the result as "__time".
 */
#include "druid/rows/timestamp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/javanum.h"
#include "druid/rows/joda.h"
#include "druid/rows/textscan.h"
#include "druid/rows/zoneids.h"

/* How much of a value is quoted in an error message. */
#define SHOW_MAX 200

static const int month_days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    return m == 2 && is_leap(y) ? 29 : month_days[m - 1];
}

int64_t dr_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

bool dr_ms_from_fields(int64_t year, int month, int day, int64_t ms_of_day, int64_t *out)
{
    if (year < DR_MIN_YEAR || year > DR_MAX_YEAR) return false;
    int64_t days = icd_days_from_civil(year, month, day), ms;
    if (__builtin_mul_overflow(days, (int64_t)86400000, &ms) ||
        __builtin_add_overflow(ms, ms_of_day, &ms))
        return false;
    *out = ms;
    return true;
}

/* ---- ISO-8601 ------------------------------------------------------------------------ */

typedef struct iso_fail {
    icd_error *err;
    const char *s;
    size_t n;
} iso_fail;

static int malformed(const iso_fail *f, size_t at)
{
    int shown = f->n > SHOW_MAX ? SHOW_MAX : (int)f->n;
    if (at >= f->n)
        return icd_fail(f->err, ICD_EINVALID, NULL, -1, "Invalid format: \"%.*s\" is too short",
                        shown, f->s);
    int rest = (int)(f->n - at) > SHOW_MAX ? SHOW_MAX : (int)(f->n - at);
    return icd_fail(f->err, ICD_EINVALID, NULL, -1,
                    "Invalid format: \"%.*s\" is malformed at \"%.*s\"", shown, f->s, rest,
                    f->s + at);
}

static int out_of_range(const iso_fail *f, int64_t v, const char *field, int64_t lo, int64_t hi)
{
    int shown = f->n > SHOW_MAX ? SHOW_MAX : (int)f->n;
    return icd_fail(f->err, ICD_EINVALID, NULL, -1,
                    "Cannot parse \"%.*s\": Value %lld for %s must be in the range [%lld,%lld]",
                    shown, f->s, (long long)v, field, (long long)lo, (long long)hi);
}

/* ISO day of week of a day count: 1 = Monday .. 7 = Sunday (1970-01-01 was a Thursday). */
static int iso_dow(int64_t days)
{
    return (int)icd_floormod(days + 3, 7) + 1;
}

/* Days of the Monday that starts ISO week 1 of `year`. */
static int64_t week1_monday(int64_t year)
{
    int64_t jan4 = icd_days_from_civil(year, 1, 4);
    return jan4 - (iso_dow(jan4) - 1);
}

/* Parses the date element; fills *days. */
static int iso_date(dr_scan *sc, const iso_fail *f, int64_t *days)
{
    size_t start = sc->i;
    bool neg = false;
    if (dr_sc_peek(sc) == '-' || dr_sc_peek(sc) == '+') {
        neg = dr_sc_peek(sc) == '-';
        sc->i++;
    }
    int64_t year;
    if (dr_sc_digits(sc, 9, &year) == 0) return malformed(f, start);
    if (neg) year = -year;
    if (year < DR_MIN_YEAR || year > DR_MAX_YEAR)
        return out_of_range(f, year, "year", DR_MIN_YEAR, DR_MAX_YEAR);
    int64_t month = 1, day = 1;
    if (dr_sc_peek(sc) != '-') {
        *days = icd_days_from_civil(year, 1, 1);
        return 0;
    }
    sc->i++;
    if (dr_sc_eat(sc, 'W')) {
        int64_t week, dow = 1;
        size_t at = sc->i;
        if (dr_sc_digits(sc, 2, &week) == 0) return malformed(f, at);
        if (dr_sc_peek(sc) == '-') {
            sc->i++;
            at = sc->i;
            if (dr_sc_digits(sc, 1, &dow) == 0) return malformed(f, at);
        }
        int64_t first = week1_monday(year), next = week1_monday(year + 1);
        int64_t weeks = (next - first) / 7;
        if (week < 1 || week > weeks) return out_of_range(f, week, "weekOfWeekyear", 1, weeks);
        if (dow < 1 || dow > 7) return out_of_range(f, dow, "dayOfWeek", 1, 7);
        *days = first + (week - 1) * 7 + (dow - 1);
        return 0;
    }
    size_t at = sc->i;
    size_t nd = dr_sc_count_digits(sc);
    if (nd == 3 && (sc->i + 3 >= sc->n || sc->s[sc->i + 3] != '-')) {
        int64_t doy;
        dr_sc_digits(sc, 3, &doy);
        int64_t max = is_leap(year) ? 366 : 365;
        if (doy < 1 || doy > max) return out_of_range(f, doy, "dayOfYear", 1, max);
        *days = icd_days_from_civil(year, 1, 1) + doy - 1;
        return 0;
    }
    if (dr_sc_digits(sc, 2, &month) == 0) return malformed(f, at);
    if (month < 1 || month > 12) return out_of_range(f, month, "monthOfYear", 1, 12);
    if (dr_sc_peek(sc) == '-') {
        sc->i++;
        at = sc->i;
        if (dr_sc_digits(sc, 2, &day) == 0) return malformed(f, at);
        int dim = days_in_month(year, (int)month);
        if (day < 1 || day > dim) return out_of_range(f, day, "dayOfMonth", 1, dim);
    }
    *days = icd_days_from_civil(year, (int)month, (int)day);
    return 0;
}

/* A fraction after '.' or ',' of a field worth `unit_ms`; truncated to millis. */
static int iso_fraction(dr_scan *sc, const iso_fail *f, int64_t unit_ms, int64_t *ms)
{
    int c = dr_sc_peek(sc);
    if (c != '.' && c != ',') {
        *ms = 0;
        return 0;
    }
    sc->i++;
    size_t at = sc->i;
    int64_t v;
    int nd = dr_sc_digits(sc, 9, &v);
    if (nd == 0) return malformed(f, at);
    int64_t p10 = 1;
    for (int k = 0; k < nd; k++)
        p10 *= 10;
    /* v < 1e9 and unit_ms <= 3.6e6: the product fits comfortably in int64 */
    *ms = v * unit_ms / p10;
    return 0;
}

static int iso_time(dr_scan *sc, const iso_fail *f, int64_t *ms_of_day)
{
    size_t at = sc->i;
    int64_t h, m = 0, s = 0, frac = 0;
    if (dr_sc_digits(sc, 2, &h) == 0) return malformed(f, at);
    if (h > 23) return out_of_range(f, h, "hourOfDay", 0, 23);
    if (dr_sc_peek(sc) == ':') {
        sc->i++;
        at = sc->i;
        if (dr_sc_digits(sc, 2, &m) == 0) return malformed(f, at);
        if (m > 59) return out_of_range(f, m, "minuteOfHour", 0, 59);
        if (dr_sc_peek(sc) == ':') {
            sc->i++;
            at = sc->i;
            if (dr_sc_digits(sc, 2, &s) == 0) return malformed(f, at);
            if (s > 59) return out_of_range(f, s, "secondOfMinute", 0, 59);
            ICD_TRY(iso_fraction(sc, f, 1000, &frac));
        } else {
            ICD_TRY(iso_fraction(sc, f, 60000, &frac));
        }
    } else {
        ICD_TRY(iso_fraction(sc, f, 3600000, &frac));
    }
    *ms_of_day = ((h * 60 + m) * 60 + s) * 1000 + frac;
    return 0;
}

/* Joda's time-zone offset element: "Z" or +hh[[:]mm[[:]ss[.SSS]]], exactly two digits per
 * field. Returns 1 when an offset was read, 0 when none starts here, <0 on error. */
static int iso_offset(dr_scan *sc, const iso_fail *f, int64_t *offset_ms)
{
    int c = dr_sc_peek(sc);
    if (c == 'Z' || c == 'z') {
        sc->i++;
        *offset_ms = 0;
        return 1;
    }
    if (c != '+' && c != '-') return 0;
    bool neg = c == '-';
    sc->i++;
    size_t at = sc->i;
    int64_t h, m = 0, s = 0, ms = 0;
    if (dr_sc_count_digits(sc) < 2) return malformed(f, at);
    dr_sc_digits(sc, 2, &h);
    if (h > 23) return out_of_range(f, h, "hourOfDay", 0, 23);
    bool seps = dr_sc_peek(sc) == ':';
    int64_t *fields[2] = {&m, &s};
    for (int k = 0; k < 2; k++) {
        size_t save = sc->i;
        if (seps && !dr_sc_eat(sc, ':')) break;
        if (dr_sc_count_digits(sc) < 2) {
            sc->i = save;
            break;
        }
        dr_sc_digits(sc, 2, fields[k]);
        if (*fields[k] > 59)
            return out_of_range(f, *fields[k], k == 0 ? "minuteOfHour" : "secondOfMinute", 0, 59);
        if (k == 1 && dr_sc_peek(sc) == '.' && sc->i + 4 <= sc->n) {
            dr_scan t = *sc;
            t.i++;
            if (dr_sc_count_digits(&t) >= 3) {
                dr_sc_digits(&t, 3, &ms);
                *sc = t;
            }
        }
    }
    int64_t off = ((h * 60 + m) * 60 + s) * 1000 + ms;
    *offset_ms = neg ? -off : off;
    return 1;
}

int dr_parse_iso_datetime(const char *s, size_t n, unsigned flags, int64_t *out_ms, icd_error *err)
{
    iso_fail f = {err, s, n};
    dr_scan sc = {s, n, 0};
    int64_t days = 0, tod = 0, offset = 0;
    bool space = (flags & DR_ISO_SPACE) != 0;
    int c = dr_sc_peek(&sc);
    if ((c == 'T' || c == 't') && !space) {
        /* time only: 1970-01-01 */
        sc.i++;
        ICD_TRY(iso_time(&sc, &f, &tod));
        int rc = iso_offset(&sc, &f, &offset);
        ICD_TRY(rc);
    } else {
        ICD_TRY(iso_date(&sc, &f, &days));
        c = dr_sc_peek(&sc);
        if (c == 'T' || c == 't' || (space && c == ' ')) {
            sc.i++;
            if (dr_is_digit(dr_sc_peek(&sc))) ICD_TRY(iso_time(&sc, &f, &tod));
            ICD_TRY(iso_offset(&sc, &f, &offset));
        }
    }
    if (!dr_sc_end(&sc)) return malformed(&f, sc.i);
    int64_t ms;
    if (__builtin_mul_overflow(days, (int64_t)86400000, &ms) ||
        __builtin_add_overflow(ms, tod, &ms) || __builtin_sub_overflow(ms, offset, &ms))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Instant out of range: \"%.*s\"",
                        n > SHOW_MAX ? SHOW_MAX : (int)n, s);
    *out_ms = ms;
    return 0;
}

/* ---- timestampSpec --------------------------------------------------------------------- */

dr_ts_format dr_ts_format_from_name(const char *name)
{
    static const struct {
        const char *name;
        dr_ts_format f;
    } names[] = {{"auto", DR_TS_AUTO},   {"iso", DR_TS_ISO},     {"millis", DR_TS_MILLIS},
                 {"posix", DR_TS_POSIX}, {"micro", DR_TS_MICRO}, {"nano", DR_TS_NANO},
                 {"ruby", DR_TS_RUBY}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0) return names[i].f;
    return DR_TS_PATTERN;
}

int dr_timestamp_spec_init(dr_timestamp_spec *ts, const char *column, const char *format,
                           const char *missing_value, int64_t now_ms, icd_error *err)
{
    memset(ts, 0, sizeof *ts);
    ts->column = strdup(column ? column : "timestamp");
    ts->format_text = strdup(format ? format : "auto");
    if (!ts->column || !ts->format_text) {
        dr_timestamp_spec_clear(ts);
        return icd_fail_nomem(err);
    }
    ts->format = dr_ts_format_from_name(ts->format_text);
    if (ts->format == DR_TS_PATTERN) {
        int rc = dr_joda_compile(&ts->pattern, ts->format_text, now_ms, err);
        if (rc < 0) {
            dr_timestamp_spec_clear(ts);
            return rc;
        }
    }
    if (missing_value) {
        int rc = dr_timestamp_missing_from_text(missing_value, strlen(missing_value),
                                                &ts->has_missing, &ts->missing_ms, err);
        if (rc < 0) {
            dr_timestamp_spec_clear(ts);
            return icd_error_wrap(err, "missingValue");
        }
    }
    return 0;
}

void dr_timestamp_spec_clear(dr_timestamp_spec *ts)
{
    free(ts->column);
    free(ts->format_text);
    dr_joda_free(ts->pattern);
    memset(ts, 0, sizeof *ts);
}

/* Java's String.trim(): strips bytes <= ' ' at both ends. */
static void java_trim(const char **s, size_t *n)
{
    while (*n > 0 && (unsigned char)(*s)[0] <= ' ') {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && (unsigned char)(*s)[*n - 1] <= ' ')
        (*n)--;
}

/* ParserUtils.stripQuotes: trim, then drop one pair of surrounding double quotes. */
static void strip_quotes(const char **s, size_t *n)
{
    java_trim(s, n);
    if (*n >= 2 && (*s)[0] == '"' && (*s)[*n - 1] == '"') {
        (*s)++;
        *n -= 2;
        java_trim(s, n);
    }
}

static int unparseable(icd_error *err, const char *s, size_t n, const char *why)
{
    int shown = n > SHOW_MAX ? SHOW_MAX : (int)n;
    return icd_fail(err, ICD_EINVALID, NULL, -1, "Timestamp[%.*s] is unparseable! (%s)", shown, s,
                    why);
}

/* The numeric formats applied to a Java long (createNumericTimestampParser). */
static int64_t numeric_long(dr_ts_format f, int64_t v)
{
    int64_t r;
    switch (f) {
    case DR_TS_POSIX: /* TimeUnit.SECONDS.toMillis saturates */
        if (__builtin_mul_overflow(v, (int64_t)1000, &r)) return v < 0 ? INT64_MIN : INT64_MAX;
        return r;
    case DR_TS_MICRO:
        return v / 1000; /* Java division truncates toward zero */
    case DR_TS_NANO:
        return v / 1000000;
    case DR_TS_RUBY:
        return icd_java_d2l((double)v * 1000);
    default:
        return v;
    }
}

static int64_t numeric_double(dr_ts_format f, double d)
{
    if (f == DR_TS_RUBY) return icd_java_d2l(d * 1000);
    return numeric_long(f, icd_java_d2l(d));
}

int dr_timestamp_parse_text(const dr_timestamp_spec *ts, const char *s0, size_t n0, int64_t *out_ms,
                            icd_error *err)
{
    const char *s = s0;
    size_t n = n0;
    icd_error local;
    if (n == 0) return unparseable(err, s0, n0, "null timestamp");
    switch (ts->format) {
    case DR_TS_AUTO: {
        bool digits = true;
        for (size_t i = 0; i < n && digits; i++)
            digits = dr_is_digit((unsigned char)s[i]);
        if (digits) {
            if (!icd_java_parse_long(s, n, out_ms))
                return unparseable(err, s0, n0, "number out of range");
            return 0;
        }
        strip_quotes(&s, &n);
        size_t sp = n;
        while (sp > 0 && s[sp - 1] != ' ')
            sp--;
        /* ParserUtils.getDateTimeZone: a Java zone id after the last space (not the first
         * character) is dropped; the instant stays the one parsed in UTC (withZone) */
        if (sp > 1 && dr_zone_is_java_id(s + sp, n - sp)) n = sp - 1;
        if (dr_parse_iso_datetime(s, n, DR_ISO_SPACE, out_ms, &local) < 0)
            return unparseable(err, s0, n0, local.message);
        return 0;
    }
    case DR_TS_ISO:
        /* DateTimes.of: Joda's ISO dateTimeParser, else Long.valueOf as epoch millis */
        strip_quotes(&s, &n);
        if (dr_parse_iso_datetime(s, n, 0, out_ms, &local) < 0 &&
            !icd_java_parse_long(s, n, out_ms))
            return unparseable(err, s0, n0, local.message);
        return 0;
    case DR_TS_MILLIS:
    case DR_TS_POSIX:
    case DR_TS_MICRO:
    case DR_TS_NANO: {
        int64_t v;
        strip_quotes(&s, &n);
        if (!icd_java_parse_long(s, n, &v)) return unparseable(err, s0, n0, "not an integer");
        *out_ms = numeric_long(ts->format, v);
        return 0;
    }
    case DR_TS_RUBY: {
        double d;
        strip_quotes(&s, &n);
        if (!icd_java_parse_double(s, n, &d)) return unparseable(err, s0, n0, "not a number");
        *out_ms = icd_java_d2l(d * 1000);
        return 0;
    }
    case DR_TS_PATTERN:
        strip_quotes(&s, &n);
        if (dr_joda_parse(ts->pattern, s, n, out_ms, &local) < 0) {
            if (local.code == ICD_EUNSUPPORTED) { /* not a parse exception: Druid parses it */
                *err = local;
                return ICD_EUNSUPPORTED;
            }
            return unparseable(err, s0, n0, local.message);
        }
        return 0;
    }
    return icd_fail(err, ICD_EINTERNAL, NULL, -1, "unknown timestamp format");
}

static int extract_raw(const dr_timestamp_spec *ts, const dr_ts_value *v, int64_t *out_ms,
                       icd_error *err)
{
    char tmp[64];
    switch (v->kind) {
    case DR_TSV_NULL:
        if (ts->has_missing) {
            *out_ms = ts->missing_ms;
            return 0;
        }
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Timestamp[null] is unparseable!");
    case DR_TSV_LONG:
        if (ts->format != DR_TS_PATTERN && ts->format != DR_TS_ISO) {
            *out_ms = numeric_long(ts->format, v->l);
            return 0;
        }
        snprintf(tmp, sizeof tmp, "%lld", (long long)v->l);
        return dr_timestamp_parse_text(ts, tmp, strlen(tmp), out_ms, err);
    case DR_TSV_DOUBLE:
        if (ts->format != DR_TS_PATTERN && ts->format != DR_TS_ISO) {
            *out_ms = numeric_double(ts->format, v->d);
            return 0;
        } else {
            icd_buf b = ICD_BUF_INIT;
            icd_java_fmt_double(&b, v->d);
            if (!icd_buf_ok(&b)) return icd_fail_nomem(err);
            int rc = dr_timestamp_parse_text(ts, b.data, b.len, out_ms, err);
            icd_buf_free(&b);
            return rc;
        }
    case DR_TSV_STRING:
        return dr_timestamp_parse_text(ts, v->s, v->n, out_ms, err);
    }
    return icd_fail(err, ICD_EINTERNAL, NULL, -1, "unknown timestamp value kind");
}

int dr_timestamp_extract(const dr_timestamp_spec *ts, const dr_ts_value *v, int64_t *out_ms,
                         icd_error *err)
{
    ICD_TRY(extract_raw(ts, v, out_ms, err));
    /* MapInputRowParser.parseTimestamp: Intervals.ETERNITY must contain the instant */
    if (*out_ms < DR_ETERNITY_START || *out_ms >= DR_ETERNITY_END)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Encountered row with timestamp[%lld] that cannot be represented as a long",
                        (long long)*out_ms);
    return 0;
}

int dr_timestamp_missing_from_text(const char *s, size_t n, bool *has, int64_t *out_ms,
                                   icd_error *err)
{
    java_trim(&s, &n);
    *has = false;
    if (n == 0) return 0; /* JodaStuff: an empty string is no missingValue */
    ICD_TRY(dr_parse_iso_datetime(s, n, 0, out_ms, err));
    *has = true;
    return 0;
}
