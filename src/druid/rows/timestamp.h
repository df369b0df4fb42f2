/*
 * Druid timestamps: the timestampSpec formats (auto, iso, millis, posix, micro, nano,
 * ruby, Joda patterns), ISO-8601 date-times as Druid/Joda read them, and the conversions
 * of Iceberg temporal values to epoch milliseconds that the row converter needs.
 *
 * Every instant is an int64 count of milliseconds since 1970-01-01T00:00:00Z, the unit of
 * Druid's __time column. Parsers accept exactly one value and the whole text must be
 * consumed, as Joda's parseDateTime requires.
 */
#ifndef ICD_DRUID_TIMESTAMP_H
#define ICD_DRUID_TIMESTAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/datetime.h"
#include "base/error.h"

/* Year range of Joda's ISO chronology; instants outside it are rejected. */
#define DR_MIN_YEAR (-292275054LL)
#define DR_MAX_YEAR (292278993LL)

/* Intervals.ETERNITY = [Long.MIN_VALUE / 2, Long.MAX_VALUE / 2): a row whose __time falls
 * outside is a parse exception in Druid (MapInputRowParser.parseTimestamp). */
#define DR_ETERNITY_START (INT64_MIN / 2)
#define DR_ETERNITY_END (INT64_MAX / 2)

typedef enum dr_ts_format {
    DR_TS_AUTO,   /* numbers = millis; strings: digits = millis, else ISO ('T' or ' ') */
    DR_TS_ISO,    /* ISO-8601 date-time ('T' separator) */
    DR_TS_MILLIS, /* integer milliseconds */
    DR_TS_POSIX,  /* integer seconds */
    DR_TS_MICRO,  /* integer microseconds (truncated toward zero to millis) */
    DR_TS_NANO,   /* integer nanoseconds (truncated toward zero to millis) */
    DR_TS_RUBY,   /* seconds with a fraction (a double) */
    DR_TS_PATTERN /* a Joda DateTimeFormat pattern, e.g. "yyyy-MM-dd HH:mm:ss" */
} dr_ts_format;

typedef struct dr_joda_pattern dr_joda_pattern; /* joda.h */

/* A parsed timestampSpec: {"column": ..., "format": ..., "missingValue": ...}. */
typedef struct dr_timestamp_spec {
    char *column;      /* default "timestamp" */
    char *format_text; /* as written; default "auto" */
    dr_ts_format format;
    dr_joda_pattern *pattern; /* compiled when format == DR_TS_PATTERN */
    bool has_missing;         /* missingValue given */
    int64_t missing_ms;       /* used when the column is absent or null */
} dr_timestamp_spec;

/* Fills `ts` (column / format / missing_value may be NULL for the defaults). `now_ms` is
 * the clock used by two-digit-year patterns ("yy"); pass dr_now_ms() outside tests.
 * Errors: ICD_EINVALID "Unable to parse timestamps with format [X]" (bad Joda pattern),
 * ICD_EINVALID for a bad missingValue; a pattern with a zone id (ZZZ) reads the system's
 * tz database here (its errors: a TZif file that cannot be read). */
int dr_timestamp_spec_init(dr_timestamp_spec *ts, const char *column, const char *format,
                           const char *missing_value, int64_t now_ms, icd_error *err);
void dr_timestamp_spec_clear(dr_timestamp_spec *ts);
/* The format keyword, case-insensitive ("auto", "iso", ...); DR_TS_PATTERN otherwise. */
dr_ts_format dr_ts_format_from_name(const char *name);

/* A row's timestamp-column value as Druid's parser sees it: a Java Number (long or
 * double) is read by the numeric formats, anything else by its string form. */
typedef enum dr_tsv_kind { DR_TSV_NULL, DR_TSV_LONG, DR_TSV_DOUBLE, DR_TSV_STRING } dr_tsv_kind;
typedef struct dr_ts_value {
    dr_tsv_kind kind;
    int64_t l;
    double d;
    const char *s; /* DR_TSV_STRING: bytes (not NUL-terminated) */
    size_t n;
} dr_ts_value;

/* TimestampSpec.extractTimestamp: null → missingValue, or ICD_EINVALID
 * "Timestamp[null] is unparseable!"; otherwise the value parsed with the format, or
 * ICD_EINVALID "Timestamp[VALUE] is unparseable! (reason)"; an instant outside
 * DR_ETERNITY_START..END is ICD_EINVALID as well. The caller adds the row's
 * location (see row.h). */
int dr_timestamp_extract(const dr_timestamp_spec *ts, const dr_ts_value *v, int64_t *out_ms,
                         icd_error *err);

/* missingValue given as a JSON string, as Druid's DateTime deserializer reads it: trimmed,
 * empty = no missingValue (*has = false), else ISO-8601 with its offset. (A JSON integer is
 * epoch millis: the caller sets has_missing / missing_ms itself.) */
int dr_timestamp_missing_from_text(const char *s, size_t n, bool *has, int64_t *out_ms,
                                   icd_error *err);

/* The string path of one format (what Druid does with value.toString()). */
int dr_timestamp_parse_text(const dr_timestamp_spec *ts, const char *s, size_t n, int64_t *out_ms,
                            icd_error *err);

/* ISO-8601 date-time in Joda's dateTimeParser grammar, lenient on digit counts:
 *   [+-]yyyy[-MM[-dd] | -Www[-e] | -DDD] ['T' [HH[:mm[:ss]]][.fff] [Z | +hh[:mm]]]
 * or a time only ("T10:15", on 1970-01-01). Values without an offset are UTC.
 * DR_ISO_SPACE also accepts ' ' in place of 'T' (the "auto" format). */
#define DR_ISO_SPACE 1u
int dr_parse_iso_datetime(const char *s, size_t n, unsigned flags, int64_t *out_ms, icd_error *err);

/* Civil fields → epoch millis, with range checks (false when out of range). */
bool dr_ms_from_fields(int64_t year, int month, int day, int64_t ms_of_day, int64_t *out);
/* Epoch millis → days since 1970-01-01 and millis within the day. */
static inline void dr_split_ms(int64_t ms, int64_t *days, int64_t *ms_of_day)
{
    *days = icd_floordiv(ms, 86400000);
    *ms_of_day = ms - *days * 86400000;
}

/* Wall-clock now in epoch millis. */
int64_t dr_now_ms(void);

/* Iceberg temporal values → epoch millis, as Java's Instant.toEpochMilli (floor). */
static inline int64_t dr_millis_from_micros(int64_t us)
{
    return icd_floordiv(us, 1000);
}
static inline int64_t dr_millis_from_nanos(int64_t ns)
{
    return icd_floordiv(ns, 1000000);
}
static inline int64_t dr_millis_from_date(int32_t days)
{
    return (int64_t)days * 86400000;
}

#endif
