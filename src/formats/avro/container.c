/*
 * Avro object container file reader (see container.h). The file is read through a window:
 * positional reads of a few hundred KiB that hold the current block (and often the next
 * ones), never the whole file. Each block is checked (object count against its bytes,
 * size against the file, sync marker), then decompressed into a reusable buffer capped at
 * AVRO_MAX_BLOCK_BYTES, and handed to the datum decoder through a cursor. Errors from the
 * decoder carry a position inside the block; they are turned into a file offset here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "base/bits.h"
#include "base/decompress.h"
#include "formats/avro/container.h"

#define WINDOW_MIN ((size_t)256 << 10)
#define MAX_META_ENTRIES 100000

struct icd_avro_reader {
    icd_file *file;
    bool own_file;
    icd_avro_codec codec;
    uint8_t sync[16];
    icd_avro_meta *meta;
    size_t nmeta;
    icd_avro_schema_doc *schema;
    uint64_t header_size;
    uint64_t next_block; /* file offset of the next block header */

    /* window: file bytes [win_off, win_off + win_len) */
    uint8_t *win;
    size_t win_len, win_cap;
    uint64_t win_off;

    /* decompression: the current block's bytes */
    icd_buf out;

    /* current block */
    bool in_block;
    uint64_t block_off;      /* its header */
    uint64_t block_data_off; /* its (compressed) data */
    int64_t block_count, block_read;
    icd_avro_cursor cur;
    uint64_t block_seq, records;
    uint64_t zero_budget; /* AVRO_ZERO_SIZE_BUDGET, for the whole file */
};

const char *icd_avro_codec_name(icd_avro_codec c)
{
    switch (c) {
    case AVRO_CODEC_NULL:
        return "null";
    case AVRO_CODEC_DEFLATE:
        return "deflate";
    case AVRO_CODEC_SNAPPY:
        return "snappy";
    case AVRO_CODEC_ZSTD:
        return "zstandard";
    }
    return "?";
}

static const char *loc(const icd_avro_reader *r)
{
    return r->file->location;
}

/* Makes file bytes [off, off + n) available in the window; returns a pointer to them. */
static int window(icd_avro_reader *r, uint64_t off, size_t n, const uint8_t **p, icd_error *err)
{
    uint64_t size = icd_file_size(r->file);
    if (off > size || n > size - off)
        return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)off,
                        "truncated: needs %zu bytes but the file has %llu left", n,
                        (unsigned long long)(off <= size ? size - off : 0));
    if (off >= r->win_off && off - r->win_off <= r->win_len &&
        n <= r->win_len - (off - r->win_off)) {
        *p = r->win + (off - r->win_off);
        return 0;
    }
    size_t want = n > WINDOW_MIN ? n : WINDOW_MIN;
    if (want > size - off) want = (size_t)(size - off);
    /* bytes of the old window from `off` on are kept (moved to the front) */
    size_t keep = 0, skip = 0;
    if (off >= r->win_off && off - r->win_off < r->win_len) {
        skip = (size_t)(off - r->win_off);
        keep = r->win_len - skip;
    }
    if (want > r->win_cap) {
        uint8_t *w = malloc(want);
        if (!w) return icd_fail_nomem(err);
        if (keep) memcpy(w, r->win + skip, keep);
        free(r->win);
        r->win = w;
        r->win_cap = want;
    } else if (keep) {
        memmove(r->win, r->win + skip, keep);
    }
    r->win_off = off;
    r->win_len = keep; /* stays consistent if the read fails */
    ICD_TRY(icd_file_read_at(r->file, off + keep, r->win + keep, want - keep, err));
    r->win_len = want;
    *p = r->win;
    return 0;
}

/* ---- header ------------------------------------------------------------------------ */

/* Reads one varint of the header at *off (the header may be longer than the window). */
static int hdr_long(icd_avro_reader *r, uint64_t *off, int64_t *v, icd_error *err)
{
    uint64_t left = icd_file_size(r->file) - *off;
    size_t n = left < 10 ? (size_t)left : 10;
    const uint8_t *p;
    ICD_TRY(window(r, *off, n, &p, err));
    icd_avro_cursor c;
    icd_avro_cursor_init(&c, p, n);
    if (icd_avro_read_long(&c, v, err)) {
        err->offset = (int64_t)*off;
        icd_error_set_file(err, loc(r));
        return icd_error_wrap(err, "header");
    }
    *off += icd_avro_cursor_pos(&c);
    return 0;
}

