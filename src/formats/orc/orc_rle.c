/*
 * ORC run-length encodings (ORC specification v1, "Run Length Encoding"): base-128 varints,
 * byte RLE, boolean RLE, integer RLE v1 (runs with a fixed delta, varint literals) and v2
 * (SHORT_REPEAT, DIRECT, PATCHED_BASE, DELTA with big-endian bit packing). The column
 * readers of orc_reader.c pull values from these decoders batch by batch. All arithmetic
 * on decoded values is done on uint64_t so that hostile inputs wrap instead of hitting
 * undefined behaviour; every byte read is bounds-checked against the stream's end.
 */
#include "base/varint.h"
#include "formats/orc/orc_rle.h"

#include <string.h>

static int truncated(const orc_cursor *c, const char *what, icd_error *err)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, orc_cursor_offset(c), "truncated %s", what);
}

/* The next byte of the stream, or a truncation error naming `what`. */
static inline int next_byte(orc_cursor *c, const char *what, uint8_t *out, icd_error *err)
{
    if (c->p >= c->end) return truncated(c, what, err);
    *out = *c->p++;
    return 0;
}

int orc_read_uvarint(orc_cursor *c, uint64_t *out, icd_error *err)
{
    int n = icd_uleb128_decode(c->p, c->end, out);
    if (n > 0) {
        c->p += n;
        return 0;
    }
    if (n == ICD_VARINT_TRUNCATED) return truncated(c, "varint", err);
    return icd_fail(err, ICD_ECORRUPT, NULL, orc_cursor_offset(c),
                    "varint longer than 10 bytes or beyond 64 bits");
}

int orc_read_svarint(orc_cursor *c, int64_t *out, icd_error *err)
{
    uint64_t u;
    ICD_TRY(orc_read_uvarint(c, &u, err));
    *out = orc_unzigzag(u);
    return 0;
}

int orc_read_varint128(orc_cursor *c, int64_t *hi_out, uint64_t *lo_out, icd_error *err)
{
    /* Accumulate the zigzag form as an unsigned 128-bit value (hi:lo). */
    uint64_t lo = 0, hi = 0;
    int64_t start = orc_cursor_offset(c);
    for (int shift = 0;; shift += 7) {
        if (c->p >= c->end) return truncated(c, "decimal varint", err);
        uint64_t b = *c->p++;
        uint64_t bits = b & 0x7f;
        if (bits) {
            if (shift >= 128 || (shift > 121 && (bits >> (128 - shift))))
                return icd_fail(err, ICD_ECORRUPT, NULL, start,
                                "decimal value does not fit 128 bits");
            if (shift < 64) {
                lo |= bits << shift;
                if (shift > 57) hi |= bits >> (64 - shift);
            } else {
                hi |= bits << (shift - 64);
            }
        }
        if (!(b & 0x80)) break;
        if (shift > 200) return icd_fail(err, ICD_ECORRUPT, NULL, start, "decimal varint too long");
    }
    /* unzigzag: (u >> 1) ^ -(u & 1) over 128 bits */
    uint64_t neg = (uint64_t)0 - (lo & 1);
    uint64_t rlo = (lo >> 1 | hi << 63) ^ neg;
    uint64_t rhi = (hi >> 1) ^ neg;
    *hi_out = (int64_t)rhi;
    *lo_out = rlo;
    return 0;
}

/* ---- byte RLE ---- */

void orc_byte_rle_init(orc_byte_rle *d, const uint8_t *p, size_t len)
{
    orc_cursor_init(&d->in, p, len);
    d->n = d->pos = 0;
}

static int byte_rle_fill(orc_byte_rle *d, icd_error *err)
{
    orc_cursor *c = &d->in;
    uint8_t h = 0;
    ICD_TRY(next_byte(c, "byte RLE stream (more values expected)", &h, err));
    if (h < 0x80) {
        uint8_t v = 0;
        ICD_TRY(next_byte(c, "byte RLE run", &v, err));
        memset(d->buf, v, (size_t)h + 3);
        d->n = (size_t)h + 3;
    } else {
        size_t n = 256 - (size_t)h;
        if (orc_cursor_left(c) < n) return truncated(c, "byte RLE literals", err);
        memcpy(d->buf, c->p, n);
        c->p += n;
        d->n = n;
    }
    d->pos = 0;
    return 0;
}

