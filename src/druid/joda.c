/*
 * Joda-Time DateTimeFormat patterns for Druid timestampSpec custom formats: the pattern is
 * compiled once into a token list (dr_joda_compile), then each row's timestamp string is
 * matched against it (dr_joda_parse) with Joda's parsing rules: numbers are lenient on
 * their digit count up to the field's maximum (a year followed by another number is fixed
 * width), month/day names match case-insensitively in their short or full English form,
 * literals match case-insensitively, the whole input must be consumed, and a value without
 * an offset is UTC (Druid wraps every formatter with withZoneUTC).
 */
#include "druid/joda.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "druid/textscan.h"
#include "druid/timestamp.h"
#include "druid/zoneids.h"

#define SHOW_MAX 200

typedef enum tok_kind {
    T_LIT,
    T_YEAR,     /* y (signed) / Y (year of era) */
    T_YEAR2,    /* yy */
    T_MONTH,    /* M, MM */
    T_MONTH_TX, /* MMM, MMMM */
    T_DAY,      /* d */
    T_DOY,      /* D */
    T_HOUR,     /* H 0-23 */
    T_HOUR_K,   /* k 1-24 */
    T_CLOCK12,  /* h 1-12 */
    T_HOUR12,   /* K 0-11 */
    T_HALFDAY,  /* a */
    T_MINUTE,   /* m */
    T_SECOND,   /* s */
    T_FRAC,     /* S */
    T_DOW_TX,   /* E */
    T_DOW_NUM,  /* e */
    T_OFFSET,   /* Z, ZZ */
    T_ZONE_ID   /* ZZZ */
} tok_kind;

typedef struct tok {
    tok_kind kind;
    int maxd;     /* numeric fields: most digits parsed */
    bool signed_; /* T_YEAR from 'y' */
    bool lenient; /* T_YEAR2: more or fewer than two digits read as a full year */
    char *lit;    /* T_LIT */
    size_t lit_len;
} tok;

struct dr_joda_pattern {
    tok *toks;
    size_t n;
    int64_t pivot;     /* two-digit-year pivot */
    bool date_no_year; /* month/day fields but no year field */
};

static const char *month_names[12] = {"January",   "February", "March",    "April",
                                      "May",       "June",     "July",     "August",
                                      "September", "October",  "November", "December"};
static const char *day_names[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                   "Friday", "Saturday", "Sunday"};

void dr_joda_free(dr_joda_pattern *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++)
        free(p->toks[i].lit);
    free(p->toks);
    free(p);
}