static int hdr_bytes(icd_avro_reader *r, uint64_t *off, char **out, size_t *len, const char *what,
                     icd_error *err)
{
    uint64_t at = *off;
    int64_t n;
    ICD_TRY(hdr_long(r, off, &n, err));
    if (n < 0)
        return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)at, "header: %s has a negative length",
                        what);
    if ((uint64_t)n > AVRO_MAX_HEADER_BYTES)
        return icd_fail(err, ICD_EUNSUPPORTED, loc(r), (int64_t)at,
                        "header: %s of %lld bytes is larger than the %zu MiB accepted", what,
                        (long long)n, AVRO_MAX_HEADER_BYTES >> 20);
    const uint8_t *p;
    ICD_TRY(window(r, *off, (size_t)n, &p, err));
    char *s = malloc((size_t)n + 1);
    if (!s) return icd_fail_nomem(err);
    memcpy(s, p, (size_t)n);
    s[n] = '\0';
    *off += (uint64_t)n;
    *out = s;
    *len = (size_t)n;
    return 0;
}

static int read_meta(icd_avro_reader *r, uint64_t *off, icd_error *err)
{
    size_t cap = 0;
    for (;;) {
        uint64_t at = *off;
        int64_t count;
        ICD_TRY(hdr_long(r, off, &count, err));
        if (count == 0) return 0;
        if (count < 0) {
            int64_t bytes;
            if (count == INT64_MIN)
                return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)at,
                                "header: metadata block count overflows");
            count = -count;
            ICD_TRY(hdr_long(r, off, &bytes, err));
        }
        if ((uint64_t)count > MAX_META_ENTRIES - r->nmeta ||
            (uint64_t)count > (icd_file_size(r->file) - *off) / 2)
            return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)at,
                            "header: metadata claims %lld entries", (long long)count);
        if (r->nmeta + (size_t)count > cap) {
            size_t ncap = r->nmeta + (size_t)count;
            icd_avro_meta *m = realloc(r->meta, ncap * sizeof *m);
            if (!m) return icd_fail_nomem(err);
            r->meta = m;
            cap = ncap;
        }
        for (int64_t i = 0; i < count; i++) {
            icd_avro_meta *m = &r->meta[r->nmeta];
            size_t klen;
            ICD_TRY(hdr_bytes(r, off, &m->key, &klen, "metadata key", err));
            if (hdr_bytes(r, off, &m->value, &m->len, "metadata value", err)) {
                free(m->key);
                return err->code;
            }
            r->nmeta++;
        }
    }
}

static int pick_codec(icd_avro_reader *r, icd_error *err)
{
    const icd_avro_meta *m = icd_avro_reader_meta(r, "avro.codec");
    if (!m || !strcmp(m->value, "null") || m->len == 0)
        r->codec = AVRO_CODEC_NULL;
    else if (!strcmp(m->value, "deflate"))
        r->codec = AVRO_CODEC_DEFLATE;
    else if (!strcmp(m->value, "snappy"))
        r->codec = AVRO_CODEC_SNAPPY;
    else if (!strcmp(m->value, "zstandard"))
        r->codec = AVRO_CODEC_ZSTD;
    else
        return icd_fail(err, ICD_EUNSUPPORTED, loc(r), -1,
                        "Avro codec '%.100s' is not supported (icedruid reads null, deflate, "
                        "snappy and zstandard)",
                        m->value);
    return 0;
}

