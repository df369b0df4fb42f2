/*
 * Portable 32-bit Roaring bitmaps read in place (see roaring32.h). The parser is the
 * gatekeeper for deletion vectors: every count, offset and value order is checked before
 * anything indexes the bytes. The filter is the merge-on-read hot path: per container it
 * binary-searches arrays and runs, and walks bitmap words with count-trailing-zeros,
 * turning whole words and runs into memset / word masks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/error.h"
#include "iceberg/deletes/roaring32.h"

#define COOKIE_NO_RUN 12346u /* then a 32-bit container count; offsets always present */
#define COOKIE_RUN 12347u    /* low 16 bits; high 16 bits = container count - 1 */
#define NO_OFFSET_THRESHOLD 4u
#define ARRAY_MAX 4096u
#define BITMAP_BYTES 8192u

/* Bit count without relying on a popcount instruction (Debian builds for baseline x86-64,
 * where __builtin_popcountll becomes a slow library call). */
static inline uint64_t popcnt64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (x * 0x0101010101010101ULL) >> 56;
}

static int fail(ice_r32_error *e, size_t at, const char *fmt, ...) ICD_PRINTF(3, 4);
static int fail(ice_r32_error *e, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->at = at;
    return -1;
}

/* ---- parsing ---- */

static int parse_array(const uint8_t *d, uint32_t card, size_t at, size_t ci, ice_r32_error *e)
{
    uint32_t prev = icd_load_le16(d);
    for (uint32_t k = 1; k < card; k++) {
        uint32_t v = icd_load_le16(d + 2 * k);
        if (v <= prev) return fail(e, at + 2 * k, "container %zu: array values not increasing", ci);
        prev = v;
    }
    return 0;
}

static int parse_bitmap(const uint8_t *d, uint32_t card, size_t at, size_t ci, ice_r32_error *e)
{
    uint64_t pop = 0;
    for (size_t w = 0; w < BITMAP_BYTES / 8; w++)
        pop += popcnt64(icd_load_le64(d + 8 * w));
    if (pop != card)
        return fail(e, at, "container %zu: bitmap holds %llu values, header says %u", ci,
                    (unsigned long long)pop, card);
    return 0;
}

static int parse_runs(const uint8_t *d, size_t avail, uint32_t card, size_t at, size_t ci,
                      size_t *size, uint16_t *nruns_out, ice_r32_error *e)
{
    if (avail < 2) return fail(e, at, "container %zu: run count truncated", ci);
    uint32_t nruns = icd_load_le16(d);
    if ((size_t)nruns * 4 > avail - 2)
        return fail(e, at, "container %zu: %u runs overrun the buffer", ci, nruns);
    uint64_t sum = 0;
    int64_t prev_end = -1;
    for (uint32_t k = 0; k < nruns; k++) {
        uint32_t start = icd_load_le16(d + 2 + 4 * k), len = icd_load_le16(d + 4 + 4 * k);
        if (start + len > 0xFFFF)
            return fail(e, at + 2 + 4 * k, "container %zu: run %u passes 65535", ci, k);
        if ((int64_t)start <= prev_end)
            return fail(e, at + 2 + 4 * k, "container %zu: runs overlap or are unsorted", ci);
        prev_end = start + len;
        sum += len + 1u;
    }
    if (sum != card)
        return fail(e, at, "container %zu: runs hold %llu values, header says %u", ci,
                    (unsigned long long)sum, card);
    *size = 2 + (size_t)nruns * 4;
    *nruns_out = (uint16_t)nruns;
    return 0;
}

