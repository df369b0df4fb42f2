/*
 * Typed Iceberg values (ice_literal): parsing from the JSON single-value serialization
 * (spec Appendix D, used by column defaults), Iceberg ordering, type promotion, and
 * formatting. Manifest bounds, partition tuples and filters (later layers) reuse the same
 * representation, so all value comparisons of the code base go through ice_literal_cmp.
 */
#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "base/datetime.h"
#include "base/jsonw.h"
#include "iceberg/literal.h"

/* ---- decimals ------------------------------------------------------------------------ */

bool ice_decimal_to_i128(const uint8_t *be, size_t n, ice_i128 *out)
{
    if (n == 0) return false;
    uint8_t fill = (be[0] & 0x80) ? 0xFF : 0x00;
    /* Bytes beyond 16 must be pure sign extension. */
    while (n > 16) {
        if (be[0] != fill || ((be[1] & 0x80) != (fill & 0x80))) return false;
        be++;
        n--;
    }
    unsigned __int128 u = (fill == 0xFF) ? ~(unsigned __int128)0 : 0;
    for (size_t i = 0; i < n; i++)
        u = (u << 8) | be[i];
    *out = (ice_i128)u;
    return true;
}

size_t ice_decimal_from_i128(ice_i128 v, uint8_t out[16])
{
    uint8_t tmp[16];
    unsigned __int128 u = (unsigned __int128)v;
    for (int i = 15; i >= 0; i--) {
        tmp[i] = (uint8_t)(u & 0xFF);
        u >>= 8;
    }
    /* Drop leading bytes that only repeat the sign (minimal two's complement). */
    size_t start = 0;
    while (start < 15 && ((tmp[start] == 0x00 && !(tmp[start + 1] & 0x80)) ||
                          (tmp[start] == 0xFF && (tmp[start + 1] & 0x80))))
        start++;
    size_t n = 16 - start;
    memmove(out, tmp + start, n);
    return n;
}

/* 10^38, the first value that no decimal(38, s) can hold. */
static ice_i128 pow10_i128(int k)
{
    ice_i128 v = 1;
    while (k-- > 0)
        v *= 10;
    return v;
}

static int digit_count(ice_i128 v)
{
    unsigned __int128 u = v < 0 ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    int d = 1;
    while (u >= 10) {
        u /= 10;
        d++;
    }
    return d;
}

bool ice_decimal_parse(const char *s, size_t n, int32_t precision, int32_t scale, ice_i128 *out)
{
    const ice_i128 LIMIT = pow10_i128(38);
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    ice_i128 v = 0;
    int digits = 0, frac = 0;
    bool seen_point = false, any = false;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '.' && !seen_point) {
            seen_point = true;
            continue;
        }
        if (!isdigit((unsigned char)c)) break;
        any = true;
        if (seen_point) frac++;
        if (v == 0 && c == '0') {
            continue; /* leading zeros do not count toward the precision */
        }
        if (++digits > 38) return false;
        v = v * 10 + (c - '0');
    }
    if (!any || frac > 1000) return false;
    long exp = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        if (i >= n || !isdigit((unsigned char)s[i])) return false;
        for (; i < n && isdigit((unsigned char)s[i]); i++) {
            exp = exp * 10 + (s[i] - '0');
            if (exp > 1000) return false;
        }
        if (eneg) exp = -exp;
    }
    if (i != n) return false;
    long have = (long)frac - exp; /* the scale the text is written at */
    while (have > scale) {
        if (v % 10 != 0) return false; /* would lose non-zero digits */
        v /= 10;
        have--;
    }
    while (have < scale) {
        if (v != 0 && v >= LIMIT / 10) return false;
        v *= 10;
        have++;
    }
    if (v >= LIMIT) return false;
    if (precision > 0 && v != 0 && digit_count(v) > precision) return false;
    *out = neg ? -v : v;
    return true;
}

/* ---- dates and times ----------------------------------------------------------------- */

static bool read_digits(const char *s, size_t n, size_t *i, size_t min, size_t max, int64_t *out)
{
    size_t start = *i;
    int64_t v = 0;
    while (*i < n && *i - start < max && isdigit((unsigned char)s[*i]))
        v = v * 10 + (s[(*i)++] - '0');
    if (*i - start < min) return false;
    *out = v;
    return true;
}

