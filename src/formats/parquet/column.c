/*
 * Column chunk reader (see column.h). Data flow for one selected column of one row group:
 *
 *   pq_colreader_start     checks the chunk's byte range; reads it with one positional
 *                          read when it fits the window (see column.h), else pages are
 *                          read a window (a few pages) at a time as the walk reaches them
 *   load_page              parses a page header, checks its CRC, decompresses the body,
 *                          decodes its repetition/definition levels and its values
 *                          (through encodings.h / codec.h) into page-sized arrays
 *   pq_colreader_read_rows copies whole rows of levels and values into the batch column
 *
 * Values of byte-array columns are pq_bytes pointing into the dictionary page, the chunk
 * bytes (uncompressed pages of a chunk read whole; a window's bytes are copied to a page
 * buffer first, since the window moves on) or a decompressed page buffer. A page buffer that a
 * batch may still point into is "retired" when the page is used up and recycled only at the next
 * batch (pq_colreader_release), so no byte array is ever copied.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/array.h"
#include "base/bigmem.h"
#include "base/bits.h"
#include "formats/parquet/codec.h"
#include "formats/parquet/column.h"
#include "formats/parquet/page.h"

enum { VM_ARRAY = 0, VM_DICT = 1, VM_PLAIN = 2 };

/* Most level entries one page may hold (see load_page). */
#define PQ_MAX_PAGE_VALUES (1 << 24)

static size_t value_size(int type)
{
    switch (type) {
    case PQ_BOOLEAN:
        return 1;
    case PQ_INT32:
    case PQ_FLOAT:
        return 4;
    case PQ_INT64:
    case PQ_DOUBLE:
        return 8;
    case PQ_INT96:
        return 12;
    default:
        return sizeof(pq_bytes);
    }
}

static int bit_width(int max_level)
{
    int w = 0;
    while (max_level >> w)
        w++;
    return w;
}

void pq_colreader_init(pq_colreader *c, icd_file *file, const pq_node *leaf)
{
    memset(c, 0, sizeof *c);
    c->file = file;
    c->leaf = leaf;
    c->max_def = leaf->def_level;
    c->max_rep = leaf->rep_level;
    c->def_bw = bit_width(c->max_def);
    c->rep_bw = bit_width(c->max_rep);
    c->value_size = value_size(leaf->physical_type);
}

static void pbuf_free(pq_pbuf *b)
{
    if (!b) return;
    icd_bigbuf_free(b->data);
    icd_arena_free(&b->arena);
    free(b);
}

void pq_colreader_free(pq_colreader *c)
{
    icd_bigbuf_free(c->win);
    icd_bigbuf_free(c->own_big.data);
    icd_bigbuf_free(c->dict);
    icd_bigbuf_free(c->dict_buf.data);
    icd_arena_free(&c->dict_buf.arena);
    icd_bigbuf_free(c->def);
    icd_bigbuf_free(c->rep);
    icd_bigbuf_free(c->vals);
    icd_bigbuf_free(c->idx);
    icd_bigbuf_free(c->i64tmp);
    pbuf_free(c->cur);
    for (size_t i = 0; i < c->num_retired; i++)
        pbuf_free(c->retired[i]);
    for (size_t i = 0; i < c->num_spare; i++)
        pbuf_free(c->spare[i]);
    icd_bigbuf_free(c->retired);
    free(c->spare);
    memset(c, 0, sizeof *c);
}

/* Grows *p to hold at least `need` bytes (keeps contents). */
static int grow(void **p, size_t *cap, size_t need, icd_error *err)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 256;
    while (n < need) {
        if (n > SIZE_MAX / 2) return icd_fail_nomem(err);
        n *= 2;
    }
    void *q = icd_bigbuf_realloc(*p, n);
    if (!q) return icd_fail_nomem(err);
    *p = q;
    *cap = n;
    return 0;
}

/* Grows *p to exactly `need` bytes when smaller (windows: their size is the budget). */
static int grow_exact(void **p, size_t *cap, size_t need, icd_error *err)
{
    if (need <= *cap) return 0;
    void *q = icd_bigbuf_realloc(*p, need);
    if (!q) return icd_fail_nomem(err);
    *p = q;
    *cap = need;
    return 0;
}

/* Error context for everything that goes wrong inside a column chunk. */
static int col_fail(pq_colreader *c, int rc, int64_t off, icd_error *err)
{
    icd_error_set_file(err, c->file->location);
    if (err && err->offset < 0) err->offset = off;
    icd_error_wrap(err, "column '%s' (row group %u)", c->leaf->dotted, c->row_group);
    return rc;
}

static int corrupt(pq_colreader *c, int64_t off, icd_error *err, const char *fmt, ...)
    ICD_PRINTF(4, 5);
static int corrupt(pq_colreader *c, int64_t off, icd_error *err, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    icd_fail(err, ICD_ECORRUPT, c->file->location, off, "%s", msg);
    return col_fail(c, ICD_ECORRUPT, off, err);
}

/* --- page buffers --- */

static int retire_current(pq_colreader *c, icd_error *err)
{
    if (!c->cur) return 0;
    void *p = c->retired;
    size_t cap = c->retired_cap * sizeof *c->retired;
    ICD_TRY(grow(&p, &cap, (c->num_retired + 1) * sizeof *c->retired, err));
    c->retired = p;
    c->retired_cap = cap / sizeof *c->retired;
    c->retired[c->num_retired++] = c->cur;
    c->cur = NULL;
    return 0;
}

