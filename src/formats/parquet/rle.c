/*
 * The RLE / bit-packing hybrid (Parquet encoding RLE = 3) and the legacy BIT_PACKED
 * level encoding (4). The hybrid carries definition and repetition levels, dictionary
 * indices and RLE booleans: the column reader strips any length or bit-width prefix and
 * hands the runs here, and gets back one uint32 per value.
 *
 * A run starts with a ULEB128 header h. h & 1 = 1: a bit-packed run of (h >> 1) groups of 8
 * values, LSB first, (h >> 1) * width bytes. h & 1 = 0: a repeated run of (h >> 1) copies of
 * one value stored in ceil(width / 8) little-endian bytes. Only `count` values are decoded:
 * the last bit-packed group may hold padding, and a final bit-packed run whose padding
 * bytes are missing at the very end of the buffer is accepted (its values are all there).
 * pq_rle_encode writes the same runs for the Parquet writer.
 */
#include <assert.h>
#include <string.h>

#include "base/varint.h"
#include "base/buf.h"
#include "formats/parquet/bitpack.h"
#include "formats/parquet/encodings.h"

static int rle_bit_width_ok(int bit_width, const char *what, icd_error *err)
{
    if (bit_width < 0 || bit_width > 32)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "%s: bit width %d is out of range 0..32", what,
                        bit_width);
    return 0;
}

/* Bit width 0: every value is 0 whatever the runs say, so the runs are only walked to
 * report how many bytes they take; a stream that ends early loses nothing. */
static void rle_decode_width0(const uint8_t *p, size_t n, uint32_t *out, size_t count, size_t *used)
{
    size_t pos = 0, k = 0;
    while (k < count && pos < n) {
        uint64_t h;
        if (pq_read_uleb(p, n, &pos, &h)) break;
        uint64_t run = (h & 1) ? (h >> 1 > UINT64_MAX / 8 ? UINT64_MAX : (h >> 1) * 8) : h >> 1;
        k += run >= count - k ? count - k : (size_t)run;
    }
    memset(out, 0, count * sizeof *out);
    if (used) *used = pos;
}

/* Bytes that the first m values of a bit-packed run take, without overflow. */
static inline uint64_t packed_bytes(uint64_t m, int bit_width)
{
    return (m / 8) * (uint64_t)bit_width + ((m % 8) * (uint64_t)bit_width + 7) / 8;
}

int pq_rle_decode(const uint8_t *p, size_t n, int bit_width, uint32_t *out, size_t count,
                  size_t *used, icd_error *err)
{
    ICD_TRY(rle_bit_width_ok(bit_width, "RLE", err));
    if (count == 0) {
        if (used) *used = 0;
        return 0;
    }
    if (bit_width == 0) {
        rle_decode_width0(p, n, out, count, used);
        return 0;
    }
    const size_t value_bytes = ((size_t)bit_width + 7) / 8;
    const uint32_t max_value = bit_width == 32 ? UINT32_MAX : (1u << bit_width) - 1;
    size_t pos = 0, k = 0;
    while (k < count) {
        if (pos >= n)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "RLE: stream of %zu bytes ends after %zu of %zu values", n, k, count);
        size_t header_at = pos;
        uint64_t h;
        if (pq_read_uleb(p, n, &pos, &h))
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "RLE: truncated or overlong run header at byte %zu of %zu", header_at,
                            n);
        size_t need = count - k;
        if (h & 1) {
            uint64_t groups = h >> 1;
            size_t m = groups >= (need + 7) / 8 ? need : (size_t)groups * 8;
            uint64_t needed = packed_bytes(m, bit_width);
            size_t left = n - pos;
            if (needed > left)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                                "RLE: bit-packed run at byte %zu needs %llu bytes for %zu values, "
                                "%zu left",
                                header_at, (unsigned long long)needed, m, left);
            size_t full_groups = m / 8, rest = m % 8;
            pq_unpack32(p + pos, left, bit_width, out + k, full_groups);
            if (rest) {
                uint32_t tmp[8];
                size_t off = full_groups * (size_t)bit_width;
                pq_unpack32(p + pos + off, left - off, bit_width, tmp, 1);
                memcpy(out + k + full_groups * 8, tmp, rest * sizeof *tmp);
            }
            k += m;
            /* The whole run, padding included; a run cut short at the buffer's end
             * can only be the last one (all its needed values were present). */
            uint64_t run_bytes = groups > left / (size_t)bit_width ? (uint64_t)left + 1
                                                                   : groups * (uint64_t)bit_width;
            pos = run_bytes > left ? n : pos + (size_t)run_bytes;
        } else {
            uint64_t run = h >> 1;
            if (value_bytes > n - pos)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                                "RLE: repeated run at byte %zu is cut short (value needs %zu "
                                "bytes, %zu left)",
                                header_at, value_bytes, n - pos);
            uint32_t v = 0;
            for (size_t i = 0; i < value_bytes; i++)
                v |= (uint32_t)p[pos + i] << (8 * i);
            pos += value_bytes;
            if (v > max_value)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                                "RLE: repeated value %u at byte %zu does not fit bit width %d", v,
                                header_at, bit_width);
            size_t m = run >= need ? need : (size_t)run;
            for (size_t i = 0; i < m; i++)
                out[k + i] = v;
            k += m;
        }
    }
    if (used) *used = pos;
    return 0;
}

