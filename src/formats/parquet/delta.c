/*
 * The delta encodings: DELTA_BINARY_PACKED (5) for INT32/INT64 values and for the lengths
 * inside the two byte-array encodings built on it, DELTA_LENGTH_BYTE_ARRAY (6) and
 * DELTA_BYTE_ARRAY (7, front coding). The column reader hands a whole page's value bytes.
 *
 * DELTA_BINARY_PACKED layout (all varints ULEB128, "zigzag" = zigzag then ULEB128):
 *   header: block size (multiple of 128), miniblocks per block (block size / count is a
 *           multiple of 32), total value count, first value (zigzag)
 *   blocks: min delta (zigzag), one bit-width byte per miniblock, then the miniblocks, each
 *           (values per miniblock) * width / 8 bytes of LSB-first packed (delta - min delta).
 * The first value is not part of any block. The last block carries all its width bytes but
 * only the miniblocks that hold values; the last miniblock is padded to full size. Values
 * are rebuilt with unsigned (modular) 64-bit arithmetic, so INT32 columns written with
 * 32-bit wrapping deltas come out exact in the low 32 bits.
 *
 * A small streaming reader (delta_reader) decodes in batches; it can also skip to the end
 * of the stream without unpacking, which is how the byte-array encodings find the data
 * that follows their length streams.
 */
#include <stdbool.h>

#include "formats/parquet/bitpack.h"
#include "formats/parquet/encodings.h"

#define DELTA_CHUNK 256 /* deltas unpacked at a time; a multiple of 32 */

typedef struct delta_reader {
    const char *what; /* for messages: the encoding or the stream within it */
    const uint8_t *p;
    size_t n, pos;
    uint64_t block_size, mb_count, mb_size;
    uint64_t total;       /* values in the stream (header) */
    uint64_t values_left; /* values not yet returned */
    uint64_t last;        /* the last value returned, modular */
    bool first_pending;   /* the header's first value is not yet returned */
    /* current block */
    bool in_block;
    uint64_t min_delta;
    size_t block_at, widths_at;
    uint64_t mb_index; /* next miniblock of the block to start */
    /* current miniblock */
    const uint8_t *mb_data;
    size_t mb_avail; /* readable bytes of the miniblock */
    int mb_width;
    uint64_t mb_left, mb_done; /* deltas of the miniblock not yet / already unpacked */
    /* unpacked deltas of the current chunk */
    uint64_t buf[DELTA_CHUNK];
    size_t buf_pos, buf_len;
} delta_reader;

static int delta_header_field(delta_reader *r, uint64_t *v, const char *field, icd_error *err)
{
    size_t at = r->pos;
    if (pq_read_uleb(r->p, r->n, &r->pos, v))
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "%s: truncated or overlong %s at byte %zu of %zu", r->what, field, at,
                        r->n);
    return 0;
}

static int delta_init(delta_reader *r, const uint8_t *p, size_t n, const char *what, icd_error *err)
{
    memset(r, 0, offsetof(delta_reader, buf));
    r->buf_pos = r->buf_len = 0;
    r->what = what;
    r->p = p;
    r->n = n;
    uint64_t first;
    ICD_TRY(delta_header_field(r, &r->block_size, "block size", err));
    ICD_TRY(delta_header_field(r, &r->mb_count, "miniblock count", err));
    ICD_TRY(delta_header_field(r, &r->total, "value count", err));
    ICD_TRY(delta_header_field(r, &first, "first value", err));
    if (r->block_size == 0 || r->block_size % 128 != 0 || r->block_size > UINT32_MAX)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "%s: block size %llu is not a positive multiple of 128", what,
                        (unsigned long long)r->block_size);
    if (r->mb_count == 0 || r->block_size % r->mb_count != 0 ||
        (r->block_size / r->mb_count) % 32 != 0)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "%s: %llu miniblocks do not split a block of %llu values into "
                        "multiples of 32",
                        what, (unsigned long long)r->mb_count, (unsigned long long)r->block_size);
    r->mb_size = r->block_size / r->mb_count;
    r->values_left = r->total;
    r->first_pending = r->total > 0;
    r->last = pq_unzigzag(first);
    return 0;
}

/* Deltas still to come out of the packed data (the buffer is empty when this is used). */
static inline uint64_t delta_deltas_left(const delta_reader *r)
{
    return r->values_left - (r->first_pending ? 1 : 0);
}

/* Opens the next miniblock (and the next block when the current one is used up),
 * advancing pos past its bytes. */
