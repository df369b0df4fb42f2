/*
 * TEMPORARY PLAIN decoders (encodings.h) so the column reader can be tested before the
 * real decoders land; the integrator replaces this file.
 */
#include <string.h>

#include "formats/parquet/encodings.h"

int pq_plain_bool(const uint8_t *p, size_t n, size_t count, uint8_t *out, size_t *used,
                  icd_error *err)
{
    size_t bytes = (count + 7) / 8;
    if (bytes > n)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "PLAIN booleans: page too short");
    for (size_t i = 0; i < count; i++)
        out[i] = (p[i >> 3] >> (i & 7)) & 1;
    if (used)
        *used = bytes;
    return 0;
}

int pq_plain_byte_array(const uint8_t *p, size_t n, size_t count, pq_bytes *out, size_t *used,
                        icd_error *err)
{
    size_t off = 0;
    for (size_t i = 0; i < count; i++) {
        if (n - off < 4)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1, "PLAIN byte array: page too short");
        uint32_t len = (uint32_t)p[off] | (uint32_t)p[off + 1] << 8 |
                       (uint32_t)p[off + 2] << 16 | (uint32_t)p[off + 3] << 24;
        off += 4;
        if (len > n - off)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "PLAIN byte array: value length exceeds the page");
        out[i].ptr = p + off;
        out[i].len = len;
        off += len;
    }
    if (used)
        *used = off;
    return 0;
}

int pq_plain_fixed(const uint8_t *p, size_t n, size_t count, size_t width, void *out,
                   size_t *used, icd_error *err)
{
    if (width && count > n / width)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "PLAIN: page too short");
    if (count && width)
        memcpy(out, p, count * width);
    if (used)
        *used = count * width;
    return 0;
}