static bool is_letter(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_numeric_letter(char c, size_t len)
{
    switch (c) {
    case 'C':
    case 'Y':
    case 'x':
    case 'w':
    case 'y':
    case 'e':
    case 'D':
    case 'd':
    case 'h':
    case 'H':
    case 'k':
    case 'K':
    case 'm':
    case 's':
    case 'S':
        return true;
    case 'M':
        return len <= 2;
    default:
        return false;
    }
}

static int push(dr_joda_pattern *p, size_t *cap, tok t, icd_error *err)
{
    if (p->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        tok *nt = realloc(p->toks, nc * sizeof *nt);
        if (!nt) {
            free(t.lit);
            return icd_fail_nomem(err);
        }
        p->toks = nt;
        *cap = nc;
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
    tok t = {T_LIT, 0, false, false, malloc(n + 1), n};
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

int dr_joda_compile(dr_joda_pattern **out, const char *pat, int64_t now_ms, icd_error *err)
{
    *out = NULL;
    dr_joda_pattern *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    int64_t days, tod, y;
    int mo, d;
    dr_split_ms(now_ms, &days, &tod);
    icd_civil_from_days(days, &y, &mo, &d);
    p->pivot = y - 30;
    size_t cap = 0, i = 0, plen = strlen(pat);
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
        tok t = {T_LIT, 2, false, false, NULL, 0};
        switch (c) {
        case 'y':
        case 'Y':
            if (len == 2) {
                t.kind = T_YEAR2;
                t.lenient = !next_num;
            } else {
                t.kind = T_YEAR;
                t.signed_ = c == 'y';
                t.maxd = next_num ? (int)len : 9;
            }
            break;
        case 'M':
            t.kind = len >= 3 ? T_MONTH_TX : T_MONTH;
            break;
        case 'd':
            t.kind = T_DAY;
            break;
        case 'D':
            t.kind = T_DOY;
            t.maxd = 3;
            break;
        case 'H':
            t.kind = T_HOUR;
            break;
        case 'k':
            t.kind = T_HOUR_K;
            break;
        case 'h':
            t.kind = T_CLOCK12;
            break;
        case 'K':
            t.kind = T_HOUR12;
            break;
        case 'a':
            t.kind = T_HALFDAY;
            break;
        case 'm':
            t.kind = T_MINUTE;
            break;
        case 's':
            t.kind = T_SECOND;
            break;
        case 'S':
            t.kind = T_FRAC;
            t.maxd = len > 9 ? 9 : (int)len;
            break;
        case 'E':
            t.kind = T_DOW_TX;
            break;
        case 'e':
            t.kind = T_DOW_NUM;
            t.maxd = 1;
            break;
        case 'Z':
            t.kind = len >= 3 ? T_ZONE_ID : T_OFFSET;
            break;
        case 'G':
        case 'C':
        case 'x':
        case 'w':
        case 'z':
            rc = icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                          "timestamp format [%s]: pattern letter '%c' is not supported by icedruid",
                          pat, c);
            break;
        default:
            rc = icd_fail(
                err, ICD_EINVALID, NULL, -1,
                "Unable to parse timestamps with format [%s]: Illegal pattern component: %.*s", pat,
                (int)len, pat + i - len);
            break;
        }
        if (rc == 0) rc = push(p, &cap, t, err);
    }
    if (rc < 0) {
        dr_joda_free(p);
        return rc;
    }
    bool year = false, date = false, dow = false, dom = false;
    for (size_t k = 0; k < p->n; k++) {
        tok_kind kd = p->toks[k].kind;
        year |= kd == T_YEAR || kd == T_YEAR2;
        date |= kd == T_MONTH || kd == T_MONTH_TX || kd == T_DAY || kd == T_DOY || kd == T_DOW_TX ||
                kd == T_DOW_NUM;
        dow |= kd == T_DOW_TX || kd == T_DOW_NUM;
        dom |= kd == T_DAY;
    }
    /* A day of week moves the date within its ISO week only when a day of month fixes that
     * date; without one (E, yyyy E, yyyy-DDD E) Joda's two passes of field set + roundFloor
     * land elsewhere ("E" = Mon gives 2000-12-25), which icedruid does not reproduce. */
    if (dow && !dom) {
        dr_joda_free(p);
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "timestamp format [%s]: a day of week without a day of month is not "
                        "supported by icedruid",
                        pat);
    }
    p->date_no_year = date && !year;
    *out = p;
    return 0;
}

/* ---- parsing ---------------------------------------------------------------------------- */

typedef struct fields {
    int64_t year;
    int64_t month, day, doy, dow;
    int64_t hour, minute, second, millis;
    int halfday; /* -1 unset, 0 AM, 1 PM */
    bool has_doy, has_dow, has_offset;
    int64_t offset_ms;
} fields;

typedef struct pctx {
    const char *s;
    size_t n;
    icd_error *err;
} pctx;

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

static int range(const pctx *c, int64_t v, const char *field, int64_t lo, int64_t hi)
{
    if (v >= lo && v <= hi) return 0;
    int shown = c->n > SHOW_MAX ? SHOW_MAX : (int)c->n;
    return icd_fail(c->err, ICD_EINVALID, NULL, -1,
                    "Cannot parse \"%.*s\": Value %lld for %s must be in the range [%lld,%lld]",
                    shown, c->s, (long long)v, field, (long long)lo, (long long)hi);
}

/* Joda's NumberFormatter.parseInto: an optional sign (signed fields), 1..maxd digits. */
static int number(dr_scan *sc, const pctx *c, int maxd, bool is_signed, int64_t *v)
{
    size_t at = sc->i;
    bool neg = false;
    int p = dr_sc_peek(sc);
    if (is_signed && (p == '-' || p == '+') && sc->i + 1 < sc->n &&
        dr_is_digit((unsigned char)sc->s[sc->i + 1])) {
        neg = p == '-';
        sc->i++;
    }
    if (dr_sc_digits(sc, maxd, v) == 0) return bad(c, at);
    if (neg) *v = -*v;
    return 0;
}