static int delta_start_miniblock(delta_reader *r, icd_error *err)
{
    if (!r->in_block || r->mb_index == r->mb_count) {
        r->block_at = r->pos;
        uint64_t md;
        if (pq_read_uleb(r->p, r->n, &r->pos, &md))
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "%s: truncated or overlong min delta of the block at byte %zu of %zu",
                            r->what, r->block_at, r->n);
        if (r->mb_count > r->n - r->pos)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "%s: block at byte %zu needs %llu bit-width bytes, %zu left", r->what,
                            r->block_at, (unsigned long long)r->mb_count, r->n - r->pos);
        r->min_delta = pq_unzigzag(md);
        r->widths_at = r->pos;
        r->pos += (size_t)r->mb_count;
        r->mb_index = 0;
        r->in_block = true;
    }
    int w = r->p[r->widths_at + r->mb_index];
    if (w > 64)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "%s: miniblock %llu of the block at byte %zu has bit width %d (max 64)",
                        r->what, (unsigned long long)r->mb_index, r->block_at, w);
    uint64_t want = delta_deltas_left(r);
    uint64_t vals = want < r->mb_size ? want : r->mb_size;
    uint64_t full = r->mb_size / 8 * (uint64_t)w;
    uint64_t needed = (vals / 8) * (uint64_t)w + ((vals % 8) * (uint64_t)w + 7) / 8;
    size_t left = r->n - r->pos;
    r->mb_data = r->p + r->pos;
    if (full <= left) {
        r->mb_avail = (size_t)full;
        r->pos += (size_t)full;
    } else if (needed <= left && want <= r->mb_size) {
        /* The stream's last miniblock without its padding bytes: its values are all
         * here, and nothing can follow it. */
        r->mb_avail = left;
        r->pos = r->n;
    } else {
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "%s: miniblock %llu of the block at byte %zu needs %llu bytes, %zu left",
                        r->what, (unsigned long long)r->mb_index, r->block_at,
                        (unsigned long long)full, left);
    }
    r->mb_width = w;
    r->mb_left = r->mb_size;
    r->mb_done = 0;
    r->mb_index++;
    return 0;
}

static int delta_refill(delta_reader *r, icd_error *err)
{
    if (r->mb_left == 0) ICD_TRY(delta_start_miniblock(r, err));
    size_t chunk = r->mb_left < DELTA_CHUNK ? (size_t)r->mb_left : DELTA_CHUNK;
    uint64_t off = r->mb_done / 8 * (uint64_t)r->mb_width;
    const uint8_t *src = off < r->mb_avail ? r->mb_data + off : r->mb_data;
    size_t avail = off < r->mb_avail ? r->mb_avail - (size_t)off : 0;
    pq_unpack64(src, avail, r->mb_width, r->buf, chunk / 8);
    r->mb_left -= chunk;
    r->mb_done += chunk;
    r->buf_pos = 0;
    r->buf_len = chunk;
    return 0;
}

/* Returns the next k values (k <= values_left). */
static int delta_next(delta_reader *r, int64_t *out, size_t k, icd_error *err)
{
    size_t i = 0;
    if (k && r->first_pending) {
        out[i++] = (int64_t)r->last;
        r->first_pending = false;
    }
    uint64_t last = r->last;
    while (i < k) {
        if (r->buf_pos == r->buf_len) {
            r->last = last;
            ICD_TRY(delta_refill(r, err));
        }
        size_t take = r->buf_len - r->buf_pos;
        if (take > k - i) take = k - i;
        const uint64_t md = r->min_delta, *d = r->buf + r->buf_pos;
        for (size_t j = 0; j < take; j++) {
            last += md + d[j];
            out[i + j] = (int64_t)last;
        }
        i += take;
        r->buf_pos += take;
    }
    r->last = last;
    r->values_left -= k;
    return 0;
}

/* Skips the values not yet returned and reports where the stream ends. */
static int delta_end(delta_reader *r, size_t *end, icd_error *err)
{
    uint64_t buffered = r->buf_len - r->buf_pos;
    r->values_left -= buffered < r->values_left ? buffered : r->values_left;
    r->buf_pos = r->buf_len = 0;
    if (r->first_pending) {
        r->values_left--;
        r->first_pending = false;
    }
    while (r->values_left > 0) {
        if (r->mb_left == 0) ICD_TRY(delta_start_miniblock(r, err));
        uint64_t s = r->values_left < r->mb_left ? r->values_left : r->mb_left;
        r->values_left -= s;
        r->mb_left -= s;
    }
    *end = r->pos;
    return 0;
}

/* Finds the end of the stream at p without disturbing `r` (a copy is walked). */
static int delta_stream_end(const delta_reader *r, size_t *end, icd_error *err)
{
    delta_reader tmp;
    memcpy(&tmp, r, offsetof(delta_reader, buf));
    tmp.buf_pos = tmp.buf_len = 0;
    return delta_end(&tmp, end, err);
}

static int delta_need(const delta_reader *r, size_t count, icd_error *err)
{
    if (r->total < count)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "%s: stream holds %llu values, page needs %zu",
                        r->what, (unsigned long long)r->total, count);
    return 0;
}

int pq_delta_binary_packed(const uint8_t *p, size_t n, size_t count, int64_t *out, size_t *used,
                           icd_error *err)
{
    if (n == 0 && count == 0) {
        if (used) *used = 0;
        return 0;
    }
    delta_reader r;
    ICD_TRY(delta_init(&r, p, n, "DELTA_BINARY_PACKED", err));
    ICD_TRY(delta_need(&r, count, err));
    ICD_TRY(delta_next(&r, out, count, err));
    if (used) ICD_TRY(delta_end(&r, used, err));
    return 0;
}