void pq_colreader_release(pq_colreader *c)
{
    c->cur_in_use = false;
    for (size_t i = 0; i < c->num_retired; i++) {
        pq_pbuf *b = c->retired[i];
        icd_arena_reset(&b->arena);
        if (c->num_spare < c->spare_cap || c->num_spare < 4) {
            if (ICD_ARRAY_RESERVE(c->spare, c->spare_cap, c->num_spare + 1, 4)) {
                pbuf_free(b);
                continue;
            }
            c->spare[c->num_spare++] = b;
        } else {
            pbuf_free(b);
        }
    }
    c->num_retired = 0;
}

/* A page buffer of at least n bytes becomes the current one. */
static int take_pbuf(pq_colreader *c, size_t n, icd_error *err)
{
    if (c->cur && !c->cur_in_use) { /* nothing points into it: reuse it as it is */
        icd_arena_reset(&c->cur->arena);
        void *d = c->cur->data;
        int rc = grow(&d, &c->cur->cap, n ? n : 1, err);
        c->cur->data = d;
        return rc;
    }
    ICD_TRY(retire_current(c, err));
    pq_pbuf *b = NULL;
    if (c->num_spare) b = c->spare[--c->num_spare];
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b) return icd_fail_nomem(err);
    }
    void *d = b->data;
    int rc = grow(&d, &b->cap, n ? n : 1, err);
    b->data = d;
    if (rc) {
        pbuf_free(b);
        return rc;
    }
    c->cur = b;
    return 0;
}

/* --- chunk --- */

int pq_colreader_start(pq_colreader *c, const pq_column_chunk *cc, uint32_t row_group,
                       size_t window, pq_pbuf *big, icd_error *err)
{
    const pq_column_meta *m = &cc->meta;
    c->chunk_meta = cc;
    c->row_group = row_group;
    c->codec = m->codec;
    c->pos = 0;
    c->values_left = m->num_values;
    c->data_seen = false;
    c->has_dict = false;
    c->dict_count = 0;
    c->page_count = c->page_pos = 0;
    c->vals_count = c->vals_pos = 0;
    c->started = false;
    c->win_start = c->win_len = 0;
    c->chunk_len = 0;
    c->big = big ? big : &c->own_big;
    /* the page buffer of the previous row group is reused (no batch points into it now) */

    if (m->type != c->leaf->physical_type)
        return corrupt(c, -1, err, "chunk type %s does not match the schema type %s",
                       pq_type_name(m->type), pq_type_name(c->leaf->physical_type));
    if (m->num_values < 0) return corrupt(c, -1, err, "negative num_values");
    if (cc->file_path.ptr && cc->file_path.len)
        return icd_fail(err, ICD_EUNSUPPORTED, c->file->location, -1,
                        "column '%s' stores its data in another file ('%s')", c->leaf->dotted,
                        cc->file_path.ptr);
    /* Where the chunk starts: the dictionary page when there is one. Some writers store 0
     * for "no dictionary page"; some put the dictionary before data_page_offset. */
    int64_t start = m->data_page_offset;
    if (m->has_dictionary_page_offset && m->dictionary_page_offset > 0 &&
        m->dictionary_page_offset < m->data_page_offset)
        start = m->dictionary_page_offset;
    uint64_t fsize = icd_file_size(c->file);
    if (start < 4 || (uint64_t)start > fsize)
        return corrupt(c, start, err, "chunk offset %lld is outside the file", (long long)start);
    if (m->total_compressed_size < 0 ||
        (uint64_t)m->total_compressed_size > fsize - (uint64_t)start)
        return corrupt(c, start, err, "chunk size %lld runs past the end of the file",
                       (long long)m->total_compressed_size);
    if (m->num_values > 0 && m->total_compressed_size == 0)
        return corrupt(c, start, err, "chunk has %lld values but no bytes",
                       (long long)m->num_values);
    size_t len = (size_t)m->total_compressed_size;
    c->chunk_len = len;
    c->chunk_off = (uint64_t)start;
    c->whole = window == 0 || len <= window;
    c->window = c->whole ? len : window;
    /* A window smaller than the last one: give the memory back. */
    if (!c->whole && c->win_cap > c->window) {
        icd_bigbuf_free(c->win);
        c->win = NULL;
        c->win_cap = 0;
    }
    if (!c->whole) return 0; /* read on demand (fill) */
    void *p = c->win;
    ICD_TRY(grow(&p, &c->win_cap, len ? len : 1, err));
    c->win = p;
    int rc = icd_file_read_at(c->file, (uint64_t)start, c->win, len, err);
    if (rc) return col_fail(c, rc, start, err);
    c->win_len = len;
    return 0;
}

size_t pq_colreader_window_bytes(const pq_colreader *c)
{
    return c->win_cap;
}

static size_t pbuf_bytes(const pq_pbuf *b)
{
    return b ? b->cap : 0;
}

size_t pq_colreader_memory_bytes(const pq_colreader *c)
{
    size_t n = c->win_cap + c->own_big.cap + c->dict_cap + c->dict_buf.cap + c->vals_cap +
               c->idx_cap * sizeof *c->idx + c->i64tmp_cap * sizeof *c->i64tmp + pbuf_bytes(c->cur);
    if (c->max_def) n += c->lvl_cap * sizeof *c->def;
    if (c->max_rep) n += c->lvl_cap * sizeof *c->rep;
    for (size_t i = 0; i < c->num_retired; i++)
        n += pbuf_bytes(c->retired[i]);
    for (size_t i = 0; i < c->num_spare; i++)
        n += pbuf_bytes(c->spare[i]);
    return n;
}

/* Makes chunk bytes [off, off + need) available in the window (need <= window) and
 * returns a pointer to them; the window is refilled from `off` with up to `window` bytes
 * (the bytes already there are kept). Nothing may point into the window across a refill:
 * raw page bytes are copied or decompressed before the next page is read. */
