/*
 * JSON value writers (see jsonw.h). These sit on the hot path of every row printed, so
 * the common cases (ASCII strings, small integers) avoid stdio.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/datetime.h"
#include "base/jsonw.h"

static const char HEX[] = "0123456789abcdef";

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes are not one. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return (n >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && p[1] < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && p[1] >= 0xA0)
            return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && p[1] < 0x90)
            return 0;
        if (c == 0xF4 && p[1] >= 0x90)
            return 0;
        return 4;
    }
    return 0;
}

void icd_json_str(icd_buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    if (!icd_buf_grow(b, n + 3))
        return;
    icd_buf_putc(b, '"');
    size_t run = 0; /* start of the pending run of bytes that need no escaping */
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        size_t seq = c >= 0x80 ? utf8_seq(p + i, n - i) : 0;
        if (seq) {
            i += seq;
            continue;
        }
        icd_buf_append(b, s + run, i - run);
        switch (c) {
        case '"': icd_buf_append(b, "\\\"", 2); break;
        case '\\': icd_buf_append(b, "\\\\", 2); break;
        case '\n': icd_buf_append(b, "\\n", 2); break;
        case '\r': icd_buf_append(b, "\\r", 2); break;
        case '\t': icd_buf_append(b, "\\t", 2); break;
        case '\b': icd_buf_append(b, "\\b", 2); break;
        case '\f': icd_buf_append(b, "\\f", 2); break;
        default:
            if (c < 0x20) {
                char esc[6] = {'\\', 'u', '0', '0', HEX[c >> 4], HEX[c & 15]};
                icd_buf_append(b, esc, 6);
            } else {
                icd_buf_append(b, "\\ufffd", 6); /* an invalid UTF-8 byte */
            }
        }
        i++;
        run = i;
    }
    icd_buf_append(b, s + run, n - run);
    icd_buf_putc(b, '"');
}

