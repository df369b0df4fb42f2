/*
 * Decompression over zlib, snappy, zstd, lz4 and brotli (decompress.h). Every codec writes
 * through one output window: the caller's fixed buffer (when it is full and the stream
 * goes on, the decoder gets a small scratch buffer; anything landing there means "more
 * than cap bytes") or a growing icd_buf bounded by `max`.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <brotli/decode.h>
#include <libdeflate.h>
#include <lz4.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "base/decompress.h"

/* zlib counts in uInt: it is fed and drained at most 1 GiB at a time */
#define ZCHUNK ((size_t)1 << 30)

const char *icd_codec_name(icd_codec c)
{
    switch (c) {
    case ICD_CODEC_SNAPPY:
        return "SNAPPY";
    case ICD_CODEC_DEFLATE:
        return "DEFLATE";
    case ICD_CODEC_ZLIB:
        return "GZIP";
    case ICD_CODEC_ZSTD:
        return "ZSTD";
    case ICD_CODEC_LZ4:
        return "LZ4";
    case ICD_CODEC_LZ4_FRAME:
        return "LZ4_FRAME";
    case ICD_CODEC_BROTLI:
        return "BROTLI";
    }
    return "UNKNOWN";
}

/* ---- the output window ------------------------------------------------------------------ */

typedef struct outwin {
    icd_codec codec;
    size_t in_len;
    uint8_t *dst; /* where output goes now */
    size_t room;  /* bytes free at dst */
    size_t len;   /* bytes produced so far (scratch excluded) */
    /* fixed mode */
    uint8_t *fixed;
    size_t cap;
    bool scratch_on;
    uint8_t scratch[64];
    /* growing mode */
    icd_buf *buf;
    size_t start, max;
} outwin;

static int too_large(const outwin *w, icd_error *err)
{
    if (w->buf)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "%s: %zu compressed bytes decompress to more than the limit of %zu bytes",
                        icd_codec_name(w->codec), w->in_len, w->max);
    return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                    "%s: %zu compressed bytes decompress to more than %zu bytes",
                    icd_codec_name(w->codec), w->in_len, w->cap);
}

static int corrupt(const outwin *w, const char *why, icd_error *err)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, -1, "%s: corrupt stream (%s), %zu compressed bytes",
                    icd_codec_name(w->codec), why, w->in_len);
}

static int truncated(const outwin *w, icd_error *err)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, -1, "%s: stream of %zu compressed bytes is truncated",
                    icd_codec_name(w->codec), w->in_len);
}

static int garbage(const outwin *w, size_t rest, icd_error *err)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                    "%s: %zu bytes of garbage after the compressed stream (%zu compressed bytes)",
                    icd_codec_name(w->codec), rest, w->in_len);
}

/* Accounts for `used` bytes written at dst. */
static void produced(outwin *w, size_t used)
{
    if (!used) return; /* dst may be NULL before the first room */
    if (!w->scratch_on) w->len += used;
    w->dst += used;
    w->room -= used;
}

/* More room after the window filled up: 0, or the "too large" error. In fixed mode the
 * first call switches to the scratch buffer (the stream may just be ending). */
static int more_room(outwin *w, icd_error *err)
{
    if (!w->buf) {
        if (w->scratch_on) return too_large(w, err);
        w->scratch_on = true;
        w->dst = w->scratch;
        w->room = sizeof w->scratch;
        return 0;
    }
    if (w->len >= w->max) return too_large(w, err);
    size_t want = w->len < 4096 ? 4096 : w->len * 2;
    if (want > w->max) want = w->max;
    if (!icd_buf_grow(w->buf, want + 1)) return icd_fail_nomem(err);
    w->dst = (uint8_t *)w->buf->data + w->start + w->len;
    w->room = want - w->len;
    return 0;
}

/* Whether output landed in the scratch buffer (fixed mode: more than cap). */
static bool overflowed(const outwin *w)
{
    return w->scratch_on && w->room < sizeof w->scratch;
}