static int fill(pq_colreader *c, size_t off, size_t need, const uint8_t **out, icd_error *err)
{
    if (off >= c->win_start && off - c->win_start <= c->win_len &&
        need <= c->win_len - (off - c->win_start)) {
        *out = c->win + (off - c->win_start);
        return 0;
    }
    size_t want = c->window;
    if (want < need) want = need;
    if (want > c->chunk_len - off) want = c->chunk_len - off;
    void *p = c->win;
    ICD_TRY(grow_exact(&p, &c->win_cap, want ? want : 1, err));
    c->win = p;
    size_t keep = 0;
    if (off >= c->win_start && off - c->win_start < c->win_len) {
        keep = c->win_len - (off - c->win_start);
        if (keep > want) keep = want;
        memmove(c->win, c->win + (off - c->win_start), keep);
    }
    if (want > keep) {
        uint64_t foff = c->chunk_off + off + keep;
        int rc = icd_file_read_at(c->file, foff, c->win + keep, want - keep, err);
        if (rc) return col_fail(c, rc, (int64_t)foff, err);
    }
    c->win_start = off;
    c->win_len = want;
    *out = c->win;
    return 0;
}

/* --- levels --- */

/* Decodes `n` levels of one kind from a v1 page body (RLE with a 4-byte length, or the
 * legacy BIT_PACKED) starting at *off; advances *off. */
static int levels_v1(pq_colreader *c, const uint8_t *p, size_t len, size_t *off, int encoding,
                     int bw, uint32_t *out, size_t n, int64_t foff, icd_error *err)
{
    size_t used = 0;
    int rc;
    if (encoding == PQ_ENC_RLE) {
        if (len - *off < 4) return corrupt(c, foff, err, "levels length prefix truncated");
        const uint8_t *q = p + *off;
        uint32_t l = icd_load_le32(q);
        if (l > len - *off - 4)
            return corrupt(c, foff, err, "levels length %u exceeds the page", l);
        rc = pq_rle_decode(q + 4, l, bw, out, n, &used, err);
        if (rc) return col_fail(c, rc, foff, err);
        *off += 4 + (size_t)l;
        return 0;
    }
    if (encoding == PQ_ENC_BIT_PACKED) {
        rc = pq_bit_packed_decode(p + *off, len - *off, bw, out, n, &used, err);
        if (rc) return col_fail(c, rc, foff, err);
        *off += used;
        return 0;
    }
    return corrupt(c, foff, err, "unsupported level encoding %s", pq_encoding_name(encoding));
}

/* Checks levels against their maximum and counts entries with a value. */
static int check_levels(pq_colreader *c, size_t n, size_t *nonnull, int64_t foff, icd_error *err)
{
    if (c->max_rep) {
        uint32_t mr = (uint32_t)c->max_rep;
        for (size_t i = 0; i < n; i++)
            if (c->rep[i] > mr)
                return corrupt(c, foff, err, "repetition level %u exceeds the maximum %d",
                               c->rep[i], c->max_rep);
    }
    if (!c->max_def) {
        *nonnull = n;
        return 0;
    }
    uint32_t md = (uint32_t)c->max_def;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t d = c->def[i];
        if (d > md)
            return corrupt(c, foff, err, "definition level %u exceeds the maximum %d", d,
                           c->max_def);
        k += d == md;
    }
    *nonnull = k;
    return 0;
}

/* --- values --- */

static int ensure_vals(pq_colreader *c, size_t n, icd_error *err)
{
    if (n > SIZE_MAX / 16) return icd_fail_nomem(err);
    return grow(&c->vals, &c->vals_cap, n * c->value_size + 16, err);
}

static int ensure_idx(pq_colreader *c, size_t n, icd_error *err)
{
    void *p = c->idx;
    size_t cap = c->idx_cap * sizeof *c->idx;
    ICD_TRY(grow(&p, &cap, (n ? n : 1) * sizeof *c->idx, err));
    c->idx = p;
    c->idx_cap = cap / sizeof *c->idx;
    return 0;
}

/* PLAIN values of the column's type into `out` (also used for dictionary pages). */
static int decode_plain(pq_colreader *c, const uint8_t *p, size_t n, size_t count, void *out,
                        icd_error *err)
{
    int t = c->leaf->physical_type;
    switch (t) {
    case PQ_BOOLEAN:
        return pq_plain_bool(p, n, count, out, NULL, err);
    case PQ_BYTE_ARRAY:
        return pq_plain_byte_array(p, n, count, out, NULL, err);
    case PQ_FIXED_LEN_BYTE_ARRAY: {
        size_t w = (size_t)c->leaf->type_length;
        if (count > n / w)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "PLAIN: %zu values of %zu bytes exceed the page", count, w);
        pq_bytes *o = out;
        for (size_t i = 0; i < count; i++) {
            o[i].ptr = p + i * w;
            o[i].len = (uint32_t)w;
        }
        return 0;
    }
    default:
        return pq_plain_fixed(p, n, count, c->value_size, out, NULL, err);
    }
}

static int decode_dict_indices(pq_colreader *c, const uint8_t *p, size_t n, size_t count,
                               int64_t foff, icd_error *err)
{
    if (!c->has_dict)
        return corrupt(c, foff, err, "dictionary-encoded page without a dictionary page");
    if (count == 0) return 0;
    if (n < 1) return corrupt(c, foff, err, "dictionary indices missing");
    int bw = p[0];
    if (bw > 32) return corrupt(c, foff, err, "dictionary index bit width %d", bw);
    ICD_TRY(ensure_idx(c, count, err));
    int rc = pq_rle_decode(p + 1, n - 1, bw, c->idx, count, NULL, err);
    if (rc) return col_fail(c, rc, foff, err);
    size_t dn = c->dict_count;
    const uint32_t *idx = c->idx;
    uint32_t bad = 0;
    for (size_t i = 0; i < count; i++)
        bad |= idx[i] >= dn;
    if (bad) {
        for (size_t i = 0; i < count; i++)
            if (idx[i] >= dn)
                return corrupt(c, foff, err, "dictionary index %u out of range (%zu entries)",
                               idx[i], dn);
    }
    c->vmode = VM_DICT; /* values are gathered from the dictionary when handed out */
    return 0;
}

