/*
 * TEMPORARY RLE/bit-packing hybrid and BIT_PACKED decoders (encodings.h) for testing the
 * column reader; the integrator replaces this file.
 */
#include "formats/parquet/encodings.h"

int pq_rle_decode(const uint8_t *p, size_t n, int bw, uint32_t *out, size_t count,
                  size_t *used, icd_error *err)
{
    if (bw < 0 || bw > 32)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "RLE: invalid bit width %d", bw);
    size_t off = 0, got = 0;
    size_t vbytes = ((size_t)bw + 7) / 8;
    uint64_t mask = bw == 32 ? 0xffffffffu : ((uint64_t)1 << bw) - 1;
    while (got < count) {
        uint64_t h = 0;
        int shift = 0;
        for (;;) {
            if (off >= n)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1, "RLE: stream ends early");
            uint8_t b = p[off++];
            if (shift < 64)
                h |= (uint64_t)(b & 0x7f) << shift;
            shift += 7;
            if (!(b & 0x80))
                break;
            if (shift > 63)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1, "RLE: bad header");
        }
        if (h & 1) {
            uint64_t groups = h >> 1;
            if (groups == 0 || groups > ((uint64_t)1 << 40))
                return icd_fail(err, ICD_ECORRUPT, NULL, -1, "RLE: bad bit-packed run");
            uint64_t nvals = groups * 8;
            uint64_t nbytes = groups * (uint64_t)bw;
            size_t take = nvals < count - got ? (size_t)nvals : count - got;
            uint64_t need = ((uint64_t)take * (uint64_t)bw + 7) / 8;
            if (need > n - off)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1, "RLE: bit-packed run truncated");
            const uint8_t *q = p + off;
            uint64_t bit = 0;
            for (size_t i = 0; i < take; i++, bit += (uint64_t)bw) {
                uint64_t v = 0;
                for (int k = 0; k < bw; k++) {
                    uint64_t b = bit + (uint64_t)k;
                    v |= (uint64_t)((q[b >> 3] >> (b & 7)) & 1) << k;
                }
                out[got + i] = (uint32_t)v;
            }
            got += take;
            off += nbytes <= n - off ? (size_t)nbytes : n - off;
        } else {
            uint64_t run = h >> 1;
            if (vbytes > n - off)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1, "RLE: run value truncated");
            uint64_t v = 0;
            for (size_t k = 0; k < vbytes; k++)
                v |= (uint64_t)p[off + k] << (8 * k);
            off += vbytes;
            if (v > mask)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1, "RLE: value exceeds bit width");
            if (run == 0)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1, "RLE: empty run");
            size_t take = run < count - got ? (size_t)run : count - got;
            for (size_t i = 0; i < take; i++)
                out[got + i] = (uint32_t)v;
            got += take;
        }
    }
    if (used)
        *used = off;
    return 0;
}

int pq_bit_packed_decode(const uint8_t *p, size_t n, int bw, uint32_t *out, size_t count,
                         size_t *used, icd_error *err)
{
    if (bw < 0 || bw > 32)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "BIT_PACKED: invalid bit width");
    uint64_t bytes = ((uint64_t)count * (uint64_t)bw + 7) / 8;
    if (bytes > n)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "BIT_PACKED: levels truncated");
    uint64_t bit = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t v = 0;
        for (int k = 0; k < bw; k++, bit++)
            v = (v << 1) | ((p[bit >> 3] >> (7 - (bit & 7))) & 1);
        out[i] = v;
    }
    if (used)
        *used = (size_t)bytes;
    return 0;
}
