/*
 * Randomised checks of the JSON value writers (base/jsonw.c) against independent oracles
 * from the C library, over many values of every length and shape, so that the direct
 * writes into the buffer (digit counts, short-copy paths, the per-thread date cache) are
 * exercised at every boundary:
 *   - integers: the text equals snprintf("%lld"/"%llu");
 *   - doubles: the text reads back (strtod) as the same value, and has as many
 *     significant digits as the shortest "%.{p}g" that reads back (shortest round trip);
 *     integral values end in ".0";
 *   - floats: the text reads back (strtof) as the same value with as many significant
 *     digits as the shortest "%.{p}g" that reads back; an exact tie between two shortest
 *     texts takes the even last digit (337334.375f -> "337334.38", as Java and Ryu).
 *   - plain ASCII strings of length 0..40: exactly the bytes between quotes;
 *   - strings of 0..20 bytes mixing quotes, backslashes, control bytes and UTF-8 at every
 *     position: jansson reads the text back as the same bytes;
 *   - timestamps: the text equals one built with snprintf from icd_civil_from_days, for
 *     runs of values within one day (cache hits) and jumps between days (misses).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/datetime.h"
#include "base/jsonw.h"
#include "test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Significant digits of a decimal text (sign, point, leading zeros and exponent aside). */
static int sig_digits(const char *s)
{
    int n = 0, started = 0, trailing = 0;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s < '0' || *s > '9') continue;
        if (*s == '0' && !started) continue;
        started = 1;
        n++;
        trailing = *s == '0' ? trailing + 1 : 0;
    }
    return n - trailing > 0 ? n - trailing : 1;
}

static int shortest_digits_double(double v)
{
    char t[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*g", p, v);
        if (strtod(t, NULL) == v) return sig_digits(t);
    }
    return 17;
}

/* CHECK without a line per failure: the first few failures are printed. */
static int fail_count;
static void note(int ok, const char *what, const char *got)
{
    test_checks_++;
    if (ok) return;
    test_failures_++;
    if (fail_count++ < 5) fprintf(stderr, "%s: CHECK failed: got '%s'\n", what, got);
}

static int shortest_digits_float(float v)
{
    char t[64];
    for (int p = 1; p <= 9; p++) {
        snprintf(t, sizeof t, "%.*g", p, (double)v);
        if (strtof(t, NULL) == v) return sig_digits(t);
    }
    return 9;
}

static void check_float(icd_buf *b, float f)
{
    icd_buf_clear(b);
    icd_json_float(b, f);
    if (isnan(f) || isinf(f)) return;
    note(strtof(b->data, NULL) == f, "float round trip", b->data);
    note(sig_digits(b->data) == shortest_digits_float(f), "float shortest", b->data);
}

static void test_integers(void)
{
    icd_buf b = ICD_BUF_INIT;
    char want[32];
    for (int i = 0; i < 200000; i++) {
        int64_t v = (int64_t)(next() >> (next() % 64));
        if (next() & 1) v = -v;
        icd_buf_clear(&b);
        icd_json_i64(&b, v);
        snprintf(want, sizeof want, "%lld", (long long)v);
        note(!strcmp(b.data, want) && b.len == strlen(want), "i64", b.data);
        uint64_t u = next() >> (next() % 64);
        icd_buf_clear(&b);
        icd_json_u64(&b, u);
        snprintf(want, sizeof want, "%llu", (unsigned long long)u);
        note(!strcmp(b.data, want), "u64", b.data);
    }
    icd_buf_free(&b);
}

static void check_double(icd_buf *b, double v)
{
    icd_buf_clear(b);
    icd_json_double(b, v);
    if (isnan(v) || isinf(v)) return;
    note(strtod(b->data, NULL) == v, "double round trip", b->data);
    note(sig_digits(b->data) == shortest_digits_double(v), "double shortest", b->data);
    if (v == floor(v) && fabs(v) < 1e15)
        note(b->len > 2 && !strcmp(b->data + b->len - 2, ".0"), "integral double", b->data);
}