/* Longest case-insensitive match among full and three-letter names; returns the index. */
static int text_match(dr_scan *sc, const pctx *c, const char *const *names, int count, int *idx)
{
    size_t best = 0;
    for (int k = 0; k < count; k++) {
        size_t full = strlen(names[k]);
        for (int form = 0; form < 2; form++) {
            size_t len = form == 0 ? full : 3;
            if (sc->i + len > sc->n || len <= best) continue;
            if (strncasecmp(sc->s + sc->i, names[k], len) == 0) {
                best = len;
                *idx = k;
            }
        }
    }
    if (best == 0) return bad(c, sc->i);
    sc->i += best;
    return 0;
}

static int zone_id(dr_scan *sc, const pctx *c, int64_t *off)
{
    static const char *utc_ids[] = {
        "Etc/Universal", "Etc/Greenwich", "Etc/UTC", "Etc/GMT", "Universal",
        "Greenwich",     "Zulu",          "UTC",     "UCT",     "GMT"};
    for (size_t k = 0; k < sizeof utc_ids / sizeof utc_ids[0]; k++) {
        size_t len = strlen(utc_ids[k]);
        if (sc->i + len <= sc->n && memcmp(sc->s + sc->i, utc_ids[k], len) == 0) {
            sc->i += len;
            *off = 0;
            return 0;
        }
    }
    size_t e = sc->i;
    while (e < sc->n && (is_letter((unsigned char)sc->s[e]) || sc->s[e] == '/' || sc->s[e] == '_'))
        e++;
    /* a zone of the tz database: Druid converts the wall time with its rules, which
     * icedruid does not apply, so the read stops with this error rather than count a
     * parse exception; any other word is not a zone id for Joda either: a parse failure */
    if (e > sc->i && dr_zone_in_tzdata(sc->s + sc->i, e - sc->i))
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                        "time zone id \"%.*s\" is not supported by icedruid (only UTC ids)",
                        (int)(e - sc->i), sc->s + sc->i);
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
    size_t save = sc->i;
    bool colon = dr_sc_eat(sc, ':');
    if (dr_sc_count_digits(sc) >= 2) {
        dr_sc_digits(sc, 2, &m);
        if (m > 59) return bad(c, save);
    } else if (colon) {
        return bad(c, sc->i);
    } else {
        sc->i = save;
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

static int match_token(dr_scan *sc, const pctx *c, const tok *t, int64_t pivot, fields *f)
{
    int idx = 0;
    int64_t v;
    switch (t->kind) {
    case T_LIT:
        for (size_t k = 0; k < t->lit_len; k++)
            if (!dr_sc_eat(sc, (unsigned char)t->lit[k])) return bad(c, sc->i);
        return 0;
    case T_YEAR:
        return number(sc, c, t->maxd, t->signed_, &f->year);
    case T_YEAR2:
        return two_digit_year(sc, c, t, pivot, &f->year);
    case T_MONTH:
        return number(sc, c, 2, false, &f->month);
    case T_MONTH_TX:
        ICD_TRY(text_match(sc, c, month_names, 12, &idx));
        f->month = idx + 1;
        return 0;
    case T_DAY:
        return number(sc, c, 2, false, &f->day);
    case T_DOY:
        f->has_doy = true;
        return number(sc, c, 3, false, &f->doy);
    case T_HOUR:
        ICD_TRY(number(sc, c, 2, false, &v));
        ICD_TRY(range(c, v, "hourOfDay", 0, 23));
        f->hour = v;
        return 0;
    case T_HOUR_K:
        ICD_TRY(number(sc, c, 2, false, &v));
        ICD_TRY(range(c, v, "clockhourOfDay", 1, 24));
        f->hour = v == 24 ? 0 : v;
        return 0;
    case T_CLOCK12:
        ICD_TRY(number(sc, c, 2, false, &v));
        ICD_TRY(range(c, v, "clockhourOfHalfday", 1, 12));
        f->hour = v == 12 ? 0 : v;
        return 0;
    case T_HOUR12:
        ICD_TRY(number(sc, c, 2, false, &v));
        ICD_TRY(range(c, v, "hourOfHalfday", 0, 11));
        f->hour = v;
        return 0;
    case T_HALFDAY: {
        static const char *const ampm[2] = {"AM", "PM"};
        size_t at = sc->i;
        if (sc->i + 2 > sc->n) return bad(c, at);
        for (int k = 0; k < 2; k++)
            if (strncasecmp(sc->s + sc->i, ampm[k], 2) == 0) {
                sc->i += 2;
                f->halfday = k;
                return 0;
            }
        return bad(c, at);
    }
    case T_MINUTE:
        ICD_TRY(number(sc, c, 2, false, &v));
        ICD_TRY(range(c, v, "minuteOfHour", 0, 59));
        f->minute = v;
        return 0;
    case T_SECOND:
        ICD_TRY(number(sc, c, 2, false, &v));
        ICD_TRY(range(c, v, "secondOfMinute", 0, 59));
        f->second = v;
        return 0;
    case T_FRAC: {
        size_t at = sc->i;
        int nd = dr_sc_digits(sc, t->maxd, &v);
        if (nd == 0) return bad(c, at);
        int64_t p10 = 1;
        for (int k = 0; k < nd; k++)
            p10 *= 10;
        f->millis = v * 1000 / p10;
        return 0;
    }
    case T_DOW_TX:
        ICD_TRY(text_match(sc, c, day_names, 7, &idx));
        f->dow = idx + 1;
        f->has_dow = true;
        return 0;
    case T_DOW_NUM:
        ICD_TRY(number(sc, c, 1, false, &v));
        ICD_TRY(range(c, v, "dayOfWeek", 1, 7));
        f->dow = v;
        f->has_dow = true;
        return 0;
    case T_OFFSET:
        f->has_offset = true;
        return offset(sc, c, &f->offset_ms);
    case T_ZONE_ID:
        f->has_offset = true;
        return zone_id(sc, c, &f->offset_ms);
    }
    return icd_fail(c->err, ICD_EINTERNAL, NULL, -1, "unknown pattern token");
}

int dr_joda_parse(const dr_joda_pattern *p, const char *s, size_t n, int64_t *out_ms,
                  icd_error *err)
{
    pctx c = {s, n, err};
    dr_scan sc = {s, n, 0};
    fields f = {.year = 1970, .month = 1, .day = 1, .halfday = -1};
    for (size_t k = 0; k < p->n; k++)
        ICD_TRY(match_token(&sc, &c, &p->toks[k], p->pivot, &f));
    /* DateTimeParserBucket.computeMillis: when the largest field parsed is a month, week or
     * day field (no year), the year is the formatter's default year, 2000 */
    if (p->date_no_year) f.year = 2000;
    if (!dr_sc_end(&sc)) return bad(&c, sc.i);
    ICD_TRY(range(&c, f.year, "year", DR_MIN_YEAR, DR_MAX_YEAR));
    int64_t days;
    if (f.has_doy) {
        bool leap = (f.year % 4 == 0 && f.year % 100 != 0) || f.year % 400 == 0;
        ICD_TRY(range(&c, f.doy, "dayOfYear", 1, leap ? 366 : 365));
        days = icd_days_from_civil(f.year, 1, 1) + f.doy - 1;
    } else {
        ICD_TRY(range(&c, f.month, "monthOfYear", 1, 12));
        int64_t dim = icd_days_from_civil(f.month == 12 ? f.year + 1 : f.year,
                                          f.month == 12 ? 1 : (int)f.month + 1, 1) -
                      icd_days_from_civil(f.year, (int)f.month, 1);
        ICD_TRY(range(&c, f.day, "dayOfMonth", 1, dim));
        days = icd_days_from_civil(f.year, (int)f.month, (int)f.day);
    }
    if (f.has_dow) /* Joda sets the day of week last: same ISO week, that weekday */
        days += f.dow - ((int)icd_floormod(days + 3, 7) + 1);
    int64_t hour = f.hour;
    if (f.halfday >= 0) hour = hour % 12 + 12 * f.halfday;
    int64_t tod = ((hour * 60 + f.minute) * 60 + f.second) * 1000 + f.millis, ms;
    if (__builtin_mul_overflow(days, (int64_t)86400000, &ms) ||
        __builtin_add_overflow(ms, tod, &ms) || __builtin_sub_overflow(ms, f.offset_ms, &ms))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Instant out of range: \"%.*s\"",
                        n > SHOW_MAX ? SHOW_MAX : (int)n, s);
    *out_ms = ms;
    return 0;
}
