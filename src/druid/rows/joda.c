/*
 * Joda-Time DateTimeFormat patterns for Druid timestampSpec custom formats: the pattern is
 * compiled once into a token list (dr_joda_compile), then each row's timestamp string is
 * matched against it (dr_joda_parse) the way Joda's DateTimeFormatter.parseDateTime does:
 *
 *   1. Each token parses its text into a saved field (DateTimeParserBucket.saveField):
 *      numbers are lenient on their digit count up to the field's maximum (a year followed
 *      by another number is fixed width), text fields (months, days, eras, AM/PM) match
 *      their short or full English name exactly, all lower case or all upper case,
 *      literals match case-insensitively; an offset (Z, ZZ) or a zone (ZZZ: a tz-database
 *      id, z: Joda's default short names) is kept aside. The whole input must be used.
 *   2. computeMillis: the saved fields are sorted by range then duration (larger first);
 *      when the first is a month, week or day field the year 2000 is added; then every
 *      field is set on 1970-01-01T00:00 with its value and rounded down to its unit, and
 *      set a second time in the same order (the last one rounded) - the two passes decide
 *      where a day of week without a day of month lands, what an era or a century does to
 *      a year, how a week of weekyear resolves. Each set checks the field's range for
 *      the date reached so far (Feb 29 needs a leap year).
 *   3. The local value minus the offset; with a zone, minus Joda's getOffsetFromLocal
 *      (tzrules.c, the system's tz database), a wall time in a DST gap being an error.
 *
 * Druid wraps every formatter in UTC, so a value without an offset or zone is UTC.
 */
#include "druid/rows/joda.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "druid/rows/textscan.h"
#include "druid/rows/timestamp.h"
#include "druid/rows/tzrules.h"

#define SHOW_MAX 200
#define DAY 86400000LL
#define WEEK (7 * DAY)

/* ---- fields --------------------------------------------------------------------------- */

typedef enum field {
    F_ERA,
    F_CENTURY, /* centuryOfEra */
    F_YOE,     /* yearOfEra */
    F_YEAR,
    F_WEEKYEAR,
    F_MONTH,
    F_WEEK, /* weekOfWeekyear */
    F_DOY,
    F_DOM,
    F_DOW,
    F_HALFDAY,
    F_HOUR,     /* H */
    F_CLOCKDAY, /* k */
    F_HOUR12,   /* K */
    F_CLOCK12,  /* h */
    F_MINUTE,
    F_SECOND,
    F_MILLIS
} field;

/* Duration ranks, larger units first; 0 = unsupported / none (sorts first). */
enum {
    U_NONE,
    U_CENTURIES,
    U_YEARS,
    U_MONTHS,
    U_WEEKS,
    U_DAYS,
    U_HALFDAYS,
    U_HOURS,
    U_MINUTES,
    U_SECONDS,
    U_MILLIS
};

static const struct {
    unsigned char range, dur;
    const char *name;
} FINFO[] = {
    [F_ERA] = {U_NONE, U_NONE, "era"},
    [F_CENTURY] = {U_NONE, U_CENTURIES, "centuryOfEra"},
    [F_YOE] = {U_NONE, U_YEARS, "yearOfEra"},
    [F_YEAR] = {U_NONE, U_YEARS, "year"},
    [F_WEEKYEAR] = {U_NONE, U_YEARS, "weekyear"},
    [F_MONTH] = {U_YEARS, U_MONTHS, "monthOfYear"},
    [F_WEEK] = {U_YEARS, U_WEEKS, "weekOfWeekyear"},
    [F_DOY] = {U_YEARS, U_DAYS, "dayOfYear"},
    [F_DOM] = {U_MONTHS, U_DAYS, "dayOfMonth"},
    [F_DOW] = {U_WEEKS, U_DAYS, "dayOfWeek"},
    [F_HALFDAY] = {U_DAYS, U_HALFDAYS, "halfdayOfDay"},
    [F_HOUR] = {U_DAYS, U_HOURS, "hourOfDay"},
    [F_CLOCKDAY] = {U_DAYS, U_HOURS, "clockhourOfDay"},
    [F_HOUR12] = {U_HALFDAYS, U_HOURS, "hourOfHalfday"},
    [F_CLOCK12] = {U_HALFDAYS, U_HOURS, "clockhourOfHalfday"},
    [F_MINUTE] = {U_HOURS, U_MINUTES, "minuteOfHour"},
    [F_SECOND] = {U_MINUTES, U_SECONDS, "secondOfMinute"},
    [F_MILLIS] = {U_SECONDS, U_MILLIS, "millisOfSecond"},
};

/* ---- tokens --------------------------------------------------------------------------- */

typedef enum tok_kind {
    T_LIT,
    T_NUM,       /* a decimal field */
    T_TWO,       /* yy / YY / xx: two-digit year or weekyear with Joda's pivot */
    T_TEXT,      /* G, MMM(M), E(EEE), a */
    T_FRAC,      /* S */
    T_OFFSET,    /* Z, ZZ */
    T_ZONE_ID,   /* ZZZ */
    T_ZONE_NAME, /* z, zz, zzz: Joda's default short names */
    T_NOPARSE    /* zzzz: Joda prints it but has no parser for it */
} tok_kind;