/* Copies dictionary entries idx[0..n) to out. */
static void gather(const pq_colreader *c, const uint32_t *idx, size_t n, uint8_t *out)
{
    size_t vs = c->value_size;
    switch (vs) {
    case 16: {
        const pq_bytes *d = c->dict;
        pq_bytes *o = (pq_bytes *)out;
        for (size_t i = 0; i < n; i++)
            o[i] = d[idx[i]];
        break;
    }
    case 8: {
        const uint64_t *d = c->dict;
        uint64_t *o = (uint64_t *)out;
        for (size_t i = 0; i < n; i++)
            o[i] = d[idx[i]];
        break;
    }
    case 4: {
        const uint32_t *d = c->dict;
        uint32_t *o = (uint32_t *)out;
        for (size_t i = 0; i < n; i++)
            o[i] = d[idx[i]];
        break;
    }
    default: {
        const uint8_t *d = c->dict;
        for (size_t i = 0; i < n; i++)
            memcpy(out + i * vs, d + (size_t)idx[i] * vs, vs);
    }
    }
}

static int decode_values(pq_colreader *c, int encoding, const uint8_t *p, size_t n, size_t count,
                         int64_t foff, icd_error *err)
{
    int t = c->leaf->physical_type;
    int rc = 0;
    c->vmode = VM_ARRAY;
    if (encoding == PQ_ENC_PLAIN && t != PQ_BOOLEAN) {
        /* decoded batch by batch (plain_values); fixed widths are checked here */
        size_t w = t == PQ_BYTE_ARRAY             ? 0
                   : t == PQ_FIXED_LEN_BYTE_ARRAY ? (size_t)c->leaf->type_length
                                                  : c->value_size;
        if (w && count > n / w)
            return corrupt(c, foff, err, "PLAIN: %zu values of %zu bytes exceed the page", count,
                           w);
        c->vmode = VM_PLAIN;
        c->plain_p = p;
        c->plain_n = n;
        c->plain_off = 0;
        return 0;
    }
    if (encoding != PQ_ENC_PLAIN_DICTIONARY && encoding != PQ_ENC_RLE_DICTIONARY)
        ICD_TRY(ensure_vals(c, count, err));
    switch (encoding) {
    case PQ_ENC_PLAIN:
        rc = decode_plain(c, p, n, count, c->vals, err);
        break;
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY:
        return decode_dict_indices(c, p, n, count, foff, err);
    case PQ_ENC_RLE:
        if (t != PQ_BOOLEAN)
            return corrupt(c, foff, err, "RLE encoding for a %s column", pq_type_name(t));
        if (count == 0) return 0;
        if (n < 4) return corrupt(c, foff, err, "RLE boolean length prefix truncated");
        {
            uint32_t l = icd_load_le32(p);
            if (l > n - 4)
                return corrupt(c, foff, err, "RLE boolean length %u exceeds the page", l);
            ICD_TRY(ensure_idx(c, count, err));
            rc = pq_rle_decode(p + 4, l, 1, c->idx, count, NULL, err);
            if (!rc) {
                uint8_t *o = c->vals;
                for (size_t i = 0; i < count; i++)
                    o[i] = (uint8_t)c->idx[i];
            }
        }
        break;
    case PQ_ENC_DELTA_BINARY_PACKED:
        if (t == PQ_INT64) {
            rc = pq_delta_binary_packed(p, n, count, c->vals, NULL, err);
        } else if (t == PQ_INT32) {
            void *q = c->i64tmp;
            size_t cap = c->i64tmp_cap * sizeof(int64_t);
            ICD_TRY(grow(&q, &cap, (count ? count : 1) * sizeof(int64_t), err));
            c->i64tmp = q;
            c->i64tmp_cap = cap / sizeof(int64_t);
            rc = pq_delta_binary_packed(p, n, count, c->i64tmp, NULL, err);
            int32_t *o = c->vals;
            for (size_t i = 0; !rc && i < count; i++)
                o[i] = (int32_t)(uint32_t)(uint64_t)c->i64tmp[i];
        } else {
            return corrupt(c, foff, err, "DELTA_BINARY_PACKED for a %s column", pq_type_name(t));
        }
        break;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        if (t != PQ_BYTE_ARRAY)
            return corrupt(c, foff, err, "DELTA_LENGTH_BYTE_ARRAY for a %s column",
                           pq_type_name(t));
        rc = pq_delta_length_byte_array(p, n, count, c->vals, NULL, err);
        break;
    case PQ_ENC_DELTA_BYTE_ARRAY:
        if (t != PQ_BYTE_ARRAY && t != PQ_FIXED_LEN_BYTE_ARRAY)
            return corrupt(c, foff, err, "DELTA_BYTE_ARRAY for a %s column", pq_type_name(t));
        rc = pq_delta_byte_array(p, n, count, c->vals, &c->cur->arena, NULL, err);
        if (!rc && t == PQ_FIXED_LEN_BYTE_ARRAY) {
            const pq_bytes *o = c->vals;
            for (size_t i = 0; i < count; i++)
                if (o[i].len != (uint32_t)c->leaf->type_length)
                    return corrupt(c, foff, err,
                                   "DELTA_BYTE_ARRAY value of %u bytes in a "
                                   "FIXED_LEN_BYTE_ARRAY(%d) column",
                                   o[i].len, c->leaf->type_length);
        }
        break;
    case PQ_ENC_BYTE_STREAM_SPLIT:
        if (t == PQ_FIXED_LEN_BYTE_ARRAY) {
            size_t w = (size_t)c->leaf->type_length;
            if (count > SIZE_MAX / w) return icd_fail_nomem(err);
            uint8_t *raw = icd_arena_alloc(&c->cur->arena, count * w + 1);
            if (!raw) return icd_fail_nomem(err);
            rc = pq_byte_stream_split(p, n, count, count, w, raw, err);
            pq_bytes *o = c->vals;
            for (size_t i = 0; !rc && i < count; i++) {
                o[i].ptr = raw + i * w;
                o[i].len = (uint32_t)w;
            }
        } else if (t == PQ_INT32 || t == PQ_INT64 || t == PQ_FLOAT || t == PQ_DOUBLE) {
            rc = pq_byte_stream_split(p, n, count, count, c->value_size, c->vals, err);
        } else {
            return corrupt(c, foff, err, "BYTE_STREAM_SPLIT for a %s column", pq_type_name(t));
        }
        break;
    default:
        icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "value encoding %s (%d) is not supported",
                 pq_encoding_name(encoding), encoding);
        return col_fail(c, ICD_EUNSUPPORTED, foff, err);
    }
    if (rc) return col_fail(c, rc, foff, err);
    return 0;
}

