/*
 * A tiny ORC file builder for the unit tests: the schema, stream bytes (hand-encoded by
 * the test), encodings and row counts go in; a complete file (header, stripes, stripe
 * footers, optional metadata, footer, postscript) comes out, with the tail messages packed
 * by protobuf-c and every part optionally zlib-framed the way ORC frames chunks.
 */
#ifndef ORC_BUILD_H
#define ORC_BUILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "orc_proto.pb-c.h"

typedef struct tb_buf {
    uint8_t *p;
    size_t len, cap;
} tb_buf;

static void tb_put(tb_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Appends `n` bytes framed as ORC chunks: compressed with raw deflate when `zlib`
 * (one chunk; stored as original when deflate does not shrink it). */
static void tb_put_part(tb_buf *b, const uint8_t *p, size_t n, int zlib_on)
{
    if (!zlib_on) {
        tb_put(b, p, n);
        return;
    }
    if (n == 0) return;
    uint8_t *out = malloc(n * 2 + 64);
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)(n * 2 + 64);
    deflate(&z, Z_FINISH);
    size_t clen = z.total_out;
    deflateEnd(&z);
    uint32_t h;
    if (clen < n) {
        h = (uint32_t)clen << 1;
        uint8_t hb[3] = {(uint8_t)h, (uint8_t)(h >> 8), (uint8_t)(h >> 16)};
        tb_put(b, hb, 3);
        tb_put(b, out, clen);
    } else {
        h = (uint32_t)n << 1 | 1;
        uint8_t hb[3] = {(uint8_t)h, (uint8_t)(h >> 8), (uint8_t)(h >> 16)};
        tb_put(b, hb, 3);
        tb_put(b, p, n);
    }
    free(out);
}

typedef struct tb_stream {
    uint32_t column, kind;
    const uint8_t *data;
    size_t len;
} tb_stream;

typedef struct tb_stripe {
    const tb_stream *streams;
    size_t nstreams;
    const uint32_t *enc; /* encoding kind per column */
    const uint32_t *dict_size;
    uint64_t rows;
    const char *tz; /* writerTimezone, or NULL */
} tb_stripe;

typedef struct tb_spec {
    int zlib;
    Orcpb__Type **types;
    size_t ntypes;
    const tb_stripe *stripes;
    size_t nstripes;
    Orcpb__Metadata *meta;           /* optional stripe statistics */
    Orcpb__ColumnStatistics **stats; /* optional file statistics (ntypes) */
    int64_t rows_override;           /* >= 0: footer numberOfRows */
} tb_spec;

static uint8_t *tb_pack_msg(const ProtobufCMessage *m, size_t *len)
{
    *len = protobuf_c_message_get_packed_size(m);
    uint8_t *p = malloc(*len + 1);
    protobuf_c_message_pack(m, p);
    return p;
}

/* With ORC_SEED_DIR set, every built file is also written there (seeds for fuzz_orc). */
static void tb_dump(const uint8_t *p, size_t n)
{
    static int count;
    const char *dir = getenv("ORC_SEED_DIR");
    if (!dir) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/built_%02d.orc", dir, count++);
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(p, 1, n, fp);
        fclose(fp);
    }
}