static int read_header(icd_avro_reader *r, icd_error *err)
{
    const uint8_t *p;
    if (icd_file_size(r->file) < 4)
        return icd_fail(err, ICD_ECORRUPT, loc(r), 0,
                        "not an Avro container file (shorter than its magic bytes)");
    ICD_TRY(window(r, 0, 4, &p, err));
    if (memcmp(p, "Obj\x01", 4) != 0)
        return icd_fail(err, ICD_ECORRUPT, loc(r), 0,
                        "not an Avro container file (bad magic bytes)");
    uint64_t off = 4;
    ICD_TRY(read_meta(r, &off, err));
    ICD_TRY(window(r, off, 16, &p, err));
    memcpy(r->sync, p, 16);
    off += 16;
    r->header_size = r->next_block = off;
    const icd_avro_meta *s = icd_avro_reader_meta(r, "avro.schema");
    if (!s) return icd_fail(err, ICD_ECORRUPT, loc(r), -1, "header has no avro.schema");
    ICD_TRY(pick_codec(r, err));
    if (icd_avro_schema_parse(s->value, s->len, &r->schema, err)) {
        icd_error_set_file(err, loc(r));
        return err->code;
    }
    return 0;
}

int icd_avro_reader_open_file(icd_file *f, bool take_file, icd_avro_reader **out, icd_error *err)
{
    *out = NULL;
    icd_avro_reader *r = calloc(1, sizeof *r);
    if (!r) {
        if (take_file) icd_file_close(f);
        return icd_fail_nomem(err);
    }
    r->file = f;
    r->own_file = take_file;
    r->zero_budget = AVRO_ZERO_SIZE_BUDGET;
    int rc = read_header(r, err);
    if (rc) {
        icd_avro_reader_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int icd_avro_reader_open(icd_fileio *io, const char *location, icd_avro_reader **out,
                         icd_error *err)
{
    *out = NULL;
    icd_file *f;
    ICD_TRY(icd_file_open(io, location, &f, err));
    return icd_avro_reader_open_file(f, true, out, err);
}

void icd_avro_reader_free(icd_avro_reader *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nmeta; i++) {
        free(r->meta[i].key);
        free(r->meta[i].value);
    }
    free(r->meta);
    icd_avro_schema_doc_free(r->schema);
    free(r->win);
    icd_buf_free(&r->out);
    if (r->own_file) icd_file_close(r->file);
    free(r);
}

const icd_avro_schema *icd_avro_reader_schema(const icd_avro_reader *r)
{
    return r->schema->root;
}
icd_avro_codec icd_avro_reader_codec(const icd_avro_reader *r)
{
    return r->codec;
}
const uint8_t *icd_avro_reader_sync(const icd_avro_reader *r)
{
    return r->sync;
}
size_t icd_avro_reader_meta_count(const icd_avro_reader *r)
{
    return r->nmeta;
}
const icd_avro_meta *icd_avro_reader_meta_at(const icd_avro_reader *r, size_t i)
{
    return i < r->nmeta ? &r->meta[i] : NULL;
}
uint64_t icd_avro_reader_header_size(const icd_avro_reader *r)
{
    return r->header_size;
}
int64_t icd_avro_reader_block_count(const icd_avro_reader *r)
{
    return r->in_block ? r->block_count : 0;
}
int64_t icd_avro_reader_block_read(const icd_avro_reader *r)
{
    return r->in_block ? r->block_read : 0;
}
uint64_t icd_avro_reader_block_seq(const icd_avro_reader *r)
{
    return r->block_seq;
}
uint64_t icd_avro_reader_records_read(const icd_avro_reader *r)
{
    return r->records;
}

const icd_avro_meta *icd_avro_reader_meta(const icd_avro_reader *r, const char *key)
{
    for (size_t i = 0; i < r->nmeta; i++)
        if (!strcmp(r->meta[i].key, key)) return &r->meta[i];
    return NULL;
}

/* ---- decompression ----------------------------------------------------------------- */

/* Decompresses n bytes of block data into r->out (at most AVRO_MAX_BLOCK_BYTES); errors
 * name the file and the block's data offset. */
static int decompress_block(icd_avro_reader *r, icd_codec c, const uint8_t *in, size_t n,
                            icd_error *err)
{
    icd_buf_clear(&r->out);
    int rc = icd_decompress_buf(c, in, n, AVRO_MAX_BLOCK_BYTES, &r->out, err);
    if (rc && rc != ICD_ENOMEM) {
        icd_error_set_file(err, loc(r));
        err->offset = (int64_t)r->block_data_off;
        icd_error_wrap(err, "%s block", icd_avro_codec_name(r->codec));
    }
    return rc;
}

/* Avro's snappy blocks: the compressed data, then the CRC-32 of the uncompressed data
 * (4 bytes, big-endian). */
static int snappy_block(icd_avro_reader *r, const uint8_t *in, size_t n, icd_error *err)
{
    if (n < 4)
        return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)r->block_data_off,
                        "snappy block of %zu bytes has no room for its CRC", n);
    ICD_TRY(decompress_block(r, ICD_CODEC_SNAPPY, in, n - 4, err));
    size_t len = r->out.len;
    const uint8_t *out = (const uint8_t *)r->out.data;
    uint32_t want = icd_load_be32(in + n - 4);
    uint32_t have = 0;
    for (size_t off = 0; off < len;) { /* crc32 takes uInt lengths */
        uInt chunk = len - off > (1u << 30) ? (1u << 30) : (uInt)(len - off);
        have = (uint32_t)crc32(have, out + off, chunk);
        off += chunk;
    }
    if (want != have)
        return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)(r->block_data_off + n - 4),
                        "snappy block CRC mismatch (stored %08x, computed %08x)", want, have);
    return 0;
}