/* ---- codecs --------------------------------------------------------------------------- */

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Another gzip member or zlib stream starts at p? */
static bool zlib_member_start(const uint8_t *p, size_t n)
{
    if (n < 2) return false;
    if (p[0] == 0x1f && p[1] == 0x8b) return true;
    return (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 && ((unsigned)p[0] << 8 | p[1]) % 31 == 0;
}

/* The quick way for a deflate, zlib or gzip stream in one piece: libdeflate decodes a
 * whole buffer in one call, several times faster than zlib's streaming inflate. True when
 * it did the whole job (the output accounted in w); false leaves w untouched for the
 * streaming way: anything but one complete stream followed by nothing or zero bytes
 * (several gzip members, damage, truncation), or output beyond the room there is --
 * zlib then gives the output, or the error, it always gave. */
static bool inflate_whole(outwin *w, const uint8_t *in, size_t n)
{
    if (!w->buf && !w->fixed) return false;
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (!d) return false;
    size_t room = w->buf ? (n < SIZE_MAX / 4 ? n * 4 : SIZE_MAX) : w->cap;
    /* a reused buffer (the blocks of one Avro file) offers the room the last output took:
     * the first try then mostly fits, where a too-small one decodes twice */
    if (w->buf && w->buf->cap > w->start + 1 && w->buf->cap - w->start - 1 > room)
        room = w->buf->cap - w->start - 1;
    bool done = false;
    for (;;) {
        uint8_t *dst = w->fixed;
        if (w->buf) {
            if (room < 4096) room = 4096;
            if (room > w->max) room = w->max;
            if (!icd_buf_grow(w->buf, room + 1)) break;
            dst = (uint8_t *)w->buf->data + w->start;
        }
        size_t used = 0, out = 0;
        enum libdeflate_result r;
        if (w->codec == ICD_CODEC_DEFLATE)
            r = libdeflate_deflate_decompress_ex(d, in, n, dst, room, &used, &out);
        else if (n >= 2 && in[0] == 0x1f && in[1] == 0x8b)
            r = libdeflate_gzip_decompress_ex(d, in, n, dst, room, &used, &out);
        else
            r = libdeflate_zlib_decompress_ex(d, in, n, dst, room, &used, &out);
        if (r == LIBDEFLATE_SUCCESS) {
            if (used < n && !all_zero(in + used, n - used)) break;
            w->len = out;
            w->dst = dst + out;
            w->room = room - out;
            done = true;
            break;
        }
        /* growing mode: more room while the limit allows (a retry decodes again) */
        if (r != LIBDEFLATE_INSUFFICIENT_SPACE || !w->buf || room >= w->max) break;
        room = room < w->max / 4 ? room * 4 : w->max;
    }
    libdeflate_free_decompressor(d);
    return done;
}

static int do_zlib(outwin *w, const uint8_t *in, size_t n, icd_error *err)
{
    if (inflate_whole(w, in, n)) return 0;
    bool raw = w->codec == ICD_CODEC_DEFLATE;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, raw ? -15 : 15 + 32) != Z_OK) return icd_fail_nomem(err);
    zs.next_in = (Bytef *)(uintptr_t)in;
    size_t in_left = n;
    int rc = 0;
    for (;;) {
        if (w->room == 0 && (rc = more_room(w, err))) break;
        uInt cin = (uInt)(in_left > ZCHUNK ? ZCHUNK : in_left);
        uInt cout = (uInt)(w->room > ZCHUNK ? ZCHUNK : w->room);
        zs.avail_in = cin;
        zs.next_out = w->dst;
        zs.avail_out = cout;
        int zr = inflate(&zs, Z_NO_FLUSH);
        in_left -= cin - zs.avail_in;
        produced(w, cout - zs.avail_out);
        if (overflowed(w)) {
            rc = too_large(w, err);
            break;
        }
        if (zr == Z_STREAM_END) {
            const uint8_t *next = zs.next_in;
            if (in_left == 0 || all_zero(next, in_left)) break;
            if (raw || !zlib_member_start(next, in_left)) {
                rc = garbage(w, in_left, err);
                break;
            }
            if (inflateReset(&zs) != Z_OK) { /* the next member */
                rc = corrupt(w, "inflateReset failed", err);
                break;
            }
            continue;
        }
        if (zr == Z_OK) continue;
        if (zr == Z_BUF_ERROR) { /* no progress: without room the loop makes some */
            if (w->room == 0) continue;
            rc = truncated(w, err);
            break;
        }
        if (zr == Z_MEM_ERROR) {
            rc = icd_fail_nomem(err);
            break;
        }
        rc = corrupt(w, zs.msg ? zs.msg : "inflate failed", err);
        break;
    }
    inflateEnd(&zs);
    return rc;
}

/* Into a fixed buffer: one call decodes every frame straight into it (the streaming
 * decoder would first allocate a window and copy out of it). */