int orc_byte_rle_next(orc_byte_rle *d, uint8_t *out, size_t count, icd_error *err)
{
    while (count) {
        if (d->pos == d->n) ICD_TRY(byte_rle_fill(d, err));
        size_t k = d->n - d->pos < count ? d->n - d->pos : count;
        memcpy(out, d->buf + d->pos, k);
        d->pos += k;
        out += k;
        count -= k;
    }
    return 0;
}

/* ---- boolean RLE ---- */

void orc_bool_rle_init(orc_bool_rle *d, const uint8_t *p, size_t len)
{
    orc_byte_rle_init(&d->bytes, p, len);
    d->cur = 0;
    d->bits_left = 0;
}

int orc_bool_rle_next(orc_bool_rle *d, uint8_t *out, size_t count, icd_error *err)
{
    size_t i = 0;
    while (i < count) {
        if (d->bits_left == 0) {
            /* Whole bytes at once when aligned. */
            while (count - i >= 8 && d->bytes.pos < d->bytes.n) {
                uint8_t b = d->bytes.buf[d->bytes.pos++];
                for (int k = 0; k < 8; k++)
                    out[i + (size_t)k] = (b >> (7 - k)) & 1;
                i += 8;
            }
            if (i == count) break;
            ICD_TRY(orc_byte_rle_next(&d->bytes, &d->cur, 1, err));
            d->bits_left = 8;
        }
        out[i++] = (d->cur >> (d->bits_left - 1)) & 1;
        d->bits_left--;
    }
    return 0;
}

/* ---- integer RLE ---- */

void orc_int_rle_init(orc_int_rle *d, const uint8_t *p, size_t len, bool v2, bool is_signed)
{
    orc_cursor_init(&d->in, p, len);
    d->v2 = v2;
    d->is_signed = is_signed;
    d->n = d->pos = 0;
}

static int rle1_fill(orc_int_rle *d, icd_error *err)
{
    orc_cursor *c = &d->in;
    uint8_t h = 0;
    ICD_TRY(next_byte(c, "integer RLE v1 stream (more values expected)", &h, err));
    if (h < 0x80) {
        size_t n = (size_t)h + 3;
        uint8_t db = 0;
        ICD_TRY(next_byte(c, "integer RLE v1 run", &db, err));
        int64_t delta = (int8_t)db;
        uint64_t base;
        if (d->is_signed) {
            int64_t s;
            ICD_TRY(orc_read_svarint(c, &s, err));
            base = (uint64_t)s;
        } else {
            ICD_TRY(orc_read_uvarint(c, &base, err));
        }
        for (size_t i = 0; i < n; i++)
            d->buf[i] = (int64_t)(base + (uint64_t)delta * i);
        d->n = n;
    } else {
        size_t n = 256 - (size_t)h;
        for (size_t i = 0; i < n; i++) {
            uint64_t u;
            ICD_TRY(orc_read_uvarint(c, &u, err));
            d->buf[i] = d->is_signed ? orc_unzigzag(u) : (int64_t)u;
        }
        d->n = n;
    }
    d->pos = 0;
    return 0;
}

int orc_rle2_width(unsigned code, bool delta)
{
    static const uint8_t widths[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                       12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                       23, 24, 26, 28, 30, 32, 40, 48, 56, 64};
    if (delta && code == 0) return 0;
    return widths[code & 31];
}

/* The width a patch list entry (gap + patch bits) is padded to. */
static int closest_fixed_bits(int n)
{
    if (n <= 0) return 1;
    if (n <= 24) return n;
    if (n <= 26) return 26;
    if (n <= 28) return 28;
    if (n <= 30) return 30;
    if (n <= 32) return 32;
    if (n <= 40) return 40;
    if (n <= 48) return 48;
    if (n <= 56) return 56;
    return 64;
}

