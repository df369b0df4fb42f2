/*
 * BYTE_STREAM_SPLIT (9): a page of N values of K bytes is stored as K streams of N bytes,
 * stream k holding byte k of every value (FLOAT16 K=2, FLOAT/INT32 K=4, DOUBLE/INT64 K=8,
 * FIXED_LEN_BYTE_ARRAY any K). The encoding has no header, so the page's value section
 * must be exactly N * K bytes; decoding gathers the bytes back into little-endian values.
 */
#include <string.h>

#include "formats/parquet/encodings.h"

/* Fixed-width gathers with the stream stride known, so the compiler keeps K pointers. */
static void bss_gather2(const uint8_t *p, size_t total, size_t count, uint8_t *o)
{
    const uint8_t *s0 = p, *s1 = p + total;
    for (size_t i = 0; i < count; i++) {
        o[2 * i] = s0[i];
        o[2 * i + 1] = s1[i];
    }
}

/* Widths 4 and 8 assemble each value in a register and store it whole. */
static inline void store_le(uint8_t *d, uint64_t v, size_t width)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(d, &v, width);
#else
    for (size_t k = 0; k < width; k++)
        d[k] = (uint8_t)(v >> (8 * k));
#endif
}

static void bss_gather4(const uint8_t *p, size_t total, size_t count, uint8_t *o)
{
    const uint8_t *s0 = p, *s1 = p + total, *s2 = p + 2 * total, *s3 = p + 3 * total;
    for (size_t i = 0; i < count; i++) {
        uint64_t v =
            (uint64_t)s0[i] | (uint64_t)s1[i] << 8 | (uint64_t)s2[i] << 16 | (uint64_t)s3[i] << 24;
        store_le(o + 4 * i, v, 4);
    }
}

static void bss_gather8(const uint8_t *p, size_t total, size_t count, uint8_t *o)
{
    const uint8_t *s0 = p, *s1 = p + total, *s2 = p + 2 * total, *s3 = p + 3 * total;
    const uint8_t *s4 = p + 4 * total, *s5 = p + 5 * total, *s6 = p + 6 * total,
                  *s7 = p + 7 * total;
    for (size_t i = 0; i < count; i++) {
        uint64_t v = (uint64_t)s0[i] | (uint64_t)s1[i] << 8 | (uint64_t)s2[i] << 16 |
                     (uint64_t)s3[i] << 24 | (uint64_t)s4[i] << 32 | (uint64_t)s5[i] << 40 |
                     (uint64_t)s6[i] << 48 | (uint64_t)s7[i] << 56;
        store_le(o + 8 * i, v, 8);
    }
}

int pq_byte_stream_split(const uint8_t *p, size_t n, size_t total, size_t count, size_t width,
                         void *out, icd_error *err)
{
    if (width == 0)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "BYTE_STREAM_SPLIT: value width 0");
    if (count > total)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "BYTE_STREAM_SPLIT: %zu values asked of a page of %zu", count, total);
    if (total > SIZE_MAX / width || total * width != n)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "BYTE_STREAM_SPLIT: page has %zu bytes, %zu values of %zu bytes need "
                        "exactly %zu",
                        n, total, width, total <= SIZE_MAX / width ? total * width : SIZE_MAX);
    uint8_t *o = out;
    switch (width) {
    case 2:
        bss_gather2(p, total, count, o);
        break;
    case 4:
        bss_gather4(p, total, count, o);
        break;
    case 8:
        bss_gather8(p, total, count, o);
        break;
    default:
        /* Stream by stream: reads stay sequential, writes are strided. */
        for (size_t k = 0; k < width; k++) {
            const uint8_t *s = p + k * total;
            for (size_t i = 0; i < count; i++)
                o[i * width + k] = s[i];
        }
    }
    return 0;
}