static void test_doubles(void)
{
    icd_buf b = ICD_BUF_INIT;
    for (int i = 0; i < 50000; i++) {
        uint64_t bits = next();
        double v;
        memcpy(&v, &bits, 8);
        check_double(&b, v);
        /* short decimals (prices, latencies) and values around the fixed-notation range */
        double d = (double)(int64_t)(next() % 100000000) / pow(10, (int)(next() % 12));
        check_double(&b, next() & 1 ? -d : d);
        check_double(&b, ldexp((double)(next() >> 11), -(int)(next() % 120)));
        float f;
        uint32_t fb = (uint32_t)next();
        memcpy(&f, &fb, 4);
        check_float(&b, f);
        check_float(&b, (float)d); /* short decimals as floats (sensor readings, prices) */
    }
    icd_buf_clear(&b);
    icd_json_float(&b, 337334.375f); /* exactly between 337334.37 and 337334.38 */
    note(!strcmp(b.data, "337334.38"), "float tie to even", b.data);
    icd_buf_clear(&b);
    icd_json_float(&b, 123456.7f);
    note(!strcmp(b.data, "123456.7"), "float shortest fixed", b.data);
    icd_buf_free(&b);
}

static void test_strings(void)
{
    icd_buf b = ICD_BUF_INIT;
    char s[48], want[64];
    for (int i = 0; i < 20000; i++) {
        size_t n = (size_t)(next() % 41);
        for (size_t k = 0; k < n; k++)
            s[k] = (char)(' ' + 1 + next() % 90 + (next() % 9 == 0)); /* printable */
        for (size_t k = 0; k < n; k++)
            if (s[k] == '"' || s[k] == '\\') s[k] = 'x';
        icd_buf_clear(&b);
        icd_json_str(&b, s, n);
        snprintf(want, sizeof want, "\"%.*s\"", (int)n, s);
        note(b.len == n + 2 && !strcmp(b.data, want), "string", b.data);
    }
    icd_buf_free(&b);
}

/* Strings of 0..20 bytes mixing plain text, quotes, backslashes, control bytes and UTF-8
 * (two-, three- and four-byte characters), at every position: the text must be a JSON
 * string that a JSON parser (jansson) reads back as the same bytes. The short strings take
 * a path of their own in icd_json_str (1..15 bytes checked as overlapping words); this
 * puts a byte that needs escaping in each place of those words. */
static void test_string_escapes(void)
{
    static const char *const parts[] = {"a",
                                        "Z",
                                        "0",
                                        " ",
                                        "\"",
                                        "\\",
                                        "\n",
                                        "\t",
                                        "\x01",
                                        "\x1f",
                                        "/",
                                        "\x7f",
                                        "\xc3\xa9",
                                        "\xe2\x82\xac",
                                        "\xf0\x9f\x98\x80"};
    icd_buf b = ICD_BUF_INIT;
    char s[96];
    for (int i = 0; i < 40000; i++) {
        size_t n = 0, want = (size_t)(next() % 21);
        while (n < want) {
            const char *p = parts[next() % (sizeof parts / sizeof parts[0])];
            size_t k = strlen(p);
            if (n + k > want && k > 1) continue; /* (whole characters only) */
            memcpy(s + n, p, k);
            n += k;
        }
        icd_buf_clear(&b);
        icd_json_str(&b, s, n);
        json_error_t e;
        json_t *j = json_loadb(b.data, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
        note(j && json_is_string(j) && json_string_length(j) == n &&
                 !memcmp(json_string_value(j), s, n),
             "string escapes", b.data);
        json_decref(j);
    }
    icd_buf_free(&b);
}

static void test_timestamps(void)
{
    icd_buf b = ICD_BUF_INIT;
    char want[80];
    const int64_t day = 86400000000LL;
    int64_t v = 0;
    for (int i = 0; i < 100000; i++) {
        /* mostly small steps (same day), sometimes a jump anywhere in years 0..9999 */
        if (next() % 50 == 0)
            v = (int64_t)(next() % (uint64_t)(3652424LL * day)) - 719528LL * day;
        else
            v += (int64_t)(next() % 3000000000ULL);
        int64_t days = v >= 0 ? v / day : -((-v + day - 1) / day);
        int64_t us = v - days * day, y;
        int m, d;
        icd_civil_from_days(days, &y, &m, &d);
        snprintf(want, sizeof want, "\"%04lld-%02d-%02dT%02lld:%02lld:%02lld.%06lld+00:00\"",
                 (long long)y, m, d, (long long)(us / 3600000000LL),
                 (long long)(us / 60000000 % 60), (long long)(us / 1000000 % 60),
                 (long long)(us % 1000000));
        icd_buf_clear(&b);
        icd_json_timestamp(&b, v, 6, true);
        note(!strcmp(b.data, want), "timestamp", b.data);
        icd_buf_clear(&b);
        icd_json_date(&b, days);
        note(!strncmp(b.data, want, 11) && b.len == 12, "date", b.data);
    }
    icd_buf_free(&b);
}

TEST_MAIN(TEST(test_integers), TEST(test_doubles), TEST(test_strings), TEST(test_string_escapes),
          TEST(test_timestamps))