static int days_in_month(int64_t y, int m)
{
    static const int DAYS[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : DAYS[m - 1];
}

/* [+-]YYYY-MM-DD at s[*i]; years of 4..9 digits. */
static bool parse_date_at(const char *s, size_t n, size_t *i, int64_t *days)
{
    bool neg = false;
    if (*i < n && (s[*i] == '+' || s[*i] == '-')) neg = s[(*i)++] == '-';
    int64_t y, m, d;
    if (!read_digits(s, n, i, 4, 9, &y) || *i >= n || s[(*i)++] != '-' ||
        !read_digits(s, n, i, 2, 2, &m) || *i >= n || s[(*i)++] != '-' ||
        !read_digits(s, n, i, 2, 2, &d))
        return false;
    if (neg) y = -y;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, (int)m)) return false;
    *days = icd_days_from_civil(y, (int)m, (int)d);
    return true;
}

bool ice_parse_date(const char *s, size_t n, int32_t *days)
{
    size_t i = 0;
    int64_t d;
    if (!parse_date_at(s, n, &i, &d) || i != n || d < INT32_MIN || d > INT32_MAX) return false;
    *days = (int32_t)d;
    return true;
}

/* HH:MM[:SS[.fraction]] at s[*i] -> nanoseconds of the day. */
static bool parse_time_at(const char *s, size_t n, size_t *i, int64_t *nanos)
{
    int64_t h, m, sec = 0, frac = 0;
    if (!read_digits(s, n, i, 2, 2, &h) || *i >= n || s[(*i)++] != ':' ||
        !read_digits(s, n, i, 2, 2, &m))
        return false;
    if (*i < n && s[*i] == ':') {
        (*i)++;
        if (!read_digits(s, n, i, 2, 2, &sec)) return false;
        if (*i < n && (s[*i] == '.' || s[*i] == ',')) {
            (*i)++;
            int nd = 0;
            if (*i >= n || !isdigit((unsigned char)s[*i])) return false;
            while (*i < n && isdigit((unsigned char)s[*i])) {
                if (nd < 9) {
                    frac = frac * 10 + (s[*i] - '0');
                    nd++;
                }
                (*i)++;
            }
            while (nd++ < 9)
                frac *= 10;
        }
    }
    if (h > 23 || m > 59 || sec > 59) return false;
    *nanos = ((h * 60 + m) * 60 + sec) * 1000000000LL + frac;
    return true;
}

bool ice_parse_time(const char *s, size_t n, int64_t *nanos_of_day)
{
    size_t i = 0;
    return parse_time_at(s, n, &i, nanos_of_day) && i == n;
}

/* Z | +HH:MM | -HH:MM | +HHMM | +HH at s[*i] -> offset in seconds. */
static bool parse_zone_at(const char *s, size_t n, size_t *i, int64_t *offset)
{
    if (s[*i] == 'Z' || s[*i] == 'z') {
        (*i)++;
        *offset = 0;
        return true;
    }
    bool neg = s[*i] == '-';
    if (!neg && s[*i] != '+') return false;
    (*i)++;
    int64_t h, m = 0;
    if (!read_digits(s, n, i, 2, 2, &h)) return false;
    if (*i < n && s[*i] == ':') (*i)++;
    if (*i < n && !read_digits(s, n, i, 2, 2, &m)) return false;
    if (h > 18 || m > 59) return false;
    *offset = (h * 3600 + m * 60) * (neg ? -1 : 1);
    return true;
}

