/*
 * Avro object container writer (see writer.h): the inverse of container.c. Datums are
 * collected in one block buffer; when it reaches block_bytes the block is compressed and
 * written as count, size, bytes, sync marker. Used by `icedruid stage` for the
 * materialized files of Avro tables (through writer_ice.c).
 */
#include "base/varint.h"
#include "formats/avro/writer.h"

#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

struct icd_avro_writer {
    icd_avro_write_fn write;
    void *ctx;
    uint8_t sync[16];
    icd_avro_codec codec;
    int level;
    size_t block_bytes;
    icd_buf block;  /* datums of the open block */
    size_t mark;    /* block.len at the start of the current datum */
    int64_t nblock; /* datums in the open block */
    int64_t count;
    icd_buf out; /* header / compressed block being written */
    icd_buf tmp;
    bool failed;
};

void icd_avro_put_long(icd_buf *b, int64_t v)
{
    icd_uleb128_put(b, icd_zigzag64(v));
}

void icd_avro_put_float(icd_buf *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    uint8_t t[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    icd_buf_append(b, t, 4);
}

void icd_avro_put_double(icd_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    uint8_t t[8];
    for (int i = 0; i < 8; i++)
        t[i] = (uint8_t)(u >> (8 * i));
    icd_buf_append(b, t, 8);
}

void icd_avro_put_bytes(icd_buf *b, const void *p, size_t n)
{
    icd_avro_put_long(b, (int64_t)n);
    icd_buf_append(b, p, n);
}

static int emit(icd_avro_writer *w, const icd_buf *b, icd_error *err)
{
    if (!icd_buf_ok(b)) {
        w->failed = true;
        return icd_fail_nomem(err);
    }
    int rc = w->write(w->ctx, b->data, b->len, err);
    if (rc) w->failed = true;
    return rc;
}

int icd_avro_writer_new(const char *schema_json, const uint8_t sync[16],
                        const icd_avro_write_options *opt, icd_avro_write_fn write, void *ctx,
                        icd_avro_writer **out, icd_error *err)
{
    *out = NULL;
    icd_avro_writer *w = calloc(1, sizeof *w);
    if (!w) return icd_fail_nomem(err);
    w->write = write;
    w->ctx = ctx;
    memcpy(w->sync, sync, 16);
    w->codec = opt ? opt->codec : AVRO_CODEC_NULL;
    w->level = opt ? opt->level : 0;
    w->block_bytes = opt && opt->block_bytes ? opt->block_bytes : (size_t)1 << 20;
    icd_buf *b = &w->out;
    icd_buf_append(b, "Obj\x01", 4);
    size_t nmeta = 0;
    for (size_t i = 0; opt && opt->meta && opt->meta[i] && opt->meta[i + 1]; i += 2)
        nmeta++;
    icd_avro_put_long(b, (int64_t)(2 + nmeta));
    icd_avro_put_bytes(b, "avro.schema", 11);
    icd_avro_put_bytes(b, schema_json, strlen(schema_json));
    icd_avro_put_bytes(b, "avro.codec", 10);
    const char *cn = icd_avro_codec_name(w->codec);
    icd_avro_put_bytes(b, cn, strlen(cn));
    for (size_t i = 0; i < 2 * nmeta; i += 2) {
        icd_avro_put_bytes(b, opt->meta[i], strlen(opt->meta[i]));
        icd_avro_put_bytes(b, opt->meta[i + 1], strlen(opt->meta[i + 1]));
    }
    icd_avro_put_long(b, 0);
    icd_buf_append(b, w->sync, 16);
    int rc = emit(w, b, err);
    icd_buf_clear(b);
    if (rc) {
        icd_avro_writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

icd_buf *icd_avro_writer_datum(icd_avro_writer *w)
{
    return &w->block;
}

void icd_avro_writer_drop_datum(icd_avro_writer *w)
{
    w->block.len = w->mark;
}

/* Compresses block -> tmp (the codec's framing included). */
static int compress_block(icd_avro_writer *w, const uint8_t **p, size_t *n, icd_error *err)
{
    const icd_buf *src = &w->block;
    icd_buf *t = &w->tmp;
    icd_buf_clear(t);
    switch (w->codec) {
    case AVRO_CODEC_NULL:
        *p = (const uint8_t *)src->data;
        *n = src->len;
        return 0;
    case AVRO_CODEC_DEFLATE: { /* raw deflate, no zlib header (Avro spec) */
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (deflateInit2(&zs, w->level ? w->level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK)
            return icd_fail_nomem(err);
        uLong cap = deflateBound(&zs, (uLong)src->len);
        if (!icd_buf_grow(t, cap)) {
            deflateEnd(&zs);
            return icd_fail_nomem(err);
        }
        zs.next_in = (Bytef *)src->data;
        zs.avail_in = (uInt)src->len;
        zs.next_out = (Bytef *)t->data;
        zs.avail_out = (uInt)cap;
        int zr = deflate(&zs, Z_FINISH);
        size_t got = cap - zs.avail_out;
        deflateEnd(&zs);
        if (zr != Z_STREAM_END)
            return icd_fail(err, ICD_EINTERNAL, NULL, -1, "deflate of an Avro block failed");
        t->len = got;
        break;
    }
    case AVRO_CODEC_SNAPPY: { /* snappy + big-endian CRC32 of the uncompressed bytes */
        size_t cap = snappy_max_compressed_length(src->len);
        if (!icd_buf_grow(t, cap + 4)) return icd_fail_nomem(err);
        size_t got = cap;
        if (snappy_compress(src->data, src->len, t->data, &got) != SNAPPY_OK)
            return icd_fail(err, ICD_EINTERNAL, NULL, -1, "snappy of an Avro block failed");
        uint32_t crc = (uint32_t)crc32(0L, (const Bytef *)src->data, (uInt)src->len);
        uint8_t be[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8),
                         (uint8_t)crc};
        memcpy(t->data + got, be, 4);
        t->len = got + 4;
        break;
    }
    case AVRO_CODEC_ZSTD: {
        size_t cap = ZSTD_compressBound(src->len);
        if (!icd_buf_grow(t, cap)) return icd_fail_nomem(err);
        size_t got = ZSTD_compress(t->data, cap, src->data, src->len, w->level ? w->level : 3);
        if (ZSTD_isError(got))
            return icd_fail(err, ICD_EINTERNAL, NULL, -1, "zstd of an Avro block failed: %s",
                            ZSTD_getErrorName(got));
        t->len = got;
        break;
    }
    }
    *p = (const uint8_t *)t->data;
    *n = t->len;
    return 0;
}

static int flush_block(icd_avro_writer *w, icd_error *err)
{
    if (!w->nblock) return 0;
    if (!icd_buf_ok(&w->block)) return icd_fail_nomem(err);
    const uint8_t *p = NULL;
    size_t n = 0;
    ICD_TRY(compress_block(w, &p, &n, err));
    icd_buf *o = &w->out;
    icd_buf_clear(o);
    icd_avro_put_long(o, w->nblock);
    icd_avro_put_long(o, (int64_t)n);
    icd_buf_append(o, p, n);
    icd_buf_append(o, w->sync, 16);
    ICD_TRY(emit(w, o, err));
    icd_buf_clear(o);
    icd_buf_clear(&w->block);
    w->mark = 0;
    w->nblock = 0;
    return 0;
}

int icd_avro_writer_end_datum(icd_avro_writer *w, icd_error *err)
{
    if (w->failed) return icd_fail(err, ICD_EINTERNAL, NULL, -1, "Avro writer failed earlier");
    if (!icd_buf_ok(&w->block)) return icd_fail_nomem(err);
    w->nblock++;
    w->count++;
    w->mark = w->block.len;
    if (w->block.len >= w->block_bytes) return flush_block(w, err);
    return 0;
}

int icd_avro_writer_close(icd_avro_writer *w, icd_error *err)
{
    if (w->failed) return icd_fail(err, ICD_EINTERNAL, NULL, -1, "Avro writer failed earlier");
    w->block.len = w->mark;
    return flush_block(w, err);
}

int64_t icd_avro_writer_count(const icd_avro_writer *w)
{
    return w->count;
}

void icd_avro_writer_free(icd_avro_writer *w)
{
    if (!w) return;
    icd_buf_free(&w->block);
    icd_buf_free(&w->out);
    icd_buf_free(&w->tmp);
    free(w);
}