/* Unpacks `n` big-endian values of `w` bits (1..64), padded to a whole byte at the end. */
static int unpack_be(orc_cursor *c, int w, size_t n, uint64_t *out, icd_error *err)
{
    uint64_t bits = (uint64_t)w * n;
    uint64_t bytes = (bits + 7) / 8;
    if (orc_cursor_left(c) < bytes) return truncated(c, "bit-packed integer RLE v2 values", err);
    const uint8_t *p = c->p;
    if (w == 8) {
        for (size_t i = 0; i < n; i++)
            out[i] = p[i];
    } else if (w % 8 == 0) {
        size_t nb = (size_t)w / 8;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = 0;
            for (size_t k = 0; k < nb; k++)
                v = v << 8 | p[i * nb + k];
            out[i] = v;
        }
    } else {
        uint64_t acc = 0; /* bits not yet consumed, right-aligned */
        int have = 0;
        size_t bi = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = 0;
            int need = w;
            while (need > 0) {
                if (have == 0) {
                    acc = p[bi++];
                    have = 8;
                }
                int take = need < have ? need : have;
                v = (v << take) | ((acc >> (have - take)) & ((1u << take) - 1));
                have -= take;
                need -= take;
            }
            out[i] = v;
        }
    }
    c->p += bytes;
    return 0;
}

static int rle2_short_repeat(orc_int_rle *d, uint8_t h, icd_error *err)
{
    orc_cursor *c = &d->in;
    size_t w = ((h >> 3) & 7) + 1;
    size_t n = (h & 7) + 3;
    if (orc_cursor_left(c) < w) return truncated(c, "integer RLE v2 short repeat", err);
    uint64_t v = 0;
    for (size_t k = 0; k < w; k++)
        v = v << 8 | *c->p++;
    int64_t val = d->is_signed ? orc_unzigzag(v) : (int64_t)v;
    for (size_t i = 0; i < n; i++)
        d->buf[i] = val;
    d->n = n;
    return 0;
}

/* The second header byte of the direct and delta sub-encodings: the bit width (5 bits of
 * the first byte; delta encodes width 0 as 0) and the run length (9 bits, minus one). */
static int rle2_width_len(orc_cursor *c, uint8_t h, bool delta, const char *what, int *w, size_t *n,
                          icd_error *err)
{
    uint8_t h2 = 0;
    ICD_TRY(next_byte(c, what, &h2, err));
    *w = orc_rle2_width((h >> 1) & 31, delta);
    *n = ((size_t)(h & 1) << 8 | h2) + 1;
    return 0;
}

static int rle2_direct(orc_int_rle *d, uint8_t h, icd_error *err)
{
    orc_cursor *c = &d->in;
    int w = 0;
    size_t n = 0;
    ICD_TRY(rle2_width_len(c, h, false, "integer RLE v2 direct header", &w, &n, err));
    uint64_t *u = (uint64_t *)d->buf;
    ICD_TRY(unpack_be(c, w, n, u, err));
    if (d->is_signed)
        for (size_t i = 0; i < n; i++)
            d->buf[i] = orc_unzigzag(u[i]);
    d->n = n;
    return 0;
}