bool ice_parse_timestamp(const char *s, size_t n, int unit_digits, bool *has_zone, int64_t *out)
{
    int64_t per_sec = unit_digits == 3 ? 1000 : unit_digits == 6 ? 1000000 : 1000000000;
    if (unit_digits != 3 && unit_digits != 6 && unit_digits != 9) return false;
    size_t i = 0;
    int64_t days, nanos, offset = 0;
    if (!parse_date_at(s, n, &i, &days) || i >= n || (s[i] != 'T' && s[i] != 't' && s[i] != ' '))
        return false;
    i++;
    if (!parse_time_at(s, n, &i, &nanos)) return false;
    *has_zone = false;
    if (i < n) {
        if (!parse_zone_at(s, n, &i, &offset) || i != n) return false;
        *has_zone = true;
    }
    int64_t secs, v;
    if (__builtin_mul_overflow(days, (int64_t)86400, &secs) ||
        __builtin_sub_overflow(secs, offset, &secs) || __builtin_mul_overflow(secs, per_sec, &v) ||
        __builtin_add_overflow(v, nanos / (1000000000 / per_sec), &v))
        return false;
    *out = v;
    return true;
}

/* ---- JSON single-value parsing ------------------------------------------------------- */

static int bad_value(icd_error *err, const ice_type *t, const char *why)
{
    icd_buf tb = ICD_BUF_INIT;
    ice_type_format(&tb, t);
    int rc =
        icd_fail(err, ICD_ECORRUPT, NULL, -1, "invalid %s value: %s", tb.data ? tb.data : "?", why);
    icd_buf_free(&tb);
    return rc;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool hex_decode(const char *s, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return n % 2 == 0;
}

static bool uuid_parse(const char *s, size_t n, uint8_t out[16])
{
    if (n != 36) return false;
    size_t o = 0;
    for (size_t i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i++] != '-') return false;
            continue;
        }
        int hi = hexval(s[i]), lo = hexval(s[i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[o++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    return o == 16;
}

static int parse_nested(const json_t *j, const ice_type *t, icd_arena *a, ice_literal *out,
                        icd_error *err)
{
    if (t->kind == ICE_T_STRUCT) {
        if (!json_is_object(j))
            return bad_value(err, t, "expected a JSON object keyed by field id");
        size_t n = json_object_size(j);
        ice_literal *items = n ? icd_arena_calloc(a, n * sizeof *items) : NULL;
        int32_t *ids = n ? icd_arena_calloc(a, n * sizeof *ids) : NULL;
        if (n && (!items || !ids)) return icd_fail_nomem(err);
        size_t k = 0;
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)j, key, val)
        {
            char *end;
            long id = strtol(key, &end, 10);
            const ice_field *f = NULL;
            for (size_t i = 0; *key && !*end && i < t->nfields; i++)
                if (t->fields[i].id == id) f = &t->fields[i];
            if (!f) return bad_value(err, t, "struct value names a field id the struct lacks");
            ICD_TRY(ice_literal_from_json(val, f->type, a, &items[k], err));
            ids[k++] = f->id;
        }
        out->v.nested.items = items;
        out->v.nested.ids = ids;
        out->v.nested.n = n;
        return 0;
    }
    if (t->kind == ICE_T_LIST) {
        if (!json_is_array(j)) return bad_value(err, t, "expected a JSON array");
        size_t n = json_array_size(j);
        ice_literal *items = n ? icd_arena_calloc(a, n * sizeof *items) : NULL;
        if (n && !items) return icd_fail_nomem(err);
        for (size_t i = 0; i < n; i++)
            ICD_TRY(
                ice_literal_from_json(json_array_get(j, i), t->element->type, a, &items[i], err));
        out->v.nested.items = items;
        out->v.nested.n = n;
        return 0;
    }
    /* map: {"keys": [...], "values": [...]} */
    json_t *keys = json_is_object(j) ? json_object_get(j, "keys") : NULL;
    json_t *vals = json_is_object(j) ? json_object_get(j, "values") : NULL;
    if (!json_is_array(keys) || !json_is_array(vals) ||
        json_array_size(keys) != json_array_size(vals))
        return bad_value(err, t, "expected {\"keys\": [...], \"values\": [...]} of equal length");
    size_t n = json_array_size(keys);
    ice_literal *items = n ? icd_arena_calloc(a, 2 * n * sizeof *items) : NULL;
    if (n && !items) return icd_fail_nomem(err);
    for (size_t i = 0; i < n; i++) {
        ICD_TRY(ice_literal_from_json(json_array_get(keys, i), t->key->type, a, &items[i], err));
        ICD_TRY(
            ice_literal_from_json(json_array_get(vals, i), t->value->type, a, &items[n + i], err));
    }
    out->v.nested.items = items;
    out->v.nested.n = n;
    return 0;
}

