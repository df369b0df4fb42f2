/*
 * ISO-8601 periods and intervals, and Druid granularities (see period.h). Used by the
 * spec parser (granularitySpec, icebergFilter intervals and timeWindow durations) and,
 * later, by the snapshot diff that maps changed files to segment-granularity buckets.
 * Everything is computed in UTC on the proleptic Gregorian calendar, like Joda's
 * ISOChronology.getInstanceUTC().
 */
#include "druid/spec/period.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/datetime.h"
#include "druid/rows/textscan.h"
#include "druid/rows/timestamp.h"

#define SHOW_MAX 200
#define DAY_MS 86400000LL

bool dr_period_is_zero(const dr_period *p)
{
    return !p->years && !p->months && !p->weeks && !p->days && !p->hours && !p->minutes &&
           !p->seconds && !p->millis;
}

static int bad_period(icd_error *err, const char *s, size_t n)
{
    return icd_fail(err, ICD_EINVALID, NULL, -1,
                    "Invalid format: \"%.*s\" is not an ISO-8601 period",
                    n > SHOW_MAX ? SHOW_MAX : (int)n, s);
}

int dr_parse_period(const char *s, size_t n, dr_period *out, icd_error *err)
{
    dr_scan sc = {s, n, 0};
    memset(out, 0, sizeof *out);
    if (!dr_sc_eat(&sc, 'P')) return bad_period(err, s, n);
    /* designators in order; the time part follows 'T' */
    static const char date_units[] = "YMWD", time_units[] = "HMS";
    int32_t *date_fields[] = {&out->years, &out->months, &out->weeks, &out->days};
    int32_t *time_fields[] = {&out->hours, &out->minutes, &out->seconds};
    bool in_time = false, any = false, any_time = false;
    int next = 0; /* index of the next designator allowed */
    while (!dr_sc_end(&sc)) {
        if (!in_time && dr_sc_eat(&sc, 'T')) {
            in_time = true;
            next = 0;
            continue;
        }
        bool neg = false;
        if (dr_sc_peek(&sc) == '-' || dr_sc_peek(&sc) == '+') {
            neg = dr_sc_peek(&sc) == '-';
            sc.i++;
        }
        int64_t v, frac = 0;
        int nd = dr_sc_digits(&sc, 10, &v);
        if (nd == 0 || v > INT32_MAX) return bad_period(err, s, n);
        int fd = 0;
        if (in_time && (dr_sc_peek(&sc) == '.' || dr_sc_peek(&sc) == ',')) {
            sc.i++;
            fd = dr_sc_digits(&sc, 9, &frac);
            if (fd == 0) return bad_period(err, s, n);
        }
        int c = dr_lower(dr_sc_peek(&sc));
        const char *units = in_time ? time_units : date_units;
        int k = next;
        while (units[k] && dr_lower(units[k]) != c)
            k++;
        if (!units[k] || (fd && units[k] != 'S')) return bad_period(err, s, n);
        sc.i++;
        int32_t val = (int32_t)(neg ? -v : v);
        if (in_time) {
            *time_fields[k] = val;
            any_time = true;
            if (fd) {
                int64_t p10 = 1;
                for (int j = 0; j < fd; j++)
                    p10 *= 10;
                out->millis = (int32_t)(frac * 1000 / p10) * (neg ? -1 : 1);
            }
        } else {
            *date_fields[k] = val;
        }
        any = true;
        next = k + 1;
    }
    if (!any || (in_time && !any_time)) return bad_period(err, s, n);
    return 0;
}

/* Adds months to an instant, clamping the day of month (Joda's monthOfYear().add). */
static bool add_months(int64_t ms, int64_t months, int64_t *out)
{
    int64_t days, tod, y;
    int m, d;
    dr_split_ms(ms, &days, &tod);
    icd_civil_from_days(days, &y, &m, &d);
    int64_t idx;
    if (__builtin_add_overflow(y * 12 + (m - 1), months, &idx)) return false;
    int64_t ny = icd_floordiv(idx, 12);
    int nm = (int)(idx - ny * 12) + 1;
    int64_t dim = icd_days_from_civil(nm == 12 ? ny + 1 : ny, nm == 12 ? 1 : nm + 1, 1) -
                  icd_days_from_civil(ny, nm, 1);
    if (d > dim) d = (int)dim;
    return dr_ms_from_fields(ny, nm, d, tod, out);
}

