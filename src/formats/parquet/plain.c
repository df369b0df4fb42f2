/*
 * The PLAIN encoding (0), the fallback every Parquet column can use: bit-packed booleans,
 * little-endian fixed-width values (INT32, INT64, INT96, FLOAT, DOUBLE,
 * FIXED_LEN_BYTE_ARRAY) copied as they are, and BYTE_ARRAY values as a 4-byte
 * little-endian length followed by the bytes (returned as pointers into the page). Also
 * the names of the Encoding enum for messages.
 */
#include <stdio.h>

#include "formats/parquet/bitpack.h"
#include "formats/parquet/encodings.h"

const char *pq_encoding_name(int encoding)
{
    switch (encoding) {
    case PQ_ENC_PLAIN:
        return "PLAIN";
    case 1:
        return "GROUP_VAR_INT";
    case PQ_ENC_PLAIN_DICTIONARY:
        return "PLAIN_DICTIONARY";
    case PQ_ENC_RLE:
        return "RLE";
    case PQ_ENC_BIT_PACKED:
        return "BIT_PACKED";
    case PQ_ENC_DELTA_BINARY_PACKED:
        return "DELTA_BINARY_PACKED";
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        return "DELTA_LENGTH_BYTE_ARRAY";
    case PQ_ENC_DELTA_BYTE_ARRAY:
        return "DELTA_BYTE_ARRAY";
    case PQ_ENC_RLE_DICTIONARY:
        return "RLE_DICTIONARY";
    case PQ_ENC_BYTE_STREAM_SPLIT:
        return "BYTE_STREAM_SPLIT";
    case 10:
        return "ALP";
    default: {
        static _Thread_local char unknown[32];
        snprintf(unknown, sizeof unknown, "UNKNOWN(%d)", encoding);
        return unknown;
    }
    }
}

int pq_plain_bool(const uint8_t *p, size_t n, size_t count, uint8_t *out, size_t *used,
                  icd_error *err)
{
    size_t bytes = count / 8 + (count % 8 != 0);
    if (bytes > n)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "PLAIN: %zu booleans need %zu bytes, %zu present", count, bytes, n);
    size_t full = count / 8;
    for (size_t b = 0; b < full; b++) {
        unsigned v = p[b];
        uint8_t *o = out + b * 8;
        for (int i = 0; i < 8; i++)
            o[i] = (uint8_t)((v >> i) & 1u);
    }
    for (size_t i = full * 8; i < count; i++)
        out[i] = (uint8_t)((p[i / 8] >> (i % 8)) & 1u);
    if (used) *used = bytes;
    return 0;
}

int pq_plain_byte_array(const uint8_t *p, size_t n, size_t count, pq_bytes *out, size_t *used,
                        icd_error *err)
{
    size_t pos = 0;
    for (size_t i = 0; i < count; i++) {
        if (n - pos < 4)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "PLAIN: byte array %zu of %zu: length cut short at byte %zu of %zu", i,
                            count, pos, n);
        uint32_t len = icd_load_le32(p + pos);
        pos += 4;
        if (len > n - pos)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "PLAIN: byte array %zu of %zu at byte %zu has length %u, %zu bytes "
                            "left",
                            i, count, pos - 4, len, n - pos);
        out[i].ptr = p + pos;
        out[i].len = len;
        pos += len;
    }
    if (used) *used = pos;
    return 0;
}

int pq_plain_fixed(const uint8_t *p, size_t n, size_t count, size_t width, void *out, size_t *used,
                   icd_error *err)
{
    if (width == 0) return icd_fail(err, ICD_EINVALID, NULL, -1, "PLAIN: value width 0");
    if (count > n / width)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "PLAIN: %zu values of %zu bytes do not fit in %zu bytes", count, width, n);
    size_t bytes = count * width;
    if (bytes) memcpy(out, p, bytes);
    if (used) *used = bytes;
    return 0;
}