static int parse_timestamp_value(const char *s, size_t n, const ice_type *t, ice_literal *out,
                                 icd_error *err)
{
    bool want_zone = t->kind == ICE_T_TIMESTAMPTZ || t->kind == ICE_T_TIMESTAMPTZ_NS;
    int unit = (t->kind == ICE_T_TIMESTAMP_NS || t->kind == ICE_T_TIMESTAMPTZ_NS) ? 9 : 6;
    bool has_zone;
    int64_t v;
    if (!ice_parse_timestamp(s, n, unit, &has_zone, &v))
        return bad_value(err, t, "expected an ISO-8601 timestamp");
    if (has_zone != want_zone)
        return bad_value(err, t,
                         want_zone ? "a zone offset is required" : "a zone offset is not allowed");
    out->v.i64 = v;
    return 0;
}

static int parse_string_kind(const json_t *j, const ice_type *t, icd_arena *a, ice_literal *out,
                             icd_error *err)
{
    if (!json_is_string(j)) return bad_value(err, t, "expected a JSON string");
    const char *s = json_string_value(j);
    size_t n = json_string_length(j);
    switch (t->kind) {
    case ICE_T_DATE:
        if (!ice_parse_date(s, n, &out->v.i32)) return bad_value(err, t, "expected YYYY-MM-DD");
        return 0;
    case ICE_T_TIME: {
        int64_t ns;
        if (!ice_parse_time(s, n, &ns)) return bad_value(err, t, "expected HH:MM:SS[.ffffff]");
        out->v.i64 = ns / 1000;
        return 0;
    }
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        return parse_timestamp_value(s, n, t, out, err);
    case ICE_T_DECIMAL: {
        ice_i128 v;
        if (!ice_decimal_parse(s, n, t->precision, t->scale, &v))
            return bad_value(err, t, "decimal text does not fit the type");
        uint8_t *p = icd_arena_alloc(a, 16);
        if (!p) return icd_fail_nomem(err);
        out->v.bytes.len = ice_decimal_from_i128(v, p);
        out->v.bytes.ptr = p;
        out->scale = t->scale;
        return 0;
    }
    case ICE_T_UUID: {
        uint8_t *p = icd_arena_alloc(a, 16);
        if (!p) return icd_fail_nomem(err);
        if (!uuid_parse(s, n, p)) return bad_value(err, t, "expected a 36-character uuid");
        out->v.bytes.ptr = p;
        out->v.bytes.len = 16;
        return 0;
    }
    case ICE_T_FIXED:
    case ICE_T_BINARY: {
        uint8_t *p = icd_arena_alloc(a, n / 2 + 1);
        if (!p) return icd_fail_nomem(err);
        if (!hex_decode(s, n, p)) return bad_value(err, t, "expected a hexadecimal string");
        if (t->kind == ICE_T_FIXED && n / 2 != (size_t)t->length)
            return bad_value(err, t, "length differs from the fixed type's length");
        out->v.bytes.ptr = p;
        out->v.bytes.len = n / 2;
        return 0;
    }
    default: { /* string */
        char *p = icd_arena_strndup(a, s, n);
        if (!p) return icd_fail_nomem(err);
        out->v.bytes.ptr = (const uint8_t *)p;
        out->v.bytes.len = n;
        return 0;
    }
    }
}

