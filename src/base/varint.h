/*
 * Base-128 varints (unsigned LEB128: 7 bits a byte, low group first, high bit = more) and
 * zigzag, the one copy used by every format that writes them: Avro longs, ORC RLE and
 * decimals, Parquet RLE headers and DELTA blocks, Thrift's compact protocol.
 * Header-only: they sit in inner loops. Decoding never reads at or past `end`; the caller
 * turns the two failure codes into its own error (what, which file, where).
 */
#ifndef ICD_BASE_VARINT_H
#define ICD_BASE_VARINT_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bits.h"
#include "base/buf.h"

/* A varint of at most 10 bytes encodes any 64-bit value. */
#define ICD_VARINT_MAX 10

enum {
    ICD_VARINT_TRUNCATED = -1, /* the data ends inside the varint */
    ICD_VARINT_OVERFLOW = -2   /* longer than 10 bytes, or bits beyond 64 */
};

/* icd_uleb128_decode where ICD_VARINT_MAX bytes can be read at p (no bounds checks):
 * a word at a time, the first byte without the high bit ending the varint and its bytes'
 * 7-bit groups packed together in three steps (sizes, counts, snapshot ids take several
 * bytes). The same results as the byte-by-byte loop below. */
static inline int icd_uleb128_decode10(const uint8_t *p, uint64_t *out)
{
    uint64_t w = icd_load_le64(p);
    uint64_t ends = ~w & 0x8080808080808080ull;
    int n = 8;
    if (ends) {
        w &= ends ^ (ends - 1); /* (the varint's bytes: up to its last byte's high bit) */
        n = __builtin_ctzll(ends) / 8 + 1;
    }
    w &= 0x7f7f7f7f7f7f7f7full;
    w = (w & 0x007f007f007f007full) | (w & 0x7f007f007f007f00ull) >> 1;
    w = (w & 0x00003fff00003fffull) | (w & 0x3fff00003fff0000ull) >> 2;
    uint64_t v = (w & 0x000000000fffffffull) | (w & 0x0fffffff00000000ull) >> 4;
    if (!ends) { /* 9 or 10 bytes */
        v |= (uint64_t)(p[8] & 0x7f) << 56;
        n = 9;
        if (p[8] & 0x80) {
            if (p[9] > 1) return ICD_VARINT_OVERFLOW; /* bits beyond 64, or an 11th byte */
            v |= (uint64_t)p[9] << 63;
            n = 10;
        }
    }
    *out = v;
    return n;
}

/* Decodes the varint at p (p <= end). Returns the number of bytes it takes (1 to 10) and
 * sets *out, or ICD_VARINT_TRUNCATED / ICD_VARINT_OVERFLOW and leaves *out alone. */
static inline int icd_uleb128_decode(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
    assert(p <= end);
    if (p < end && *p < 0x80) { /* one byte: most counts, lengths and headers */
        *out = *p;
        return 1;
    }
    if (end - p >= ICD_VARINT_MAX) return icd_uleb128_decode10(p, out);
    uint64_t v = 0;
    for (int i = 0; i < ICD_VARINT_MAX; i++) {
        if (p + i >= end) return ICD_VARINT_TRUNCATED;
        uint8_t b = p[i];
        if (i == ICD_VARINT_MAX - 1 && b > 1) return ICD_VARINT_OVERFLOW; /* bits beyond 64 */
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return ICD_VARINT_OVERFLOW; /* not reached: the tenth byte is 0 or 1 */
}

/* Appends the varint of v to b (an allocation failure sticks in b, see buf.h). */
static inline void icd_uleb128_put(icd_buf *b, uint64_t v)
{
    uint8_t tmp[ICD_VARINT_MAX];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    icd_buf_append(b, tmp, n);
}

/* Zigzag: 0, -1, 1, -2 ... <-> 0, 1, 2, 3 ... */
static inline uint64_t icd_zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (0 - ((uint64_t)v >> 63));
}

static inline int64_t icd_unzigzag64(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

#endif
