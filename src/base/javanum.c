/*
 * Java's number text: Long.parseLong, Double.parseDouble, Double.toString and
 * Float.toString, and the (long) cast of a double. Druid is a Java program, so wherever
 * icedruid must produce or accept the same text Druid does (timestamps, row values, the
 * lenient JSON reader's coercions in base/jsonget) it goes through these.
 */
#include "base/javanum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

bool icd_java_parse_long(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i >= n) return false;
    /* accumulate negatively so that INT64_MIN parses */
    int64_t v = 0;
    for (; i < n; i++) {
        if (!is_digit((unsigned char)s[i])) return false;
        if (__builtin_mul_overflow(v, (int64_t)10, &v) ||
            __builtin_sub_overflow(v, (int64_t)(s[i] - '0'), &v))
            return false;
    }
    if (!neg) {
        if (v == INT64_MIN) return false;
        v = -v;
    }
    *out = v;
    return true;
}

int64_t icd_java_d2l(double d)
{
    if (isnan(d)) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
}

bool icd_java_parse_double(const char *s, size_t n, double *out)
{
    /* Double.parseDouble's decimal grammar: [sign] (NaN | Infinity | digits [. digits]
     * [e [sign] digits]) [f F d D]; hexadecimal floats are not accepted here. */
    char tmp[128];
    size_t i = 0;
    if (n == 0 || n >= sizeof tmp) return false;
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    if (n - i == 3 && memcmp(s + i, "NaN", 3) == 0) {
        *out = NAN;
        return true;
    }
    if (n - i == 8 && memcmp(s + i, "Infinity", 8) == 0) {
        *out = neg ? -INFINITY : INFINITY;
        return true;
    }
    size_t end = n;
    if (end > i && strchr("fFdD", s[end - 1])) end--;
    size_t k = i, mant = 0;
    while (k < end && is_digit((unsigned char)s[k]))
        k++, mant++;
    if (k < end && s[k] == '.') {
        k++;
        while (k < end && is_digit((unsigned char)s[k]))
            k++, mant++;
    }
    if (mant == 0) return false;
    if (k < end && (s[k] == 'e' || s[k] == 'E')) {
        k++;
        if (k < end && (s[k] == '+' || s[k] == '-')) k++;
        size_t ed = 0;
        while (k < end && is_digit((unsigned char)s[k]))
            k++, ed++;
        if (ed == 0) return false;
    }
    if (k != end) return false;
    memcpy(tmp, s, end);
    tmp[end] = '\0';
    *out = strtod(tmp, NULL);
    return true;
}

/* ---- Java number text ------------------------------------------------------------------- */

/* Shortest significant digits of |v| (no point) and the decimal exponent of the first
 * digit: v = d1.d2d3... * 10^exp. At most 17 digits for a double, 9 for a float. */
static int shortest_digits(double v, bool is_float, char *digits, int *exp10)
{
    char tmp[48];
    int hi = is_float ? 9 : 17;
    for (int prec = 1; prec <= hi; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, fabs(v));
        bool same =
            is_float ? (strtof(tmp, NULL) == (float)fabs(v)) : (strtod(tmp, NULL) == fabs(v));
        if (same || prec == hi) break;
    }
    /* tmp = d.ddde±XX */
    int nd = 0;
    char *p = tmp;
    for (; *p && *p != 'e'; p++)
        if (is_digit((unsigned char)*p)) digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    *exp10 = *p == 'e' ? atoi(p + 1) : 0;
    return nd;
}

static void fmt_java_fp(icd_buf *b, double v, bool is_float)
{
    if (isnan(v)) {
        icd_buf_puts(b, "NaN");
        return;
    }
    if (isinf(v)) {
        icd_buf_puts(b, v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (v == 0) {
        icd_buf_puts(b, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    double a = fabs(v);
    if (a >= 1e-3 && a < 1e7) {
        /* Java's plain notation is the JSON writer's shortest text in this range (digits,
         * a point, at least one fraction digit): its exact integer arithmetic instead of
         * up to 17 printf/strtod round trips per value (20% of serve's CPU) */
        if (is_float)
            icd_json_float(b, (float)v);
        else
            icd_json_double(b, v);
        return;
    }
    char d[24];
    int e;
    int nd = shortest_digits(v, is_float, d, &e);
    if (v < 0) icd_buf_putc(b, '-');
    /* computerized scientific notation: d.dddE±n, at least one fraction digit */
    icd_buf_putc(b, d[0]);
    icd_buf_putc(b, '.');
    if (nd > 1)
        icd_buf_append(b, d + 1, (size_t)(nd - 1));
    else
        icd_buf_putc(b, '0');
    icd_buf_printf(b, "E%d", e);
}

void icd_java_fmt_double(icd_buf *b, double v)
{
    fmt_java_fp(b, v, false);
}
void icd_java_fmt_float(icd_buf *b, float v)
{
    fmt_java_fp(b, (double)v, true);
}