typedef struct tok {
    tok_kind kind;
    field f;
    int maxd;
    bool signed_;
    bool lenient; /* T_TWO: more or fewer than two digits read as a full year */
    char *lit;    /* T_LIT */
    size_t lit_len;
} tok;

typedef struct zone_ref {
    const char *name;
    dr_tz *tz;
} zone_ref;

struct dr_joda_pattern {
    tok *toks;
    size_t n;
    int64_t pivot;  /* two-digit year pivot: the current year - 30 */
    int64_t wpivot; /* the current weekyear - 30 */
    bool no_parser; /* a token without a parser (zzzz) */
    char **ids;     /* ZZZ: the zone ids, sorted */
    dr_tz **zones;  /* ZZZ: ids[i]'s rules */
    size_t nids;
    size_t id_max_len, id_max_prefix;
    dr_tz *short_zones[4]; /* z: New_York, Chicago, Denver, Los_Angeles */
    dr_tz *utc;
};

static const char *const month_names[12] = {"January",   "February", "March",    "April",
                                            "May",       "June",     "July",     "August",
                                            "September", "October",  "November", "December"};
static const char *const day_names[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                         "Friday", "Saturday", "Sunday"};

void dr_joda_free(dr_joda_pattern *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++)
        free(p->toks[i].lit);
    free(p->toks);
    for (size_t i = 0; i < p->nids; i++) {
        free(p->ids[i]);
        dr_tz_free(p->zones[i]);
    }
    free(p->ids);
    free(p->zones);
    for (int i = 0; i < 4; i++)
        dr_tz_free(p->short_zones[i]);
    dr_tz_free(p->utc);
    free(p);
}