/* ---- blocks ------------------------------------------------------------------------ */

/* Turns a decoder error (offset = position in the block's data) into a file position. */
static int block_error(icd_avro_reader *r, icd_error *err)
{
    int64_t pos = err->offset;
    if (r->codec == AVRO_CODEC_NULL) {
        err->offset = pos >= 0 ? (int64_t)r->block_data_off + pos : (int64_t)r->block_off;
        icd_error_wrap(err, "object %lld of %lld in the block at byte %llu",
                       (long long)r->block_read + 1, (long long)r->block_count,
                       (unsigned long long)r->block_off);
    } else {
        err->offset = (int64_t)r->block_off;
        icd_error_wrap(err, "object %lld of %lld in the %s block (at decompressed byte %lld)",
                       (long long)r->block_read + 1, (long long)r->block_count,
                       icd_avro_codec_name(r->codec), (long long)pos);
    }
    snprintf(err->file, sizeof err->file, "%s", loc(r));
    return err->code;
}

/* After a block's last object: its data must be used up exactly. */
static int check_block_end(icd_avro_reader *r, icd_error *err)
{
    size_t left = icd_avro_cursor_left(&r->cur);
    if (left == 0) return 0;
    return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)r->block_off,
                    "block holds %zu bytes after its %lld objects", left,
                    (long long)r->block_count);
}

