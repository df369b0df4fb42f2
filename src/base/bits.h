/*
 * Little- and big-endian loads and bit-array helpers shared by the decoders (Roaring bitmaps,
 * position sets, bit-packed runs). Header-only: they sit in inner loops.
 */
#ifndef ICD_BASE_BITS_H
#define ICD_BASE_BITS_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t icd_load_le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t icd_load_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static inline uint32_t icd_load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t icd_load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* Clears bits [from, to) of the bit array `w` (bit i = word i/64, bit i%64). */
static inline void icd_bits_clear_range(uint64_t *w, uint64_t from, uint64_t to)
{
    assert(from <= to); /* else to - from wraps and the memset below runs off the array */
    while (from < to && (from & 63)) {
        w[from >> 6] &= ~((uint64_t)1 << (from & 63));
        from++;
    }
    if (to - from >= 64) {
        memset(w + (from >> 6), 0, (size_t)((to - from) >> 6) * sizeof *w);
        from += (to - from) & ~(uint64_t)63;
    }
    for (; from < to; from++)
        w[from >> 6] &= ~((uint64_t)1 << (from & 63));
}

#endif