int ice_literal_from_json(const json_t *j, const ice_type *t, icd_arena *a, ice_literal *out,
                          icd_error *err)
{
    memset(out, 0, sizeof *out);
    out->kind = t->kind;
    out->scale = t->kind == ICE_T_DECIMAL ? t->scale : 0;
    if (!j || json_is_null(j)) {
        out->is_null = true;
        return 0;
    }
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        if (!json_is_boolean(j)) return bad_value(err, t, "expected true or false");
        out->v.b = json_is_true(j);
        return 0;
    case ICE_T_INT:
        if (!json_is_integer(j) || json_integer_value(j) < INT32_MIN ||
            json_integer_value(j) > INT32_MAX)
            return bad_value(err, t, "expected a 32-bit integer");
        out->v.i32 = (int32_t)json_integer_value(j);
        return 0;
    case ICE_T_LONG:
        if (!json_is_integer(j)) return bad_value(err, t, "expected an integer");
        out->v.i64 = (int64_t)json_integer_value(j);
        return 0;
    case ICE_T_FLOAT:
    case ICE_T_DOUBLE:
        if (!json_is_number(j)) return bad_value(err, t, "expected a number");
        if (t->kind == ICE_T_FLOAT)
            out->v.f32 = (float)json_number_value(j);
        else
            out->v.f64 = json_number_value(j);
        return 0;
    case ICE_T_DECIMAL:
        if (json_is_integer(j)) {
            char tmp[32];
            int n = snprintf(tmp, sizeof tmp, "%lld", (long long)json_integer_value(j));
            json_t *s = json_stringn(tmp, (size_t)n);
            if (!s) return icd_fail_nomem(err);
            int rc = parse_string_kind(s, t, a, out, err);
            json_decref(s);
            return rc;
        }
        return parse_string_kind(j, t, a, out, err);
    case ICE_T_STRUCT:
    case ICE_T_LIST:
    case ICE_T_MAP:
        return parse_nested(j, t, a, out, err);
    case ICE_T_UNKNOWN:
    case ICE_T_VARIANT:
    case ICE_T_GEOMETRY:
    case ICE_T_GEOGRAPHY:
        return bad_value(err, t, "only null defaults are allowed");
    default:
        return parse_string_kind(j, t, a, out, err);
    }
}

/* ---- ordering ------------------------------------------------------------------------ */

static bool is_intlike(ice_type_kind k)
{
    return k == ICE_T_INT || k == ICE_T_LONG;
}
static bool is_floatlike(ice_type_kind k)
{
    return k == ICE_T_FLOAT || k == ICE_T_DOUBLE;
}
static bool is_byteslike(ice_type_kind k)
{
    return k == ICE_T_STRING || k == ICE_T_BINARY || k == ICE_T_FIXED || k == ICE_T_UUID;
}

bool ice_literal_comparable(const ice_literal *a, const ice_literal *b)
{
    ice_type_kind x = a->kind, y = b->kind;
    if (x == ICE_T_STRUCT || x == ICE_T_LIST || x == ICE_T_MAP || y == ICE_T_STRUCT ||
        y == ICE_T_LIST || y == ICE_T_MAP)
        return false;
    if (x == y) return true;
    if (is_intlike(x) && is_intlike(y)) return true;
    if ((x == ICE_T_INT && y == ICE_T_DATE) || (x == ICE_T_DATE && y == ICE_T_INT)) return true;
    return is_floatlike(x) && is_floatlike(y);
}

static int64_t int_value(const ice_literal *l)
{
    return (l->kind == ICE_T_INT || l->kind == ICE_T_DATE) ? l->v.i32 : l->v.i64;
}

/* Maps a double to an unsigned key whose order is IEEE totalOrder, NaNs canonicalised. */
static uint64_t total_order_key(double d)
{
    uint64_t bits;
    if (isnan(d)) d = signbit(d) ? -NAN : NAN;
    memcpy(&bits, &d, sizeof bits);
    if (isnan(d)) bits = (bits & 0x8000000000000000ull) | 0x7FF8000000000000ull;
    return (bits & 0x8000000000000000ull) ? ~bits : bits | 0x8000000000000000ull;
}

static int cmp_i128(ice_i128 a, ice_i128 b)
{
    return a < b ? -1 : a > b;
}

