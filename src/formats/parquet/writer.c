/*
 * The native Parquet writer (see writer.h): leaf columns in, pages, column chunks, row
 * groups and the footer out, through the caller's write callback.
 *
 * Per leaf column the writer keeps the open data page (levels as uint32, dictionary
 * indices or PLAIN bytes, page statistics), the column chunk's finished pages (headers +
 * compressed bodies, in memory until the row group is flushed) and the chunk's
 * dictionary (an icd_map from value bytes to index, plus the dictionary's PLAIN bytes).
 * A page is finished before the first entry of a row once it holds page_rows entries or
 * page_bytes of values, so no page splits a row. At the end of the first page of a chunk
 * the dictionary is kept only if it pays (dictionary + indices smaller than PLAIN, the
 * test parquet-mr uses); when it outgrows dict_bytes later, the open page is re-encoded
 * PLAIN and the rest of the chunk follows in PLAIN (the pages before keep the dictionary,
 * which is written in front of them).
 *
 * When the buffered row group reaches row_group_bytes, every chunk is written out
 * (dictionary page, then data pages), its ColumnMetaData kept for the footer, and the
 * columns start over. The footer is written by pq_writer_close with the Thrift encoder of
 * thrift.c; the page bodies go through codec.c's pq_compress.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/hash.h"
#include "formats/parquet/bitpack.h"
#include "formats/parquet/page.h"
#include "formats/parquet/thrift.h"
#include "formats/parquet/writer.h"
#include "icedruid/icedruid.h"

/* The order statistics follow for a leaf. */
enum { ORD_NONE, ORD_BOOL, ORD_INT, ORD_UINT, ORD_FLOAT, ORD_BYTES, ORD_BYTES_SIGNED };

typedef struct wstats {
    bool has; /* min/max set */
    int64_t nulls;
    int64_t imin, imax;
    uint64_t umin, umax;
    double dmin, dmax;
    icd_buf bmin, bmax;
} wstats;

/* Byte-array dictionary columns remember the dictionary index of recently met value
 * pointers. While one pq_writer_write_batch runs, the bytes its values point at do not
 * change, so a pointer met again with the same length is the same value: no hashing and
 * no compare. Readers hand out pointers into their dictionary page for the values of
 * dictionary-encoded columns, so this catches most values of the columns that are worth
 * a dictionary. Entries of an earlier batch or dictionary differ in generation. */
#define PCACHE_BITS 10
typedef struct pcache_entry {
    const uint8_t *p;
    uint64_t gen;
    uint32_t len, idx;
} pcache_entry;

typedef struct wcol {
    const pq_node *leaf;
    int type;
    size_t width; /* bytes per value for fixed-width types; 0 for BOOLEAN / BYTE_ARRAY */
    int ord;
    uint32_t max_def, max_rep;
    int def_bw, rep_bw;

    /* the open page */
    uint32_t *def, *rep, *idx;
    size_t nlev, cap_lev, cap_rep, nval, cap_idx;
    size_t raw_bytes; /* PLAIN size of the page's values (for the dictionary test) */
    icd_buf plain;    /* PLAIN values (BOOLEAN: one byte per value until the page is packed) */
    wstats ps, cs;

    /* the chunk's dictionary */
    bool dict_allowed, dict;
    icd_map *map;
    icd_buf dplain;
    uint32_t *doff; /* BYTE_ARRAY: start of entry i in dplain (length prefix included) */
    size_t dcount, cap_doff;
    int dict_pages, plain_pages;
    pcache_entry *pcache; /* byte arrays: 1 << PCACHE_BITS entries, allocated with the map */
    uint64_t pgen;        /* the batch and dictionary the valid entries belong to */

    /* the chunk's finished pages */
    icd_buf chunk;
    int64_t chunk_values, chunk_uncompressed;
} wcol;

typedef struct wchunk {
    int64_t start, data_offset, dict_offset; /* dict_offset -1: none */
    int64_t compressed, uncompressed, num_values;
    bool plain_used, dict_used;
    bool has_minmax;
    int64_t nulls;
    char *min, *max; /* malloc'd encoded bounds */
    size_t min_len, max_len;
} wchunk;

typedef struct wrg {
    wchunk *cols;
    int64_t num_rows, file_offset, compressed, uncompressed;
} wrg;

struct pq_writer {
    pq_write_options opt;
    pq_write_fn write;
    void *ctx;
    icd_arena arena; /* schema copy, kv copy */
    pq_schema_element *els;
    size_t nels;
    pq_file_meta meta; /* holds the schema list for pq_schema_build */
    pq_schema schema;
    wcol *cols;
    size_t ncols;
    pq_compressor *comp;
    icd_buf body, cbody, hdr;
    uint64_t *seen; /* dict_page_stats' bitmap */
    size_t cap_seen;
    int64_t pos, rows, rg_rows;
    wrg *rgs;
    size_t nrgs, cap_rgs;
    bool failed, closed;
};

const char *pq_writer_created_by(void)
{
    return "icedruid version " ICEDRUID_VERSION;
}

/* ---------------------------------------------------------------- output */

static int out_write(pq_writer *w, const void *p, size_t n, icd_error *err)
{
    if (!n) return 0;
    int rc = w->write(w->ctx, p, n, err);
    if (rc < 0) {
        w->failed = true;
        return rc;
    }
    w->pos += (int64_t)n;
    return 0;
}

static int invalid(pq_writer *w, icd_error *err, const char *fmt, const char *col, long long a,
                   long long b)
{
    w->failed = true;
    char msg[256];
    snprintf(msg, sizeof msg, fmt, a, b);
    return icd_fail(err, ICD_EINVALID, NULL, -1, "Parquet writer, column %s: %s", col, msg);
}

/* ---------------------------------------------------------------- statistics */

static void stats_reset(wstats *s)
{
    s->has = false;
    s->nulls = 0;
    icd_buf_clear(&s->bmin);
    icd_buf_clear(&s->bmax);
}

static int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