/* Big-endian 64-bit window at byte `off`, zero past the end of the buffer. */
static inline uint64_t load_be64_padded(const uint8_t *p, size_t n, size_t off)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (off + (size_t)i < n ? p[off + (size_t)i] : 0);
    return v;
}

int pq_bit_packed_decode(const uint8_t *p, size_t n, int bit_width, uint32_t *out, size_t count,
                         size_t *used, icd_error *err)
{
    ICD_TRY(rle_bit_width_ok(bit_width, "BIT_PACKED", err));
    if (count > SIZE_MAX / 64)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "BIT_PACKED: value count %zu is too large",
                        count);
    size_t bytes = (count * (size_t)bit_width + 7) / 8;
    if (bytes > n)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "BIT_PACKED: %zu values of %d bits need %zu bytes, %zu present", count,
                        bit_width, bytes, n);
    if (bit_width == 0) {
        if (count) memset(out, 0, count * sizeof *out);
    } else {
        /* MSB first: value i is the bit_width bits that start at bit i * bit_width counting
         * from the top bit of byte 0. */
        for (size_t i = 0; i < count; i++) {
            size_t bit = i * (size_t)bit_width, off = bit >> 3;
            uint64_t w;
            if (off + 8 <= n) {
                w = 0;
                for (int j = 0; j < 8; j++)
                    w = w << 8 | p[off + (size_t)j];
            } else {
                w = load_be64_padded(p, n, off);
            }
            out[i] = (uint32_t)((w << (bit & 7)) >> (64 - bit_width));
        }
    }
    if (used) *used = bytes;
    return 0;
}

/* ---- encoder (the writer's side) ---- */

int pq_bit_width(uint64_t max)
{
    int w = 0;
    while (max) {
        w++;
        max >>= 1;
    }
    return w;
}

/* Length of the run of equal values starting at v[i] (at most n - i). */
static size_t run_at(const uint32_t *v, size_t n, size_t i)
{
    size_t j = i + 1;
    while (j < n && v[j] == v[i])
        j++;
    return j - i;
}

void pq_rle_encode(const uint32_t *v, size_t n, int bit_width, icd_buf *out)
{
    assert(bit_width >= 1 && bit_width <= 32); /* encodings.h: 1..32 */
    size_t vbytes = ((size_t)bit_width + 7) / 8;
    size_t i = 0;
    while (i < n) {
        size_t r = run_at(v, n, i);
        if (r >= 8 || i + r == n) {
            icd_uleb128_put(out, (uint64_t)r << 1);
            uint8_t b[4];
            for (size_t k = 0; k < vbytes; k++)
                b[k] = (uint8_t)(v[i] >> (8 * k));
            icd_buf_append(out, b, vbytes);
            i += r;
            continue;
        }
        /* Bit-packed groups of 8 until a group boundary where a long run starts (or the
         * end; only the very last group is padded). */
        size_t j = i;
        for (;;) {
            j += 8;
            if (j >= n) break;
            if (run_at(v, j + 8 < n ? j + 8 : n, j) >= 8) break;
        }
        size_t groups = (j - i) / 8;
        icd_uleb128_put(out, ((uint64_t)groups << 1) | 1);
        size_t nbytes = groups * (size_t)bit_width;
        if (!icd_buf_grow(out, nbytes + 1)) return;
        uint8_t *dst = (uint8_t *)out->data + out->len;
        if (j <= n) {
            pq_pack32(v + i, groups, bit_width, dst);
        } else {
            size_t full = (n - i) / 8;
            pq_pack32(v + i, full, bit_width, dst);
            uint32_t last[8] = {0};
            memcpy(last, v + i + full * 8, (n - i - full * 8) * sizeof *v);
            pq_pack32(last, 1, bit_width, dst + full * (size_t)bit_width);
        }
        out->len += nbytes;
        out->data[out->len] = '\0';
        i = j < n ? j : n;
    }
}