/* --- pages --- */

/* Decompresses `in` into the current page buffer (or points at `in` when uncompressed). */
static int page_body(pq_colreader *c, const uint8_t *in, size_t in_len, size_t out_len,
                     bool compressed, const uint8_t **out, int64_t foff, icd_error *err)
{
    if (!compressed || c->codec == PQ_CODEC_UNCOMPRESSED) {
        if (in_len != out_len && c->codec == PQ_CODEC_UNCOMPRESSED && compressed)
            return corrupt(c, foff, err,
                           "uncompressed page: compressed size %zu differs from size %zu", in_len,
                           out_len);
        if (!compressed && in_len != out_len)
            return corrupt(c, foff, err, "page sizes disagree (%zu vs %zu)", in_len, out_len);
        if (c->whole) { /* the chunk stays until the next one: point into it */
            ICD_TRY(take_pbuf(c, 1, err));
            *out = in;
            return 0;
        }
        ICD_TRY(take_pbuf(c, in_len, err)); /* the window moves on: keep a copy */
        if (in_len) memcpy(c->cur->data, in, in_len);
        *out = c->cur->data;
        return 0;
    }
    ICD_TRY(take_pbuf(c, out_len, err));
    if (out_len == 0 && in_len == 0) {
        *out = c->cur->data;
        return 0;
    }
    int rc = pq_decompress(c->codec, in, in_len, c->cur->data, out_len, err);
    if (rc) return col_fail(c, rc, foff, err);
    *out = c->cur->data;
    return 0;
}

static int load_dictionary(pq_colreader *c, const pq_page_header *h, const uint8_t *body,
                           int64_t foff, icd_error *err)
{
    if (c->has_dict || c->data_seen)
        return corrupt(c, foff, err,
                       "unexpected dictionary page (only one, before the data "
                       "pages, is allowed)");
    if (!h->has_dict)
        return corrupt(c, foff, err, "dictionary page without a DictionaryPageHeader");
    if (h->dict_encoding != PQ_ENC_PLAIN && h->dict_encoding != PQ_ENC_PLAIN_DICTIONARY)
        return corrupt(c, foff, err, "dictionary page encoding %s",
                       pq_encoding_name(h->dict_encoding));
    if (h->dict_num_values < 0) return corrupt(c, foff, err, "negative dictionary size");
    size_t n = (size_t)h->dict_num_values, ulen = (size_t)h->uncompressed_size;
    /* Every PLAIN value takes at least one bit (booleans) or one byte. */
    if (c->leaf->physical_type != PQ_BOOLEAN && n > ulen)
        return corrupt(c, foff, err, "dictionary of %zu values in %zu bytes", n, ulen);
    const uint8_t *data;
    if (c->codec == PQ_CODEC_UNCOMPRESSED) {
        if ((size_t)h->compressed_size != ulen)
            return corrupt(c, foff, err, "uncompressed dictionary page sizes disagree");
        data = body;
        if (!c->whole) { /* values point into it for the whole chunk: keep a copy */
            void *d = c->dict_buf.data;
            ICD_TRY(grow(&d, &c->dict_buf.cap, ulen ? ulen : 1, err));
            c->dict_buf.data = d;
            if (ulen) memcpy(c->dict_buf.data, body, ulen);
            data = c->dict_buf.data;
        }
    } else {
        void *d = c->dict_buf.data;
        ICD_TRY(grow(&d, &c->dict_buf.cap, ulen ? ulen : 1, err));
        c->dict_buf.data = d;
        if (ulen || h->compressed_size) {
            int rc = pq_decompress(c->codec, body, (size_t)h->compressed_size, c->dict_buf.data,
                                   ulen, err);
            if (rc) return col_fail(c, rc, foff, err);
        }
        data = c->dict_buf.data;
    }
    ICD_TRY(grow(&c->dict, &c->dict_cap, (n ? n : 1) * c->value_size, err));
    int rc = decode_plain(c, data, ulen, n, c->dict, err);
    if (rc) return col_fail(c, rc, foff, err);
    c->dict_count = n;
    c->has_dict = true;
    return 0;
}

/* Grows a pair of level arrays of capacity *cap to hold n entries (doubling from 1024):
 * only the levels the column has, since an array never written would still count whole
 * in the RSS when its block shares a huge page (icd_bigbuf). */
