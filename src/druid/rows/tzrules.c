/*
 * TZif reader (RFC 8536) and Joda-Time's zone arithmetic over it (tzrules.h).
 *
 * A zone is its explicit transitions (UTC instants in ms, each with the offset that starts
 * there), the offset before the first one (time type 0, the zone's local mean time) and,
 * for instants after the last one, the POSIX TZ string of the v2+ footer ("EST5EDT,M3.2.0,
 * M11.1.0"): standard and daylight offsets with the two yearly rules (Jn, n or Mm.w.d, at
 * a local time that may be negative or beyond 24h). Version-1 files have 32-bit times and
 * no footer. Transitions before the int64-millisecond range (zic's "big bang" at -2^59 s)
 * are folded into the initial offset.
 *
 * Joda semantics reproduced: getOffset (the offset of the last transition at or before the
 * instant), nextTransition (first transition after, or the instant itself when none),
 * previousTransition (last transition at or before, minus one millisecond) and
 * getOffsetFromLocal (DateTimeZone: a wall time in a gap takes the offset after the gap, a
 * wall time in an overlap the earlier offset). Footer transitions that change nothing are
 * skipped, as Joda's recurrence rules never produce them.
 */
#include "druid/rows/tzrules.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/array.h"
#include "base/datetime.h"

#define DAY_MS 86400000LL
#define TZ_MAX_FILE (1u << 20)

typedef struct tz_rule {
    char kind;    /* 'J' (1..365, no Feb 29), 'N' (0..365), 'M' (month.week.day) */
    int day;      /* J / N */
    int m, w, d;  /* M */
    int32_t time; /* seconds of local time, -167h..167h */
} tz_rule;

typedef struct tz_footer {
    bool present;
    bool dst;
    int32_t std_off; /* seconds east of UTC */
    int32_t dst_off;
    tz_rule start, end;
} tz_footer;

struct dr_tz {
    size_t n;
    int64_t *at;  /* ascending UTC ms */
    int64_t *off; /* offset in ms from at[i] on */
    int64_t off0; /* before at[0] */
    tz_footer ft;
};

void dr_tz_free(dr_tz *z)
{
    if (!z) return;
    free(z->at);
    free(z->off);
    free(z);
}