/* Builds the file; the caller frees the result. */
static uint8_t *tb_build(const tb_spec *s, size_t *out_len)
{
    tb_buf b = {0};
    tb_put(&b, "ORC", 3);
    Orcpb__StripeInformation *si = calloc(s->nstripes + 1, sizeof *si);
    Orcpb__StripeInformation **sip = calloc(s->nstripes + 1, sizeof *sip);
    uint64_t rows = 0;
    for (size_t k = 0; k < s->nstripes; k++) {
        const tb_stripe *st = &s->stripes[k];
        orcpb__stripe_information__init(&si[k]);
        sip[k] = &si[k];
        si[k].has_offset = si[k].has_datalength = si[k].has_footerlength = 1;
        si[k].has_indexlength = si[k].has_numberofrows = 1;
        si[k].offset = b.len;
        Orcpb__Stream *sm = calloc(st->nstreams + 1, sizeof *sm);
        Orcpb__Stream **smp = calloc(st->nstreams + 1, sizeof *smp);
        for (size_t i = 0; i < st->nstreams; i++) {
            size_t before = b.len;
            tb_put_part(&b, st->streams[i].data, st->streams[i].len, s->zlib);
            orcpb__stream__init(&sm[i]);
            smp[i] = &sm[i];
            sm[i].has_kind = sm[i].has_column = sm[i].has_length = 1;
            sm[i].kind = st->streams[i].kind;
            sm[i].column = st->streams[i].column;
            sm[i].length = b.len - before;
        }
        si[k].datalength = b.len - si[k].offset;
        Orcpb__ColumnEncoding *ce = calloc(s->ntypes, sizeof *ce);
        Orcpb__ColumnEncoding **cep = calloc(s->ntypes, sizeof *cep);
        for (size_t i = 0; i < s->ntypes; i++) {
            orcpb__column_encoding__init(&ce[i]);
            cep[i] = &ce[i];
            ce[i].has_kind = 1;
            ce[i].kind = st->enc ? st->enc[i] : 0;
            if (st->dict_size) {
                ce[i].has_dictionarysize = 1;
                ce[i].dictionarysize = st->dict_size[i];
            }
        }
        Orcpb__StripeFooter sf;
        orcpb__stripe_footer__init(&sf);
        sf.n_streams = st->nstreams;
        sf.streams = smp;
        sf.n_columns = s->ntypes;
        sf.columns = cep;
        if (st->tz) {
            sf.has_writertimezone = 1;
            sf.writertimezone.data = (uint8_t *)st->tz;
            sf.writertimezone.len = strlen(st->tz);
        }
        size_t flen;
        uint8_t *fb = tb_pack_msg(&sf.base, &flen);
        size_t before = b.len;
        tb_put_part(&b, fb, flen, s->zlib);
        si[k].footerlength = b.len - before;
        si[k].numberofrows = st->rows;
        rows += st->rows;
        free(fb);
        free(sm);
        free(smp);
        free(ce);
        free(cep);
    }
    size_t mlen = 0;
    if (s->meta) {
        size_t plen;
        uint8_t *mb = tb_pack_msg(&s->meta->base, &plen);
        size_t before = b.len;
        tb_put_part(&b, mb, plen, s->zlib);
        mlen = b.len - before;
        free(mb);
    }
    Orcpb__Footer ft;
    orcpb__footer__init(&ft);
    ft.has_headerlength = ft.has_contentlength = ft.has_numberofrows = 1;
    ft.headerlength = 3;
    ft.contentlength = b.len;
    ft.n_stripes = s->nstripes;
    ft.stripes = sip;
    ft.n_types = s->ntypes;
    ft.types = s->types;
    ft.numberofrows = s->rows_override >= 0 ? (uint64_t)s->rows_override : rows;
    if (s->stats) {
        ft.n_statistics = s->ntypes;
        ft.statistics = s->stats;
    }
    size_t flen;
    uint8_t *fb = tb_pack_msg(&ft.base, &flen);
    size_t before = b.len;
    tb_put_part(&b, fb, flen, s->zlib);
    size_t footer_len = b.len - before;
    free(fb);
    Orcpb__PostScript ps;
    orcpb__post_script__init(&ps);
    uint32_t version[2] = {0, 12};
    ps.has_footerlength = ps.has_compression = ps.has_compressionblocksize = 1;
    ps.has_metadatalength = ps.has_magic = 1;
    ps.footerlength = footer_len;
    ps.compression = s->zlib ? 1 : 0;
    ps.compressionblocksize = 262144;
    ps.n_version = 2;
    ps.version = version;
    ps.metadatalength = mlen;
    ps.magic.data = (uint8_t *)"ORC";
    ps.magic.len = 3;
    size_t plen;
    uint8_t *pb = tb_pack_msg(&ps.base, &plen);
    tb_put(&b, pb, plen);
    uint8_t pl = (uint8_t)plen;
    tb_put(&b, &pl, 1);
    free(pb);
    free(si);
    free(sip);
    *out_len = b.len;
    tb_dump(b.p, b.len);
    return b.p;
}

/* A type node; `subs`/`names` may be NULL. The returned object is static storage from a
 * small pool (tests build few types). */
static Orcpb__Type *tb_type(uint32_t kind, size_t nsub, const uint32_t *subs, const char **names,
                            int64_t field_id)
{
    static Orcpb__Type pool[64];
    static ProtobufCBinaryData namepool[64][16];
    static Orcpb__StringPair attrpool[64];
    static Orcpb__StringPair *attrptr[64];
    static char idtext[64][24];
    static size_t used;
    size_t i = used++ % 64;
    Orcpb__Type *t = &pool[i];
    orcpb__type__init(t);
    t->has_kind = 1;
    t->kind = kind;
    t->n_subtypes = nsub;
    t->subtypes = (uint32_t *)subs;
    if (names) {
        for (size_t k = 0; k < nsub; k++) {
            namepool[i][k].data = (uint8_t *)names[k];
            namepool[i][k].len = strlen(names[k]);
        }
        t->n_fieldnames = nsub;
        t->fieldnames = namepool[i];
    }
    if (field_id >= 0) {
        orcpb__string_pair__init(&attrpool[i]);
        snprintf(idtext[i], sizeof idtext[i], "%lld", (long long)field_id);
        attrpool[i].has_key = attrpool[i].has_value = 1;
        attrpool[i].key.data = (uint8_t *)"iceberg.id";
        attrpool[i].key.len = 10;
        attrpool[i].value.data = (uint8_t *)idtext[i];
        attrpool[i].value.len = strlen(idtext[i]);
        attrptr[i] = &attrpool[i];
        t->n_attributes = 1;
        t->attributes = &attrptr[i];
    }
    return t;
}

/* Hand encoders for test vectors (independent of the decoders under test). */
static size_t tb_uvarint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}
static size_t tb_svarint(uint8_t *p, int64_t v)
{
    return tb_uvarint(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
/* RLE v1 literals of signed or unsigned values (at most 128). */
static size_t tb_rle1(uint8_t *p, const int64_t *v, size_t n, int is_signed)
{
    size_t k = 0;
    p[k++] = (uint8_t)(256 - n);
    for (size_t i = 0; i < n; i++)
        k += is_signed ? tb_svarint(p + k, v[i]) : tb_uvarint(p + k, (uint64_t)v[i]);
    return k;
}

#endif