int icd_avro_reader_next_block(icd_avro_reader *r, bool *eof, icd_error *err)
{
    *eof = false;
    if (r->in_block) {
        if (r->block_read < r->block_count)
            return icd_fail(err, ICD_EINTERNAL, loc(r), (int64_t)r->block_off,
                            "next block requested before the current one was read");
        ICD_TRY(check_block_end(r, err));
        r->zero_budget = r->cur.zero_budget;
        r->in_block = false;
    }
    uint64_t size = icd_file_size(r->file), off = r->next_block;
    if (off >= size) {
        *eof = true;
        return 0;
    }
    /* block header: object count and byte size, two varints */
    const uint8_t *p;
    size_t head = size - off < 20 ? (size_t)(size - off) : 20;
    ICD_TRY(window(r, off, head, &p, err));
    icd_avro_cursor c;
    icd_avro_cursor_init(&c, p, head);
    int64_t count, bytes;
    if (icd_avro_read_long(&c, &count, err) || icd_avro_read_long(&c, &bytes, err)) {
        err->offset = (int64_t)off;
        icd_error_set_file(err, loc(r));
        return icd_error_wrap(err, "block header");
    }
    uint64_t data_off = off + icd_avro_cursor_pos(&c);
    if (count < 0)
        return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)off,
                        "block has a negative object count %lld", (long long)count);
    if (bytes < 0)
        return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)off,
                        "block has a negative byte size %lld", (long long)bytes);
    if ((uint64_t)bytes > size - data_off || size - data_off - (uint64_t)bytes < 16)
        return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)off,
                        "truncated: block of %lld bytes (plus its sync marker) but the file "
                        "has %llu left",
                        (long long)bytes, (unsigned long long)(size - data_off));
    if ((uint64_t)bytes > AVRO_MAX_BLOCK_BYTES)
        return icd_fail(err, ICD_EUNSUPPORTED, loc(r), (int64_t)off,
                        "block of %lld bytes is larger than the %zu MiB accepted", (long long)bytes,
                        AVRO_MAX_BLOCK_BYTES >> 20);
    size_t n = (size_t)bytes;
    ICD_TRY(window(r, data_off, n + 16, &p, err));
    if (memcmp(p + n, r->sync, 16) != 0)
        return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)(data_off + n),
                        "sync marker after the block at byte %llu does not match the header's",
                        (unsigned long long)off);
    r->block_off = off;
    r->block_data_off = data_off;
    const uint8_t *data = p;
    size_t len = n;
    switch (r->codec) {
    case AVRO_CODEC_NULL:
        break;
    case AVRO_CODEC_DEFLATE:
    case AVRO_CODEC_ZSTD:
        icd_buf_clear(&r->out);
        if (n)
            ICD_TRY(decompress_block(
                r, r->codec == AVRO_CODEC_ZSTD ? ICD_CODEC_ZSTD : ICD_CODEC_DEFLATE, p, n, err));
        data = (const uint8_t *)r->out.data;
        len = r->out.len;
        break;
    case AVRO_CODEC_SNAPPY:
        ICD_TRY(snappy_block(r, p, n, err));
        data = (const uint8_t *)r->out.data;
        len = r->out.len;
        break;
    }
    /* every object takes at least min_size bytes; objects that take no bytes (and items
     * of no size inside objects) draw on one budget for the whole file */
    size_t min = r->schema->root->min_size;
    if ((min > 0 && (uint64_t)count > len / min) || (min == 0 && (uint64_t)count > r->zero_budget))
        return icd_fail(err, ICD_ECORRUPT, loc(r), (int64_t)off,
                        "block claims %lld objects but holds only %zu bytes", (long long)count,
                        len);
    if (min == 0) r->zero_budget -= (uint64_t)count;
    icd_avro_cursor_init(&r->cur, data ? data : (const uint8_t *)"", len);
    r->cur.zero_budget = r->zero_budget;
    r->block_count = count;
    r->block_read = 0;
    r->in_block = true;
    r->block_seq++;
    r->next_block = data_off + n + 16;
    return 0;
}

/* Positions the reader on the next unread object; *eof at the end of the file. */
static int ready(icd_avro_reader *r, bool *eof, icd_error *err)
{
    *eof = false;
    while (!r->in_block || r->block_read >= r->block_count) {
        ICD_TRY(icd_avro_reader_next_block(r, eof, err));
        if (*eof) return 0;
    }
    return 0;
}

int icd_avro_reader_next_projected(icd_avro_reader *r, const icd_avro_projection *proj,
                                   icd_arena *arena, icd_avro_value *out, bool *eof, icd_error *err)
{
    ICD_TRY(ready(r, eof, err));
    if (*eof) return 0;
    if (icd_avro_decode_projected(r->schema->root, proj, &r->cur, arena, out, err))
        return block_error(r, err);
    r->block_read++;
    r->records++;
    return 0;
}

int icd_avro_reader_raw_next(icd_avro_reader *r, icd_avro_cursor **cur, bool *eof, icd_error *err)
{
    *cur = NULL;
    ICD_TRY(ready(r, eof, err));
    if (!*eof) *cur = &r->cur;
    return 0;
}

int icd_avro_reader_raw_end(icd_avro_reader *r, int rc, icd_error *err)
{
    if (rc) return block_error(r, err);
    r->block_read++;
    r->records++;
    return 0;
}

int icd_avro_reader_next(icd_avro_reader *r, icd_arena *arena, icd_avro_value *out, bool *eof,
                         icd_error *err)
{
    return icd_avro_reader_next_projected(r, NULL, arena, out, eof, err);
}

int icd_avro_reader_skip(icd_avro_reader *r, bool *eof, icd_error *err)
{
    ICD_TRY(ready(r, eof, err));
    if (*eof) return 0;
    if (icd_avro_skip(r->schema->root, &r->cur, err)) return block_error(r, err);
    r->block_read++;
    r->records++;
    return 0;
}