/* Big-endian two's-complement integers of any lengths (DECIMAL on binaries). */
static int cmp_signed_be(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    bool na = an && (a[0] & 0x80), nb = bn && (b[0] & 0x80);
    if (na != nb) return na ? -1 : 1;
    uint8_t ext = na ? 0xff : 0;
    size_t n = an > bn ? an : bn;
    for (size_t i = 0; i < n; i++) {
        uint8_t x = i + an < n ? ext : a[i + an - n];
        uint8_t y = i + bn < n ? ext : b[i + bn - n];
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

static int cmp_ord(int ord, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    return ord == ORD_BYTES_SIGNED ? cmp_signed_be(a, an, b, bn) : cmp_bytes(a, an, b, bn);
}

static inline void stat_int(wstats *s, int64_t v)
{
    if (!s->has) {
        s->has = true;
        s->imin = s->imax = v;
    } else if (v < s->imin) {
        s->imin = v;
    } else if (v > s->imax) {
        s->imax = v;
    }
}

static inline void stat_uint(wstats *s, uint64_t v)
{
    if (!s->has) {
        s->has = true;
        s->umin = s->umax = v;
    } else if (v < s->umin) {
        s->umin = v;
    } else if (v > s->umax) {
        s->umax = v;
    }
}

static inline void stat_double(wstats *s, double v)
{
    if (isnan(v)) return;
    if (!s->has) {
        s->has = true;
        s->dmin = s->dmax = v;
    } else if (v < s->dmin) {
        s->dmin = v;
    } else if (v > s->dmax) {
        s->dmax = v;
    }
}

static inline void stat_bytes(wstats *s, int ord, const uint8_t *p, size_t n)
{
    if (!s->has) {
        s->has = true;
        icd_buf_clear(&s->bmin);
        icd_buf_clear(&s->bmax);
        icd_buf_append(&s->bmin, p, n);
        icd_buf_append(&s->bmax, p, n);
        return;
    }
    if (cmp_ord(ord, p, n, (const uint8_t *)s->bmin.data, s->bmin.len) < 0) {
        icd_buf_clear(&s->bmin);
        icd_buf_append(&s->bmin, p, n);
    } else if (cmp_ord(ord, p, n, (const uint8_t *)s->bmax.data, s->bmax.len) > 0) {
        icd_buf_clear(&s->bmax);
        icd_buf_append(&s->bmax, p, n);
    }
}

static void stats_merge(wstats *into, const wstats *s, int ord)
{
    into->nulls += s->nulls;
    if (!s->has) return;
    switch (ord) {
    case ORD_BOOL:
    case ORD_INT:
        stat_int(into, s->imin);
        stat_int(into, s->imax);
        break;
    case ORD_UINT:
        stat_uint(into, s->umin);
        stat_uint(into, s->umax);
        break;
    case ORD_FLOAT:
        stat_double(into, s->dmin);
        stat_double(into, s->dmax);
        break;
    case ORD_BYTES:
    case ORD_BYTES_SIGNED:
        stat_bytes(into, ord, (const uint8_t *)s->bmin.data, s->bmin.len);
        stat_bytes(into, ord, (const uint8_t *)s->bmax.data, s->bmax.len);
        break;
    default:
        break;
    }
}

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The PLAIN encoding of the bounds (the Statistics min_value / max_value bytes). */
static size_t stat_encode(const wcol *c, const wstats *s, bool max, uint8_t *tmp, const uint8_t **p)
{
    *p = tmp;
    switch (c->ord) {
    case ORD_BOOL:
        tmp[0] = (uint8_t)(max ? s->imax : s->imin);
        return 1;
    case ORD_INT:
        put_le(tmp, (uint64_t)(max ? s->imax : s->imin), c->width);
        return c->width;
    case ORD_UINT:
        put_le(tmp, max ? s->umax : s->umin, c->width);
        return c->width;
    case ORD_FLOAT: {
        double d = max ? s->dmax : s->dmin;
        if (d == 0) d = max ? 0.0 : -0.0; /* the spec's -0 / +0 rule */
        if (c->type == PQ_FLOAT) {
            float f = (float)d;
            memcpy(tmp, &f, 4);
            return 4;
        }
        memcpy(tmp, &d, 8);
        return 8;
    }
    default: {
        const icd_buf *b = max ? &s->bmax : &s->bmin;
        *p = (const uint8_t *)b->data;
        return b->len;
    }
    }
}

static void write_statistics(pq_tw *t, const wcol *c, const wstats *s)
{
    pq_tw_struct_begin(t);
    pq_tw_field_i64(t, 3, s->nulls);
    if (s->has && c->ord != ORD_NONE) {
        uint8_t tmp[16];
        const uint8_t *p;
        size_t n = stat_encode(c, s, true, tmp, &p);
        pq_tw_field_binary(t, 5, p, n);
        n = stat_encode(c, s, false, tmp, &p);
        pq_tw_field_binary(t, 6, p, n);
    }
    pq_tw_struct_end(t);
}

/* ---------------------------------------------------------------- columns */

static int leaf_order(const pq_node *l)
{
    const pq_logical_type *e = &l->eff;
    switch (l->physical_type) {
    case PQ_BOOLEAN:
        return ORD_BOOL;
    case PQ_INT32:
    case PQ_INT64:
        return e->kind == PQ_LT_INTEGER && !e->is_signed ? ORD_UINT : ORD_INT;
    case PQ_FLOAT:
    case PQ_DOUBLE:
        return ORD_FLOAT;
    case PQ_BYTE_ARRAY:
    case PQ_FIXED_LEN_BYTE_ARRAY:
        if (e->kind == PQ_LT_DECIMAL) return ORD_BYTES_SIGNED;
        if (e->kind == PQ_LT_FLOAT16 || l->converted == PQ_CONV_INTERVAL) return ORD_NONE;
        return ORD_BYTES;
    default:
        return ORD_NONE; /* INT96 */
    }
}

static int col_reset_dict(wcol *c, icd_error *err)
{
    icd_map_free(c->map);
    c->map = NULL;
    icd_buf_clear(&c->dplain);
    c->dcount = 0;
    c->dict_pages = 0;
    c->plain_pages = 0;
    c->dict = c->dict_allowed;
    c->pgen++;
    if (c->dict) ICD_TRY(icd_map_new(&c->map, 1024, err));
    if (c->dict && (c->type == PQ_BYTE_ARRAY || c->type == PQ_FIXED_LEN_BYTE_ARRAY) && !c->pcache &&
        !(c->pcache = calloc((size_t)1 << PCACHE_BITS, sizeof *c->pcache)))
        return icd_fail_nomem(err);
    return 0;
}

static void col_free(wcol *c)
{
    free(c->def);
    free(c->rep);
    free(c->idx);
    free(c->doff);
    icd_buf_free(&c->plain);
    icd_buf_free(&c->ps.bmin);
    icd_buf_free(&c->ps.bmax);
    icd_buf_free(&c->cs.bmin);
    icd_buf_free(&c->cs.bmax);
    icd_map_free(c->map);
    free(c->pcache);
    icd_buf_free(&c->dplain);
    icd_buf_free(&c->chunk);
}

static bool grow_u32(uint32_t **p, size_t *cap, size_t need)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    uint32_t *q = realloc(*p, n * sizeof *q);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

/* Bounds of a byte-array page in dictionary mode: each distinct entry compared once. */
static int dict_page_stats(pq_writer *w, wcol *c, icd_error *err)
{
    if ((c->ord != ORD_BYTES && c->ord != ORD_BYTES_SIGNED) || !c->nval) return 0;
    size_t words = (c->dcount + 63) / 64;
    if (words > w->cap_seen) {
        uint64_t *p = realloc(w->seen, words * sizeof *p);
        if (!p) return icd_fail_nomem(err);
        w->seen = p;
        w->cap_seen = words;
    }
    memset(w->seen, 0, words * sizeof *w->seen);
    for (size_t i = 0; i < c->nval; i++) {
        uint32_t k = c->idx[i];
        uint64_t bit = (uint64_t)1 << (k & 63);
        if (w->seen[k >> 6] & bit) continue;
        w->seen[k >> 6] |= bit;
        if (c->width)
            stat_bytes(&c->ps, c->ord, (const uint8_t *)c->dplain.data + (size_t)k * c->width,
                       c->width);
        else
            stat_bytes(&c->ps, c->ord, (const uint8_t *)c->dplain.data + c->doff[k] + 4,
                       c->doff[k + 1] - c->doff[k] - 4);
    }
    return 0;
}

/* Encodes the open page and appends it (header + compressed body) to the chunk. */
static int finish_page(pq_writer *w, wcol *c, icd_error *err)
{
    if (!c->nlev) return 0;
    if (c->dict) ICD_TRY(dict_page_stats(w, c, err));
    icd_buf *b = &w->body;
    icd_buf_clear(b);
    const uint32_t *levels[2] = {c->rep, c->def};
    const uint32_t maxes[2] = {c->max_rep, c->max_def};
    const int bws[2] = {c->rep_bw, c->def_bw};
    for (int k = 0; k < 2; k++) {
        if (!maxes[k]) continue;
        size_t at = b->len;
        icd_buf_append(b, "\0\0\0\0", 4);
        pq_rle_encode(levels[k], c->nlev, bws[k], b);
        if (!icd_buf_ok(b)) return icd_fail_nomem(err);
        put_le((uint8_t *)b->data + at, b->len - at - 4, 4);
    }
    bool dict_page = c->dict;
    if (dict_page) {
        int bw = pq_bit_width(c->dcount ? c->dcount - 1 : 0);
        if (bw < 1) bw = 1;
        icd_buf_putc(b, (char)bw);
        pq_rle_encode(c->idx, c->nval, bw, b);
    } else if (c->type == PQ_BOOLEAN) {
        size_t nbytes = (c->nval + 7) / 8;
        if (!icd_buf_grow(b, nbytes + 1)) return icd_fail_nomem(err);
        uint8_t *dst = (uint8_t *)b->data + b->len;
        memset(dst, 0, nbytes);
        const uint8_t *v = (const uint8_t *)c->plain.data;
        for (size_t i = 0; i < c->nval; i++)
            dst[i >> 3] |= (uint8_t)(v[i] << (i & 7));
        b->len += nbytes;
    } else {
        icd_buf_append(b, c->plain.data, c->plain.len);
    }
    if (!icd_buf_ok(b)) return icd_fail_nomem(err);
    if (b->len > INT32_MAX)
        return invalid(w, err, "a page of %lld bytes is too large%.0lld", c->leaf->dotted,
                       (long long)b->len, 0);
    ICD_TRY(pq_compress(w->comp, (const uint8_t *)b->data, b->len, &w->cbody, err));

    pq_tw t;
    icd_buf_clear(&w->hdr);
    pq_tw_init(&t, &w->hdr);
    pq_tw_struct_begin(&t);
    pq_tw_field_i32(&t, 1, PQ_PAGE_DATA);
    pq_tw_field_i32(&t, 2, (int32_t)b->len);
    pq_tw_field_i32(&t, 3, (int32_t)w->cbody.len);
    pq_tw_field_begin(&t, 5, PQ_T_STRUCT);
    pq_tw_struct_begin(&t);
    pq_tw_field_i32(&t, 1, (int32_t)c->nlev);
    pq_tw_field_i32(&t, 2, dict_page ? PQ_ENC_PLAIN_DICTIONARY : PQ_ENC_PLAIN);
    pq_tw_field_i32(&t, 3, PQ_ENC_RLE);
    pq_tw_field_i32(&t, 4, PQ_ENC_RLE);
    pq_tw_field_begin(&t, 5, PQ_T_STRUCT);
    write_statistics(&t, c, &c->ps);
    pq_tw_struct_end(&t);
    pq_tw_struct_end(&t);
    icd_buf_append(&c->chunk, w->hdr.data, w->hdr.len);
    icd_buf_append(&c->chunk, w->cbody.data, w->cbody.len);
    if (!icd_buf_ok(&c->chunk) || !icd_buf_ok(&w->hdr)) return icd_fail_nomem(err);
    c->chunk_values += (int64_t)c->nlev;
    c->chunk_uncompressed += (int64_t)(w->hdr.len + b->len);
    if (dict_page)
        c->dict_pages++;
    else
        c->plain_pages++;
    stats_merge(&c->cs, &c->ps, c->ord);
    stats_reset(&c->ps);
    c->nlev = c->nval = c->raw_bytes = 0;
    icd_buf_clear(&c->plain);
    return 0;
}

/* Turns the open page's dictionary indices into PLAIN values and stops using the
 * dictionary for the rest of the chunk. */
static int dict_to_plain(pq_writer *w, wcol *c, icd_error *err)
{
    ICD_TRY(dict_page_stats(w, c, err));
    icd_buf_clear(&c->plain);
    for (size_t i = 0; i < c->nval; i++) {
        uint32_t k = c->idx[i];
        if (c->width)
            icd_buf_append(&c->plain, c->dplain.data + (size_t)k * c->width, c->width);
        else
            icd_buf_append(&c->plain, c->dplain.data + c->doff[k], c->doff[k + 1] - c->doff[k]);
    }
    c->dict = false;
    if (!c->dict_pages) { /* nothing refers to the dictionary: drop it */
        icd_buf_clear(&c->dplain);
        c->dcount = 0;
    }
    icd_map_free(c->map);
    c->map = NULL;
    return icd_buf_ok(&c->plain) ? 0 : icd_fail_nomem(err);
}

/* Dictionary entry k as the open page's next value. */
static int put_index(pq_writer *w, wcol *c, uint32_t k, icd_error *err)
{
    if (!grow_u32(&c->idx, &c->cap_idx, c->nval + 1)) return icd_fail_nomem(err);
    c->idx[c->nval++] = k;
    /* nearly unique values in the first 1024 of the chunk: PLAIN at once (the page
     * goes on in PLAIN; the dictionary is dropped) */
    if (c->nval == 1024 && !c->dict_pages && c->dcount > 1000) return dict_to_plain(w, c, err);
    if (c->dplain.len > w->opt.dict_bytes) {
        ICD_TRY(dict_to_plain(w, c, err));
        ICD_TRY(finish_page(w, c, err));
    }
    return 0;
}

/* The value at p (width bytes, or a byte array of n bytes) into the open page. */
static int put_value(pq_writer *w, wcol *c, const uint8_t *p, size_t n, icd_error *err)
{
    c->raw_bytes += c->width ? c->width : 4 + n;
    if (c->dict) {
        uint64_t h = icd_hash_bytes(p, n);
        uint64_t *slot;
        bool inserted;
        ICD_TRY(icd_map_upsert(c->map, p, n, h, &slot, &inserted, err));
        if (inserted) {
            *slot = c->dcount;
            if (!c->width) {
                if (!grow_u32(&c->doff, &c->cap_doff, c->dcount + 2)) return icd_fail_nomem(err);
                c->doff[c->dcount] = (uint32_t)c->dplain.len;
                uint8_t len[4];
                put_le(len, n, 4);
                icd_buf_append(&c->dplain, len, 4);
                icd_buf_append(&c->dplain, p, n);
                c->doff[c->dcount + 1] = (uint32_t)c->dplain.len;
            } else {
                icd_buf_append_small(&c->dplain, p, n);
            }
            if (!icd_buf_ok(&c->dplain)) return icd_fail_nomem(err);
            c->dcount++;
        }
        return put_index(w, c, (uint32_t)*slot, err);
    }
    if (!c->width) {
        uint8_t len[4];
        put_le(len, n, 4);
        icd_buf_append(&c->plain, len, 4);
    }
    icd_buf_append_small(&c->plain, p, n);
    c->nval++;
    return 0;
}

/* Does the open page take no more entries (checked before the first entry of a row)? */
static bool page_full(const pq_writer *w, const wcol *c)
{
    if (c->nlev >= w->opt.page_rows) return true;
    size_t est = c->dict ? c->nval * 2 : c->plain.len;
    return est >= w->opt.page_bytes;
}

/* Before finishing the first page of a chunk in dictionary mode: keep the dictionary only
 * if dictionary + indices are smaller than PLAIN. */
static int maybe_drop_dict(pq_writer *w, wcol *c, icd_error *err)
{
    if (!c->dict || c->dict_pages) return 0;
    if (c->nval) { /* (an all-null first page drops the dictionary: it would be empty) */
        int bw = pq_bit_width(c->dcount ? c->dcount - 1 : 0);
        size_t encoded = c->dplain.len + (c->nval * (size_t)(bw ? bw : 1) + 7) / 8;
        if (encoded < c->raw_bytes) return 0;
    }
    ICD_TRY(dict_to_plain(w, c, err));
    return finish_page(w, c, err);
}

static int close_page(pq_writer *w, wcol *c, icd_error *err)
{
    ICD_TRY(maybe_drop_dict(w, c, err));
    return finish_page(w, c, err);
}

/* One value of the batch column `cb` (index vi) into column c, with its statistics. */
static int add_value(pq_writer *w, wcol *c, const pq_column_batch *cb, size_t vi, icd_error *err)
{
    switch (c->type) {
    case PQ_BOOLEAN: {
        uint8_t v = ((const uint8_t *)cb->values)[vi] ? 1 : 0;
        stat_int(&c->ps, v);
        icd_buf_putc(&c->plain, (char)v);
        c->nval++;
        return 0;
    }
    case PQ_INT32: {
        int32_t v = ((const int32_t *)cb->values)[vi];
        if (c->ord == ORD_UINT)
            stat_uint(&c->ps, (uint32_t)v);
        else
            stat_int(&c->ps, v);
        return put_value(w, c, (const uint8_t *)&v, 4, err);
    }
    case PQ_INT64: {
        int64_t v = ((const int64_t *)cb->values)[vi];
        if (c->ord == ORD_UINT)
            stat_uint(&c->ps, (uint64_t)v);
        else
            stat_int(&c->ps, v);
        return put_value(w, c, (const uint8_t *)&v, 8, err);
    }
    case PQ_INT96:
        return put_value(w, c, ((const pq_int96 *)cb->values)[vi].b, 12, err);
    case PQ_FLOAT: {
        float v = ((const float *)cb->values)[vi];
        stat_double(&c->ps, v);
        return put_value(w, c, (const uint8_t *)&v, 4, err);
    }
    case PQ_DOUBLE: {
        double v = ((const double *)cb->values)[vi];
        stat_double(&c->ps, v);
        return put_value(w, c, (const uint8_t *)&v, 8, err);
    }
    default: {
        pq_bytes v = ((const pq_bytes *)cb->values)[vi];
        if (c->type == PQ_FIXED_LEN_BYTE_ARRAY && v.len != c->width)
            return invalid(w, err, "a FIXED_LEN_BYTE_ARRAY value of %lld bytes, the type has %lld",
                           c->leaf->dotted, (long long)v.len, (long long)c->width);
        /* in dictionary mode the page's bounds come from its distinct entries */
        if (c->ord != ORD_NONE && !c->dict) stat_bytes(&c->ps, c->ord, v.ptr, v.len);
        if (!c->dict || !c->pcache) return put_value(w, c, v.ptr, v.len, err);
        pcache_entry *e = &c->pcache[((uint64_t)(uintptr_t)v.ptr * UINT64_C(0x9E3779B97F4A7C15)) >>
                                     (64 - PCACHE_BITS)];
        if (e->gen == c->pgen && e->p == v.ptr && e->len == v.len) {
            c->raw_bytes += c->width ? c->width : 4 + v.len;
            return put_index(w, c, e->idx, err);
        }
        ICD_TRY(put_value(w, c, v.ptr, v.len, err));
        if (c->dict && c->nval)
            *e = (pcache_entry){
                .p = v.ptr, .gen = c->pgen, .len = v.len, .idx = c->idx[c->nval - 1]};
        return 0;
    }
    }
}

/* Checks one column of a batch against the schema and the row count. */
static int check_column(pq_writer *w, const wcol *c, const pq_column_batch *cb, size_t num_rows,
                        icd_error *err)
{
    const char *name = c->leaf->dotted;
    if (c->max_def && !cb->def && cb->num_levels)
        return invalid(w, err, "definition levels missing (max level %lld)%.0lld", name,
                       (long long)c->max_def, 0);
    if (c->max_rep && !cb->rep && cb->num_levels)
        return invalid(w, err, "repetition levels missing (max level %lld)%.0lld", name,
                       (long long)c->max_rep, 0);
    size_t values = 0, rows = 0;
    if (!c->max_rep && !cb->def) { /* flat required: nothing per entry to check */
        values = cb->num_levels;
    } else if (!c->max_rep) {
        for (size_t e = 0; e < cb->num_levels; e++) {
            uint32_t d = cb->def[e];
            if (d > c->max_def)
                return invalid(w, err, "definition level %lld above the maximum %lld", name, d,
                               (long long)c->max_def);
            values += d == c->max_def;
        }
    }
    for (size_t e = 0; c->max_rep && e < cb->num_levels; e++) {
        uint32_t d = cb->def ? cb->def[e] : c->max_def;
        if (d > c->max_def)
            return invalid(w, err, "definition level %lld above the maximum %lld", name, d,
                           (long long)c->max_def);
        values += d == c->max_def;
        if (c->max_rep) {
            uint32_t r = cb->rep[e];
            if (r > c->max_rep)
                return invalid(w, err, "repetition level %lld above the maximum %lld", name, r,
                               (long long)c->max_rep);
            if (e == 0 && r != 0)
                return invalid(w, err, "the first repetition level is %lld, not 0%.0lld", name, r,
                               0);
            rows += r == 0;
        }
    }
    if (!c->max_rep) rows = cb->num_levels;
    if (rows != num_rows)
        return invalid(w, err, "%lld rows in the levels, the batch has %lld", name, (long long)rows,
                       (long long)num_rows);
    if (values != cb->num_values)
        return invalid(w, err, "%lld values for %lld non-null level entries", name,
                       (long long)cb->num_values, (long long)values);
    return 0;
}

static int add_column(pq_writer *w, wcol *c, const pq_column_batch *cb, icd_error *err)
{
    size_t vi = 0;
    for (size_t e = 0; e < cb->num_levels; e++) {
        uint32_t r = c->max_rep ? cb->rep[e] : 0;
        if (r == 0 && c->nlev && page_full(w, c)) ICD_TRY(close_page(w, c, err));
        if (c->nlev == c->cap_lev) {
            size_t need = c->nlev + (cb->num_levels - e);
            if ((c->max_def && !grow_u32(&c->def, &c->cap_lev, need)) ||
                (c->max_rep && !grow_u32(&c->rep, &c->cap_rep, c->cap_lev)))
                return icd_fail_nomem(err);
            if (!c->max_def) c->cap_lev = need;
        }
        uint32_t d = cb->def ? cb->def[e] : c->max_def;
        if (c->max_def) c->def[c->nlev] = d;
        if (c->max_rep) c->rep[c->nlev] = r;
        c->nlev++;
        if (d == c->max_def)
            ICD_TRY(add_value(w, c, cb, vi++, err));
        else
            c->ps.nulls++;
    }
    if (!icd_buf_ok(&c->plain) || !icd_buf_ok(&c->ps.bmin) || !icd_buf_ok(&c->ps.bmax))
        return icd_fail_nomem(err);
    return 0;
}

static size_t buffered_bytes(const pq_writer *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->ncols; i++) {
        const wcol *c = &w->cols[i];
        n += c->chunk.len + c->plain.len + c->nval * 4 + c->nlev * 2 + c->dplain.len;
    }
    return n;
}

/* ---------------------------------------------------------------- row groups */

static int write_dict_page(pq_writer *w, wcol *c, icd_error *err)
{
    ICD_TRY(pq_compress(w->comp, (const uint8_t *)c->dplain.data, c->dplain.len, &w->cbody, err));
    pq_tw t;
    icd_buf_clear(&w->hdr);
    pq_tw_init(&t, &w->hdr);
    pq_tw_struct_begin(&t);
    pq_tw_field_i32(&t, 1, PQ_PAGE_DICTIONARY);
    pq_tw_field_i32(&t, 2, (int32_t)c->dplain.len);
    pq_tw_field_i32(&t, 3, (int32_t)w->cbody.len);
    pq_tw_field_begin(&t, 7, PQ_T_STRUCT);
    pq_tw_struct_begin(&t);
    pq_tw_field_i32(&t, 1, (int32_t)c->dcount);
    pq_tw_field_i32(&t, 2, PQ_ENC_PLAIN_DICTIONARY);
    pq_tw_struct_end(&t);
    pq_tw_struct_end(&t);
    if (!icd_buf_ok(&w->hdr)) return icd_fail_nomem(err);
    c->chunk_uncompressed += (int64_t)(w->hdr.len + c->dplain.len);
    ICD_TRY(out_write(w, w->hdr.data, w->hdr.len, err));
    return out_write(w, w->cbody.data, w->cbody.len, err);
}

int pq_writer_flush_row_group(pq_writer *w, icd_error *err)
{
    if (w->failed) return icd_fail(err, ICD_EINVALID, NULL, -1, "Parquet writer: failed before");
    if (!w->rg_rows) return 0;
    if (ICD_ARRAY_RESERVE(w->rgs, w->cap_rgs, w->nrgs + 1, 8)) return icd_fail_nomem(err);
    wrg *rg = &w->rgs[w->nrgs];
    memset(rg, 0, sizeof *rg);
    rg->cols = calloc(w->ncols ? w->ncols : 1, sizeof *rg->cols);
    if (!rg->cols) return icd_fail_nomem(err);
    w->nrgs++;
    rg->num_rows = w->rg_rows;
    rg->file_offset = w->pos;
    for (size_t i = 0; i < w->ncols; i++) {
        wcol *c = &w->cols[i];
        wchunk *ch = &rg->cols[i];
        ICD_TRY(close_page(w, c, err));
        ch->start = w->pos;
        ch->dict_offset = -1;
        if (c->dict_pages) {
            ch->dict_offset = w->pos;
            ICD_TRY(write_dict_page(w, c, err));
        }
        ch->data_offset = w->pos;
        ICD_TRY(out_write(w, c->chunk.data, c->chunk.len, err));
        ch->compressed = w->pos - ch->start;
        ch->uncompressed = c->chunk_uncompressed;
        ch->num_values = c->chunk_values;
        ch->dict_used = c->dict_pages > 0;
        ch->plain_used = c->plain_pages > 0;
        ch->nulls = c->cs.nulls;
        if (c->cs.has && c->ord != ORD_NONE) {
            uint8_t tmp[16];
            const uint8_t *p;
            size_t n = stat_encode(c, &c->cs, false, tmp, &p);
            ch->min = malloc(n ? n : 1);
            if (!ch->min) return icd_fail_nomem(err);
            if (n) memcpy(ch->min, p, n);
            ch->min_len = n;
            n = stat_encode(c, &c->cs, true, tmp, &p);
            ch->max = malloc(n ? n : 1);
            if (!ch->max) return icd_fail_nomem(err);
            if (n) memcpy(ch->max, p, n);
            ch->max_len = n;
            ch->has_minmax = true;
        }
        rg->compressed += ch->compressed;
        rg->uncompressed += ch->uncompressed;
        icd_buf_clear(&c->chunk);
        c->chunk_values = c->chunk_uncompressed = 0;
        stats_reset(&c->cs);
        ICD_TRY(col_reset_dict(c, err));
    }
    w->rg_rows = 0;
    return 0;
}

int pq_writer_write_batch(pq_writer *w, const pq_column_batch *cols, size_t num_rows,
                          icd_error *err)
{
    if (w->failed || w->closed)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Parquet writer: %s",
                        w->closed ? "already closed" : "failed before");
    for (size_t i = 0; i < w->ncols; i++)
        ICD_TRY(check_column(w, &w->cols[i], &cols[i], num_rows, err));
    for (size_t i = 0; i < w->ncols; i++) {
        w->cols[i].pgen++; /* the value pointers of another batch */
        int rc = add_column(w, &w->cols[i], &cols[i], err);
        if (rc < 0) {
            w->failed = true;
            return rc;
        }
    }
    w->rows += (int64_t)num_rows;
    w->rg_rows += (int64_t)num_rows;
    if (buffered_bytes(w) >= w->opt.row_group_bytes) {
        int rc = pq_writer_flush_row_group(w, err);
        if (rc < 0) {
            w->failed = true;
            return rc;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- footer */

static void write_unit(pq_tw *t, int16_t id, int unit)
{
    pq_tw_field_begin(t, id, PQ_T_STRUCT);
    pq_tw_struct_begin(t);
    pq_tw_field_empty_struct(t, (int16_t)(unit == PQ_UNIT_MILLIS  ? 1
                                          : unit == PQ_UNIT_NANOS ? 3
                                                                  : 2));
    pq_tw_struct_end(t);
}

static void write_logical(pq_tw *t, const pq_logical_type *lt)
{
    pq_tw_field_begin(t, 10, PQ_T_STRUCT);
    pq_tw_struct_begin(t);
    switch (lt->kind) {
    case PQ_LT_DECIMAL:
        pq_tw_field_begin(t, 5, PQ_T_STRUCT);
        pq_tw_struct_begin(t);
        pq_tw_field_i32(t, 1, lt->scale);
        pq_tw_field_i32(t, 2, lt->precision);
        pq_tw_struct_end(t);
        break;
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP:
        pq_tw_field_begin(t, (int16_t)lt->kind, PQ_T_STRUCT);
        pq_tw_struct_begin(t);
        pq_tw_field_bool(t, 1, lt->utc);
        write_unit(t, 2, lt->unit);
        pq_tw_struct_end(t);
        break;
    case PQ_LT_INTEGER:
        pq_tw_field_begin(t, 10, PQ_T_STRUCT);
        pq_tw_struct_begin(t);
        pq_tw_field_i8(t, 1, (int8_t)lt->bit_width);
        pq_tw_field_bool(t, 2, lt->is_signed);
        pq_tw_struct_end(t);
        break;
    default: /* STRING, MAP, LIST, ENUM, DATE, UNKNOWN, JSON, BSON, UUID, FLOAT16, ... */
        pq_tw_field_empty_struct(t, (int16_t)lt->kind);
        break;
    }
    pq_tw_struct_end(t);
}

/* Logical type kinds whose Thrift form we can write (the rest are left out). */
static bool logical_writable(int kind)
{
    return kind != PQ_LT_NONE && kind != PQ_LT_UNRECOGNISED && kind <= PQ_LT_GEOGRAPHY && kind != 9;
}

static void write_schema_element(pq_tw *t, const pq_schema_element *e)
{
    pq_tw_struct_begin(t);
    if (e->has_type) pq_tw_field_i32(t, 1, e->type);
    if (e->has_type_length) pq_tw_field_i32(t, 2, e->type_length);
    if (e->has_repetition) pq_tw_field_i32(t, 3, e->repetition);
    pq_tw_field_binary(t, 4, e->name.ptr ? e->name.ptr : "", e->name.ptr ? e->name.len : 0);
    if (e->has_num_children) pq_tw_field_i32(t, 5, e->num_children);
    if (e->converted != PQ_CONV_NONE) pq_tw_field_i32(t, 6, e->converted);
    if (e->has_scale) pq_tw_field_i32(t, 7, e->scale);
    if (e->has_precision) pq_tw_field_i32(t, 8, e->precision);
    if (e->has_field_id) pq_tw_field_i32(t, 9, e->field_id);
    if (logical_writable(e->logical.kind)) write_logical(t, &e->logical);
    pq_tw_struct_end(t);
}

static void write_column_chunk(pq_tw *t, const pq_writer *w, const wcol *c, const wchunk *ch)
{
    const pq_node *l = c->leaf;
    pq_tw_struct_begin(t);
    pq_tw_field_i64(t, 2, ch->start);
    pq_tw_field_begin(t, 3, PQ_T_STRUCT);
    pq_tw_struct_begin(t);
    pq_tw_field_i32(t, 1, c->type);
    int enc[3], ne = 0;
    if (ch->dict_used) enc[ne++] = PQ_ENC_PLAIN_DICTIONARY;
    if (ch->plain_used || !ch->dict_used) enc[ne++] = PQ_ENC_PLAIN;
    enc[ne++] = PQ_ENC_RLE;
    pq_tw_field_begin(t, 2, PQ_T_LIST);
    pq_tw_list_begin(t, PQ_T_I32, (uint32_t)ne);
    for (int i = 0; i < ne; i++)
        pq_tw_i64(t, enc[i]);
    pq_tw_field_begin(t, 3, PQ_T_LIST);
    pq_tw_list_begin(t, PQ_T_BINARY, l->path_len);
    for (uint32_t i = 0; i < l->path_len; i++)
        pq_tw_binary(t, l->path[i], strlen(l->path[i]));
    pq_tw_field_i32(t, 4, w->opt.codec);
    pq_tw_field_i64(t, 5, ch->num_values);
    pq_tw_field_i64(t, 6, ch->uncompressed);
    pq_tw_field_i64(t, 7, ch->compressed);
    pq_tw_field_i64(t, 9, ch->data_offset);
    if (ch->dict_offset >= 0) pq_tw_field_i64(t, 11, ch->dict_offset);
    pq_tw_field_begin(t, 12, PQ_T_STRUCT);
    pq_tw_struct_begin(t);
    pq_tw_field_i64(t, 3, ch->nulls);
    if (ch->has_minmax) {
        pq_tw_field_binary(t, 5, ch->max, ch->max_len);
        pq_tw_field_binary(t, 6, ch->min, ch->min_len);
    }
    pq_tw_struct_end(t);
    pq_tw_struct_end(t);
    pq_tw_struct_end(t);
}

int pq_writer_close(pq_writer *w, icd_error *err)
{
    if (w->closed) return icd_fail(err, ICD_EINVALID, NULL, -1, "Parquet writer: already closed");
    ICD_TRY(pq_writer_flush_row_group(w, err));
    icd_buf f = ICD_BUF_INIT;
    pq_tw t;
    pq_tw_init(&t, &f);
    pq_tw_struct_begin(&t);
    pq_tw_field_i32(&t, 1, 1);
    pq_tw_field_begin(&t, 2, PQ_T_LIST);
    pq_tw_list_begin(&t, PQ_T_STRUCT, (uint32_t)w->nels);
    for (size_t i = 0; i < w->nels; i++)
        write_schema_element(&t, &w->els[i]);
    pq_tw_field_i64(&t, 3, w->rows);
    pq_tw_field_begin(&t, 4, PQ_T_LIST);
    pq_tw_list_begin(&t, PQ_T_STRUCT, (uint32_t)w->nrgs);
    for (size_t r = 0; r < w->nrgs; r++) {
        const wrg *rg = &w->rgs[r];
        pq_tw_struct_begin(&t);
        pq_tw_field_begin(&t, 1, PQ_T_LIST);
        pq_tw_list_begin(&t, PQ_T_STRUCT, (uint32_t)w->ncols);
        for (size_t i = 0; i < w->ncols; i++)
            write_column_chunk(&t, w, &w->cols[i], &rg->cols[i]);
        pq_tw_field_i64(&t, 2, rg->uncompressed);
        pq_tw_field_i64(&t, 3, rg->num_rows);
        pq_tw_field_i64(&t, 5, rg->file_offset);
        pq_tw_field_i64(&t, 6, rg->compressed);
        pq_tw_field_begin(&t, 7, PQ_T_I16);
        pq_tw_i64(&t, (int64_t)r);
        pq_tw_struct_end(&t);
    }
    if (w->opt.num_kv) {
        pq_tw_field_begin(&t, 5, PQ_T_LIST);
        pq_tw_list_begin(&t, PQ_T_STRUCT, (uint32_t)w->opt.num_kv);
        for (size_t i = 0; i < w->opt.num_kv; i++) {
            const pq_kv *kv = &w->opt.kv[i];
            pq_tw_struct_begin(&t);
            pq_tw_field_binary(&t, 1, kv->key.ptr, kv->key.len);
            if (kv->value.ptr) pq_tw_field_binary(&t, 2, kv->value.ptr, kv->value.len);
            pq_tw_struct_end(&t);
        }
    }
    const char *cb = pq_writer_created_by();
    pq_tw_field_binary(&t, 6, cb, strlen(cb));
    pq_tw_field_begin(&t, 7, PQ_T_LIST);
    pq_tw_list_begin(&t, PQ_T_STRUCT, (uint32_t)w->ncols);
    for (size_t i = 0; i < w->ncols; i++) {
        pq_tw_struct_begin(&t);
        pq_tw_field_empty_struct(&t, 1); /* TYPE_ORDER */
        pq_tw_struct_end(&t);
    }
    pq_tw_struct_end(&t);
    uint8_t tail[8];
    put_le(tail, f.len, 4);
    memcpy(tail + 4, "PAR1", 4);
    int rc = icd_buf_ok(&f) ? 0 : icd_fail_nomem(err);
    if (!rc) rc = out_write(w, f.data, f.len, err);
    if (!rc) rc = out_write(w, tail, 8, err);
    icd_buf_free(&f);
    if (rc) return rc;
    w->closed = true;
    return 0;
}

/* ---------------------------------------------------------------- set-up */

static int copy_str(icd_arena *a, pq_str *s, icd_error *err)
{
    if (!s->ptr) return 0;
    char *p = icd_arena_alloc(a, (size_t)s->len + 1);
    if (!p) return icd_fail_nomem(err);
    memcpy(p, s->ptr, s->len);
    p[s->len] = '\0';
    s->ptr = p;
    return 0;
}

int pq_writer_new(const pq_schema_element *schema, size_t num_schema, const pq_write_options *opt,
                  pq_write_fn write, void *ctx, pq_writer **out, icd_error *err)
{
    *out = NULL;
    if (!num_schema || num_schema > UINT32_MAX)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Parquet writer: empty schema");
    pq_writer *w = calloc(1, sizeof *w);
    if (!w) return icd_fail_nomem(err);
    w->write = write;
    w->ctx = ctx;
    if (opt) w->opt = *opt;
    if (!w->opt.page_bytes) w->opt.page_bytes = 1 << 20;
    if (!w->opt.page_rows) w->opt.page_rows = 20000;
    if (!w->opt.row_group_bytes) w->opt.row_group_bytes = (size_t)64 << 20;
    if (!w->opt.dict_bytes) w->opt.dict_bytes = 1 << 20;
    int rc = 0;
    w->els = icd_arena_alloc(&w->arena, num_schema * sizeof *w->els);
    if (!w->els) {
        rc = icd_fail_nomem(err);
        goto fail;
    }
    memcpy(w->els, schema, num_schema * sizeof *w->els);
    w->nels = num_schema;
    for (size_t i = 0; i < num_schema && !rc; i++)
        rc = copy_str(&w->arena, &w->els[i].name, err);
    if (w->opt.num_kv && !rc) {
        pq_kv *kv = icd_arena_alloc(&w->arena, w->opt.num_kv * sizeof *kv);
        if (!kv) {
            rc = icd_fail_nomem(err);
            goto fail;
        }
        memcpy(kv, w->opt.kv, w->opt.num_kv * sizeof *kv);
        for (size_t i = 0; i < w->opt.num_kv && !rc; i++) {
            rc = copy_str(&w->arena, &kv[i].key, err);
            if (!rc) rc = copy_str(&w->arena, &kv[i].value, err);
        }
        w->opt.kv = kv;
    }
    if (rc) goto fail;
    w->meta.schema = w->els;
    w->meta.num_schema = (uint32_t)num_schema;
    rc = pq_schema_build(&w->meta, &w->arena, &w->schema, NULL, err);
    if (rc) {
        if (err) err->code = ICD_EINVALID;
        icd_error_wrap(err, "Parquet writer: invalid schema");
        rc = ICD_EINVALID;
        goto fail;
    }
    w->ncols = w->schema.num_leaves;
    w->cols = calloc(w->ncols ? w->ncols : 1, sizeof *w->cols);
    if (!w->cols) {
        rc = icd_fail_nomem(err);
        goto fail;
    }
    for (size_t i = 0; i < w->ncols && !rc; i++) {
        wcol *c = &w->cols[i];
        const pq_node *l = w->schema.leaves[i];
        c->leaf = l;
        c->type = l->physical_type;
        switch (c->type) {
        case PQ_INT32:
        case PQ_FLOAT:
            c->width = 4;
            break;
        case PQ_INT64:
        case PQ_DOUBLE:
            c->width = 8;
            break;
        case PQ_INT96:
            c->width = 12;
            break;
        case PQ_FIXED_LEN_BYTE_ARRAY:
            c->width = (size_t)l->type_length;
            break;
        default:
            c->width = 0;
        }
        c->ord = leaf_order(l);
        c->max_def = (uint32_t)l->def_level;
        c->max_rep = (uint32_t)l->rep_level;
        c->def_bw = pq_bit_width(c->max_def);
        c->rep_bw = pq_bit_width(c->max_rep);
        c->dict_allowed = !w->opt.no_dictionary && c->type != PQ_BOOLEAN;
        rc = col_reset_dict(c, err);
    }
    if (!rc) rc = pq_compressor_new(w->opt.codec, w->opt.level, &w->comp, err);
    if (!rc) rc = out_write(w, "PAR1", 4, err);
    if (rc) goto fail;
    *out = w;
    return 0;
fail:
    pq_writer_free(w);
    return rc;
}

const pq_schema *pq_writer_schema(const pq_writer *w)
{
    return &w->schema;
}

int64_t pq_writer_rows(const pq_writer *w)
{
    return w->rows;
}

int64_t pq_writer_bytes_written(const pq_writer *w)
{
    return w->pos;
}

void pq_writer_free(pq_writer *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->ncols; i++)
        col_free(&w->cols[i]);
    free(w->cols);
    for (size_t r = 0; r < w->nrgs; r++) {
        for (size_t i = 0; i < w->ncols; i++) {
            free(w->rgs[r].cols[i].min);
            free(w->rgs[r].cols[i].max);
        }
        free(w->rgs[r].cols);
    }
    free(w->rgs);
    pq_compressor_free(w->comp);
    icd_buf_free(&w->body);
    icd_buf_free(&w->cbody);
    icd_buf_free(&w->hdr);
    free(w->seen);
    icd_arena_free(&w->arena);
    free(w);
}