static int grow_levels(const pq_colreader *c, uint32_t **def, uint32_t **rep, size_t *cap, size_t n,
                       icd_error *err)
{
    if (n <= *cap) return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc < n)
        nc *= 2;
    if (c->max_def) {
        uint32_t *d = icd_bigbuf_realloc(*def, nc * sizeof *d);
        if (!d) return icd_fail_nomem(err);
        *def = d;
    }
    if (c->max_rep) {
        uint32_t *r = icd_bigbuf_realloc(*rep, nc * sizeof *r);
        if (!r) return icd_fail_nomem(err);
        *rep = r;
    }
    *cap = nc;
    return 0;
}

static int ensure_levels(pq_colreader *c, size_t n, icd_error *err)
{
    return grow_levels(c, &c->def, &c->rep, &c->lvl_cap, n, err);
}

static int load_data_v1(pq_colreader *c, const pq_page_header *h, const uint8_t *raw, int64_t foff,
                        icd_error *err)
{
    if (!h->has_data) return corrupt(c, foff, err, "data page without a DataPageHeader");
    size_t n = (size_t)h->num_values;
    const uint8_t *body;
    size_t len = (size_t)h->uncompressed_size;
    ICD_TRY(page_body(c, raw, (size_t)h->compressed_size, len, true, &body, foff, err));
    ICD_TRY(ensure_levels(c, n, err));
    size_t off = 0;
    if (c->max_rep)
        ICD_TRY(levels_v1(c, body, len, &off, h->rep_encoding, c->rep_bw, c->rep, n, foff, err));
    if (c->max_def)
        ICD_TRY(levels_v1(c, body, len, &off, h->def_encoding, c->def_bw, c->def, n, foff, err));
    size_t nonnull;
    ICD_TRY(check_levels(c, n, &nonnull, foff, err));
    ICD_TRY(decode_values(c, h->encoding, body + off, len - off, nonnull, foff, err));
    c->page_count = n;
    c->vals_count = nonnull;
    return 0;
}

static int load_data_v2(pq_colreader *c, const pq_page_header *h, const uint8_t *raw, int64_t foff,
                        icd_error *err)
{
    if (!h->has_data_v2) return corrupt(c, foff, err, "data page v2 without a DataPageHeaderV2");
    size_t n = (size_t)h->num_values;
    size_t clen = (size_t)h->compressed_size, ulen = (size_t)h->uncompressed_size;
    if (h->def_length < 0 || h->rep_length < 0 ||
        (size_t)h->def_length + (size_t)h->rep_length > clen ||
        (size_t)h->def_length + (size_t)h->rep_length > ulen)
        return corrupt(c, foff, err, "data page v2 level lengths exceed the page");
    size_t rl = (size_t)h->rep_length, dl = (size_t)h->def_length;
    ICD_TRY(ensure_levels(c, n, err));
    int rc;
    if (c->max_rep) {
        rc = pq_rle_decode(raw, rl, c->rep_bw, c->rep, n, NULL, err);
        if (rc) return col_fail(c, rc, foff, err);
    }
    if (c->max_def) {
        rc = pq_rle_decode(raw + rl, dl, c->def_bw, c->def, n, NULL, err);
        if (rc) return col_fail(c, rc, foff, err);
    }
    size_t nonnull;
    ICD_TRY(check_levels(c, n, &nonnull, foff, err));
    if (h->num_nulls < 0 || (size_t)h->num_nulls != n - nonnull)
        return corrupt(c, foff, err, "data page v2 says %d nulls, its levels %zu", h->num_nulls,
                       n - nonnull);
    const uint8_t *in = raw + rl + dl;
    size_t in_len = clen - rl - dl, out_len = ulen - rl - dl;
    const uint8_t *body;
    if (h->is_compressed && c->codec != PQ_CODEC_UNCOMPRESSED && in_len == 0) {
        /* An empty body: nothing to decompress (some writers emit zero bytes). */
        if (out_len != 0)
            return corrupt(c, foff, err, "empty compressed body for %zu bytes", out_len);
        ICD_TRY(take_pbuf(c, 1, err));
        body = in;
    } else {
        ICD_TRY(page_body(c, in, in_len, out_len, h->is_compressed, &body, foff, err));
    }
    ICD_TRY(decode_values(c, h->encoding, body, out_len, nonnull, foff, err));
    c->page_count = n;
    c->vals_count = nonnull;
    return 0;
}

/* Decodes the page header at c->pos. In a window the header's length is unknown until
 * decoded: a short prefix is tried first, then longer ones up to the rest of the chunk. */
static int page_header(pq_colreader *c, pq_page_header *h, size_t *hl, int64_t foff, icd_error *err)
{
    size_t rest = c->chunk_len - c->pos, need = rest < 4096 ? rest : 4096;
    for (;;) {
        const uint8_t *p;
        ICD_TRY(fill(c, c->pos, need, &p, err));
        size_t avail = c->win_start + c->win_len - c->pos;
        int rc = pq_page_header_decode(p, avail, h, hl, c->file->location, foff, err);
        if (!rc) return 0;
        if (avail >= rest) return col_fail(c, rc, foff, err);
        icd_error_clear(err);
        need = avail > rest / 2 ? rest : avail * 2;
    }
}

/* The raw bytes of a page body at chunk offset `off`: in the window when the page fits,
 * else read whole into the big-page buffer (a page larger than the window is read at once:
 * it cannot be decompressed or decoded in parts). */
