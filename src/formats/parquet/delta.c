/*
 * TEMPORARY DELTA_* decoders (encodings.h) for testing the column reader; the integrator
 * replaces this file.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/parquet/encodings.h"

static int uvar(const uint8_t *p, size_t n, size_t *off, uint64_t *v, icd_error *err)
{
    uint64_t x = 0;
    for (int s = 0; s < 64; s += 7) {
        if (*off >= n)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1, "DELTA: truncated varint");
        uint8_t b = p[(*off)++];
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return icd_fail(err, ICD_ECORRUPT, NULL, -1, "DELTA: bad varint");
}

static int zvar(const uint8_t *p, size_t n, size_t *off, int64_t *v, icd_error *err)
{
    uint64_t u;
    ICD_TRY(uvar(p, n, off, &u, err));
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return 0;
}

/* Decodes all values of a DELTA_BINARY_PACKED stream (total from the header), storing the
 * first `count` of them (out may be NULL to only measure). */
static int dbp(const uint8_t *p, size_t n, size_t count, int64_t *out, size_t *total_out,
               size_t *used, icd_error *err)
{
    size_t off = 0;
    uint64_t block, mbs, total;
    int64_t first;
    ICD_TRY(uvar(p, n, &off, &block, err));
    ICD_TRY(uvar(p, n, &off, &mbs, err));
    ICD_TRY(uvar(p, n, &off, &total, err));
    ICD_TRY(zvar(p, n, &off, &first, err));
    if (block == 0 || mbs == 0 || block % 128 || block % mbs || (block / mbs) % 32 ||
        block > (1u << 20) || total > ((uint64_t)1 << 40))
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "DELTA_BINARY_PACKED: bad header");
    if (out == NULL)
        count = 0;
    if (count > total)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "DELTA_BINARY_PACKED: fewer values than needed");
    uint64_t per_mb = block / mbs;
    uint64_t v = (uint64_t)first;
    if (count > 0)
        out[0] = first;
    uint64_t got = total ? 1 : 0;
    while (got < total) {
        int64_t min_delta;
        ICD_TRY(zvar(p, n, &off, &min_delta, err));
        if (mbs > n - off)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1, "DELTA_BINARY_PACKED: truncated");
        const uint8_t *widths = p + off;
        off += mbs;
        for (uint64_t m = 0; m < mbs && got < total; m++) {
            int bw = widths[m];
            if (bw > 64)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                                "DELTA_BINARY_PACKED: bit width > 64");
            uint64_t bytes = per_mb * (uint64_t)bw / 8;
            if (bytes > n - off)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1, "DELTA_BINARY_PACKED: truncated");
            const uint8_t *q = p + off;
            for (uint64_t i = 0; i < per_mb && got < total; i++) {
                uint64_t d = 0;
                uint64_t bit = i * (uint64_t)bw;
                for (int k = 0; k < bw; k++) {
                    uint64_t b = bit + (uint64_t)k;
                    d |= (uint64_t)((q[b >> 3] >> (b & 7)) & 1) << k;
                }
                v += (uint64_t)min_delta + d;
                if (got < count)
                    out[got] = (int64_t)v;
                got++;
            }
            off += (size_t)bytes;
        }
    }
    if (total_out)
        *total_out = (size_t)total;
    if (used)
        *used = off;
    return 0;
}

int pq_delta_binary_packed(const uint8_t *p, size_t n, size_t count, int64_t *out, size_t *used,
                           icd_error *err)
{
    int64_t dummy;
    return dbp(p, n, count, count ? out : &dummy, NULL, used, err);
}

int pq_delta_length_byte_array(const uint8_t *p, size_t n, size_t count, pq_bytes *out,
                               size_t *used, icd_error *err)
{
    size_t total, off;
    int64_t dummy;
    ICD_TRY(dbp(p, n, 0, &dummy, &total, &off, err));
    if (count > total)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "DELTA_LENGTH_BYTE_ARRAY: too few values");
    int64_t *lens = malloc(total ? total * sizeof *lens : 1);
    if (!lens)
        return icd_fail_nomem(err);
    int rc = dbp(p, n, total, lens, NULL, NULL, err);
    for (size_t i = 0; rc == 0 && i < total; i++) {
        if (lens[i] < 0 || (uint64_t)lens[i] > n - off) {
            rc = icd_fail(err, ICD_ECORRUPT, NULL, -1, "DELTA_LENGTH_BYTE_ARRAY: bad length");
            break;
        }
        if (i < count) {
            out[i].ptr = p + off;
            out[i].len = (uint32_t)lens[i];
        }
        off += (size_t)lens[i];
    }
    free(lens);
    if (rc == 0 && used)
        *used = off;
    return rc;
}

int pq_delta_byte_array(const uint8_t *p, size_t n, size_t count, pq_bytes *out,
                        icd_arena *arena, size_t *used, icd_error *err)
{
    size_t total, off;
    int64_t dummy;
    ICD_TRY(dbp(p, n, 0, &dummy, &total, &off, err));
    if (count > total)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "DELTA_BYTE_ARRAY: too few values");
    int64_t *pre = malloc(total ? total * sizeof *pre : 1);
    pq_bytes *suf = malloc(total ? total * sizeof *suf : 1);
    int rc = 0;
    size_t used2 = 0;
    if (!pre || !suf)
        rc = icd_fail_nomem(err);
    if (!rc)
        rc = dbp(p, n, total, pre, NULL, NULL, err);
    if (!rc)
        rc = pq_delta_length_byte_array(p + off, n - off, total, suf, &used2, err);
    pq_bytes prev = {NULL, 0};
    for (size_t i = 0; rc == 0 && i < count; i++) {
        if (pre[i] < 0 || (uint64_t)pre[i] > prev.len) {
            rc = icd_fail(err, ICD_ECORRUPT, NULL, -1, "DELTA_BYTE_ARRAY: bad prefix length");
            break;
        }
        size_t len = (size_t)pre[i] + suf[i].len;
        uint8_t *d = icd_arena_alloc(arena, len ? len : 1);
        if (!d) {
            rc = icd_fail_nomem(err);
            break;
        }
        if (pre[i])
            memcpy(d, prev.ptr, (size_t)pre[i]);
        if (suf[i].len)
            memcpy(d + pre[i], suf[i].ptr, suf[i].len);
        out[i].ptr = d;
        out[i].len = (uint32_t)len;
        prev = out[i];
    }
    free(pre);
    free(suf);
    if (rc == 0 && used)
        *used = off + used2;
    return rc;
}