int dr_tz_fixed(dr_tz **out, int64_t offset_ms, icd_error *err)
{
    dr_tz *z = calloc(1, sizeof *z);
    if (!z) return icd_fail_nomem(err);
    z->off0 = offset_ms;
    *out = z;
    return 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const uint8_t *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* ---- POSIX TZ footer -------------------------------------------------------------------- */

typedef struct fscan {
    const char *s;
    size_t n, i;
} fscan;

static int fpeek(const fscan *f)
{
    return f->i < f->n ? (unsigned char)f->s[f->i] : -1;
}

static bool fnum(fscan *f, int maxd, int *v)
{
    int k = 0, x = 0;
    while (k < maxd && fpeek(f) >= '0' && fpeek(f) <= '9') {
        x = x * 10 + (f->s[f->i++] - '0');
        k++;
    }
    *v = x;
    return k > 0;
}

static bool fname(fscan *f)
{
    if (fpeek(f) == '<') {
        f->i++;
        while (fpeek(f) >= 0 && fpeek(f) != '>')
            f->i++;
        if (fpeek(f) != '>') return false;
        f->i++;
        return true;
    }
    size_t st = f->i;
    while ((fpeek(f) >= 'A' && fpeek(f) <= 'Z') || (fpeek(f) >= 'a' && fpeek(f) <= 'z'))
        f->i++;
    return f->i - st >= 1;
}

/* [+-]hh[:mm[:ss]] with hours up to 167 (RFC 8536's extension); seconds. */
static bool ftime(fscan *f, int32_t *out)
{
    bool neg = false;
    if (fpeek(f) == '+' || fpeek(f) == '-') neg = f->s[f->i++] == '-';
    int h, m = 0, s = 0;
    if (!fnum(f, 3, &h) || h > 167) return false;
    if (fpeek(f) == ':') {
        f->i++;
        if (!fnum(f, 2, &m) || m > 59) return false;
        if (fpeek(f) == ':') {
            f->i++;
            if (!fnum(f, 2, &s) || s > 59) return false;
        }
    }
    int32_t v = (h * 60 + m) * 60 + s;
    *out = neg ? -v : v;
    return true;
}

static bool frule(fscan *f, tz_rule *r)
{
    if (fpeek(f) == 'J') {
        f->i++;
        r->kind = 'J';
        if (!fnum(f, 3, &r->day) || r->day < 1 || r->day > 365) return false;
    } else if (fpeek(f) == 'M') {
        f->i++;
        r->kind = 'M';
        if (!fnum(f, 2, &r->m) || r->m < 1 || r->m > 12 || fpeek(f) != '.') return false;
        f->i++;
        if (!fnum(f, 1, &r->w) || r->w < 1 || r->w > 5 || fpeek(f) != '.') return false;
        f->i++;
        if (!fnum(f, 1, &r->d) || r->d > 6) return false;
    } else {
        r->kind = 'N';
        if (!fnum(f, 3, &r->day) || r->day > 365) return false;
    }
    r->time = 7200;
    if (fpeek(f) == '/') {
        f->i++;
        if (!ftime(f, &r->time)) return false;
    }
    return true;
}

static bool parse_footer(const char *s, size_t n, tz_footer *ft)
{
    memset(ft, 0, sizeof *ft);
    if (n == 0) return true; /* no footer rule: the last type stays */
    fscan f = {s, n, 0};
    int32_t o;
    if (!fname(&f) || !ftime(&f, &o)) return false;
    ft->present = true;
    ft->std_off = -o; /* POSIX offsets are positive west of Greenwich */
    if (f.i == f.n) return true;
    if (!fname(&f)) return false;
    ft->dst = true;
    ft->dst_off = ft->std_off + 3600;
    if (fpeek(&f) != ',' && f.i < f.n) {
        if (!ftime(&f, &o)) return false;
        ft->dst_off = -o;
    }
    if (fpeek(&f) != ',') return false; /* zic always writes the rules */
    f.i++;
    if (!frule(&f, &ft->start) || fpeek(&f) != ',') return false;
    f.i++;
    if (!frule(&f, &ft->end)) return false;
    return f.i == f.n;
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since the epoch of the rule's date in year y. */
static int64_t rule_day(const tz_rule *r, int64_t y)
{
    int64_t jan1 = icd_days_from_civil(y, 1, 1);
    if (r->kind == 'J') return jan1 + r->day - 1 + (is_leap(y) && r->day >= 60 ? 1 : 0);
    if (r->kind == 'N') return jan1 + r->day;
    int64_t first = icd_days_from_civil(y, r->m, 1);
    int64_t next =
        r->m == 12 ? icd_days_from_civil(y + 1, 1, 1) : icd_days_from_civil(y, r->m + 1, 1);
    int64_t dow = icd_floormod(first + 4, 7); /* 0 = Sunday; 1970-01-01 was a Thursday */
    int64_t day = first + icd_floormod(r->d - dow, 7) + 7 * (r->w - 1);
    while (day >= next)
        day -= 7;
    return day;
}

/* The footer's two transitions of year y (UTC ms, ascending; at equal instants the end
 * comes first, so that a DST start at the same instant wins). Returns 0 or 2. */
static int footer_year(const tz_footer *ft, int64_t y, int64_t t[2], int64_t off[2])
{
    if (!ft->dst || y < -292275055 || y > 292278994) return 0;
    int64_t s, e;
    if (__builtin_mul_overflow(rule_day(&ft->start, y) * 86400 + ft->start.time - ft->std_off,
                               (int64_t)1000, &s) ||
        __builtin_mul_overflow(rule_day(&ft->end, y) * 86400 + ft->end.time - ft->dst_off,
                               (int64_t)1000, &e))
        return 0;
    if (s < e) {
        t[0] = s, off[0] = ft->dst_off * 1000LL;
        t[1] = e, off[1] = ft->std_off * 1000LL;
    } else {
        t[0] = e, off[0] = ft->std_off * 1000LL;
        t[1] = s, off[1] = ft->dst_off * 1000LL;
    }
    return 2;
}

static int64_t year_of(int64_t ms)
{
    int64_t y;
    int m, d;
    icd_civil_from_days(icd_floordiv(ms, DAY_MS), &y, &m, &d);
    return y;
}

/* ---- parsing ------------------------------------------------------------------------------ */

static int corrupt(icd_error *err, const char *what, const char *why)
{
    return icd_fail(err, ICD_ECORRUPT, what, -1, "not a valid TZif time-zone file: %s", why);
}

int dr_tz_parse(dr_tz **out, const uint8_t *p, size_t len, const char *what, icd_error *err)
{
    *out = NULL;
    if (len < 44 || memcmp(p, "TZif", 4) != 0) return corrupt(err, what, "bad magic");
    int version = p[4];
    size_t pos = 0, tsize = 4;
    for (int pass = 0; pass < 2; pass++) {
        if (len - pos < 44 || memcmp(p + pos, "TZif", 4) != 0)
            return corrupt(err, what, "bad header");
        uint32_t c[6];
        for (int k = 0; k < 6; k++)
            c[k] = be32(p + pos + 20 + 4 * k);
        uint32_t isut = c[0], isstd = c[1], leap = c[2], timecnt = c[3], typecnt = c[4],
                 charcnt = c[5];
        if (typecnt == 0 || typecnt > 256 || charcnt > 65536 || timecnt > (1u << 20) ||
            leap > (1u << 20) || (isut && isut != typecnt) || (isstd && isstd != typecnt))
            return corrupt(err, what, "bad counts");
        size_t body = (size_t)timecnt * (tsize + 1) + (size_t)typecnt * 6 + charcnt +
                      (size_t)leap * (tsize + 4) + isstd + isut;
        size_t start = pos + 44;
        if (len - start < body) return corrupt(err, what, "truncated");
        if (pass == 0 && version >= '2') {
            pos = start + body;
            tsize = 8;
            continue;
        }
        const uint8_t *tt = p + start, *idx = tt + (size_t)timecnt * tsize;
        const uint8_t *types = idx + timecnt;
        dr_tz *z = calloc(1, sizeof *z);
        if (!z) return icd_fail_nomem(err);
        z->at = malloc((timecnt ? timecnt : 1) * sizeof *z->at);
        z->off = malloc((timecnt ? timecnt : 1) * sizeof *z->off);
        if (!z->at || !z->off) {
            dr_tz_free(z);
            return icd_fail_nomem(err);
        }
        int64_t toff[256] = {0}; /* typecnt >= 1 (checked above) */
        for (uint32_t k = 0; k < typecnt; k++) {
            int32_t u = (int32_t)be32(types + 6 * k);
            if (u < -89999 || u > 93599 || types[6 * k + 4] > 1 || types[6 * k + 5] >= charcnt) {
                dr_tz_free(z);
                return corrupt(err, what, "bad local time type");
            }
            toff[k] = (int64_t)u * 1000;
        }
        z->off0 = toff[0];
        int64_t prev = 0;
        for (uint32_t k = 0; k < timecnt; k++) {
            int64_t t = tsize == 8 ? be64(tt + 8 * k) : (int64_t)(int32_t)be32(tt + 4 * k);
            if ((k > 0 && t <= prev) || idx[k] >= typecnt) {
                dr_tz_free(z);
                return corrupt(err, what, "bad transition");
            }
            prev = t;
            if (t < INT64_MIN / 1000 + 1) { /* before any millisecond instant */
                z->off0 = toff[idx[k]];
                continue;
            }
            if (t > INT64_MAX / 1000 - 1) break;
            z->at[z->n] = t * 1000;
            z->off[z->n++] = toff[idx[k]];
        }
        if (tsize == 8) {
            size_t fs = start + body;
            if (fs >= len || p[fs] != '\n') {
                dr_tz_free(z);
                return corrupt(err, what, "missing footer");
            }
            const uint8_t *nl = memchr(p + fs + 1, '\n', len - fs - 1);
            if (!nl || !parse_footer((const char *)p + fs + 1, (size_t)(nl - p) - fs - 1, &z->ft)) {
                dr_tz_free(z);
                return corrupt(err, what, "bad footer");
            }
        }
        *out = z;
        return 0;
    }
    return corrupt(err, what, "bad header");
}

static char tz_dir[1024];

void dr_tz_set_dir(const char *dir)
{
    snprintf(tz_dir, sizeof tz_dir, "%s", dir ? dir : "");
}

const char *dr_tz_dir(void)
{
    return tz_dir[0] ? tz_dir : "/usr/share/zoneinfo";
}

int dr_tz_load(dr_tz **out, const char *id, icd_error *err)
{
    *out = NULL;
    const char *dir = dr_tz_dir();
    char path[1024];
    int pl = snprintf(path, sizeof path, "%s/%s", dir, id);
    if (pl < 0 || (size_t)pl >= sizeof path)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "time zone id too long");
    FILE *f = fopen(path, "rb");
    if (!f) return icd_fail(err, ICD_ENOTFOUND, path, -1, "cannot open the time-zone file");
    uint8_t *buf = malloc(TZ_MAX_FILE);
    if (!buf) {
        fclose(f);
        return icd_fail_nomem(err);
    }
    size_t n = fread(buf, 1, TZ_MAX_FILE, f);
    bool failed = ferror(f) != 0;
    fclose(f);
    int rc = failed ? icd_fail(err, ICD_EIO, path, -1, "cannot read the time-zone file")
                    : dr_tz_parse(out, buf, n, path, err);
    free(buf);
    return rc;
}

/* ---- Joda's zone queries ---------------------------------------------------------------- */

/* The last explicit index with at[i] <= ms, or -1. */
static ptrdiff_t last_at_or_before(const dr_tz *z, int64_t ms)
{
    size_t lo = 0, hi = z->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->at[mid] <= ms)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

static bool in_footer(const dr_tz *z, int64_t ms)
{
    return z->ft.dst && z->n > 0 && ms >= z->at[z->n - 1];
}

int64_t dr_tz_offset(const dr_tz *z, int64_t ms)
{
    ptrdiff_t i = last_at_or_before(z, ms);
    if (i < 0) return z->off0;
    if (!in_footer(z, ms)) return z->off[i];
    /* the latest of: the last explicit transition, footer transitions after it */
    int64_t best_t = z->at[z->n - 1], best = z->off[z->n - 1];
    int64_t y = year_of(ms);
    for (int64_t yy = y - 1; yy <= y + 1; yy++) {
        int64_t t[2], o[2];
        int k = footer_year(&z->ft, yy, t, o);
        for (int j = 0; j < k; j++)
            if (t[j] > z->at[z->n - 1] && t[j] <= ms && t[j] >= best_t) {
                best_t = t[j];
                best = o[j];
            }
    }
    return best;
}

static bool changes(const dr_tz *z, int64_t t)
{
    return dr_tz_offset(z, t - 1) != dr_tz_offset(z, t);
}

int64_t dr_tz_next_transition(const dr_tz *z, int64_t ms)
{
    if (z->n == 0) return ms;
    if (ms < z->at[z->n - 1]) {
        ptrdiff_t i = last_at_or_before(z, ms);
        return z->at[i + 1];
    }
    if (!z->ft.dst) return ms;
    int64_t y = year_of(ms);
    for (int64_t yy = y - 1; yy <= y + 2; yy++) {
        int64_t t[2], o[2];
        int k = footer_year(&z->ft, yy, t, o);
        for (int j = 0; j < k; j++)
            if (t[j] > ms && t[j] > z->at[z->n - 1] && changes(z, t[j])) return t[j];
    }
    return ms;
}

int64_t dr_tz_prev_transition(const dr_tz *z, int64_t ms)
{
    if (in_footer(z, ms)) {
        int64_t y = year_of(ms);
        for (int64_t yy = y + 1; yy >= y - 2; yy--) {
            int64_t t[2], o[2];
            int k = footer_year(&z->ft, yy, t, o);
            for (int j = k - 1; j >= 0; j--)
                if (t[j] <= ms && t[j] > z->at[z->n - 1] && changes(z, t[j])) return t[j] - 1;
        }
    }
    ptrdiff_t i = last_at_or_before(z, ms);
    if (i < 0) return ms;
    return z->at[i] - 1;
}

int64_t dr_tz_offset_from_local(const dr_tz *z, int64_t local)
{
    int64_t off_local = dr_tz_offset(z, local);
    int64_t adjusted = local - off_local;
    int64_t off_adjusted = dr_tz_offset(z, adjusted);
    if (off_local != off_adjusted) {
        if (off_local - off_adjusted < 0) {
            /* a wall time in a gap: on or after the transition */
            int64_t next_local = dr_tz_next_transition(z, adjusted);
            if (next_local == local - off_local) next_local = INT64_MAX;
            int64_t next_adjusted = dr_tz_next_transition(z, local - off_adjusted);
            if (next_adjusted == local - off_adjusted) next_adjusted = INT64_MAX;
            if (next_local != next_adjusted) return off_local;
        }
    } else if (off_local >= 0) {
        int64_t prev = dr_tz_prev_transition(z, adjusted);
        if (prev < adjusted) {
            int64_t off_prev = dr_tz_offset(z, prev);
            int64_t diff = off_prev - off_local; /* offsets are within a day: no overflow */
            if (prev >= adjusted - diff) return off_prev; /* adjusted - prev <= diff */
        }
    }
    return off_adjusted;
}

/* ---- the ids ------------------------------------------------------------------------------ */

typedef struct idlist {
    char **v;
    size_t n, cap;
} idlist;

static int id_push(idlist *l, const char *s, icd_error *err)
{
    if (ICD_ARRAY_RESERVE(l->v, l->cap, l->n + 1, 256)) return icd_fail_nomem(err);
    if (!(l->v[l->n] = strdup(s))) return icd_fail_nomem(err);
    l->n++;
    return 0;
}

static bool tzif_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char m[4];
    bool ok = fread(m, 1, 4, f) == 4 && memcmp(m, "TZif", 4) == 0;
    fclose(f);
    return ok;
}