static int cmp_decimal(const ice_literal *a, const ice_literal *b)
{
    ice_i128 x, y;
    if (!ice_decimal_to_i128(a->v.bytes.ptr, a->v.bytes.len, &x) ||
        !ice_decimal_to_i128(b->v.bytes.ptr, b->v.bytes.len, &y)) {
        /* Cannot happen for valid decimals (<= 16 bytes); order by length as a fallback. */
        return a->v.bytes.len < b->v.bytes.len ? -1 : a->v.bytes.len > b->v.bytes.len;
    }
    if (a->scale == b->scale) return cmp_i128(x, y);
    /* Bring the value with the smaller scale up; if that overflows 128 bits its magnitude
     * exceeds anything the other side can hold, so its sign decides. */
    bool a_small = a->scale < b->scale;
    ice_i128 *v = a_small ? &x : &y;
    int sign = *v < 0 ? -1 : 1;
    int diff = a_small ? b->scale - a->scale : a->scale - b->scale;
    for (int i = 0; i < diff; i++)
        if (__builtin_mul_overflow(*v, (ice_i128)10, v)) return a_small ? sign : -sign;
    return cmp_i128(x, y);
}

int ice_literal_cmp(const ice_literal *a, const ice_literal *b)
{
    if (a->is_null || b->is_null) return a->is_null == b->is_null ? 0 : a->is_null ? -1 : 1;
    ice_type_kind k = a->kind;
    if (k == ICE_T_BOOLEAN) return (int)a->v.b - (int)b->v.b;
    if (is_floatlike(k)) {
        double x = k == ICE_T_FLOAT ? (double)a->v.f32 : a->v.f64;
        double y = b->kind == ICE_T_FLOAT ? (double)b->v.f32 : b->v.f64;
        uint64_t kx = total_order_key(x), ky = total_order_key(y);
        return kx < ky ? -1 : kx > ky;
    }
    if (k == ICE_T_DECIMAL) return cmp_decimal(a, b);
    if (is_byteslike(k)) {
        size_t n = a->v.bytes.len < b->v.bytes.len ? a->v.bytes.len : b->v.bytes.len;
        int c = n ? memcmp(a->v.bytes.ptr, b->v.bytes.ptr, n) : 0;
        if (c) return c < 0 ? -1 : 1;
        return a->v.bytes.len < b->v.bytes.len ? -1 : a->v.bytes.len > b->v.bytes.len;
    }
    int64_t x = int_value(a), y = int_value(b);
    return x < y ? -1 : x > y;
}

/* ---- promotion ----------------------------------------------------------------------- */

int ice_literal_promote(const ice_literal *in, const ice_type *t, ice_literal *out, icd_error *err)
{
    ice_type_kind from = in->kind, to = t->kind;
    *out = *in;
    out->kind = to;
    if (to == ICE_T_DECIMAL) out->scale = t->scale;
    bool ok = from == to;
    if (from == ICE_T_DECIMAL && to == ICE_T_DECIMAL && in->scale != t->scale) ok = false;
    if (from == ICE_T_INT && to == ICE_T_LONG) {
        out->v.i64 = in->v.i32;
        ok = true;
    } else if (from == ICE_T_FLOAT && to == ICE_T_DOUBLE) {
        out->v.f64 = (double)in->v.f32;
        ok = true;
    } else if (from == ICE_T_DATE && (to == ICE_T_TIMESTAMP || to == ICE_T_TIMESTAMP_NS)) {
        int64_t per_day = to == ICE_T_TIMESTAMP ? 86400000000LL : 86400000000000LL;
        if (!in->is_null && __builtin_mul_overflow((int64_t)in->v.i32, per_day, &out->v.i64))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "date %d is out of range for %s",
                            (int)in->v.i32, ice_type_kind_name(to));
        ok = true;
    }
    if (!ok)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "cannot promote a %s value to %s",
                        ice_type_kind_name(from), ice_type_kind_name(to));
    return 0;
}

/* ---- formatting ---------------------------------------------------------------------- */

/* Design §3 form (iceberg = false) or the spec's Appendix D form (iceberg = true): they
 * differ only for fixed/binary (base64 vs hex) and maps (pairs vs keys/values). */
