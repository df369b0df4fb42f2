/*
 * Test helpers: build deletion-vector blobs with CRoaring's own portable serializer and
 * whole Puffin files around them, so the decoder is checked against an independent writer.
 */
#ifndef PUFFIN_TESTUTIL_H
#define PUFFIN_TESTUTIL_H

#include <lz4frame.h>
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/buf.h"

static inline void tu_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void tu_put_le(icd_buf *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        icd_buf_putc(b, (char)(uint8_t)(v >> (8 * i)));
}

/* Rewrites the length field and the CRC after a test edited the vector. */
static inline void tu_dv_fix(uint8_t *blob, size_t n)
{
    tu_be32(blob, (uint32_t)(n - 8));
    tu_be32(blob + n - 4, (uint32_t)crc32(0, blob + 4, (uInt)(n - 8)));
}

/* A DV blob of `count` (key, 32-bit bitmap) pairs, appended to `out`. Returns the blob's
 * offset in `out`. */
static inline size_t tu_dv_blob(icd_buf *out, const uint32_t *keys, roaring_bitmap_t *const *bms,
                                size_t count)
{
    size_t start = out->len;
    icd_buf_append(out, "\0\0\0\0\xD1\xD3\x39\x64", 8);
    tu_put_le(out, count, 8);
    for (size_t i = 0; i < count; i++) {
        tu_put_le(out, keys[i], 4);
        size_t sz = roaring_bitmap_portable_size_in_bytes(bms[i]);
        char *tmp = malloc(sz);
        roaring_bitmap_portable_serialize(bms[i], tmp);
        icd_buf_append(out, tmp, sz);
        free(tmp);
    }
    icd_buf_append(out, "\0\0\0\0", 4);
    tu_dv_fix((uint8_t *)out->data + start, out->len - start);
    return start;
}

/* A Puffin file: magic, the blob bytes, then a footer whose JSON is `json` (LZ4 frame
 * when `compress`). */
static inline void tu_puffin_file(icd_buf *out, const uint8_t *blobs, size_t blobs_len,
                                  const char *json, int compress)
{
    icd_buf_append(out, "PFA1", 4);
    icd_buf_append(out, blobs, blobs_len);
    icd_buf_append(out, "PFA1", 4);
    size_t jl = strlen(json), plen = jl;
    if (compress) {
        LZ4F_preferences_t prefs;
        memset(&prefs, 0, sizeof prefs);
        prefs.frameInfo.contentSize = jl;
        size_t cap = LZ4F_compressFrameBound(jl, &prefs);
        char *c = malloc(cap);
        plen = LZ4F_compressFrame(c, cap, json, jl, &prefs);
        icd_buf_append(out, c, plen);
        free(c);
    } else {
        icd_buf_append(out, json, jl);
    }
    tu_put_le(out, plen, 4);
    tu_put_le(out, compress ? 1 : 0, 4);
    icd_buf_append(out, "PFA1", 4);
}

static inline int tu_write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, n, f);
    fclose(f);
    return w == n ? 0 : -1;
}

#endif