int pq_delta_length_byte_array(const uint8_t *p, size_t n, size_t count, pq_bytes *out,
                               size_t *used, icd_error *err)
{
    if (n == 0 && count == 0) {
        if (used) *used = 0;
        return 0;
    }
    delta_reader r;
    size_t off;
    ICD_TRY(delta_init(&r, p, n, "DELTA_LENGTH_BYTE_ARRAY lengths", err));
    ICD_TRY(delta_need(&r, count, err));
    ICD_TRY(delta_stream_end(&r, &off, err));
    int64_t lens[DELTA_CHUNK];
    for (size_t i = 0; i < count;) {
        size_t b = count - i < DELTA_CHUNK ? count - i : DELTA_CHUNK;
        ICD_TRY(delta_next(&r, lens, b, err));
        for (size_t j = 0; j < b; j++, i++) {
            if (lens[j] < 0 || (uint64_t)lens[j] > n - off)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                                "DELTA_LENGTH_BYTE_ARRAY: value %zu has length %lld, %zu bytes "
                                "left",
                                i, (long long)lens[j], n - off);
            out[i].ptr = p + off;
            out[i].len = (uint32_t)lens[j];
            off += (size_t)lens[j];
        }
    }
    if (used) *used = off;
    return 0;
}

/* Front coding can rebuild far more bytes than the page holds (each value may repeat a
 * long prefix); this bounds what one page may make us allocate. */
static size_t dba_rebuild_limit(size_t n)
{
    const size_t floor = (size_t)256 << 20;
    return n > floor / 64 ? (n > SIZE_MAX / 64 ? SIZE_MAX : n * 64) : floor;
}

int pq_delta_byte_array(const uint8_t *p, size_t n, size_t count, pq_bytes *out, icd_arena *arena,
                        size_t *used, icd_error *err)
{
    if (n == 0 && count == 0) {
        if (used) *used = 0;
        return 0;
    }
    delta_reader pre, suf;
    size_t suf_at, data_at;
    ICD_TRY(delta_init(&pre, p, n, "DELTA_BYTE_ARRAY prefix lengths", err));
    ICD_TRY(delta_need(&pre, count, err));
    ICD_TRY(delta_stream_end(&pre, &suf_at, err));
    ICD_TRY(delta_init(&suf, p + suf_at, n - suf_at, "DELTA_BYTE_ARRAY suffix lengths", err));
    ICD_TRY(delta_need(&suf, count, err));
    ICD_TRY(delta_stream_end(&suf, &data_at, err));
    size_t off = suf_at + data_at, limit = dba_rebuild_limit(n), rebuilt = 0;
    pq_bytes prev = {p, 0};
    int64_t pl[DELTA_CHUNK], sl[DELTA_CHUNK];
    for (size_t i = 0; i < count;) {
        size_t b = count - i < DELTA_CHUNK ? count - i : DELTA_CHUNK;
        ICD_TRY(delta_next(&pre, pl, b, err));
        ICD_TRY(delta_next(&suf, sl, b, err));
        for (size_t j = 0; j < b; j++, i++) {
            if (pl[j] < 0 || (uint64_t)pl[j] > prev.len)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                                "DELTA_BYTE_ARRAY: value %zu has prefix length %lld but the "
                                "previous value has %u bytes",
                                i, (long long)pl[j], prev.len);
            if (sl[j] < 0 || (uint64_t)sl[j] > n - off)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                                "DELTA_BYTE_ARRAY: value %zu has suffix length %lld, %zu bytes "
                                "left",
                                i, (long long)sl[j], n - off);
            size_t plen = (size_t)pl[j], slen = (size_t)sl[j];
            if (plen + slen > UINT32_MAX)
                return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                                "DELTA_BYTE_ARRAY: value %zu is %zu bytes long (max 4 GiB)", i,
                                plen + slen);
            pq_bytes v;
            if (slen == 0) { /* a prefix of the previous value: share its bytes */
                v.ptr = prev.ptr;
            } else if (plen == 0) { /* all suffix: point into the page */
                v.ptr = p + off;
            } else {
                rebuilt += plen + slen;
                if (rebuilt > limit)
                    return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                                    "DELTA_BYTE_ARRAY: values rebuilt from a %zu-byte page "
                                    "exceed %zu bytes",
                                    n, limit);
                uint8_t *dst = icd_arena_alloc(arena, plen + slen);
                if (!dst) return icd_fail_nomem(err);
                memcpy(dst, prev.ptr, plen);
                memcpy(dst + plen, p + off, slen);
                v.ptr = dst;
            }
            v.len = (uint32_t)(plen + slen);
            off += slen;
            out[i] = v;
            prev = v;
        }
    }
    if (used) *used = off;
    return 0;
}
