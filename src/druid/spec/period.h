/*
 * ISO-8601 periods, intervals and Druid granularities, with Joda's semantics in UTC.
 *
 * - dr_period: "P1Y2M3W4DT5H6M7.5S" (ISOPeriodFormat.standard), added to instants with
 *   calendar arithmetic (months clamp the day of month, like Joda's ISOChronology).
 * - dr_parse_interval: "start/end", "start/PERIOD" or "PERIOD/end" (Druid's Intervals.of).
 * - dr_granularity: granularitySpec segment/query granularities — the names NONE, SECOND,
 *   MINUTE, FIVE_MINUTE, TEN_MINUTE, FIFTEEN_MINUTE, THIRTY_MINUTE, HOUR, SIX_HOUR,
 *   EIGHT_HOUR, DAY, WEEK, MONTH, QUARTER, YEAR, ALL, and the objects {"type":"period",
 *   "period", "timeZone", "origin"}, {"type":"duration", "duration", "origin"},
 *   {"type":"all"}, {"type":"none"}; bucketing follows Druid's PeriodGranularity.
 */
#ifndef ICD_DRUID_PERIOD_H
#define ICD_DRUID_PERIOD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

typedef struct dr_period {
    int32_t years, months, weeks, days, hours, minutes, seconds, millis;
} dr_period;

/* Parses an ISO period (Joda's standard format; integer fields, fractional seconds). */
int dr_parse_period(const char *s, size_t n, dr_period *out, icd_error *err);
/* instant + scalar * period, field by field from years to millis (Joda's order). */
int dr_period_add(const dr_period *p, int64_t ms, int scalar, int64_t *out, icd_error *err);
/* Period.toStandardDuration: weeks = 7 days, days = 24 h. Fails with years or months
 * ("Cannot convert to Duration as this period contains months and months vary in length"). */
int dr_period_to_ms(const dr_period *p, int64_t *out, icd_error *err);
bool dr_period_is_zero(const dr_period *p);

/* A Druid interval: [start, end) in epoch millis. */
typedef struct dr_interval {
    int64_t start, end;
} dr_interval;
int dr_parse_interval(const char *s, size_t n, dr_interval *out, icd_error *err);

typedef enum dr_gran_kind {
    DR_GRAN_NONE,    /* every millisecond its own bucket */
    DR_GRAN_ALL,     /* one bucket for all time */
    DR_GRAN_PERIOD,  /* calendar period, optional origin */
    DR_GRAN_DURATION /* fixed duration in millis, optional origin */
} dr_gran_kind;

typedef struct dr_granularity {
    dr_gran_kind kind;
    char name[16];       /* the upper-case name when given as a string, else "" */
    dr_period period;    /* DR_GRAN_PERIOD */
    int64_t duration_ms; /* DR_GRAN_DURATION */
    bool has_origin;
    int64_t origin_ms;
    char time_zone[64];   /* as written ("" = UTC) */
    int64_t tz_offset_ms; /* fixed offset of time_zone; 0 for UTC */
    bool tz_supported;    /* false for region zones (parsed, not usable for bucketing) */
} dr_granularity;

/* Parses a granularity JSON value (a string or an object). */
int dr_granularity_parse(dr_granularity *g, const json_t *v, icd_error *err);
/* A named granularity ("DAY", case-insensitive). */
/* The granularity names dr_granularity_named accepts, as "NONE, SECOND, ..." in `out`. */
void dr_granularity_names(char *out, size_t n);
int dr_granularity_named(dr_granularity *g, const char *name, icd_error *err);
/* The start of the bucket holding `t`, and the start of the next bucket. */
int dr_granularity_bucket(const dr_granularity *g, int64_t t, int64_t *start, int64_t *next,
                          icd_error *err);

#endif
