/*
 * A tiny test-only Avro writer: binary encoding of primitives (zigzag varints, LE floats,
 * length-prefixed bytes) and whole container files with any codec. It is written from the
 * Avro specification, independently of the reader under test, so the unit tests and the
 * fuzz seed generator can build exact files (including corrupt ones) by hand.
 */
#ifndef ICD_TEST_AVRO_WRITER_H
#define ICD_TEST_AVRO_WRITER_H

#include <snappy-c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "base/buf.h"

static inline void aw_long(icd_buf *b, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (z >= 0x80) {
        icd_buf_putc(b, (char)((z & 0x7f) | 0x80));
        z >>= 7;
    }
    icd_buf_putc(b, (char)z);
}

static inline void aw_bytes(icd_buf *b, const void *p, size_t n)
{
    aw_long(b, (int64_t)n);
    icd_buf_append(b, p, n);
}

static inline void aw_str(icd_buf *b, const char *s)
{
    aw_bytes(b, s, strlen(s));
}

static inline void aw_float(icd_buf *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    for (int i = 0; i < 4; i++)
        icd_buf_putc(b, (char)(u >> (8 * i)));
}

static inline void aw_double(icd_buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    for (int i = 0; i < 8; i++)
        icd_buf_putc(b, (char)(u >> (8 * i)));
}

static const uint8_t AW_SYNC[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

/* Compresses one block's data as the codec wants it in a container file. */
static inline void aw_compress(icd_buf *out, const char *codec, const void *data, size_t n)
{
    if (!codec || !strcmp(codec, "null")) {
        icd_buf_append(out, data, n);
    } else if (!strcmp(codec, "deflate")) {
        /* zlib's compress2 wraps raw deflate in a 2-byte header and an adler32 trailer:
         * Avro wants the raw stream in between */
        uLongf cap = compressBound((uLong)n);
        unsigned char *tmp = malloc(cap);
        compress2(tmp, &cap, data, (uLong)n, 6);
        icd_buf_append(out, tmp + 2, cap - 6);
        free(tmp);
    } else if (!strcmp(codec, "snappy")) {
        size_t cap = snappy_max_compressed_length(n);
        char *tmp = malloc(cap);
        snappy_compress(data, n, tmp, &cap);
        icd_buf_append(out, tmp, cap);
        free(tmp);
        uint32_t crc = (uint32_t)crc32(0, data, (uInt)n);
        char be[4] = {(char)(crc >> 24), (char)(crc >> 16), (char)(crc >> 8), (char)crc};
        icd_buf_append(out, be, 4);
    } else if (!strcmp(codec, "zstandard")) {
        size_t cap = ZSTD_compressBound(n);
        char *tmp = malloc(cap);
        size_t got = ZSTD_compress(tmp, cap, data, n, 3);
        icd_buf_append(out, tmp, got);
        free(tmp);
    } else { /* unknown codecs: store as is (the reader must refuse the file) */
        icd_buf_append(out, data, n);
    }
}

/* File header: magic, metadata map {avro.schema, avro.codec, extra key/values}, sync. */
static inline void aw_header(icd_buf *f, const char *schema, const char *codec,
                             const char *const *extra_kv, size_t nextra)
{
    icd_buf_append(f, "Obj\x01", 4);
    aw_long(f, (int64_t)(1 + (codec ? 1u : 0u) + nextra));
    aw_str(f, "avro.schema");
    aw_str(f, schema);
    if (codec) {
        aw_str(f, "avro.codec");
        aw_str(f, codec);
    }
    for (size_t i = 0; i < nextra; i++) {
        aw_str(f, extra_kv[2 * i]);
        aw_str(f, extra_kv[2 * i + 1]);
    }
    aw_long(f, 0);
    icd_buf_append(f, AW_SYNC, 16);
}

/* One block: count, compressed size, data, sync. */
static inline void aw_block(icd_buf *f, const char *codec, int64_t count, const void *data,
                            size_t n)
{
    icd_buf c = ICD_BUF_INIT;
    aw_compress(&c, codec, data, n);
    aw_long(f, count);
    aw_long(f, (int64_t)c.len);
    icd_buf_append(f, c.data, c.len);
    icd_buf_append(f, AW_SYNC, 16);
    icd_buf_free(&c);
}

#endif