int dr_period_add(const dr_period *p, int64_t ms, int scalar, int64_t *out, icd_error *err)
{
    int64_t t = ms;
    bool ok = add_months(t, (int64_t)p->years * 12 * scalar, &t) &&
              add_months(t, (int64_t)p->months * scalar, &t);
    int64_t fixed[] = {(int64_t)p->weeks * 7 * DAY_MS, (int64_t)p->days * DAY_MS,
                       (int64_t)p->hours * 3600000,    (int64_t)p->minutes * 60000,
                       (int64_t)p->seconds * 1000,     p->millis};
    for (size_t i = 0; ok && i < sizeof fixed / sizeof fixed[0]; i++) {
        int64_t d;
        ok = !__builtin_mul_overflow(fixed[i], (int64_t)scalar, &d) &&
             !__builtin_add_overflow(t, d, &t);
    }
    if (!ok) return icd_fail(err, ICD_EINVALID, NULL, -1, "period arithmetic out of range");
    *out = t;
    return 0;
}

int dr_period_to_ms(const dr_period *p, int64_t *out, icd_error *err)
{
    if (p->years || p->months)
        return icd_fail(
            err, ICD_EINVALID, NULL, -1,
            "Cannot convert to Duration as this period contains %s and %s vary in length",
            p->years ? "years" : "months", p->years ? "years" : "months");
    /* each term is below 2^31 * 6.1e8 < 2^61: the sum cannot overflow */
    *out = (int64_t)p->weeks * 7 * DAY_MS + (int64_t)p->days * DAY_MS +
           (int64_t)p->hours * 3600000 + (int64_t)p->minutes * 60000 + (int64_t)p->seconds * 1000 +
           p->millis;
    return 0;
}

/* ---- intervals ---------------------------------------------------------------------------- */

int dr_parse_interval(const char *s, size_t n, dr_interval *out, icd_error *err)
{
    int shown = n > SHOW_MAX ? SHOW_MAX : (int)n;
    const char *slash = memchr(s, '/', n);
    if (!slash)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Format requires a '/' separator: %.*s", shown,
                        s);
    size_t ln = (size_t)(slash - s), rn = n - ln - 1;
    const char *r = slash + 1;
    if (ln == 0 || rn == 0)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Format invalid: %.*s", shown, s);
    bool lp = s[0] == 'P' || s[0] == 'p', rp = r[0] == 'P' || r[0] == 'p';
    if (lp && rp)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Interval composed of two durations: %.*s",
                        shown, s);
    dr_period p;
    int64_t start = 0, end = 0;
    if (lp) {
        ICD_TRY(dr_parse_period(s, ln, &p, err));
        ICD_TRY(dr_parse_iso_datetime(r, rn, 0, &end, err));
        ICD_TRY(dr_period_add(&p, end, -1, &start, err));
    } else {
        ICD_TRY(dr_parse_iso_datetime(s, ln, 0, &start, err));
        if (rp) {
            ICD_TRY(dr_parse_period(r, rn, &p, err));
            ICD_TRY(dr_period_add(&p, start, 1, &end, err));
        } else {
            ICD_TRY(dr_parse_iso_datetime(r, rn, 0, &end, err));
        }
    }
    if (end < start)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "The end instant must be greater than the start instant: %.*s", shown, s);
    out->start = start;
    out->end = end;
    return 0;
}

/* ---- granularities ----------------------------------------------------------------------- */

static const struct {
    const char *name;
    const char *period; /* NULL for NONE / ALL */
} named[] = {
    {"NONE", NULL},
    {"SECOND", "PT1S"},
    {"MINUTE", "PT1M"},
    {"FIVE_MINUTE", "PT5M"},
    {"TEN_MINUTE", "PT10M"},
    {"FIFTEEN_MINUTE", "PT15M"},
    {"THIRTY_MINUTE", "PT30M"},
    {"HOUR", "PT1H"},
    {"SIX_HOUR", "PT6H"},
    {"EIGHT_HOUR", "PT8H"},
    {"DAY", "P1D"},
    {"WEEK", "P1W"},
    {"MONTH", "P1M"},
    {"QUARTER", "P3M"},
    {"YEAR", "P1Y"},
    {"ALL", NULL},
};

void dr_granularity_names(char *out, size_t n)
{
    size_t used = 0;
    if (n) out[0] = '\0';
    for (size_t i = 0; i < sizeof named / sizeof named[0] && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "", named[i].name);
}

int dr_granularity_named(dr_granularity *g, const char *name, icd_error *err)
{
    memset(g, 0, sizeof *g);
    g->tz_supported = true;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (strcasecmp(name, named[i].name) != 0) continue;
        snprintf(g->name, sizeof g->name, "%s", named[i].name);
        if (!named[i].period) {
            g->kind = strcmp(named[i].name, "ALL") == 0 ? DR_GRAN_ALL : DR_GRAN_NONE;
            return 0;
        }
        g->kind = DR_GRAN_PERIOD;
        return dr_parse_period(named[i].period, strlen(named[i].period), &g->period, err);
    }
    return icd_fail(
        err, ICD_EINVALID, NULL, -1,
        "No enum constant org.apache.druid.java.util.common.granularity.GranularityType.%s", name);
}