static int rle2_patched_base(orc_int_rle *d, uint8_t h, icd_error *err)
{
    orc_cursor *c = &d->in;
    int64_t at = orc_cursor_offset(c) - 1;
    if (orc_cursor_left(c) < 3) return truncated(c, "integer RLE v2 patched base header", err);
    uint8_t h2 = c->p[0], h3 = c->p[1], h4 = c->p[2];
    c->p += 3;
    int w = orc_rle2_width((h >> 1) & 31, false);
    size_t n = ((size_t)(h & 1) << 8 | h2) + 1;
    size_t bw = ((size_t)h3 >> 5) + 1;
    int pw = orc_rle2_width(h3 & 31, false);
    int pgw = (h4 >> 5) + 1;
    size_t pll = h4 & 31;
    if (pw + pgw > 64)
        return icd_fail(err, ICD_ECORRUPT, NULL, at,
                        "integer RLE v2 patched base: patch width %d + gap width %d > 64", pw, pgw);
    if (orc_cursor_left(c) < bw) return truncated(c, "integer RLE v2 patched base value", err);
    uint64_t base = 0;
    for (size_t k = 0; k < bw; k++)
        base = base << 8 | *c->p++;
    uint64_t msb = (uint64_t)1 << (bw * 8 - 1);
    int64_t sbase = (base & msb) ? -(int64_t)(base & ~msb) : (int64_t)base;
    uint64_t *u = (uint64_t *)d->buf;
    ICD_TRY(unpack_be(c, w, n, u, err));
    if (pll) {
        uint64_t patches[31];
        int pbits = closest_fixed_bits(pw + pgw);
        ICD_TRY(unpack_be(c, pbits, pll, patches, err));
        size_t idx = 0;
        uint64_t pmask = pw == 64 ? ~(uint64_t)0 : (((uint64_t)1 << pw) - 1);
        for (size_t k = 0; k < pll; k++) {
            uint64_t gap = patches[k] >> pw;
            uint64_t patch = patches[k] & pmask;
            idx += (size_t)gap;
            if (idx >= n)
                return icd_fail(err, ICD_ECORRUPT, NULL, at,
                                "integer RLE v2 patched base: patch position %zu outside the "
                                "run of %zu values",
                                idx, n);
            if (patch == 0) continue; /* a pure gap, used to skip more than 2^PGW - 1 values */
            if (w + pw > 64)
                return icd_fail(err, ICD_ECORRUPT, NULL, at,
                                "integer RLE v2 patched base: width %d + patch width %d > 64", w,
                                pw);
            u[idx] |= patch << w;
        }
    }
    for (size_t i = 0; i < n; i++)
        d->buf[i] = (int64_t)((uint64_t)sbase + u[i]);
    d->n = n;
    return 0;
}

static int rle2_delta(orc_int_rle *d, uint8_t h, icd_error *err)
{
    orc_cursor *c = &d->in;
    int w = 0;
    size_t n = 0;
    ICD_TRY(rle2_width_len(c, h, true, "integer RLE v2 delta header", &w, &n, err));
    uint64_t base;
    if (d->is_signed) {
        int64_t s;
        ICD_TRY(orc_read_svarint(c, &s, err));
        base = (uint64_t)s;
    } else {
        ICD_TRY(orc_read_uvarint(c, &base, err));
    }
    int64_t delta;
    ICD_TRY(orc_read_svarint(c, &delta, err));
    d->buf[0] = (int64_t)base;
    if (w == 0) {
        for (size_t i = 1; i < n; i++)
            d->buf[i] = (int64_t)(base + (uint64_t)delta * i);
    } else {
        if (n >= 2) d->buf[1] = (int64_t)(base + (uint64_t)delta);
        if (n > 2) {
            uint64_t *u = (uint64_t *)d->buf + 2;
            ICD_TRY(unpack_be(c, w, n - 2, u, err));
            uint64_t prev = (uint64_t)d->buf[1];
            for (size_t i = 2; i < n; i++) {
                prev = delta < 0 ? prev - u[i - 2] : prev + u[i - 2];
                d->buf[i] = (int64_t)prev;
            }
        }
    }
    d->n = n;
    return 0;
}

static int rle2_fill(orc_int_rle *d, icd_error *err)
{
    orc_cursor *c = &d->in;
    uint8_t h = 0;
    ICD_TRY(next_byte(c, "integer RLE v2 stream (more values expected)", &h, err));
    switch (h >> 6) {
    case 0:
        ICD_TRY(rle2_short_repeat(d, h, err));
        break;
    case 1:
        ICD_TRY(rle2_direct(d, h, err));
        break;
    case 2:
        ICD_TRY(rle2_patched_base(d, h, err));
        break;
    default:
        ICD_TRY(rle2_delta(d, h, err));
        break;
    }
    d->pos = 0;
    return 0;
}

int orc_int_rle_next(orc_int_rle *d, int64_t *out, size_t count, icd_error *err)
{
    while (count) {
        if (d->pos == d->n) ICD_TRY(d->v2 ? rle2_fill(d, err) : rle1_fill(d, err));
        size_t k = d->n - d->pos < count ? d->n - d->pos : count;
        memcpy(out, d->buf + d->pos, k * sizeof *out);
        d->pos += k;
        out += k;
        count -= k;
    }
    return 0;
}