static int page_raw(pq_colreader *c, size_t off, size_t n, const uint8_t **out, icd_error *err)
{
    size_t hl = off - c->pos;
    if (c->whole || hl + n <= c->window) {
        const uint8_t *p;
        ICD_TRY(fill(c, c->pos, hl + n, &p, err));
        *out = p + hl;
        return 0;
    }
    pq_pbuf *b = c->big;
    void *d = b->data;
    ICD_TRY(grow_exact(&d, &b->cap, n ? n : 1, err));
    b->data = d;
    size_t have = 0; /* the start of the body may be in the window already */
    if (off >= c->win_start && off - c->win_start < c->win_len) {
        have = c->win_len - (off - c->win_start);
        if (have > n) have = n;
        memcpy(b->data, c->win + (off - c->win_start), have);
    }
    if (n > have) {
        uint64_t foff = c->chunk_off + off + have;
        int rc = icd_file_read_at(c->file, foff, b->data + have, n - have, err);
        if (rc) return col_fail(c, rc, (int64_t)foff, err);
    }
    *out = b->data;
    return 0;
}

/* Loads the next data page; *got = false at the end of the chunk. */
static int load_page(pq_colreader *c, bool *got, icd_error *err)
{
    *got = false;
    while (c->values_left > 0) {
        if (c->pos >= c->chunk_len)
            return corrupt(c, (int64_t)(c->chunk_off + c->chunk_len), err,
                           "chunk ends with %lld values still missing", (long long)c->values_left);
        int64_t foff = (int64_t)(c->chunk_off + c->pos);
        pq_page_header h;
        size_t hl;
        const uint8_t *raw = NULL;
        ICD_TRY(page_header(c, &h, &hl, foff, err));
        size_t body_off = c->pos + hl;
        if ((size_t)h.compressed_size > c->chunk_len - body_off)
            return corrupt(c, foff, err, "page of %d bytes runs past the column chunk",
                           h.compressed_size);
        ICD_TRY(page_raw(c, body_off, (size_t)h.compressed_size, &raw, err));
        c->pos = body_off + (size_t)h.compressed_size;
        if (h.has_crc) {
            uint32_t crc = (uint32_t)crc32(0L, raw, (uInt)h.compressed_size);
            if (crc != h.crc)
                return corrupt(c, foff, err,
                               "page checksum mismatch (CRC32 %08x, header says "
                               "%08x)",
                               crc, h.crc);
        }
        if (h.type == PQ_PAGE_DICTIONARY) {
            ICD_TRY(load_dictionary(c, &h, raw, foff, err));
            continue;
        }
        if (h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2)
            continue; /* index pages and unknown page types carry no values */
        c->data_seen = true;
        int32_t nv = h.type == PQ_PAGE_DATA ? (h.has_data ? h.num_values : -1)
                                            : (h.has_data_v2 ? h.num_values : -1);
        if (nv < 0 && (h.has_data || h.has_data_v2))
            return corrupt(c, foff, err, "negative num_values in a data page");
        if (nv > c->values_left)
            return corrupt(c, foff, err, "page claims %d values, only %lld left in the chunk", nv,
                           (long long)c->values_left);
        /* RLE runs let a few bytes stand for any number of values, so the page size does
         * not bound the count; a fixed limit keeps decoding memory bounded. */
        if (nv > PQ_MAX_PAGE_VALUES) {
            icd_fail(err, ICD_EUNSUPPORTED, c->file->location, foff,
                     "page of %d values (more than %d are not supported)", nv, PQ_MAX_PAGE_VALUES);
            return col_fail(c, ICD_EUNSUPPORTED, foff, err);
        }
        if (h.type == PQ_PAGE_DATA)
            ICD_TRY(load_data_v1(c, &h, raw, foff, err));
        else
            ICD_TRY(load_data_v2(c, &h, raw, foff, err));
        c->values_left -= nv;
        c->page_pos = 0;
        c->vals_pos = 0;
        if (c->page_count == 0) continue;
        if (!c->started && c->max_rep && c->rep[0] != 0)
            return corrupt(c, foff, err, "first value of the chunk does not start a row");
        *got = true;
        return 0;
    }
    return 0;
}

/* Decodes the next n PLAIN values of the page into out. */
static int plain_values(pq_colreader *c, size_t n, uint8_t *out, icd_error *err)
{
    const uint8_t *p = c->plain_p + c->plain_off;
    size_t left = c->plain_n - c->plain_off, used = 0;
    int rc = 0;
    switch (c->leaf->physical_type) {
    case PQ_BYTE_ARRAY:
        rc = pq_plain_byte_array(p, left, n, (pq_bytes *)out, &used, err);
        break;
    case PQ_FIXED_LEN_BYTE_ARRAY: {
        size_t w = (size_t)c->leaf->type_length;
        pq_bytes *o = (pq_bytes *)out;
        for (size_t i = 0; i < n; i++) {
            o[i].ptr = p + i * w;
            o[i].len = (uint32_t)w;
        }
        used = n * w; /* within the page: checked when the page was loaded */
        break;
    }
    default:
        used = n * c->value_size;
        if (used) memcpy(out, p, used);
    }
    if (rc) return col_fail(c, rc, (int64_t)c->chunk_off, err);
    c->plain_off += used;
    return 0;
}