static bool is_letter(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* DateTimeFormat.isNumericToken */
static bool is_numeric_letter(char c, size_t len)
{
    switch (c) {
    case 'c':
    case 'C':
    case 'x':
    case 'y':
    case 'Y':
    case 'd':
    case 'h':
    case 'H':
    case 'm':
    case 's':
    case 'S':
    case 'e':
    case 'D':
    case 'F':
    case 'w':
    case 'W':
    case 'k':
    case 'K':
        return true;
    case 'M':
        return len <= 2;
    default:
        return false;
    }
}

static int push(dr_joda_pattern *p, size_t *cap, tok t, icd_error *err)
{
    if (ICD_ARRAY_RESERVE(p->toks, *cap, p->n + 1, 8)) {
        free(t.lit);
        return icd_fail_nomem(err);
    }
    p->toks[p->n++] = t;
    return 0;
}

/* Appends literal bytes, merging with a preceding literal token. */
static int push_lit(dr_joda_pattern *p, size_t *cap, const char *s, size_t n, icd_error *err)
{
    if (n == 0) return 0;
    if (p->n > 0 && p->toks[p->n - 1].kind == T_LIT) {
        tok *t = &p->toks[p->n - 1];
        char *nl = realloc(t->lit, t->lit_len + n + 1);
        if (!nl) return icd_fail_nomem(err);
        memcpy(nl + t->lit_len, s, n);
        t->lit_len += n;
        nl[t->lit_len] = '\0';
        t->lit = nl;
        return 0;
    }
    tok t = {.kind = T_LIT, .lit = malloc(n + 1), .lit_len = n};
    if (!t.lit) return icd_fail_nomem(err);
    memcpy(t.lit, s, n);
    t.lit[n] = '\0';
    return push(p, cap, t, err);
}

/* The letter run that starts at pattern[i] (for the look-ahead of year fields). */
static bool next_is_numeric(const char *pat, size_t i)
{
    char c = pat[i];
    if (!is_letter((unsigned char)c)) return false;
    size_t len = 1;
    while (pat[i + len] == c)
        len++;
    return is_numeric_letter(c, len);
}

/* ---- ISO chronology arithmetic on local milliseconds -------------------------------------- */

static bool leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int64_t days_of(int64_t ms)
{
    return icd_floordiv(ms, DAY);
}

static void civil(int64_t ms, int64_t *y, int *m, int *d)
{
    icd_civil_from_days(days_of(ms), y, m, d);
}

static int64_t get_year(int64_t ms)
{
    int64_t y;
    int m, d;
    civil(ms, &y, &m, &d);
    return y;
}

/* Java long arithmetic wraps (the era's roundFloor to Long.MIN_VALUE reaches a year just
 * below the range): the same two's-complement wrap here, never signed overflow. */
static int64_t year_ms(int64_t y)
{
    return (int64_t)((uint64_t)icd_days_from_civil(y, 1, 1) * (uint64_t)DAY);
}

static int64_t get_doy(int64_t ms, int64_t y)
{
    return days_of(ms) - icd_days_from_civil(y, 1, 1) + 1;
}

static int64_t get_dow(int64_t ms)
{
    return icd_floormod(days_of(ms) + 3, 7) + 1; /* 1970-01-01 was a Thursday */
}

static int64_t days_in_month(int64_t y, int m)
{
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : dim[m - 1];
}

/* BasicGJChronology.setYear: keeps the day of year (Feb 29 handled) and the time. */
static int64_t set_year(int64_t ms, int64_t year)
{
    int64_t this_year = get_year(ms), doy = get_doy(ms, this_year);
    int64_t mod = icd_floormod(ms, DAY);
    if (doy > 31 + 28) {
        if (leap(this_year)) {
            if (!leap(year)) doy--;
        } else if (leap(year)) {
            doy++;
        }
    }
    return (int64_t)((uint64_t)year_ms(year) + (uint64_t)((doy - 1) * DAY) + (uint64_t)mod);
}

static int64_t first_week_ms(int64_t y)
{
    int64_t jan1 = year_ms(y), d = get_dow(jan1);
    return d > 4 ? jan1 + (8 - d) * DAY : jan1 - (d - 1) * DAY;
}

static int64_t weeks_in_year(int64_t y)
{
    return (first_week_ms(y + 1) - first_week_ms(y)) / WEEK;
}

static int64_t week_of(int64_t ms)
{
    int64_t y = get_year(ms), f1 = first_week_ms(y);
    if (ms < f1) return weeks_in_year(y - 1);
    if (ms >= first_week_ms(y + 1)) return 1;
    return (ms - f1) / WEEK + 1;
}

static int64_t get_weekyear(int64_t ms)
{
    int64_t y = get_year(ms), w = week_of(ms);
    if (w == 1) return get_year(ms + WEEK);
    if (w > 51) return get_year(ms - 2 * WEEK);
    return y;
}

static int64_t floor_to(int64_t ms, int64_t unit)
{
    return icd_floordiv(ms, unit) * unit;
}

/* ---- Joda's field set / roundFloor ---------------------------------------------------------- */

typedef struct pctx {
    const char *s;
    size_t n;
    icd_error *err;
} pctx;

static int range_err(const pctx *c, int64_t v, field f, int64_t lo, int64_t hi)
{
    int shown = c->n > SHOW_MAX ? SHOW_MAX : (int)c->n;
    return icd_fail(c->err, ICD_EINVALID, NULL, -1,
                    "Cannot parse \"%.*s\": Value %lld for %s must be in the range [%lld,%lld]",
                    shown, c->s, (long long)v, FINFO[f].name, (long long)lo, (long long)hi);
}

static int check(const pctx *c, int64_t v, field f, int64_t lo, int64_t hi)
{
    return v >= lo && v <= hi ? 0 : range_err(c, v, f, lo, hi);
}

static int year_set(const pctx *c, int64_t ms, int64_t v, int64_t *out)
{
    ICD_TRY(check(c, v, F_YEAR, DR_MIN_YEAR, DR_MAX_YEAR));
    *out = set_year(ms, v);
    return 0;
}

static int64_t dow_set(int64_t ms, int64_t v)
{
    return ms + (v - get_dow(ms)) * DAY;
}

static int field_set(const pctx *c, field f, int64_t ms, int64_t v, int64_t *out)
{
    int64_t y, unit = 0, get = 0;
    int m, d;
    switch (f) {
    case F_ERA:
        ICD_TRY(check(c, v, f, 0, 1));
        y = get_year(ms);
        *out = (y <= 0 ? 0 : 1) == v ? ms : set_year(ms, -y);
        return 0;
    case F_CENTURY: { /* DividedDateTimeField over the ISO year of era (|year|) */
        ICD_TRY(check(c, v, f, 0, DR_MAX_YEAR / 100));
        y = get_year(ms);
        int64_t yoe = v * 100 + (y < 0 ? -y : y) % 100;
        ICD_TRY(check(c, yoe, F_YOE, 0, DR_MAX_YEAR));
        return year_set(c, ms, y < 0 ? -yoe : yoe, out);
    }
    case F_YOE:
        ICD_TRY(check(c, v, f, 1, DR_MAX_YEAR));
        return year_set(c, ms, get_year(ms) <= 0 ? 1 - v : v, out);
    case F_YEAR:
        return year_set(c, ms, v, out);
    case F_WEEKYEAR: { /* BasicWeekyearDateTimeField.set */
        ICD_TRY(check(c, v < 0 ? -v : v, f, DR_MIN_YEAR, DR_MAX_YEAR));
        int64_t this_wy = get_weekyear(ms);
        if (this_wy == v) {
            *out = ms;
            return 0;
        }
        int64_t dow = get_dow(ms), from = weeks_in_year(this_wy), to = weeks_in_year(v);
        int64_t max_weeks = to < from ? to : from, week = week_of(ms);
        if (week > max_weeks) week = max_weeks;
        int64_t w = set_year(ms, v), wy = get_weekyear(w);
        if (wy < v)
            w += WEEK;
        else if (wy > v)
            w -= WEEK;
        w += (week - week_of(w)) * WEEK;
        *out = dow_set(w, dow);
        return 0;
    }
    case F_MONTH: {
        ICD_TRY(check(c, v, f, 1, 12));
        civil(ms, &y, &m, &d);
        int64_t dom = d, max = days_in_month(y, (int)v);
        if (dom > max) dom = max;
        *out = icd_days_from_civil(y, (int)v, (int)dom) * DAY + icd_floormod(ms, DAY);
        return 0;
    }
    case F_WEEK: {
        int64_t max = v > 52 ? weeks_in_year(get_weekyear(ms)) : 52;
        ICD_TRY(check(c, v, f, 1, max));
        *out = ms + (v - week_of(ms)) * WEEK;
        return 0;
    }
    case F_DOY: {
        y = get_year(ms);
        int64_t max = (v > 365 || v < 1) ? (leap(y) ? 366 : 365) : 365;
        ICD_TRY(check(c, v, f, 1, max));
        *out = ms + (v - get_doy(ms, y)) * DAY;
        return 0;
    }
    case F_DOM: {
        civil(ms, &y, &m, &d);
        int64_t max = (v > 28 || v < 1) ? days_in_month(y, m) : 28;
        ICD_TRY(check(c, v, f, 1, max));
        *out = ms + (v - d) * DAY;
        return 0;
    }
    case F_DOW:
        ICD_TRY(check(c, v, f, 1, 7));
        *out = dow_set(ms, v);
        return 0;
    case F_CLOCKDAY: /* ZeroIsMaxDateTimeField over hourOfDay */
        ICD_TRY(check(c, v, f, 1, 24));
        return field_set(c, F_HOUR, ms, v == 24 ? 0 : v, out);
    case F_CLOCK12: /* ZeroIsMaxDateTimeField over hourOfHalfday */
        ICD_TRY(check(c, v, f, 1, 12));
        return field_set(c, F_HOUR12, ms, v == 12 ? 0 : v, out);
    case F_HALFDAY:
        unit = 12 * 3600000LL, get = 2;
        break;
    case F_HOUR:
        unit = 3600000LL, get = 24;
        break;
    case F_HOUR12:
        unit = 3600000LL, get = 12;
        break;
    case F_MINUTE:
        unit = 60000, get = 60;
        break;
    case F_SECOND:
        unit = 1000, get = 60;
        break;
    case F_MILLIS:
        unit = 1, get = 1000;
        break;
    }
    /* PreciseDateTimeField: value = (ms / unit) mod range */
    ICD_TRY(check(c, v, f, 0, get - 1));
    int64_t cur = icd_floormod(icd_floordiv(ms, unit), get);
    *out = ms + (v - cur) * unit;
    return 0;
}

static int64_t field_floor(field f, int64_t ms)
{
    int64_t y;
    int m, d;
    switch (f) {
    case F_ERA:
        return get_year(ms) <= 0 ? INT64_MIN : set_year(0, 1);
    case F_CENTURY: {
        y = get_year(ms);
        int64_t a = y < 0 ? -y : y;
        a = a / 100 * 100;
        return year_ms(y < 0 ? -a : a);
    }
    case F_YOE:
    case F_YEAR:
        return year_ms(get_year(ms));
    case F_WEEKYEAR: {
        int64_t w = floor_to(ms + 3 * DAY, WEEK) - 3 * DAY, wow = week_of(w);
        return wow > 1 ? w - WEEK * (wow - 1) : w;
    }
    case F_MONTH:
        civil(ms, &y, &m, &d);
        return icd_days_from_civil(y, m, 1) * DAY;
    case F_WEEK:
        return floor_to(ms + 3 * DAY, WEEK) - 3 * DAY;
    case F_DOY:
    case F_DOM:
    case F_DOW:
        return floor_to(ms, DAY);
    case F_HALFDAY:
        return floor_to(ms, 12 * 3600000LL);
    case F_HOUR:
    case F_CLOCKDAY:
    case F_HOUR12:
    case F_CLOCK12:
        return floor_to(ms, 3600000LL);
    case F_MINUTE:
        return floor_to(ms, 60000);
    case F_SECOND:
        return floor_to(ms, 1000);
    case F_MILLIS:
        return ms;
    }
    return ms;
}

/* ---- compile -------------------------------------------------------------------------------- */

static int load_zone_ids(dr_joda_pattern *p, icd_error *err)
{
    ICD_TRY(dr_tz_list_ids(&p->ids, &p->nids, err));
    bool utc = false;
    for (size_t i = 0; i < p->nids; i++)
        utc |= !strcmp(p->ids[i], "UTC");
    if (!utc) { /* Joda always knows UTC */
        char **nv = realloc(p->ids, (p->nids + 1) * sizeof *nv);
        if (!nv) return icd_fail_nomem(err);
        p->ids = nv;
        size_t at = 0;
        while (at < p->nids && strcmp(p->ids[at], "UTC") < 0)
            at++;
        memmove(p->ids + at + 1, p->ids + at, (p->nids - at) * sizeof *nv);
        if (!(p->ids[at] = strdup("UTC"))) return icd_fail_nomem(err);
        p->nids++;
    }
    p->zones = calloc(p->nids, sizeof *p->zones);
    if (!p->zones) return icd_fail_nomem(err);
    for (size_t i = 0; i < p->nids; i++) {
        const char *id = p->ids[i];
        size_t len = strlen(id);
        const char *sl = strchr(id, '/');
        if (len > p->id_max_len) p->id_max_len = len;
        if (sl && (size_t)(sl - id) + 1 > p->id_max_prefix)
            p->id_max_prefix = (size_t)(sl - id) + 1;
    }
    return 0; /* the zones' rules are loaded when a value first names them (zone_at) */
}

/* The rules of zone id k, loaded on first use (about 600 ids: loading them all made every
 * pattern with ZZZ cost 0.15 s to compile). Parsing threads may race: the first stored
 * wins, the others free theirs. NULL when the system's file cannot be read. */
static const dr_tz *zone_at(const dr_joda_pattern *p, size_t k)
{
    dr_tz *z = __atomic_load_n(&p->zones[k], __ATOMIC_ACQUIRE);
    if (z) return z;
    icd_error e;
    icd_error_clear(&e);
    const char *id = p->ids[k];
    if (!strcmp(id, "UTC") ? dr_tz_fixed(&z, 0, &e) : dr_tz_load(&z, id, &e)) return NULL;
    dr_tz *expected = NULL;
    if (!__atomic_compare_exchange_n(&p->zones[k], &expected, z, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        dr_tz_free(z);
        return expected;
    }
    return z;
}

int dr_joda_compile(dr_joda_pattern **out, const char *pat, int64_t now_ms, icd_error *err)
{
    *out = NULL;
    dr_joda_pattern *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    p->pivot = get_year(now_ms) - 30;
    p->wpivot = get_weekyear(now_ms) - 30;
    size_t cap = 0, i = 0, plen = strlen(pat);
    bool zone_ids = false, zone_names = false;
    int rc = 0;
    if (plen == 0)
        rc = icd_fail(err, ICD_EINVALID, NULL, -1,
                      "Unable to parse timestamps with format []: empty pattern");
    while (rc == 0 && i < plen) {
        unsigned char c = (unsigned char)pat[i];
        if (c == '\'') {
            /* quoted literal; '' is a single quote, inside or outside quotes */
            if (pat[i + 1] == '\'') {
                rc = push_lit(p, &cap, "'", 1, err);
                i += 2;
                continue;
            }
            i++;
            for (;;) {
                if (i >= plen) {
                    rc = icd_fail(err, ICD_EINVALID, NULL, -1,
                                  "Unable to parse timestamps with format [%s]: unterminated quote",
                                  pat);
                    break;
                }
                if (pat[i] == '\'') {
                    if (pat[i + 1] == '\'') {
                        rc = push_lit(p, &cap, "'", 1, err);
                        i += 2;
                        if (rc < 0) break;
                        continue;
                    }
                    i++;
                    break;
                }
                rc = push_lit(p, &cap, pat + i, 1, err);
                i++;
                if (rc < 0) break;
            }
            continue;
        }
        if (!is_letter(c)) {
            rc = push_lit(p, &cap, pat + i, 1, err);
            i++;
            continue;
        }
        size_t len = 1;
        while (pat[i + len] == (char)c)
            len++;
        bool next_num = next_is_numeric(pat, i + len);
        i += len;
        int il = (int)len;
        tok t = {.kind = T_NUM};
#define NUM(F, MAXD) (t.f = (F), t.maxd = il > (MAXD) ? il : (MAXD))
        switch (c) {
        case 'G':
            t.kind = T_TEXT, t.f = F_ERA;
            break;
        case 'C':
            t.f = F_CENTURY, t.maxd = il;
            break;
        case 'x':
        case 'y':
        case 'Y':
            t.f = c == 'x' ? F_WEEKYEAR : c == 'y' ? F_YEAR : F_YOE;
            if (len == 2) {
                t.kind = T_TWO;
                t.f = c == 'x' ? F_WEEKYEAR : F_YEAR;
                t.lenient = !next_num;
            } else {
                t.signed_ = c != 'Y';
                t.maxd = next_num ? il : 9;
                if (t.maxd < il) t.maxd = il;
            }
            break;
        case 'M':
            if (len >= 3)
                t.kind = T_TEXT, t.f = F_MONTH;
            else
                NUM(F_MONTH, 2);
            break;
        case 'd':
            NUM(F_DOM, 2);
            break;
        case 'a':
            t.kind = T_TEXT, t.f = F_HALFDAY;
            break;
        case 'h':
            NUM(F_CLOCK12, 2);
            break;
        case 'H':
            NUM(F_HOUR, 2);
            break;
        case 'k':
            NUM(F_CLOCKDAY, 2);
            break;
        case 'K':
            NUM(F_HOUR12, 2);
            break;
        case 'm':
            NUM(F_MINUTE, 2);
            break;
        case 's':
            NUM(F_SECOND, 2);
            break;
        case 'S':
            t.kind = T_FRAC, t.f = F_MILLIS, t.maxd = il > 18 ? 18 : il;
            break;
        case 'e':
            NUM(F_DOW, 1);
            break;
        case 'E':
            t.kind = T_TEXT, t.f = F_DOW;
            break;
        case 'D':
            NUM(F_DOY, 3);
            break;
        case 'w':
            NUM(F_WEEK, 2);
            break;
        case 'z':
            t.kind = len >= 4 ? T_NOPARSE : T_ZONE_NAME;
            zone_names |= len < 4;
            p->no_parser |= len >= 4;
            break;
        case 'Z':
            t.kind = len >= 3 ? T_ZONE_ID : T_OFFSET;
            zone_ids |= len >= 3;
            break;
        default:
            rc = icd_fail(
                err, ICD_EINVALID, NULL, -1,
                "Unable to parse timestamps with format [%s]: Illegal pattern component: %.*s", pat,
                (int)len, pat + i - len);
            break;
        }
#undef NUM
        if (rc == 0) rc = push(p, &cap, t, err);
    }
    if (rc == 0 && zone_ids && !p->no_parser) rc = load_zone_ids(p, err);
    if (rc == 0 && zone_names && !p->no_parser) {
        static const char *const names[4] = {"America/New_York", "America/Chicago",
                                             "America/Denver", "America/Los_Angeles"};
        for (int k = 0; rc == 0 && k < 4; k++)
            rc = dr_tz_load(&p->short_zones[k], names[k], err);
        if (rc == 0) rc = dr_tz_fixed(&p->utc, 0, err);
    }
    if (rc < 0) {
        dr_joda_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* ---- parsing ---------------------------------------------------------------------------- */

#define MAX_SAVED 64

typedef struct saved_field {
    field f;
    int64_t v;
} saved_field;

typedef struct bucket {
    saved_field saved[MAX_SAVED + 1];
    int n;
    bool has_offset;
    int64_t offset_ms;
    const dr_tz *zone;
} bucket;

static int bad(const pctx *c, size_t at)
{
    int shown = c->n > SHOW_MAX ? SHOW_MAX : (int)c->n;
    if (at >= c->n)
        return icd_fail(c->err, ICD_EINVALID, NULL, -1, "Invalid format: \"%.*s\" is too short",
                        shown, c->s);
    int rest = (int)(c->n - at) > SHOW_MAX ? SHOW_MAX : (int)(c->n - at);
    return icd_fail(c->err, ICD_EINVALID, NULL, -1,
                    "Invalid format: \"%.*s\" is malformed at \"%.*s\"", shown, c->s, rest,
                    c->s + at);
}

static int save(bucket *b, const pctx *c, field f, int64_t v)
{
    if (b->n >= MAX_SAVED)
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1, "too many fields in the pattern");
    b->saved[b->n].f = f;
    b->saved[b->n].v = v;
    b->n++;
    return 0;
}

/* Joda's NumberFormatter.parseInto: an optional sign (signed fields), 1..maxd digits. */
static int number(dr_scan *sc, const pctx *c, int maxd, bool is_signed, int64_t *v)
{
    size_t at = sc->i;
    size_t rem = sc->n - sc->i;
    size_t limit = (size_t)maxd < rem ? (size_t)maxd : rem;
    bool neg = false;
    int p = dr_sc_peek(sc);
    if (is_signed && (p == '-' || p == '+') && 1 < limit &&
        dr_is_digit((unsigned char)sc->s[sc->i + 1])) {
        neg = p == '-';
        sc->i++;
        limit = limit + 1 < rem ? limit + 1 : rem;
        limit--; /* digits after the sign */
    }
    int64_t x = 0;
    size_t k = 0;
    while (k < limit && dr_is_digit(dr_sc_peek(sc))) {
        if (x <= INT32_MAX) x = x * 10 + (sc->s[sc->i] - '0');
        sc->i++;
        k++;
    }
    if (k == 0) {
        sc->i = at;
        return bad(c, at);
    }
    if (x > INT32_MAX) /* Integer.parseInt overflows */
        return bad(c, at);
    *v = neg ? -x : x;
    return 0;
}

/* TextField.parseInto: the longest of the short and full names, as written, all lower
 * case or all upper case; returns the index. */
static int text_match(dr_scan *sc, const pctx *c, const char *const *names, int count,
                      bool full_names, int *idx)
{
    size_t best = 0;
    for (int k = 0; k < count; k++) {
        size_t full = strlen(names[k]);
        for (int form = 0; form < (full_names ? 2 : 1); form++) {
            size_t len = form == 0 ? full : 3;
            if (sc->i + len > sc->n || len <= best) continue;
            const char *t = sc->s + sc->i;
            bool same = true, lower = true, upper = true;
            for (size_t j = 0; j < len; j++) {
                char w = names[k][j];
                char lw = (char)dr_lower((unsigned char)w);
                char uw = (w >= 'a' && w <= 'z') ? (char)(w - 32) : w;
                same &= t[j] == w;
                lower &= t[j] == lw;
                upper &= t[j] == uw;
            }
            if (same || lower || upper) {
                best = len;
                *idx = k;
            }
        }
    }
    if (best == 0) return bad(c, sc->i);
    sc->i += best;
    return 0;
}

static int era_text(dr_scan *sc, const pctx *c, int64_t *v)
{
    /* "BC"/"AD" as written, lower or upper, and English's "BCE"/"CE" */
    static const struct {
        const char *s;
        int v;
    } eras[] = {{"BCE", 0}, {"bce", 0}, {"BC", 0}, {"bc", 0},
                {"CE", 1},  {"ce", 1},  {"AD", 1}, {"ad", 1}};
    for (size_t k = 0; k < sizeof eras / sizeof eras[0]; k++) {
        size_t len = strlen(eras[k].s);
        if (sc->i + len <= sc->n && memcmp(sc->s + sc->i, eras[k].s, len) == 0) {
            sc->i += len;
            *v = eras[k].v;
            return 0;
        }
    }
    return bad(c, sc->i);
}

static int text_field(dr_scan *sc, const pctx *c, field f, int64_t *v)
{
    int idx = 0;
    switch (f) {
    case F_ERA:
        return era_text(sc, c, v);
    case F_MONTH:
        ICD_TRY(text_match(sc, c, month_names, 12, true, &idx));
        *v = idx + 1;
        return 0;
    case F_DOW:
        ICD_TRY(text_match(sc, c, day_names, 7, true, &idx));
        *v = idx + 1;
        return 0;
    default: {
        static const char *const ampm[2] = {"AM", "PM"};
        ICD_TRY(text_match(sc, c, ampm, 2, false, &idx));
        *v = idx;
        return 0;
    }
    }
}

/* Exact match of `s[0..n)` in the sorted ids. */
static ptrdiff_t find_id(const dr_joda_pattern *p, const char *s, size_t n)
{
    size_t lo = 0, hi = p->nids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strncmp(p->ids[mid], s, n);
        if (r == 0 && p->ids[mid][n] != '\0') r = 1;
        if (r == 0) return (ptrdiff_t)mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* DateTimeFormatterBuilder.TimeZoneId: when a '/' occurs within the longest id prefix,
 * the longest id with that prefix the text starts with; otherwise the longest id without
 * a '/'. Case-sensitive. */
static int zone_id(dr_scan *sc, const pctx *c, const dr_joda_pattern *p, const dr_tz **zone)
{
    size_t pos = sc->i, rem = sc->n - pos;
    size_t limit = p->id_max_prefix < rem ? p->id_max_prefix : rem;
    bool slash = memchr(sc->s + pos, '/', limit) != NULL;
    size_t maxl = p->id_max_len < rem ? p->id_max_len : rem;
    for (size_t l = maxl; l > 0; l--) {
        bool has = memchr(sc->s + pos, '/', l) != NULL;
        if (has != slash) continue;
        ptrdiff_t k = find_id(p, sc->s + pos, l);
        if (k >= 0) {
            const dr_tz *z = zone_at(p, (size_t)k);
            if (!z) return bad(c, pos);
            sc->i += l;
            *zone = z;
            return 0;
        }
    }
    return bad(c, pos);
}

/* TimeZoneName with DateTimeUtils.getDefaultTimeZoneNames(): UT, UTC, GMT and the four
 * US zones' standard and daylight abbreviations (each maps to the region's rules). */
static int zone_name(dr_scan *sc, const pctx *c, const dr_joda_pattern *p, const dr_tz **zone)
{
    static const struct {
        const char *s;
        int z; /* -1 UTC, else short_zones index */
    } names[] = {{"UTC", -1}, {"UT", -1}, {"GMT", -1}, {"EST", 0}, {"EDT", 0}, {"CST", 1},
                 {"CDT", 1},  {"MST", 2}, {"MDT", 2},  {"PST", 3}, {"PDT", 3}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t len = strlen(names[k].s);
        if (sc->i + len <= sc->n && memcmp(sc->s + sc->i, names[k].s, len) == 0) {
            sc->i += len;
            *zone = names[k].z < 0 ? p->utc : p->short_zones[names[k].z];
            return 0;
        }
    }
    return bad(c, sc->i);
}

/* "Z", or +hh[[:]mm] (Joda's TimeZoneOffset parser). */
static int offset(dr_scan *sc, const pctx *c, int64_t *off)
{
    int p = dr_sc_peek(sc);
    if (p == 'Z' || p == 'z') {
        sc->i++;
        *off = 0;
        return 0;
    }
    if (p != '+' && p != '-') return bad(c, sc->i);
    bool neg = p == '-';
    sc->i++;
    size_t at = sc->i;
    int64_t h, m = 0;
    if (dr_sc_count_digits(sc) < 2) return bad(c, at);
    dr_sc_digits(sc, 2, &h);
    if (h > 23) return bad(c, at);
    size_t save_i = sc->i;
    bool colon = dr_sc_eat(sc, ':');
    if (dr_sc_count_digits(sc) >= 2) {
        dr_sc_digits(sc, 2, &m);
        if (m > 59) return bad(c, save_i);
    } else if (colon) {
        return bad(c, sc->i);
    } else {
        sc->i = save_i;
    }
    *off = (h * 60 + m) * 60000 * (neg ? -1 : 1);
    return 0;
}

static int two_digit_year(dr_scan *sc, const pctx *c, const tok *t, int64_t pivot, int64_t *year)
{
    size_t at = sc->i;
    if (t->lenient) {
        dr_scan probe = *sc;
        int p = dr_sc_peek(&probe);
        bool sign = p == '-' || p == '+';
        if (sign) probe.i++;
        size_t nd = dr_sc_count_digits(&probe);
        if (nd == 0) return bad(c, at);
        if (sign || nd != 2) {
            int64_t v;
            if (nd > 9) return bad(c, at);
            dr_sc_digits(&probe, 9, &v);
            *year = p == '-' ? -v : v;
            *sc = probe;
            return 0;
        }
    }
    if (dr_sc_count_digits(sc) < 2) return bad(c, at);
    int64_t v;
    dr_sc_digits(sc, 2, &v);
    int64_t low = pivot - 50;
    int64_t tt = low >= 0 ? low % 100 : 99 + ((low + 1) % 100);
    *year = v + low + (v < tt ? 100 : 0) - tt;
    return 0;
}

/* Fraction of a second (Joda's Fraction parser): up to maxd digits, millis truncated. */
static int fraction(dr_scan *sc, const pctx *c, int maxd, int64_t *ms)
{
    size_t at = sc->i;
    int64_t v = 0, unit = 10000;
    int k = 0;
    while (k < maxd && dr_is_digit(dr_sc_peek(sc))) {
        unit /= 10;
        v += (sc->s[sc->i] - '0') * unit;
        sc->i++;
        k++;
    }
    if (k == 0) return bad(c, at);
    *ms = v / 10;
    return 0;
}

static int match_token(dr_scan *sc, const pctx *c, const dr_joda_pattern *p, const tok *t,
                       bucket *b)
{
    int64_t v = 0;
    switch (t->kind) {
    case T_LIT:
        for (size_t k = 0; k < t->lit_len; k++)
            if (!dr_sc_eat(sc, (unsigned char)t->lit[k])) return bad(c, sc->i);
        return 0;
    case T_NUM:
        ICD_TRY(number(sc, c, t->maxd, t->signed_, &v));
        return save(b, c, t->f, v);
    case T_TWO:
        ICD_TRY(two_digit_year(sc, c, t, t->f == F_WEEKYEAR ? p->wpivot : p->pivot, &v));
        return save(b, c, t->f, v);
    case T_TEXT:
        ICD_TRY(text_field(sc, c, t->f, &v));
        return save(b, c, t->f, v);
    case T_FRAC:
        ICD_TRY(fraction(sc, c, t->maxd, &v));
        return save(b, c, F_MILLIS, v);
    case T_OFFSET:
        b->has_offset = true;
        return offset(sc, c, &b->offset_ms);
    case T_ZONE_ID:
        return zone_id(sc, c, p, &b->zone);
    case T_ZONE_NAME:
        return zone_name(sc, c, p, &b->zone);
    case T_NOPARSE:
        break;
    }
    return icd_fail(c->err, ICD_EINVALID, NULL, -1, "Parsing not supported");
}

static int cmp_saved(field a, field b)
{
    if (FINFO[a].range != FINFO[b].range) return FINFO[a].range < FINFO[b].range ? -1 : 1;
    if (FINFO[a].dur != FINFO[b].dur) return FINFO[a].dur < FINFO[b].dur ? -1 : 1;
    return 0;
}

static void sort_saved(bucket *b)
{
    for (int i = 1; i < b->n; i++)
        for (int j = i; j > 0 && cmp_saved(b->saved[j - 1].f, b->saved[j].f) > 0; j--) {
            saved_field t = b->saved[j];
            b->saved[j] = b->saved[j - 1];
            b->saved[j - 1] = t;
        }
}

/* DateTimeParserBucket.computeMillis(true, text) on the ISO chronology in UTC. */
static int compute(bucket *b, const pctx *c, int64_t *out)
{
    sort_saved(b);
    if (b->n > 0) {
        int d = FINFO[b->saved[0].f].dur;
        if (d >= U_MONTHS && d <= U_DAYS) { /* the formatter's default year */
            b->saved[b->n].f = F_YEAR;
            b->saved[b->n].v = 2000;
            b->n++;
            sort_saved(b);
        }
    }
    int64_t ms = 0;
    for (int i = 0; i < b->n; i++) {
        ICD_TRY(field_set(c, b->saved[i].f, ms, b->saved[i].v, &ms));
        ms = field_floor(b->saved[i].f, ms);
    }
    for (int i = 0; i < b->n; i++) {
        ICD_TRY(field_set(c, b->saved[i].f, ms, b->saved[i].v, &ms));
        if (i == b->n - 1) ms = field_floor(b->saved[i].f, ms);
    }
    if (b->has_offset) {
        if (__builtin_sub_overflow(ms, b->offset_ms, &ms)) goto range;
    } else if (b->zone) {
        int64_t off = dr_tz_offset_from_local(b->zone, ms), utc;
        if (__builtin_sub_overflow(ms, off, &utc)) goto range;
        if (off != dr_tz_offset(b->zone, utc)) {
            int shown = c->n > SHOW_MAX ? SHOW_MAX : (int)c->n;
            return icd_fail(c->err, ICD_EINVALID, NULL, -1,
                            "Cannot parse \"%.*s\": Illegal instant due to time zone offset "
                            "transition",
                            shown, c->s);
        }
        ms = utc;
    }
    *out = ms;
    return 0;
range:
    return icd_fail(c->err, ICD_EINVALID, NULL, -1, "Instant out of range: \"%.*s\"",
                    c->n > SHOW_MAX ? SHOW_MAX : (int)c->n, c->s);
}

int dr_joda_parse(const dr_joda_pattern *p, const char *s, size_t n, int64_t *out_ms,
                  icd_error *err)
{
    pctx c = {s, n, err};
    if (p->no_parser) return icd_fail(err, ICD_EINVALID, NULL, -1, "Parsing not supported");
    dr_scan sc = {s, n, 0};
    bucket b;
    b.n = 0;
    b.has_offset = false;
    b.offset_ms = 0;
    b.zone = NULL;
    for (size_t k = 0; k < p->n; k++)
        ICD_TRY(match_token(&sc, &c, p, &p->toks[k], &b));
    if (!dr_sc_end(&sc)) return bad(&c, sc.i);
    return compute(&b, &c, out_ms);
}
