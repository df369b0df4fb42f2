/*
 * TEMPORARY BYTE_STREAM_SPLIT decoder (encodings.h) for testing the column reader; the
 * integrator replaces this file.
 */
#include "formats/parquet/encodings.h"

int pq_byte_stream_split(const uint8_t *p, size_t n, size_t total, size_t count, size_t width,
                         void *out, icd_error *err)
{
    if (count > total || (width && total > n / width))
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "BYTE_STREAM_SPLIT: page too short");
    uint8_t *o = out;
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; k < width; k++)
            o[i * width + k] = p[k * total + i];
    return 0;
}