static int zstd_fixed(outwin *w, const uint8_t *in, size_t n, icd_error *err)
{
    size_t r = ZSTD_decompress(w->room ? w->dst : w->scratch, w->room, in, n);
    if (ZSTD_isError(r)) {
        ZSTD_ErrorCode e = ZSTD_getErrorCode(r);
        if (e == ZSTD_error_dstSize_tooSmall) return too_large(w, err);
        if (e == ZSTD_error_srcSize_wrong) return truncated(w, err);
        if (e == ZSTD_error_memory_allocation) return icd_fail_nomem(err);
        return corrupt(w, ZSTD_getErrorName(r), err);
    }
    produced(w, r);
    return 0;
}

static int do_zstd(outwin *w, const uint8_t *in, size_t n, icd_error *err)
{
    if (n == 0) return truncated(w, err); /* not even a frame header */
    if (!w->buf) return zstd_fixed(w, in, n, err);
    /* a frame that states its size gets its room at once */
    unsigned long long hint = ZSTD_getFrameContentSize(in, n);
    if (hint != ZSTD_CONTENTSIZE_UNKNOWN && hint != ZSTD_CONTENTSIZE_ERROR) {
        if (hint > w->max) return too_large(w, err);
        size_t want = (size_t)hint ? (size_t)hint : 1;
        if (!icd_buf_grow(w->buf, want + 1)) return icd_fail_nomem(err);
        w->dst = (uint8_t *)w->buf->data + w->start;
        w->room = want;
    }
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (!dctx) return icd_fail_nomem(err);
    ZSTD_inBuffer ib = {in, n, 0};
    int rc = 0;
    for (;;) {
        if (w->room == 0 && (rc = more_room(w, err))) break;
        ZSTD_outBuffer ob = {w->dst, w->room, 0};
        size_t zr = ZSTD_decompressStream(dctx, &ob, &ib);
        if (ZSTD_isError(zr)) {
            rc = corrupt(w, ZSTD_getErrorName(zr), err);
            break;
        }
        produced(w, ob.pos);
        if (overflowed(w)) {
            rc = too_large(w, err);
            break;
        }
        if (zr == 0 && ib.pos == ib.size) break; /* the last frame ended with the input */
        if (ib.pos == ib.size && w->room > 0) {  /* wants input that is not there */
            rc = truncated(w, err);
            break;
        }
    }
    ZSTD_freeDCtx(dctx);
    return rc;
}

static int do_brotli(outwin *w, const uint8_t *in, size_t n, icd_error *err)
{
    BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (!st) return icd_fail_nomem(err);
    size_t avail_in = n;
    const uint8_t *next_in = in;
    int rc = 0;
    for (;;) {
        if (w->room == 0 && (rc = more_room(w, err))) break;
        size_t avail_out = w->room;
        uint8_t *next_out = w->dst;
        BrotliDecoderResult r =
            BrotliDecoderDecompressStream(st, &avail_in, &next_in, &avail_out, &next_out, NULL);
        produced(w, w->room - avail_out);
        if (overflowed(w)) {
            rc = too_large(w, err);
            break;
        }
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) continue;
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT)
            rc = truncated(w, err);
        else if (r == BROTLI_DECODER_RESULT_ERROR)
            rc = corrupt(w, BrotliDecoderErrorString(BrotliDecoderGetErrorCode(st)), err);
        else if (avail_in != 0)
            rc = garbage(w, avail_in, err);
        break;
    }
    BrotliDecoderDestroyInstance(st);
    return rc;
}

static int do_lz4_frame(outwin *w, const uint8_t *in, size_t n, icd_error *err)
{
    LZ4F_dctx *dctx = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        return icd_fail_nomem(err);
    size_t ip = 0;
    int rc = 0;
    for (;;) {
        if (w->room == 0 && (rc = more_room(w, err))) break;
        size_t dst_len = w->room, src_len = n - ip;
        size_t r = LZ4F_decompress(dctx, w->dst, &dst_len, in + ip, &src_len, NULL);
        if (LZ4F_isError(r)) {
            rc = corrupt(w, LZ4F_getErrorName(r), err);
            break;
        }
        ip += src_len;
        produced(w, dst_len);
        if (overflowed(w)) {
            rc = too_large(w, err);
            break;
        }
        if (r == 0 && ip == n) break; /* a frame ended with the input */
        if (r == 0) continue;         /* the context is ready for a following frame */
        if (ip == n && dst_len == 0 && w->room > 0) {
            rc = truncated(w, err);
            break;
        }
    }
    LZ4F_freeDecompressionContext(dctx);
    return rc;
}