int ice_r32_parse(const uint8_t *p, size_t avail, ice_r32 *r, ice_r32_error *e)
{
    memset(r, 0, sizeof *r);
    memset(e, 0, sizeof *e);
    r->buf = p;
    if (avail < 4) return fail(e, 0, "bitmap cookie truncated");
    uint32_t cookie = icd_load_le32(p);
    size_t n, pos;
    const uint8_t *runflags = NULL;
    if ((cookie & 0xFFFF) == COOKIE_RUN) {
        n = (cookie >> 16) + 1;
        runflags = p + 4;
        pos = 4 + (n + 7) / 8;
    } else if (cookie == COOKIE_NO_RUN) {
        if (avail < 8) return fail(e, 4, "container count truncated");
        n = icd_load_le32(p + 4);
        if (n > 65536) return fail(e, 4, "container count %zu exceeds 65536", n);
        pos = 8;
    } else {
        return fail(e, 0, "unknown Roaring cookie 0x%08x (want %u or %u)", cookie, COOKIE_NO_RUN,
                    COOKIE_RUN);
    }
    bool offsets = !runflags || n >= NO_OFFSET_THRESHOLD;
    size_t header = n * 4 + (offsets ? n * 4 : 0);
    if (pos > avail || header > avail - pos)
        return fail(e, pos, "header of %zu containers is truncated", n);
    const uint8_t *desc = p + pos, *offs = p + pos + n * 4;
    pos += header;
    ice_r32_container *c = n ? malloc(n * sizeof *c) : NULL;
    if (n && !c) {
        e->nomem = true;
        return fail(e, 0, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t key = icd_load_le16(desc + 4 * i), card = icd_load_le16(desc + 4 * i + 2) + 1;
        int bad = 0;
        if (i > 0 && key <= c[i - 1].key)
            bad = fail(e, (size_t)(desc - p) + 4 * i, "container keys not increasing");
        else if (offsets && (size_t)icd_load_le32(offs + 4 * i) != pos)
            bad =
                fail(e, (size_t)(offs - p) + 4 * i, "container %zu offset %u, but it starts at %zu",
                     i, icd_load_le32(offs + 4 * i), pos);
        size_t left = avail - pos, size = 0;
        c[i].key = (uint16_t)key;
        c[i].card = card;
        c[i].off = (uint32_t)pos;
        c[i].n = 0;
        if (!bad && runflags && (runflags[i / 8] >> (i % 8) & 1)) {
            c[i].type = ICE_R32_RUN;
            bad = parse_runs(p + pos, left, card, pos, i, &size, &c[i].n, e);
            r->has_runs = true;
        } else if (!bad && card <= ARRAY_MAX) {
            c[i].type = ICE_R32_ARRAY;
            c[i].n = (uint16_t)card;
            size = (size_t)card * 2;
            if (size > left)
                bad = fail(e, pos, "container %zu: array of %u values truncated", i, card);
            else
                bad = parse_array(p + pos, card, pos, i, e);
        } else if (!bad) {
            c[i].type = ICE_R32_BITMAP;
            size = BITMAP_BYTES;
            if (size > left)
                bad = fail(e, pos, "container %zu: bitmap truncated", i);
            else
                bad = parse_bitmap(p + pos, card, pos, i, e);
        }
        if (bad) {
            free(c);
            return -1;
        }
        pos += size;
        r->card += card;
    }
    r->c = c;
    r->n = n;
    r->size = pos;
    return 0;
}

void ice_r32_release(ice_r32 *r)
{
    free(r->c);
    r->c = NULL;
    r->n = 0;
}

/* ---- queries ---- */

/* First container whose key is >= key. */
static size_t first_container(const ice_r32 *r, uint32_t key)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->c[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First array index whose value is >= v. */
static uint32_t array_lower(const uint8_t *d, uint32_t n, uint32_t v)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (icd_load_le16(d + 2 * mid) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First run whose last value is >= v. */
static uint32_t run_lower(const uint8_t *runs, uint32_t n, uint32_t v)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (icd_load_le16(runs + 4 * mid) + icd_load_le16(runs + 4 * mid + 2) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool ice_r32_contains(const ice_r32 *r, uint32_t v)
{
    size_t i = first_container(r, v >> 16);
    if (i == r->n || r->c[i].key != v >> 16) return false;
    const ice_r32_container *c = &r->c[i];
    const uint8_t *d = r->buf + c->off;
    uint32_t low = v & 0xFFFF;
    switch (c->type) {
    case ICE_R32_ARRAY: {
        uint32_t k = array_lower(d, c->n, low);
        return k < c->n && icd_load_le16(d + 2 * k) == low;
    }
    case ICE_R32_BITMAP:
        return icd_load_le64(d + 8 * (low >> 6)) >> (low & 63) & 1;
    default: {
        uint32_t k = run_lower(d + 2, c->n, low);
        return k < c->n && icd_load_le16(d + 2 + 4 * k) <= low;
    }
    }
}

/* Marks [f, t) (destination indices). */
static inline void mark_range(uint8_t *sel, uint64_t *words, uint64_t f, uint64_t t)
{
    if (sel)
        memset(sel + f, 0, (size_t)(t - f));
    else if (words)
        icd_bits_clear_range(words, f, t);
}

/* Clears in `words` the set bits of x placed at destination index d (d may lie up to 63
 * below 0 when x has no bits there). */
static inline void mark_word(uint64_t *words, int64_t d, uint64_t x)
{
    if (d < 0) {
        x >>= -d;
        d = 0;
    }
    uint64_t w = (uint64_t)d >> 6;
    unsigned sh = (unsigned)d & 63;
    words[w] &= ~(x << sh);
    if (sh && (x >> (64 - sh))) words[w + 1] &= ~(x >> (64 - sh));
}

static uint64_t filter_array(const uint8_t *d, uint32_t n, uint32_t lo, uint32_t hi, uint64_t dbase,
                             uint8_t *sel, uint64_t *words)
{
    uint32_t k = array_lower(d, n, lo);
    if (!sel && !words) return array_lower(d, n, hi) - k;
    uint32_t start = k;
    for (; k < n; k++) {
        uint32_t v = icd_load_le16(d + 2 * k);
        if (v >= hi) break;
        uint64_t at = v + dbase;
        if (sel)
            sel[at] = 0;
        else
            words[at >> 6] &= ~((uint64_t)1 << (at & 63));
    }
    return k - start;
}

static uint64_t filter_runs(const uint8_t *runs, uint32_t n, uint32_t lo, uint32_t hi,
                            uint64_t dbase, uint8_t *sel, uint64_t *words)
{
    uint64_t total = 0;
    for (uint32_t k = run_lower(runs, n, lo); k < n; k++) {
        uint32_t start = icd_load_le16(runs + 4 * k);
        if (start >= hi) break;
        uint32_t end = start + icd_load_le16(runs + 4 * k + 2) + 1; /* exclusive */
        uint32_t f = start > lo ? start : lo, t = end < hi ? end : hi;
        total += t - f;
        mark_range(sel, words, f + dbase, t + dbase);
    }
    return total;
}

static uint64_t filter_bitmap(const uint8_t *d, uint32_t lo, uint32_t hi, uint64_t dbase,
                              uint8_t *sel, uint64_t *words)
{
    uint64_t total = 0;
    uint32_t wlo = lo >> 6, whi = (hi - 1) >> 6;
    for (uint32_t w = wlo; w <= whi; w++) {
        uint64_t x = icd_load_le64(d + 8 * w);
        if (w == wlo) x &= ~(uint64_t)0 << (lo & 63);
        if (w == whi && (hi & 63)) x &= ~(uint64_t)0 >> (64 - (hi & 63));
        if (!x) continue;
        uint64_t at = (uint64_t)w * 64 + dbase; /* destination of bit 0 (mod 2^64) */
        if (x == ~(uint64_t)0) {
            total += 64;
            mark_range(sel, words, at, at + 64);
        } else if (sel) {
            do {
                sel[at + (uint64_t)__builtin_ctzll(x)] = 0;
                total++;
                x &= x - 1;
            } while (x);
        } else {
            total += popcnt64(x);
            if (words) mark_word(words, (int64_t)at, x);
        }
    }
    return total;
}

uint64_t ice_r32_filter(const ice_r32 *r, uint64_t a, uint64_t b, uint64_t off, uint8_t *sel,
                        uint64_t *words)
{
    if (a >= b) return 0;
    uint64_t total = 0;
    uint32_t kb = (uint32_t)((b - 1) >> 16);
    for (size_t i = first_container(r, (uint32_t)(a >> 16)); i < r->n && r->c[i].key <= kb; i++) {
        const ice_r32_container *c = &r->c[i];
        uint64_t base = (uint64_t)c->key << 16;
        uint32_t lo = a > base ? (uint32_t)(a - base) : 0;
        uint32_t hi = b - base > 65536 ? 65536 : (uint32_t)(b - base);
        uint64_t dbase = base + off - a; /* destination of local value 0 (mod 2^64) */
        const uint8_t *d = r->buf + c->off;
        if (c->type == ICE_R32_ARRAY)
            total += filter_array(d, c->n, lo, hi, dbase, sel, words);
        else if (c->type == ICE_R32_RUN)
            total += filter_runs(d + 2, c->n, lo, hi, dbase, sel, words);
        else if (lo == 0 && hi == 65536 && !sel && !words)
            total += c->card;
        else
            total += filter_bitmap(d, lo, hi, dbase, sel, words);
    }
    return total;
}

size_t ice_r32_list(const ice_r32 *r, uint32_t from, uint64_t base, uint64_t *out, size_t max)
{
    size_t got = 0;
    for (size_t i = first_container(r, from >> 16); i < r->n && got < max; i++) {
        const ice_r32_container *c = &r->c[i];
        uint32_t hb = (uint32_t)c->key << 16;
        uint32_t lo = hb < from ? from - hb : 0; /* from - hb < 65536 here */
        const uint8_t *d = r->buf + c->off;
        if (c->type == ICE_R32_ARRAY) {
            for (uint32_t k = array_lower(d, c->n, lo); k < c->n && got < max; k++)
                out[got++] = base | (hb | icd_load_le16(d + 2 * k));
        } else if (c->type == ICE_R32_RUN) {
            for (uint32_t k = run_lower(d + 2, c->n, lo); k < c->n && got < max; k++) {
                uint32_t s = icd_load_le16(d + 2 + 4 * k), e = s + icd_load_le16(d + 4 + 4 * k);
                for (uint32_t v = s > lo ? s : lo; v <= e && got < max; v++)
                    out[got++] = base | (hb | v);
            }
        } else {
            for (uint32_t w = lo >> 6; w < 1024 && got < max; w++) {
                uint64_t x = icd_load_le64(d + 8 * w);
                if (w == lo >> 6) x &= ~(uint64_t)0 << (lo & 63);
                for (; x && got < max; x &= x - 1)
                    out[got++] = base | (hb | (w * 64 + (uint32_t)__builtin_ctzll(x)));
            }
        }
    }
    return got;
}