static bool is_utc_name(const char *z)
{
    static const char *ids[] = {"UTC",           "Etc/UTC", "GMT",      "Etc/GMT",
                                "UCT",           "Etc/UCT", "Z",        "Universal",
                                "Etc/Universal", "Zulu",    "Etc/Zulu", "Greenwich"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (strcmp(z, ids[i]) == 0) return true;
    return false;
}

static int parse_time_zone(dr_granularity *g, const json_t *v, icd_error *err)
{
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "timeZone must be a string");
    const char *z = json_string_value(v);
    snprintf(g->time_zone, sizeof g->time_zone, "%s", z);
    if (is_utc_name(z)) return 0;
    if (z[0] == '+' || z[0] == '-') {
        /* a fixed offset: reuse the ISO parser on a date carrying it */
        char tmp[96];
        int64_t ms;
        icd_error local;
        snprintf(tmp, sizeof tmp, "1970-01-01T00:00%s", z);
        if (dr_parse_iso_datetime(tmp, strlen(tmp), 0, &ms, &local) < 0)
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "The datetime zone id '%s' is not recognised", z);
        g->tz_offset_ms = -ms;
        return 0;
    }
    g->tz_supported = false; /* a region zone: kept, but bucketing refuses it */
    return 0;
}

static int parse_origin(dr_granularity *g, const json_t *v, icd_error *err)
{
    if (!v || json_is_null(v)) return 0;
    if (json_is_integer(v)) {
        g->origin_ms = json_integer_value(v);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        ICD_TRY(dr_parse_iso_datetime(s, strlen(s), 0, &g->origin_ms, err));
    } else {
        return icd_fail(err, ICD_EINVALID, NULL, -1, "origin must be an ISO-8601 date-time");
    }
    g->has_origin = true;
    return 0;
}

int dr_granularity_parse(dr_granularity *g, const json_t *v, icd_error *err)
{
    if (json_is_string(v)) return dr_granularity_named(g, json_string_value(v), err);
    memset(g, 0, sizeof *g);
    g->tz_supported = true;
    if (!json_is_object(v))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "a granularity must be a string or an object");
    const json_t *type = json_object_get(v, "type");
    if (!json_is_string(type))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "granularity object needs a \"type\"");
    const char *t = json_string_value(type);
    if (strcmp(t, "all") == 0) {
        g->kind = DR_GRAN_ALL;
        return 0;
    }
    if (strcmp(t, "none") == 0) {
        g->kind = DR_GRAN_NONE;
        return 0;
    }
    if (strcmp(t, "period") == 0) {
        const json_t *p = json_object_get(v, "period");
        if (!json_is_string(p))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "period granularity needs a \"period\"");
        g->kind = DR_GRAN_PERIOD;
        const char *ps = json_string_value(p);
        ICD_TRY(dr_parse_period(ps, strlen(ps), &g->period, err));
        if (dr_period_is_zero(&g->period))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "period granularity cannot be zero");
        ICD_TRY(parse_time_zone(g, json_object_get(v, "timeZone"), err));
        return parse_origin(g, json_object_get(v, "origin"), err);
    }
    if (strcmp(t, "duration") == 0) {
        const json_t *d = json_object_get(v, "duration");
        if (!json_is_integer(d) || json_integer_value(d) <= 0)
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "duration granularity needs a positive \"duration\" in milliseconds");
        g->kind = DR_GRAN_DURATION;
        g->duration_ms = json_integer_value(d);
        return parse_origin(g, json_object_get(v, "origin"), err);
    }
    return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown granularity type '%s'", t);
}

/* Whole months (or years, with unit 12) from `origin` to `t`, truncated toward zero. */
static bool month_diff(int64_t t, int64_t origin, int unit, int64_t *out)
{
    if (t < origin) {
        if (!month_diff(origin, t, unit, out)) return false;
        *out = -*out;
        return true;
    }
    int64_t d1, d2, tod, y1, y2;
    int m1, m2, dd;
    dr_split_ms(t, &d1, &tod);
    dr_split_ms(origin, &d2, &tod);
    icd_civil_from_days(d1, &y1, &m1, &dd);
    icd_civil_from_days(d2, &y2, &m2, &dd);
    int64_t k = ((y1 * 12 + m1) - (y2 * 12 + m2)) / unit + 1, at;
    /* step back until origin + k units does not pass t */
    for (;;) {
        if (!add_months(origin, k * unit, &at)) return false;
        if (at <= t || k <= 0) break;
        k--;
    }
    *out = k;
    return true;
}