static int walk(const char *root, const char *rel, int depth, idlist *l, icd_error *err)
{
    char path[1024];
    int pl = snprintf(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel);
    if (pl < 0 || (size_t)pl >= sizeof path || depth > 4) return 0;
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        const char *nm = e->d_name;
        if (nm[0] == '.') continue;
        if (depth == 0 &&
            (!strcmp(nm, "posix") || !strcmp(nm, "right") || !strcmp(nm, "localtime") ||
             !strcmp(nm, "posixrules") || !strcmp(nm, "Factory")))
            continue;
        char sub[512], full[1536];
        int sl = snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", nm);
        if (sl < 0 || (size_t)sl >= sizeof sub) continue;
        snprintf(full, sizeof full, "%s/%s", root, sub);
        struct stat st;
        if (stat(full, &st) != 0) continue;
        if (S_ISDIR(st.st_mode))
            rc = walk(root, sub, depth + 1, l, err);
        else if (S_ISREG(st.st_mode) && tzif_file(full))
            rc = id_push(l, sub, err);
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int dr_tz_list_ids(char ***ids, size_t *n, icd_error *err)
{
    *ids = NULL;
    *n = 0;
    const char *dir = dr_tz_dir();
    idlist l = {0};
    int rc = walk(dir, "", 0, &l, err);
    if (rc) {
        for (size_t i = 0; i < l.n; i++)
            free(l.v[i]);
        free(l.v);
        return rc;
    }
    if (l.n) qsort(l.v, l.n, sizeof *l.v, cmp_str);
    *ids = l.v;
    *n = l.n;
    return 0;
}
