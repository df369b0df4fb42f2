/*
 * LSB-first bit unpacking for the Parquet decoders (see bitpack.h): the hot inner loop of
 * RLE/bit-packed dictionary indices and levels (rle.c) and of DELTA_BINARY_PACKED
 * miniblocks (delta.c).
 *
 * A group of 8 values of width w is exactly w bytes. The generic kernel reads each value
 * through one unaligned 64-bit little-endian window starting at the value's first byte; it
 * is instantiated once per width so that every shift and mask is a constant and the
 * 8-value loop unrolls. The window may read up to 8 (9 for 64-bit values) bytes past the
 * group, so groups near the end of the buffer go through a zero-padded copy instead.
 * Widths that are whole bytes (8, 16, 32, 64) and width 1 have dedicated kernels that
 * read only the group's own bytes.
 */
#include <assert.h>

#include "formats/parquet/bitpack.h"

#define PQ_ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---- 32-bit output (widths 0..32) ---- */

PQ_ALWAYS_INLINE void unpack8_32(const uint8_t *p, uint32_t *out, int w)
{
    const uint64_t mask = ((uint64_t)1 << w) - 1;
    for (int i = 0; i < 8; i++) {
        int bit = i * w;
        out[i] = (uint32_t)((icd_load_le64(p + (bit >> 3)) >> (bit & 7)) & mask);
    }
}

typedef void (*unpack32_fn)(const uint8_t *p, uint32_t *out, size_t groups);

#define PQ_DEF_UNPACK32(W)                                                                         \
    static void unpack32_w##W(const uint8_t *p, uint32_t *out, size_t groups)                      \
    {                                                                                              \
        for (size_t g = 0; g < groups; g++, p += (W), out += 8)                                    \
            unpack8_32(p, out, (W));                                                               \
    }
// clang-format off
#define PQ_REPEAT32(X)                                                                             \
    X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)         \
    X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)      \
    X(32)
// clang-format on
PQ_REPEAT32(PQ_DEF_UNPACK32)
#define PQ_REF_UNPACK32(W) unpack32_w##W,
static const unpack32_fn unpack32_generic[33] = {NULL, PQ_REPEAT32(PQ_REF_UNPACK32)};

/* Exact kernels: read only the group's own w bytes. */
static void unpack32_exact(const uint8_t *p, int w, uint32_t *out, size_t groups)
{
    size_t nv = groups * 8;
    switch (w) {
    case 1:
        for (size_t g = 0; g < groups; g++) {
            unsigned b = p[g];
            for (int i = 0; i < 8; i++)
                out[g * 8 + (size_t)i] = (b >> i) & 1u;
        }
        break;
    case 8:
        for (size_t i = 0; i < nv; i++)
            out[i] = p[i];
        break;
    case 16:
        for (size_t i = 0; i < nv; i++)
            out[i] = (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8;
        break;
    default: /* 32 */
        for (size_t i = 0; i < nv; i++)
            out[i] = icd_load_le32(p + 4 * i);
        break;
    }
}

void pq_unpack32(const uint8_t *p, size_t avail, int w, uint32_t *out, size_t groups)
{
    assert(w <= 32); /* bitpack.h: width 0..32 */
    if (w <= 0) {
        memset(out, 0, groups * 8 * sizeof *out);
        return;
    }
    size_t gw = (size_t)w;
    int exact = (w == 1 || w == 8 || w == 16 || w == 32);
    size_t slack = exact ? 0 : 8;
    size_t fast = avail >= slack ? (avail - slack) / gw : 0;
    if (fast > groups) fast = groups;
    if (exact)
        unpack32_exact(p, w, out, fast);
    else
        unpack32_generic[w](p, out, fast);
    /* Groups near (or past) the end of the buffer: from a zero-padded copy. */
    for (size_t g = fast; g < groups; g++) {
        uint8_t tmp[32 + 8] = {0};
        size_t start = g * gw;
        if (start < avail) {
            size_t have = avail - start;
            memcpy(tmp, p + start, have < gw ? have : gw);
        }
        unpack8_32(tmp, out + g * 8, w);
    }
}

/* ---- 64-bit output (widths 0..64) ---- */

PQ_ALWAYS_INLINE void unpack8_64(const uint8_t *p, uint64_t *out, int w)
{
    const uint64_t mask = w == 64 ? ~(uint64_t)0 : ((uint64_t)1 << (w & 63)) - 1;
    for (int i = 0; i < 8; i++) {
        int bit = i * w, s = bit & 7;
        const uint8_t *q = p + (bit >> 3);
        uint64_t v = icd_load_le64(q) >> s;
        if (w + s > 64) /* the value straddles a ninth byte (s > 0 here) */
            v |= (uint64_t)q[8] << ((64 - s) & 63);
        out[i] = v & mask;
    }
}

typedef void (*unpack64_fn)(const uint8_t *p, uint64_t *out, size_t groups);

#define PQ_DEF_UNPACK64(W)                                                                         \
    static void unpack64_w##W(const uint8_t *p, uint64_t *out, size_t groups)                      \
    {                                                                                              \
        for (size_t g = 0; g < groups; g++, p += (W), out += 8)                                    \
            unpack8_64(p, out, (W));                                                               \
    }
// clang-format off
#define PQ_REPEAT64(X)                                                                             \
    PQ_REPEAT32(X)                                                                                 \
    X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47)      \
    X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61) X(62)      \
    X(63) X(64)
// clang-format on
PQ_REPEAT64(PQ_DEF_UNPACK64)
#define PQ_REF_UNPACK64(W) unpack64_w##W,
static const unpack64_fn unpack64_generic[65] = {NULL, PQ_REPEAT64(PQ_REF_UNPACK64)};

void pq_unpack64(const uint8_t *p, size_t avail, int w, uint64_t *out, size_t groups)
{
    assert(w <= 64); /* bitpack.h: width 0..64 */
    if (w <= 0) {
        memset(out, 0, groups * 8 * sizeof *out);
        return;
    }
    size_t gw = (size_t)w;
    size_t fast;
    if (w == 64) {
        fast = avail / 64;
        if (fast > groups) fast = groups;
        for (size_t i = 0; i < fast * 8; i++)
            out[i] = icd_load_le64(p + 8 * i);
    } else {
        fast = avail >= 9 ? (avail - 9) / gw : 0;
        if (fast > groups) fast = groups;
        unpack64_generic[w](p, out, fast);
    }
    for (size_t g = fast; g < groups; g++) {
        uint8_t tmp[64 + 9] = {0};
        size_t start = g * gw;
        if (start < avail) {
            size_t have = avail - start;
            memcpy(tmp, p + start, have < gw ? have : gw);
        }
        unpack8_64(tmp, out + g * 8, w);
    }
}

/* ---- packing (the writer's side) ---- */

void pq_pack32(const uint32_t *in, size_t groups, int width, uint8_t *out)
{
    if (width == 0) return;
    for (size_t g = 0; g < groups; g++, in += 8) {
        uint64_t acc = 0;
        int bits = 0;
        for (int i = 0; i < 8; i++) {
            acc |= (uint64_t)in[i] << bits;
            bits += width;
            while (bits >= 8) {
                *out++ = (uint8_t)acc;
                acc >>= 8;
                bits -= 8;
            }
        }
        /* 8 * width bits are whole bytes: nothing is left over */
    }
}