static void lit_json(icd_buf *b, const ice_literal *l, bool iceberg)
{
    if (l->is_null) {
        icd_buf_puts(b, "null");
        return;
    }
    switch (l->kind) {
    case ICE_T_BOOLEAN:
        icd_buf_puts(b, l->v.b ? "true" : "false");
        break;
    case ICE_T_INT:
        icd_json_i64(b, l->v.i32);
        break;
    case ICE_T_LONG:
        icd_json_i64(b, l->v.i64);
        break;
    case ICE_T_FLOAT:
        icd_json_float(b, l->v.f32);
        break;
    case ICE_T_DOUBLE:
        icd_json_double(b, l->v.f64);
        break;
    case ICE_T_DECIMAL:
        icd_json_decimal_be(b, l->v.bytes.ptr, l->v.bytes.len, l->scale);
        break;
    case ICE_T_DATE:
        icd_json_date(b, l->v.i32);
        break;
    case ICE_T_TIME:
        icd_json_time(b, l->v.i64, 6);
        break;
    case ICE_T_TIMESTAMP:
        icd_json_timestamp(b, l->v.i64, 6, false);
        break;
    case ICE_T_TIMESTAMPTZ:
        icd_json_timestamp(b, l->v.i64, 6, true);
        break;
    case ICE_T_TIMESTAMP_NS:
        icd_json_timestamp(b, l->v.i64, 9, false);
        break;
    case ICE_T_TIMESTAMPTZ_NS:
        icd_json_timestamp(b, l->v.i64, 9, true);
        break;
    case ICE_T_STRING:
        icd_json_str(b, (const char *)l->v.bytes.ptr, l->v.bytes.len);
        break;
    case ICE_T_UUID:
        if (l->v.bytes.len == 16)
            icd_json_uuid(b, l->v.bytes.ptr);
        else
            icd_json_base64(b, l->v.bytes.ptr, l->v.bytes.len);
        break;
    case ICE_T_FIXED:
    case ICE_T_BINARY:
        if (!iceberg) {
            icd_json_base64(b, l->v.bytes.ptr, l->v.bytes.len);
            break;
        }
        icd_buf_putc(b, '"');
        for (size_t i = 0; i < l->v.bytes.len; i++)
            icd_buf_printf(b, "%02x", l->v.bytes.ptr[i]);
        icd_buf_putc(b, '"');
        break;
    case ICE_T_STRUCT:
        icd_buf_putc(b, '{');
        for (size_t i = 0; i < l->v.nested.n; i++) {
            icd_buf_printf(b, "%s\"%d\":", i ? "," : "", (int)l->v.nested.ids[i]);
            lit_json(b, &l->v.nested.items[i], iceberg);
        }
        icd_buf_putc(b, '}');
        break;
    case ICE_T_LIST:
        icd_buf_putc(b, '[');
        for (size_t i = 0; i < l->v.nested.n; i++) {
            if (i) icd_buf_putc(b, ',');
            lit_json(b, &l->v.nested.items[i], iceberg);
        }
        icd_buf_putc(b, ']');
        break;
    case ICE_T_MAP:
        if (iceberg) {
            icd_buf_puts(b, "{\"keys\":[");
            for (size_t i = 0; i < l->v.nested.n; i++) {
                if (i) icd_buf_putc(b, ',');
                lit_json(b, &l->v.nested.items[i], iceberg);
            }
            icd_buf_puts(b, "],\"values\":[");
            for (size_t i = 0; i < l->v.nested.n; i++) {
                if (i) icd_buf_putc(b, ',');
                lit_json(b, &l->v.nested.items[l->v.nested.n + i], iceberg);
            }
            icd_buf_puts(b, "]}");
            break;
        }
        icd_buf_putc(b, '[');
        for (size_t i = 0; i < l->v.nested.n; i++) {
            icd_buf_puts(b, i ? ",{\"key\":" : "{\"key\":");
            lit_json(b, &l->v.nested.items[i], iceberg);
            icd_buf_puts(b, ",\"value\":");
            lit_json(b, &l->v.nested.items[l->v.nested.n + i], iceberg);
            icd_buf_putc(b, '}');
        }
        icd_buf_putc(b, ']');
        break;
    default:
        icd_buf_puts(b, "null");
    }
}

void ice_literal_to_json(icd_buf *b, const ice_literal *l)
{
    lit_json(b, l, false);
}

void ice_literal_to_single_value_json(icd_buf *b, const ice_literal *l)
{
    lit_json(b, l, true);
}