void icd_base64_raw(icd_buf *b, const uint8_t *p, size_t n)
{
    static const char T[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (!icd_buf_grow(b, (n + 2) / 3 * 4 + 1))
        return;
    char *o = b->data + b->len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = T[v >> 18];
        *o++ = T[(v >> 12) & 63];
        *o++ = T[(v >> 6) & 63];
        *o++ = T[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        *o++ = T[v >> 18];
        *o++ = T[(v >> 12) & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        *o++ = T[v >> 18];
        *o++ = T[(v >> 12) & 63];
        *o++ = T[(v >> 6) & 63];
        *o++ = '=';
    }
    b->len = (size_t)(o - b->data);
    b->data[b->len] = '\0';
}

void icd_json_base64(icd_buf *b, const uint8_t *p, size_t n)
{
    icd_buf_putc(b, '"');
    icd_base64_raw(b, p, n);
    icd_buf_putc(b, '"');
}

void icd_json_u64(icd_buf *b, uint64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *s = e;
    do {
        *--s = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    icd_buf_append(b, s, (size_t)(e - s));
}

void icd_json_i64(icd_buf *b, int64_t v)
{
    if (v < 0) {
        icd_buf_putc(b, '-');
        icd_json_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        icd_json_u64(b, (uint64_t)v);
    }
}

static bool nonfinite(icd_buf *b, double v)
{
    if (isnan(v)) {
        icd_buf_append(b, "\"NaN\"", 5);
        return true;
    }
    if (isinf(v)) {
        if (v > 0)
            icd_buf_append(b, "\"Infinity\"", 10);
        else
            icd_buf_append(b, "\"-Infinity\"", 11);
        return true;
    }
    return false;
}

void icd_json_double(icd_buf *b, double v)
{
    if (nonfinite(b, v))
        return;
    if (fabs(v) < 1e15 && v == (double)(int64_t)v) { /* range first: the cast is UB beyond */
        /* integral values: exact and fast; keep the sign of -0.0 */
        if (v == 0 && signbit(v))
            icd_buf_append(b, "-0.0", 4);
        else {
            icd_json_i64(b, (int64_t)v);
            icd_buf_append(b, ".0", 2);
        }
        return;
    }
    char tmp[40];
    /* The shortest of 15..17 significant digits that reads back exactly. */
    for (int prec = 15; prec <= 17; prec++) {
        int n = snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (prec == 17 || strtod(tmp, NULL) == v) {
            icd_buf_append(b, tmp, (size_t)n);
            return;
        }
    }
}

void icd_json_float(icd_buf *b, float v)
{
    if (nonfinite(b, v))
        return;
    if (v == (float)(int32_t)v && fabsf(v) < 1e7f) {
        if (v == 0 && signbit(v))
            icd_buf_append(b, "-0.0", 4);
        else {
            icd_json_i64(b, (int32_t)v);
            icd_buf_append(b, ".0", 2);
        }
        return;
    }
    char tmp[40];
    for (int prec = 6; prec <= 9; prec++) {
        int n = snprintf(tmp, sizeof tmp, "%.*g", prec, (double)v);
        if (prec == 9 || strtof(tmp, NULL) == v) {
            icd_buf_append(b, tmp, (size_t)n);
            return;
        }
    }
}

/* Writes the decimal digits `digits` (most significant first, no sign) with a point
 * placed `scale` digits from the right. */
static void put_scaled(icd_buf *b, bool neg, const char *digits, size_t nd, int scale)
{
    if (neg)
        icd_buf_putc(b, '-');
    if (scale <= 0) {
        icd_buf_append(b, digits, nd);
        for (int i = 0; i < -scale; i++)
            icd_buf_putc(b, '0');
        return;
    }
    size_t s = (size_t)scale;
    if (nd <= s) {
        icd_buf_append(b, "0.", 2);
        for (size_t i = nd; i < s; i++)
            icd_buf_putc(b, '0');
        icd_buf_append(b, digits, nd);
    } else {
        icd_buf_append(b, digits, nd - s);
        icd_buf_putc(b, '.');
        icd_buf_append(b, digits + nd - s, s);
    }
}

void icd_fmt_decimal_i64(icd_buf *b, int64_t unscaled, int scale)
{
    uint64_t m = unscaled < 0 ? (uint64_t)0 - (uint64_t)unscaled : (uint64_t)unscaled;
    char tmp[24];
    char *e = tmp + sizeof tmp, *s = e;
    do {
        *--s = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    put_scaled(b, unscaled < 0, s, (size_t)(e - s), scale);
}

void icd_fmt_decimal_be(icd_buf *b, const uint8_t *be, size_t n, int scale)
{
    if (n == 0) {
        put_scaled(b, false, "0", 1, scale);
        return;
    }
    if (n <= 8) {
        uint64_t u = (be[0] & 0x80) ? UINT64_MAX : 0;
        for (size_t i = 0; i < n; i++)
            u = (u << 8) | be[i];
        icd_fmt_decimal_i64(b, (int64_t)u, scale);
        return;
    }
    /* Arbitrary length: magnitude as base-1e9 limbs by repeated division. */
    bool neg = be[0] & 0x80;
    uint8_t stackmag[64];
    uint8_t *mag = n <= sizeof stackmag ? stackmag : malloc(n);
    char *digits = malloc(n * 3 + 2);
    if (!mag || !digits) {
        b->oom = true;
        if (mag != stackmag)
            free(mag);
        free(digits);
        return;
    }
    memcpy(mag, be, n);
    if (neg) { /* two's complement negate */
        unsigned carry = 1;
        for (size_t i = n; i-- > 0;) {
            unsigned v = (uint8_t)~mag[i] + carry;
            mag[i] = (uint8_t)v;
            carry = v >> 8;
        }
    }
    size_t nd = 0, start = 0;
    while (start < n && mag[start] == 0)
        start++;
    char *out = digits + n * 3 + 1; /* filled right to left */
    while (start < n) {
        uint32_t rem = 0;
        for (size_t i = start; i < n; i++) {
            uint32_t cur = (rem << 8) | mag[i];
            mag[i] = (uint8_t)(cur / 10);
            rem = cur % 10;
        }
        *--out = (char)('0' + rem);
        nd++;
        while (start < n && mag[start] == 0)
            start++;
    }
    if (nd == 0) {
        *--out = '0';
        nd = 1;
    }
    put_scaled(b, neg, out, nd, scale);
    if (mag != stackmag)
        free(mag);
    free(digits);
}

void icd_json_decimal_i64(icd_buf *b, int64_t unscaled, int scale)
{
    icd_buf_putc(b, '"');
    icd_fmt_decimal_i64(b, unscaled, scale);
    icd_buf_putc(b, '"');
}

void icd_json_decimal_be(icd_buf *b, const uint8_t *be, size_t n, int scale)
{
    icd_buf_putc(b, '"');
    icd_fmt_decimal_be(b, be, n, scale);
    icd_buf_putc(b, '"');
}

static void put2(icd_buf *b, int v)
{
    char t[2] = {(char)('0' + v / 10), (char)('0' + v % 10)};
    icd_buf_append(b, t, 2);
}

void icd_fmt_date(icd_buf *b, int64_t days)
{
    int64_t y;
    int m, d;
    icd_civil_from_days(days, &y, &m, &d);
    if (y >= 0 && y <= 9999) {
        char t[4] = {(char)('0' + y / 1000), (char)('0' + y / 100 % 10), (char)('0' + y / 10 % 10),
                     (char)('0' + y % 10)};
        icd_buf_append(b, t, 4);
    } else {
        icd_buf_printf(b, "%c%04lld", y < 0 ? '-' : '+', (long long)(y < 0 ? -y : y));
    }
    icd_buf_putc(b, '-');
    put2(b, m);
    icd_buf_putc(b, '-');
    put2(b, d);
}

void icd_fmt_time(icd_buf *b, int64_t nanos_of_day, int digits)
{
    int64_t secs = nanos_of_day / 1000000000;
    int64_t frac = nanos_of_day % 1000000000;
    put2(b, (int)(secs / 3600));
    icd_buf_putc(b, ':');
    put2(b, (int)(secs / 60 % 60));
    icd_buf_putc(b, ':');
    put2(b, (int)(secs % 60));
    if (digits > 0) {
        char t[10];
        for (int i = 8; i >= 0; i--) {
            t[i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        icd_buf_putc(b, '.');
        icd_buf_append(b, t, (size_t)digits);
    }
}

void icd_fmt_timestamp(icd_buf *b, int64_t days, int64_t nanos_of_day, int digits, bool utc)
{
    icd_fmt_date(b, days);
    icd_buf_putc(b, 'T');
    icd_fmt_time(b, nanos_of_day, digits);
    if (utc)
        icd_buf_append(b, "+00:00", 6);
}

void icd_json_date(icd_buf *b, int64_t days)
{
    icd_buf_putc(b, '"');
    icd_fmt_date(b, days);
    icd_buf_putc(b, '"');
}

static int64_t unit_per_second(int unit_digits)
{
    return unit_digits == 3 ? 1000 : unit_digits == 6 ? 1000000 : 1000000000;
}

void icd_json_time(icd_buf *b, int64_t v, int unit_digits)
{
    int64_t ups = unit_per_second(unit_digits);
    int64_t day = 86400 * ups;
    v = icd_floormod(v, day);
    icd_buf_putc(b, '"');
    icd_fmt_time(b, v * (1000000000 / ups), unit_digits);
    icd_buf_putc(b, '"');
}

void icd_json_timestamp(icd_buf *b, int64_t v, int unit_digits, bool utc)
{
    int64_t ups = unit_per_second(unit_digits);
    int64_t day = 86400 * ups;
    int64_t days = icd_floordiv(v, day);
    int64_t rem = icd_floormod(v, day);
    icd_buf_putc(b, '"');
    icd_fmt_timestamp(b, days, rem * (1000000000 / ups), unit_digits, utc);
    icd_buf_putc(b, '"');
}

void icd_json_uuid(icd_buf *b, const uint8_t u[16])
{
    char t[38];
    int o = 0;
    t[o++] = '"';
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            t[o++] = '-';
        t[o++] = HEX[u[i] >> 4];
        t[o++] = HEX[u[i] & 15];
    }
    t[o++] = '"';
    icd_buf_append(b, t, (size_t)o);
}