static int do_snappy(outwin *w, const uint8_t *in, size_t n, icd_error *err)
{
    size_t ulen;
    if (snappy_uncompressed_length((const char *)in, n, &ulen) != SNAPPY_OK)
        return corrupt(w, "no valid length at the start", err);
    if (w->room < ulen) { /* the length is known up front: room for all of it, once */
        if (!w->buf || ulen > w->max) return too_large(w, err);
        if (!icd_buf_grow(w->buf, ulen + 1)) return icd_fail_nomem(err);
        w->dst = (uint8_t *)w->buf->data + w->start;
        w->room = ulen;
    }
    size_t got = ulen;
    char dummy;
    if (snappy_uncompress((const char *)in, n, ulen ? (char *)w->dst : &dummy, &got) != SNAPPY_OK ||
        got != ulen)
        return corrupt(w, "bad snappy data", err);
    produced(w, got);
    return 0;
}

static int do_lz4(outwin *w, const uint8_t *in, size_t n, icd_error *err)
{
    if (n > INT_MAX) return corrupt(w, "block larger than LZ4 handles", err);
    for (;;) {
        size_t room = w->room > INT_MAX ? INT_MAX : w->room;
        char dummy;
        int r = LZ4_decompress_safe((const char *)in, room ? (char *)w->dst : &dummy, (int)n,
                                    (int)room);
        if (r >= 0) {
            produced(w, (size_t)r);
            return 0;
        }
        /* a raw block does not say its size: a growing buffer retries with more room */
        if (!w->buf || w->len + w->room >= w->max)
            return w->buf ? too_large(w, err)
                          : icd_fail(err, ICD_ECORRUPT, NULL, -1,
                                     "LZ4: corrupt block, or more than %zu bytes out (%zu "
                                     "compressed bytes)",
                                     w->cap, n);
        size_t want = w->room < 4096 ? 4096 : w->room * 2;
        if (want > w->max) want = w->max;
        if (!icd_buf_grow(w->buf, want + 1)) return icd_fail_nomem(err);
        w->dst = (uint8_t *)w->buf->data + w->start;
        w->room = want;
    }
}

static int run(outwin *w, const uint8_t *in, size_t n, icd_error *err)
{
    switch (w->codec) {
    case ICD_CODEC_SNAPPY:
        return do_snappy(w, in, n, err);
    case ICD_CODEC_DEFLATE:
    case ICD_CODEC_ZLIB:
        if (n > 0) return do_zlib(w, in, n, err);
        return truncated(w, err);
    case ICD_CODEC_ZSTD:
        return do_zstd(w, in, n, err);
    case ICD_CODEC_LZ4:
        return do_lz4(w, in, n, err);
    case ICD_CODEC_LZ4_FRAME:
        return do_lz4_frame(w, in, n, err);
    case ICD_CODEC_BROTLI:
        return do_brotli(w, in, n, err);
    }
    return icd_fail(err, ICD_EINTERNAL, NULL, -1, "unknown codec %d", (int)w->codec);
}

int icd_decompress(icd_codec c, const void *in, size_t n, void *out, size_t cap, bool exact,
                   size_t *got, icd_error *err)
{
    outwin w;
    memset(&w, 0, sizeof w);
    w.codec = c;
    w.in_len = n;
    w.fixed = out;
    w.cap = cap;
    w.dst = out ? out : w.scratch;
    w.room = out ? cap : 0;
    *got = 0;
    ICD_TRY(run(&w, in, n, err));
    *got = w.len;
    if (exact && w.len != cap)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "%s: %zu compressed bytes decompress to %zu bytes, %zu expected",
                        icd_codec_name(c), n, w.len, cap);
    return 0;
}

int icd_decompress_buf(icd_codec c, const void *in, size_t n, size_t max, icd_buf *out,
                       icd_error *err)
{
    outwin w;
    memset(&w, 0, sizeof w);
    w.codec = c;
    w.in_len = n;
    w.buf = out;
    w.start = out->len;
    w.max = max;
    w.dst = NULL; /* room 0: the first write asks for room */
    w.room = 0;
    int rc = run(&w, in, n, err);
    if (rc) return rc;
    if (!icd_buf_grow(out, w.len + 1)) return icd_fail_nomem(err); /* len is still start */
    out->len = w.start + w.len;
    out->data[out->len] = '\0';
    return 0;
}