/* PeriodGranularity.truncate for a UTC period that uses months or years. */
static int truncate_calendar(const dr_granularity *g, int64_t t, int unit, int32_t count,
                             int64_t *out, icd_error *err)
{
    int64_t origin = g->has_origin ? g->origin_ms : 0, k, tt;
    if (count > 1 || g->has_origin) {
        if (!month_diff(t, origin, unit, &k))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "granularity arithmetic out of range");
        k -= k % count;
        if (!add_months(origin, k * unit, &tt))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "granularity arithmetic out of range");
        if (t < tt && !add_months(tt, -(int64_t)count * unit, &tt))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "granularity arithmetic out of range");
        *out = tt;
        return 0;
    }
    int64_t days, tod, y;
    int m, d;
    dr_split_ms(t, &days, &tod);
    icd_civil_from_days(days, &y, &m, &d);
    if (!dr_ms_from_fields(y, unit == 12 ? 1 : m, 1, 0, out))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "granularity arithmetic out of range");
    return 0;
}

/* Aligns on multiples of `step` counted from `origin` (DurationGranularity and the
 * precise periods of PeriodGranularity). */
static int64_t align(int64_t t, int64_t origin, int64_t step)
{
    int64_t off = t % step - origin % step;
    if (off < 0) off += step;
    return t - off;
}

static int truncate_period(const dr_granularity *g, int64_t t, int64_t *out, icd_error *err)
{
    const dr_period *p = &g->period;
    int32_t f[] = {p->years, p->months,  p->weeks,   p->days,
                   p->hours, p->minutes, p->seconds, p->millis};
    int nonzero = 0;
    for (int i = 0; i < 8; i++)
        nonzero += f[i] != 0;
    for (int i = 0; i < 8; i++)
        if (f[i] < 0)
            return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                            "negative granularity periods are not supported");
    int64_t origin = g->has_origin ? g->origin_ms : 0, step;
    if (nonzero > 1 || p->millis) {
        if (p->years || p->months)
            return icd_fail(
                err, ICD_EUNSUPPORTED, NULL, -1,
                "compound granularity periods with months or years are not supported by icedruid");
        ICD_TRY(dr_period_to_ms(p, &step, err));
        *out = align(t, origin, step);
        return 0;
    }
    if (p->years) return truncate_calendar(g, t, 12, p->years, out, err);
    if (p->months) return truncate_calendar(g, t, 1, p->months, out, err);
    if (p->weeks) {
        if (p->weeks > 1 || g->has_origin) {
            int64_t w = (t - origin) / (7 * DAY_MS);
            w -= w % p->weeks;
            int64_t tt = origin + w * 7 * DAY_MS;
            *out = t < tt ? tt - (int64_t)p->weeks * 7 * DAY_MS : tt;
            return 0;
        }
        int64_t days = icd_floordiv(t, DAY_MS);
        days -= icd_floormod(days + 3, 7); /* back to Monday */
        *out = days * DAY_MS;
        return 0;
    }
    if (p->days) {
        if (p->days > 1 || g->has_origin) {
            int64_t d = (t - origin) / DAY_MS;
            d -= d % p->days;
            int64_t tt = origin + d * DAY_MS;
            *out = t < tt ? tt - (int64_t)p->days * DAY_MS : tt;
            return 0;
        }
        *out = icd_floordiv(t, DAY_MS) * DAY_MS;
        return 0;
    }
    ICD_TRY(dr_period_to_ms(p, &step, err));
    if (!g->has_origin && f[4] + f[5] + f[6] == 1) {
        *out = icd_floordiv(t, step) * step;
        return 0;
    }
    *out = align(t, origin, step);
    return 0;
}

int dr_granularity_bucket(const dr_granularity *g, int64_t t, int64_t *start, int64_t *next,
                          icd_error *err)
{
    switch (g->kind) {
    case DR_GRAN_NONE:
        *start = t;
        *next = t == INT64_MAX ? t : t + 1;
        return 0;
    case DR_GRAN_ALL:
        *start = INT64_MIN;
        *next = INT64_MAX;
        return 0;
    case DR_GRAN_DURATION:
        *start = align(t, g->has_origin ? g->origin_ms : 0, g->duration_ms);
        if (__builtin_add_overflow(*start, g->duration_ms, next)) *next = INT64_MAX;
        return 0;
    case DR_GRAN_PERIOD: {
        if (!g->tz_supported)
            return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                            "granularity timeZone '%s' is not supported by icedruid yet (UTC and "
                            "fixed offsets only)",
                            g->time_zone);
        int64_t local, s;
        if (__builtin_add_overflow(t, g->tz_offset_ms, &local))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "granularity arithmetic out of range");
        ICD_TRY(truncate_period(g, local, &s, err));
        int64_t n;
        ICD_TRY(dr_period_add(&g->period, s, 1, &n, err));
        *start = s - g->tz_offset_ms;
        *next = n - g->tz_offset_ms;
        return 0;
    }
    }
    return icd_fail(err, ICD_EINTERNAL, NULL, -1, "unknown granularity kind");
}