/* Appends entries [page_pos, page_pos + k) of the current page and their values. */
static int append(pq_colreader *c, size_t k, pq_colbuf *out, icd_error *err)
{
    size_t nl = out->lvl_len + k;
    ICD_TRY(grow_levels(c, &out->def, &out->rep, &out->lvl_cap, nl, err));
    size_t nv;
    if (c->max_def) {
        const uint32_t *d = c->def + c->page_pos;
        memcpy(out->def + out->lvl_len, d, k * sizeof *d);
        uint32_t md = (uint32_t)c->max_def;
        nv = 0;
        for (size_t i = 0; i < k; i++)
            nv += d[i] == md;
    } else {
        nv = k;
    }
    if (c->max_rep) memcpy(out->rep + out->lvl_len, c->rep + c->page_pos, k * sizeof *c->rep);
    out->lvl_len = nl;
    if (nv > c->vals_count - c->vals_pos)
        return icd_fail(err, ICD_EINTERNAL, c->file->location, -1, "value count mismatch");
    if (nv) {
        size_t vs = c->value_size, need = out->vals_len + nv;
        if (need > out->vals_cap) {
            size_t cap = out->vals_cap ? out->vals_cap : 1024;
            while (cap < need)
                cap *= 2;
            uint8_t *v = icd_bigbuf_realloc(out->vals, cap * vs);
            if (!v) return icd_fail_nomem(err);
            out->vals = v;
            out->vals_cap = cap;
        }
        if (c->vmode == VM_DICT)
            gather(c, c->idx + c->vals_pos, nv, out->vals + out->vals_len * vs);
        else if (c->vmode == VM_PLAIN)
            ICD_TRY(plain_values(c, nv, out->vals + out->vals_len * vs, err));
        else
            memcpy(out->vals + out->vals_len * vs, (const uint8_t *)c->vals + c->vals_pos * vs,
                   nv * vs);
        out->vals_len = need;
        if (vs == sizeof(pq_bytes)) c->cur_in_use = true;
        c->vals_pos += nv;
    }
    c->page_pos += k;
    c->started = true;
    return 0;
}

static int read_rows_copy(pq_colreader *c, size_t rows, pq_colbuf *out, size_t *done_out,
                          icd_error *err);

/* The rows wanted lie within the current page: hand out views of the page's arrays. */
static bool read_in_page(pq_colreader *c, size_t rows, pq_colbuf *out)
{
    if (c->page_pos >= c->page_count || c->vmode == VM_DICT) return false;
    int t = c->leaf->physical_type;
    bool fixed = t == PQ_INT32 || t == PQ_INT64 || t == PQ_FLOAT || t == PQ_DOUBLE;
    if (c->vmode == VM_PLAIN &&
        !(fixed && ((uintptr_t)(c->plain_p + c->plain_off) % c->value_size) == 0))
        return false;
    size_t k;
    if (!c->max_rep) {
        if (c->page_count - c->page_pos < rows) return false;
        k = rows;
    } else {
        size_t i = c->page_pos, done = 0;
        const uint32_t *rep = c->rep;
        for (; i < c->page_count; i++)
            if (rep[i] == 0 && done++ == rows) break;
        if (i == c->page_count) /* the last row may go on in the next page */
            return false;
        k = i - c->page_pos;
    }
    size_t nv = k;
    if (c->max_def) {
        const uint32_t *d = c->def + c->page_pos;
        uint32_t md = (uint32_t)c->max_def;
        nv = 0;
        for (size_t i = 0; i < k; i++)
            nv += d[i] == md;
    }
    if (nv > c->vals_count - c->vals_pos) return false;
    out->def_view = c->max_def ? c->def + c->page_pos : NULL;
    out->rep_view = c->max_rep ? c->rep + c->page_pos : NULL;
    if (c->vmode == VM_PLAIN) { /* aligned fixed-width values: view the page itself */
        out->vals_view = c->plain_p + c->plain_off;
        c->plain_off += nv * c->value_size;
    } else {
        out->vals_view = (const uint8_t *)c->vals + c->vals_pos * c->value_size;
    }
    out->lvl_len = k;
    out->vals_len = nv;
    c->page_pos += k;
    c->vals_pos += nv;
    c->started = true;
    if (c->value_size == sizeof(pq_bytes) || c->vmode == VM_PLAIN) c->cur_in_use = true;
    return true;
}

int pq_colreader_read_rows(pq_colreader *c, size_t rows, pq_colbuf *out, icd_error *err)
{
    size_t done = 0;
    out->lvl_len = out->vals_len = 0;
    if (read_in_page(c, rows, out)) return 0;
    out->def_view = out->def;
    out->rep_view = out->rep;
    out->vals_view = out->vals;
    int rc = read_rows_copy(c, rows, out, &done, err);
    out->def_view = out->def; /* the arrays may have moved */
    out->rep_view = out->rep;
    out->vals_view = out->vals;
    if (rc) return rc;
    if (done < rows)
        return corrupt(c, -1, err, "column has fewer rows than its row group (%zu missing)",
                       rows - done);
    return 0;
}

static int read_rows_copy(pq_colreader *c, size_t rows, pq_colbuf *out, size_t *done_out,
                          icd_error *err)
{
    size_t done = 0;
    for (;;) {
        if (c->page_pos == c->page_count) {
            bool got;
            ICD_TRY(load_page(c, &got, err));
            if (!got) break;
        }
        if (!c->max_rep) {
            size_t k = c->page_count - c->page_pos;
            if (k > rows - done) k = rows - done;
            ICD_TRY(append(c, k, out, err));
            done += k;
            if (done == rows) break;
            continue;
        }
        /* Nested: a row starts at repetition level 0; take entries up to the start of the
         * row after the last one wanted (it may lie in a later page). */
        const uint32_t *rep = c->rep;
        size_t i = c->page_pos, end = c->page_count;
        bool stop = false;
        for (; i < end; i++) {
            if (rep[i] == 0) {
                if (done == rows) {
                    stop = true;
                    break;
                }
                done++;
            }
        }
        ICD_TRY(append(c, i - c->page_pos, out, err));
        if (stop) break;
    }
    *done_out = done;
    return 0;
}

int pq_colreader_check_end(pq_colreader *c, icd_error *err)
{
    if (c->page_pos < c->page_count || c->values_left > 0)
        return corrupt(c, -1, err, "column has more values than its row group has rows");
    return 0;
}
