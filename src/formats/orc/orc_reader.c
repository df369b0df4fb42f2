/*
 * ORC stripes to columnar batches. For each stripe that the caller keeps, the reader
 * decodes the stripe footer (stream directory and column encodings), reads the PRESENT,
 * DATA, LENGTH, DICTIONARY_DATA and SECONDARY streams of the selected columns only,
 * decompresses each whole stream (a stream never exceeds its stripe) and then walks the
 * stripe batch by batch: every column reader pulls its values from the RLE decoders of
 * orc_rle.c and lays them out per row (orc_vec). Struct children are read only for rows
 * where the struct is present (ORC writes nothing for the others) and are spread back to
 * one entry per struct row; list and map children are read for the sum of the lengths.
 *
 * Memory: the decompressed streams of one stripe plus one batch (an arena reset per
 * batch). Strings point into the stripe's stream buffers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/bits.h"
#include "formats/orc/orc_codec.h"
#include "formats/orc/orc_internal.h"
#include "formats/orc/orc_rle.h"

__extension__ typedef __int128 orc_i128;
__extension__ typedef unsigned __int128 orc_u128;

enum { S_PRESENT = 0, S_DATA = 1, S_LENGTH = 2, S_DICT = 3, S_SECONDARY = 5, S_NKINDS = 6 };
enum { ENC_DIRECT = 0, ENC_DICTIONARY = 1, ENC_DIRECT_V2 = 2, ENC_DICTIONARY_V2 = 3 };

static const char *stream_name(int kind)
{
    static const char *names[] = {"PRESENT",          "DATA",     "LENGTH", "DICTIONARY_DATA",
                                  "DICTIONARY_COUNT", "SECONDARY"};
    return kind >= 0 && kind < S_NKINDS ? names[kind] : "?";
}

typedef struct stream_ref {
    bool found;
    uint64_t off; /* in the file */
    uint64_t len; /* stored (compressed) length */
    const uint8_t *p;
    size_t plen; /* decompressed */
} stream_ref;

typedef struct col_reader {
    const orc_type *t;
    uint32_t enc;
    uint32_t dict_size;
    bool dict;
    bool v2;
    bool has_present;
    stream_ref s[S_NKINDS];
    orc_bool_rle present;
    orc_int_rle ints;      /* DATA as integers */
    orc_int_rle lengths;   /* LENGTH */
    orc_int_rle secondary; /* SECONDARY */
    orc_byte_rle bytes;    /* DATA of BYTE */
    orc_bool_rle bools;    /* DATA of BOOLEAN */
    orc_cursor raw;        /* DATA as bytes */
    orc_str *dictv;
} col_reader;

struct orc_reader {
    orc_file *f;
    size_t batch_rows;
    size_t max_values;
    bool (*keep)(void *, const orc_file *, size_t);
    void *keep_ctx;
    size_t ncols;
    const orc_type **cols;
    col_reader **rd; /* by column id; NULL for columns not read */
    size_t stripe;   /* the loaded stripe, or the next one to load */
    bool loaded;
    uint64_t rows_left;
    Orcpb__StripeFooter *sf;
    void **bufs;
    size_t nbufs, capbufs;
    icd_arena arena; /* one batch */
    size_t values;   /* entries allocated for the current batch */
    orc_batch batch;
};

/* ---- errors ---- */

static int stream_fail(orc_reader *r, const col_reader *c, int kind, int rc, icd_error *err)
{
    if (rc == ICD_ENOMEM) return rc;
    const stream_ref *s = &c->s[kind];
    const orc_file *f = r->f;
    if (!s->found) {
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        return icd_fail(err, ICD_ECORRUPT, f->location, -1,
                        "ORC stripe %zu, column %u '%s' (%s): the %s stream is missing (%s)",
                        r->stripe, c->t->id, c->t->name, orc_kind_name(c->t->kind),
                        stream_name(kind), why);
    }
    int64_t rel = err->offset >= 0 ? err->offset : 0;
    err->offset = (int64_t)s->off + (f->compression == ORC_COMP_NONE ? rel : 0);
    icd_error_set_file(err, f->location);
    return icd_error_wrap(err, "ORC stripe %zu, column %u '%s' (%s), %s stream%s", r->stripe,
                          c->t->id, c->t->name, orc_kind_name(c->t->kind), stream_name(kind),
                          f->compression == ORC_COMP_NONE ? "" : " (offset is the stream start)");
}

#define SREAD(kind, expr)                                                                          \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ < 0) return stream_fail(r, c, kind, rc_, err);                                     \
    } while (0)

static int col_fail(orc_reader *r, const col_reader *c, int kind, icd_error *err, const char *fmt,
                    ...) ICD_PRINTF(5, 6);
static int col_fail(orc_reader *r, const col_reader *c, int kind, icd_error *err, const char *fmt,
                    ...)
{
    va_list ap;
    va_start(ap, fmt);
    icd_failv(err, ICD_ECORRUPT, NULL, -1, fmt, ap);
    va_end(ap);
    return stream_fail(r, c, kind, ICD_ECORRUPT, err);
}

/* ---- stripe buffers ---- */

static int keep_buf(orc_reader *r, void *p, icd_error *err)
{
    if (ICD_ARRAY_RESERVE(r->bufs, r->capbufs, r->nbufs + 1, 16)) {
        free(p);
        return icd_fail_nomem(err);
    }
    r->bufs[r->nbufs++] = p;
    return 0;
}

static void unload_stripe(orc_reader *r)
{
    for (size_t i = 0; i < r->nbufs; i++)
        free(r->bufs[i]);
    r->nbufs = 0;
    if (r->sf) orcpb__stripe_footer__free_unpacked(r->sf, NULL);
    r->sf = NULL;
    for (size_t i = 0; i < r->f->ntypes; i++)
        if (r->rd[i]) {
            const orc_type *t = r->rd[i]->t;
            memset(r->rd[i], 0, sizeof *r->rd[i]);
            r->rd[i]->t = t;
        }
    r->loaded = false;
}

/* ---- stripe loading ---- */

static int read_stripe_footer(orc_reader *r, const orc_stripe_info *si, icd_error *err)
{
    orc_file *f = r->f;
    uint64_t off = si->offset + si->index_length + si->data_length;
    size_t len = (size_t)si->footer_length;
    uint8_t *raw = malloc(len);
    if (!raw) return icd_fail_nomem(err);
    int rc = icd_file_read_at(f->file, off, raw, len, err);
    const uint8_t *p;
    size_t plen;
    uint8_t *owned = NULL;
    if (!rc)
        rc = orc_file_decode_part(f, raw, len, off, "ORC stripe footer", &p, &plen, &owned, err);
    if (!rc) {
        r->sf = orcpb__stripe_footer__unpack(NULL, plen, p);
        if (!r->sf)
            rc = icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)off,
                          "malformed ORC stripe footer of stripe %zu", r->stripe);
    }
    free(owned);
    free(raw);
    return rc;
}

static bool is_string_kind(orc_kind k)
{
    return k == ORC_STRING || k == ORC_VARCHAR || k == ORC_CHAR;
}

static int set_encoding(orc_reader *r, col_reader *c, icd_error *err)
{
    const Orcpb__StripeFooter *sf = r->sf;
    uint32_t id = c->t->id;
    if (id >= sf->n_columns)
        return icd_fail(err, ICD_ECORRUPT, r->f->location, -1,
                        "ORC stripe %zu has no encoding for column %u", r->stripe, id);
    const Orcpb__ColumnEncoding *e = sf->columns[id];
    c->enc = e->has_kind ? e->kind : ENC_DIRECT;
    c->dict_size = e->has_dictionarysize ? e->dictionarysize : 0;
    bool ok;
    switch (c->enc) {
    case ENC_DIRECT:
    case ENC_DIRECT_V2:
        ok = true;
        break;
    case ENC_DICTIONARY:
    case ENC_DICTIONARY_V2:
        ok = is_string_kind(c->t->kind);
        break;
    default:
        ok = false;
    }
    if (!ok)
        return icd_fail(err, ICD_EUNSUPPORTED, r->f->location, -1,
                        "ORC stripe %zu, column %u '%s' (%s): unsupported column encoding %u",
                        r->stripe, id, c->t->name, orc_kind_name(c->t->kind), c->enc);
    c->v2 = c->enc == ENC_DIRECT_V2 || c->enc == ENC_DICTIONARY_V2;
    c->dict = c->enc == ENC_DICTIONARY || c->enc == ENC_DICTIONARY_V2;
    return 0;
}

/* Finds the streams of the columns read, with their file offsets. */
static int locate_streams(orc_reader *r, const orc_stripe_info *si, icd_error *err)
{
    const Orcpb__StripeFooter *sf = r->sf;
    uint64_t body = si->index_length + si->data_length;
    uint64_t pos = 0;
    for (size_t i = 0; i < sf->n_streams; i++) {
        const Orcpb__Stream *st = sf->streams[i];
        uint64_t len = st->has_length ? st->length : 0;
        if (len > body - pos)
            return icd_fail(err, ICD_ECORRUPT, r->f->location, (int64_t)si->offset,
                            "ORC stripe %zu: stream %zu (%llu bytes) runs past the stripe's "
                            "index and data (%llu bytes)",
                            r->stripe, i, (unsigned long long)len, (unsigned long long)body);
        uint32_t col = st->has_column ? st->column : 0;
        uint32_t kind = st->has_kind ? st->kind : 0;
        if (col < r->f->ntypes && r->rd[col] &&
            (kind == S_PRESENT || kind == S_DATA || kind == S_LENGTH || kind == S_DICT ||
             kind == S_SECONDARY)) {
            stream_ref *s = &r->rd[col]->s[kind];
            if (s->found)
                return icd_fail(err, ICD_ECORRUPT, r->f->location, (int64_t)si->offset,
                                "ORC stripe %zu: column %u has two %s streams", r->stripe, col,
                                stream_name((int)kind));
            s->found = true;
            s->off = si->offset + pos;
            s->len = len;
        }
        pos += len;
    }
    return 0;
}

/* Reads the located streams (one read when they lie close together) and decompresses
 * each into its own buffer. */
static int fetch_streams(orc_reader *r, icd_error *err)
{
    orc_file *f = r->f;
    uint64_t lo = UINT64_MAX, hi = 0, total = 0;
    for (size_t i = 0; i < f->ntypes; i++) {
        col_reader *c = r->rd[i];
        if (!c) continue;
        for (int k = 0; k < S_NKINDS; k++) {
            stream_ref *s = &c->s[k];
            if (!s->found || s->len == 0) continue;
            if (s->len > f->max_stream)
                return icd_fail(err, ICD_EUNSUPPORTED, f->location, (int64_t)s->off,
                                "ORC stream of %llu bytes exceeds the limit of %zu bytes",
                                (unsigned long long)s->len, f->max_stream);
            lo = s->off < lo ? s->off : lo;
            hi = s->off + s->len > hi ? s->off + s->len : hi;
            total += s->len;
        }
    }
    if (total == 0) return 0;
    bool one_read = hi - lo <= total * 2 + ((uint64_t)1 << 20);
    uint8_t *span = NULL;
    if (one_read) {
        span = malloc((size_t)(hi - lo));
        if (!span) return icd_fail_nomem(err);
        ICD_TRY(keep_buf(r, span, err));
        ICD_TRY(icd_file_read_at(f->file, lo, span, (size_t)(hi - lo), err));
    }
    for (size_t i = 0; i < f->ntypes; i++) {
        col_reader *c = r->rd[i];
        if (!c) continue;
        for (int k = 0; k < S_NKINDS; k++) {
            stream_ref *s = &c->s[k];
            if (!s->found || s->len == 0) continue;
            const uint8_t *raw;
            if (one_read) {
                raw = span + (s->off - lo);
            } else {
                uint8_t *b = malloc((size_t)s->len);
                if (!b) return icd_fail_nomem(err);
                ICD_TRY(keep_buf(r, b, err));
                ICD_TRY(icd_file_read_at(f->file, s->off, b, (size_t)s->len, err));
                raw = b;
            }
            uint8_t *owned = NULL;
            char what[96];
            snprintf(what, sizeof what, "ORC stripe %zu, column %zu, %s stream", r->stripe, i,
                     stream_name(k));
            ICD_TRY(orc_file_decode_part(f, raw, (size_t)s->len, s->off, what, &s->p, &s->plen,
                                         &owned, err));
            if (owned) ICD_TRY(keep_buf(r, owned, err));
        }
    }
    return 0;
}

static int load_dictionary(orc_reader *r, col_reader *c, icd_error *err)
{
    size_t n = c->dict_size;
    /* A dictionary of n entries needs n lengths: at most ~128 per LENGTH byte. */
    if (n > c->s[S_LENGTH].plen * 130 + 512)
        return col_fail(r, c, S_LENGTH, err,
                        "dictionary size %zu is impossible for a %zu-byte LENGTH stream", n,
                        c->s[S_LENGTH].plen);
    orc_str *d = malloc((n ? n : 1) * sizeof *d);
    int64_t *lens = malloc((n ? n : 1) * sizeof *lens);
    if (!d || !lens) {
        free(d);
        free(lens);
        return icd_fail_nomem(err);
    }
    int rc = keep_buf(r, d, err);
    if (!rc) rc = orc_int_rle_next(&c->lengths, lens, n, err);
    if (rc) {
        free(lens);
        if (rc == ICD_ENOMEM) return rc;
        return stream_fail(r, c, S_LENGTH, rc, err);
    }
    const char *blob = (const char *)c->s[S_DICT].p;
    size_t left = c->s[S_DICT].plen, pos = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t l = (uint64_t)lens[i];
        if (l > left - pos) {
            free(lens);
            return col_fail(r, c, S_DICT, err,
                            "dictionary entry %zu (%llu bytes) runs past the %zu-byte "
                            "DICTIONARY_DATA stream",
                            i, (unsigned long long)l, left);
        }
        d[i].ptr = blob ? blob + pos : "";
        d[i].len = (size_t)l;
        pos += (size_t)l;
    }
    free(lens);
    c->dictv = d;
    return 0;
}

static void init_decoders(orc_reader *r, col_reader *c)
{
    orc_kind k = c->t->kind;
    bool decimal64 = k == ORC_DECIMAL && r->f->decimal64 && c->t->precision <= 18;
    c->has_present = c->s[S_PRESENT].found;
    orc_bool_rle_init(&c->present, c->s[S_PRESENT].p, c->s[S_PRESENT].plen);
    const uint8_t *dp = c->s[S_DATA].p;
    size_t dl = c->s[S_DATA].plen;
    /* DATA: signed integers for numbers, dates, timestamp seconds and DECIMAL_64;
     * unsigned dictionary ids. */
    bool data_signed = !c->dict;
    orc_int_rle_init(&c->ints, dp, dl, c->v2 || decimal64, data_signed);
    orc_byte_rle_init(&c->bytes, dp, dl);
    orc_bool_rle_init(&c->bools, dp, dl);
    orc_cursor_init(&c->raw, dp, dl);
    orc_int_rle_init(&c->lengths, c->s[S_LENGTH].p, c->s[S_LENGTH].plen, c->v2, false);
    /* SECONDARY: decimal scales are signed, timestamp nanos unsigned. */
    orc_int_rle_init(&c->secondary, c->s[S_SECONDARY].p, c->s[S_SECONDARY].plen, c->v2,
                     k == ORC_DECIMAL);
}

/* TIMESTAMP (without time zone) values are wall-clock times of the stripe's writer time
 * zone, counted from 2015-01-01 00:00:00 in that zone. Only UTC writers (Iceberg's, and
 * files that name no zone) are decoded; another zone would need its DST rules. */
static int check_writer_timezone(orc_reader *r, icd_error *err)
{
    const Orcpb__StripeFooter *sf = r->sf;
    if (!sf->has_writertimezone || sf->writertimezone.len == 0) return 0;
    static const char *utc[] = {"UTC",  "GMT",           "Etc/UTC",   "Etc/GMT",
                                "Z",    "Etc/Universal", "Universal", "Etc/Zulu",
                                "Zulu", "UCT",           "Etc/UCT"};
    for (size_t i = 0; i < sizeof utc / sizeof utc[0]; i++)
        if (sf->writertimezone.len == strlen(utc[i]) &&
            !memcmp(sf->writertimezone.data, utc[i], sf->writertimezone.len))
            return 0;
    for (size_t i = 0; i < r->f->ntypes; i++)
        if (r->rd[i] && r->rd[i]->t->kind == ORC_TIMESTAMP)
            return icd_fail(err, ICD_EUNSUPPORTED, r->f->location, -1,
                            "ORC stripe %zu, column %zu '%s': timestamps written in time zone "
                            "'%.*s' are not supported (only UTC)",
                            r->stripe, i, r->rd[i]->t->name,
                            (int)(sf->writertimezone.len > 64 ? 64 : sf->writertimezone.len),
                            (const char *)sf->writertimezone.data);
    return 0;
}

static int load_stripe(orc_reader *r, icd_error *err)
{
    orc_file *f = r->f;
    const orc_stripe_info *si = &f->stripes[r->stripe];
    r->loaded = true;
    ICD_TRY(read_stripe_footer(r, si, err));
    ICD_TRY(check_writer_timezone(r, err));
    for (size_t i = 0; i < f->ntypes; i++)
        if (r->rd[i]) ICD_TRY(set_encoding(r, r->rd[i], err));
    ICD_TRY(locate_streams(r, si, err));
    ICD_TRY(fetch_streams(r, err));
    for (size_t i = 0; i < f->ntypes; i++) {
        col_reader *c = r->rd[i];
        if (!c) continue;
        init_decoders(r, c);
        if (c->dict) ICD_TRY(load_dictionary(r, c, err));
    }
    r->rows_left = si->rows;
    return 0;
}

/* ---- batch memory ---- */

static void *balloc(orc_reader *r, size_t count, size_t size, icd_error *err)
{
    if (count > r->max_values || (size && count > SIZE_MAX / size / 2)) {
        icd_fail(err, ICD_EUNSUPPORTED, r->f->location, -1,
                 "ORC stripe %zu: a batch needs more than %zu values (nested lists too long?)",
                 r->stripe, r->max_values);
        return NULL;
    }
    size_t bytes = count * size;
    void *p = icd_arena_alloc(&r->arena, bytes ? bytes : 1);
    if (!p) icd_fail_nomem(err);
    return p;
}

/* Counts entries toward the batch limit. */
static int account(orc_reader *r, size_t n, icd_error *err)
{
    if (n > r->max_values - r->values)
        return icd_fail(err, ICD_EUNSUPPORTED, r->f->location, -1,
                        "ORC stripe %zu: a batch needs more than %zu values (nested lists too "
                        "long?)",
                        r->stripe, r->max_values);
    r->values += n;
    return 0;
}

/* Moves k dense values (at the front of arr) to the non-null slots of n entries. */
static void scatter(void *arr, size_t es, size_t n, size_t k, const uint8_t *nulls)
{
    if (!nulls || k == n) return;
    uint8_t *a = arr;
    size_t j = k;
    for (size_t i = n; i-- > 0;) {
        if (nulls[i]) {
            memset(a + i * es, 0, es);
        } else {
            j--;
            if (j != i) memcpy(a + i * es, a + j * es, es);
        }
    }
}

/* ---- value readers ---- */

static int read_col(orc_reader *r, col_reader *c, size_t n, const uint8_t *pnull, orc_vec *v,
                    icd_error *err);

static int read_strings(orc_reader *r, col_reader *c, size_t k, orc_str *out, icd_error *err)
{
    int64_t *tmp = balloc(r, k, sizeof *tmp, err);
    if (!tmp) return err->code;
    if (c->dict) {
        SREAD(S_DATA, orc_int_rle_next(&c->ints, tmp, k, err));
        for (size_t j = 0; j < k; j++) {
            uint64_t id = (uint64_t)tmp[j];
            if (id >= c->dict_size)
                return col_fail(r, c, S_DATA, err,
                                "dictionary id %llu is not below the dictionary size %u",
                                (unsigned long long)id, c->dict_size);
            out[j] = c->dictv[id];
        }
        return 0;
    }
    SREAD(S_LENGTH, orc_int_rle_next(&c->lengths, tmp, k, err));
    for (size_t j = 0; j < k; j++) {
        uint64_t l = (uint64_t)tmp[j];
        if (l > orc_cursor_left(&c->raw)) {
            icd_fail(err, ICD_ECORRUPT, NULL, orc_cursor_offset(&c->raw),
                     "value of %llu bytes runs past the end of the stream", (unsigned long long)l);
            return stream_fail(r, c, S_DATA, ICD_ECORRUPT, err);
        }
        out[j].ptr = (const char *)c->raw.p;
        out[j].len = (size_t)l;
        c->raw.p += l;
    }
    return 0;
}

static int read_floats(orc_reader *r, col_reader *c, size_t k, double *out, icd_error *err)
{
    size_t w = c->t->kind == ORC_FLOAT ? 4 : 8;
    if (k > orc_cursor_left(&c->raw) / w) {
        icd_fail(err, ICD_ECORRUPT, NULL, orc_cursor_offset(&c->raw),
                 "truncated %s values (%zu expected)", c->t->kind == ORC_FLOAT ? "float" : "double",
                 k);
        return stream_fail(r, c, S_DATA, ICD_ECORRUPT, err);
    }
    const uint8_t *p = c->raw.p;
    for (size_t j = 0; j < k; j++, p += w) {
        if (w == 4) {
            uint32_t u = icd_load_le32(p);
            float fv;
            memcpy(&fv, &u, 4);
            out[j] = fv;
        } else {
            uint64_t u = 0;
            for (int b = 7; b >= 0; b--)
                u = u << 8 | p[b];
            memcpy(&out[j], &u, 8);
        }
    }
    c->raw.p = p;
    return 0;
}

static orc_i128 pow10_128(int e)
{
    orc_i128 v = 1;
    while (e-- > 0)
        v *= 10;
    return v;
}

/* Rescales v from `from` to `to` decimal places (HALF_UP when digits are dropped). Returns
 * false when the result does not fit 38 digits. */
static bool rescale(orc_i128 *v, int64_t from, int64_t to)
{
    static const orc_i128 limit = (orc_i128)1000000000000000000 * 1000000000000000000 * 100;
    if (from == to) return true;
    if (from < -1000 || from > 1000 || *v == (orc_i128)((orc_u128)1 << 127)) return false;
    if (to > from) {
        int64_t d = to - from;
        if (*v == 0) return true;
        if (d > 38) return false;
        orc_i128 m = pow10_128((int)d);
        orc_i128 a = *v < 0 ? -*v : *v;
        if (a > limit / m) return false;
        *v *= m;
        return true;
    }
    int64_t d = from - to;
    if (d > 38) { /* |v| < 2^127 < 10^39 / 2: rounds to zero */
        *v = 0;
        return true;
    }
    orc_i128 m = pow10_128((int)d);
    orc_i128 q = *v / m, rem = *v % m;
    orc_i128 half = m / 2;
    if (rem >= half && rem > 0)
        q++;
    else if (-rem >= half && rem < 0)
        q--;
    *v = q;
    return true;
}

static int read_decimals(orc_reader *r, col_reader *c, size_t n, size_t k, const uint8_t *nulls,
                         orc_vec *v, icd_error *err)
{
    const orc_type *t = c->t;
    bool wide = t->precision > 18;
    if (!wide) {
        v->i64 = balloc(r, n, sizeof *v->i64, err);
        if (!v->i64) return err->code;
    } else {
        v->dec16 = balloc(r, n, 16, err);
        if (!v->dec16) return err->code;
    }
    if (r->f->decimal64 && !wide) { /* DECIMAL_64: unscaled values at the type's scale */
        SREAD(S_DATA, orc_int_rle_next(&c->ints, v->i64, k, err));
        scatter(v->i64, sizeof *v->i64, n, k, nulls);
        return 0;
    }
    int64_t *scales = balloc(r, k, sizeof *scales, err);
    if (!scales) return err->code;
    SREAD(S_SECONDARY, orc_int_rle_next(&c->secondary, scales, k, err));
    for (size_t j = 0; j < k; j++) {
        int64_t hi;
        uint64_t lo;
        SREAD(S_DATA, orc_read_varint128(&c->raw, &hi, &lo, err));
        orc_i128 x = (orc_i128)(((orc_u128)(uint64_t)hi << 64) | lo);
        if (!rescale(&x, scales[j], t->scale))
            return col_fail(r, c, S_DATA, err,
                            "decimal value with scale %lld does not fit decimal(%u,%u)",
                            (long long)scales[j], t->precision, t->scale);
        if (!wide) {
            if (x > INT64_MAX || x < INT64_MIN)
                return col_fail(r, c, S_DATA, err, "decimal value does not fit decimal(%u,%u)",
                                t->precision, t->scale);
            v->i64[j] = (int64_t)x;
        } else {
            orc_u128 u = (orc_u128)x;
            for (int b = 15; b >= 0; b--, u >>= 8)
                v->dec16[j * 16 + (size_t)b] = (uint8_t)u;
        }
    }
    if (wide)
        scatter(v->dec16, 16, n, k, nulls);
    else
        scatter(v->i64, sizeof *v->i64, n, k, nulls);
    return 0;
}

static int read_timestamps(orc_reader *r, col_reader *c, size_t n, size_t k, const uint8_t *nulls,
                           orc_vec *v, icd_error *err)
{
    v->i64 = balloc(r, n, sizeof *v->i64, err);
    v->nanos = v->i64 ? balloc(r, n, sizeof *v->nanos, err) : NULL;
    int64_t *ns = v->nanos ? balloc(r, k, sizeof *ns, err) : NULL;
    if (!ns) return err->code;
    SREAD(S_DATA, orc_int_rle_next(&c->ints, v->i64, k, err));
    SREAD(S_SECONDARY, orc_int_rle_next(&c->secondary, ns, k, err));
    for (size_t j = 0; j < k; j++) {
        int64_t s = v->i64[j];
        if (s > INT64_MAX - ORC_TS_BASE_SECONDS || s < INT64_MIN + ORC_TS_BASE_SECONDS + 1)
            return col_fail(r, c, S_DATA, err, "timestamp seconds %lld out of range", (long long)s);
        s += ORC_TS_BASE_SECONDS;
        uint64_t enc = (uint64_t)ns[j];
        uint64_t nano = enc >> 3;
        unsigned zeros = (unsigned)(enc & 7);
        if (zeros)
            for (unsigned z = 0; z <= zeros && nano <= 999999999; z++)
                nano *= 10;
        if (nano > 999999999)
            return col_fail(r, c, S_SECONDARY, err, "timestamp nanoseconds %llu out of range",
                            (unsigned long long)nano);
        /* Writers store negative times truncated toward zero when there are whole
         * milliseconds below the second: undo it (as the ORC C++ and Java readers do). */
        if (s < 0 && nano > 999999) s -= 1;
        v->i64[j] = s;
        v->nanos[j] = (int32_t)nano;
    }
    scatter(v->i64, sizeof *v->i64, n, k, nulls);
    scatter(v->nanos, sizeof *v->nanos, n, k, nulls);
    return 0;
}

/* LIST and MAP: lengths of the present entries -> offsets -> children. */
static int read_nested_lengths(orc_reader *r, col_reader *c, size_t n, size_t k,
                               const uint8_t *nulls, orc_vec *v, icd_error *err)
{
    int64_t *lens = balloc(r, k, sizeof *lens, err);
    v->offsets = lens ? balloc(r, n + 1, sizeof *v->offsets, err) : NULL;
    if (!v->offsets) return err->code;
    SREAD(S_LENGTH, orc_int_rle_next(&c->lengths, lens, k, err));
    uint64_t total = 0;
    size_t j = 0;
    v->offsets[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (!nulls || !nulls[i]) {
            uint64_t l = (uint64_t)lens[j++];
            if (l > r->max_values || total > r->max_values - l)
                return icd_fail(err, ICD_EUNSUPPORTED, r->f->location, -1,
                                "ORC stripe %zu, column %u '%s': a batch needs more than %zu "
                                "nested values",
                                r->stripe, c->t->id, c->t->name, r->max_values);
            total += l;
        }
        v->offsets[i + 1] = total;
    }
    return 0;
}

static int read_values(orc_reader *r, col_reader *c, size_t n, size_t k, const uint8_t *nulls,
                       orc_vec *v, icd_error *err)
{
    const orc_type *t = c->t;
    switch (t->kind) {
    case ORC_BOOLEAN:
    case ORC_BYTE: {
        v->i64 = balloc(r, n, sizeof *v->i64, err);
        uint8_t *tmp = v->i64 ? balloc(r, k, 1, err) : NULL;
        if (!tmp) return err->code;
        if (t->kind == ORC_BOOLEAN) {
            SREAD(S_DATA, orc_bool_rle_next(&c->bools, tmp, k, err));
            for (size_t j = 0; j < k; j++)
                v->i64[j] = tmp[j];
        } else {
            SREAD(S_DATA, orc_byte_rle_next(&c->bytes, tmp, k, err));
            for (size_t j = 0; j < k; j++)
                v->i64[j] = (int8_t)tmp[j];
        }
        scatter(v->i64, sizeof *v->i64, n, k, nulls);
        return 0;
    }
    case ORC_SHORT:
    case ORC_INT:
    case ORC_LONG:
    case ORC_DATE:
        v->i64 = balloc(r, n, sizeof *v->i64, err);
        if (!v->i64) return err->code;
        SREAD(S_DATA, orc_int_rle_next(&c->ints, v->i64, k, err));
        scatter(v->i64, sizeof *v->i64, n, k, nulls);
        return 0;
    case ORC_FLOAT:
    case ORC_DOUBLE:
        v->f64 = balloc(r, n, sizeof *v->f64, err);
        if (!v->f64) return err->code;
        ICD_TRY(read_floats(r, c, k, v->f64, err));
        scatter(v->f64, sizeof *v->f64, n, k, nulls);
        return 0;
    case ORC_STRING:
    case ORC_VARCHAR:
    case ORC_CHAR:
    case ORC_BINARY:
        v->str = balloc(r, n, sizeof *v->str, err);
        if (!v->str) return err->code;
        ICD_TRY(read_strings(r, c, k, v->str, err));
        scatter(v->str, sizeof *v->str, n, k, nulls);
        return 0;
    case ORC_DECIMAL:
        return read_decimals(r, c, n, k, nulls, v, err);
    case ORC_TIMESTAMP:
    case ORC_TIMESTAMP_INSTANT:
        return read_timestamps(r, c, n, k, nulls, v, err);
    case ORC_STRUCT: {
        v->children = balloc(r, t->nchildren, sizeof *v->children, err);
        if (!v->children) return err->code;
        for (uint32_t i = 0; i < t->nchildren; i++)
            ICD_TRY(read_col(r, r->rd[t->children[i]->id], n, nulls, &v->children[i], err));
        return 0;
    }
    case ORC_LIST:
    case ORC_MAP: {
        ICD_TRY(read_nested_lengths(r, c, n, k, nulls, v, err));
        size_t total = (size_t)v->offsets[n];
        v->children = balloc(r, t->nchildren, sizeof *v->children, err);
        if (!v->children) return err->code;
        for (uint32_t i = 0; i < t->nchildren; i++)
            ICD_TRY(read_col(r, r->rd[t->children[i]->id], total, NULL, &v->children[i], err));
        return 0;
    }
    default:
        return icd_fail(err, ICD_EUNSUPPORTED, r->f->location, -1,
                        "ORC column %u '%s': type %s is not supported", t->id, t->name,
                        orc_kind_name(t->kind));
    }
}

/* Reads n entries of column c. `pnull` (n flags) marks entries whose parent struct is
 * null: ORC stores nothing for them, not even a PRESENT bit. */
static int read_col(orc_reader *r, col_reader *c, size_t n, const uint8_t *pnull, orc_vec *v,
                    icd_error *err)
{
    memset(v, 0, sizeof *v);
    v->type = c->t;
    v->n = n;
    ICD_TRY(account(r, n, err));
    uint8_t *nulls = NULL;
    size_t k = n;
    if (c->has_present || pnull) {
        nulls = balloc(r, n, 1, err);
        if (!nulls) return err->code;
        if (c->has_present) {
            size_t m = n;
            if (pnull) {
                m = 0;
                for (size_t i = 0; i < n; i++)
                    m += !pnull[i];
            }
            uint8_t *bits = balloc(r, m, 1, err);
            if (!bits) return err->code;
            SREAD(S_PRESENT, orc_bool_rle_next(&c->present, bits, m, err));
            for (size_t i = 0, j = 0; i < n; i++)
                nulls[i] = (pnull && pnull[i]) ? 1 : !bits[j++];
        } else {
            memcpy(nulls, pnull, n);
        }
        k = 0;
        for (size_t i = 0; i < n; i++)
            k += !nulls[i];
        if (k == n) nulls = NULL;
    }
    v->nulls = nulls;
    return read_values(r, c, n, k, nulls, v, err);
}

/* ---- public API ---- */

static int check_supported(const orc_type *top, const orc_type *t, icd_error *err, const char *loc)
{
    if (t->kind == ORC_UNION)
        return icd_fail(err, ICD_EUNSUPPORTED, loc, -1,
                        "ORC column '%s' (column %u) contains a uniontype (column %u), which is "
                        "not supported",
                        top->name, top->id, t->id);
    for (uint32_t i = 0; i < t->nchildren; i++)
        ICD_TRY(check_supported(top, t->children[i], err, loc));
    return 0;
}

static int add_subtree(orc_reader *r, const orc_type *t, icd_error *err)
{
    if (!r->rd[t->id]) {
        r->rd[t->id] = calloc(1, sizeof **r->rd);
        if (!r->rd[t->id]) return icd_fail_nomem(err);
        r->rd[t->id]->t = t;
    }
    for (uint32_t i = 0; i < t->nchildren; i++)
        ICD_TRY(add_subtree(r, t->children[i], err));
    return 0;
}

static int setup_columns(orc_reader *r, const orc_read_opts *opts, icd_error *err)
{
    orc_file *f = r->f;
    const orc_type *root = &f->types[0];
    bool all = !opts || !opts->columns;
    size_t n = all ? (root->kind == ORC_STRUCT ? root->nchildren : 1) : opts->ncolumns;
    r->cols = calloc(n ? n : 1, sizeof *r->cols);
    r->rd = calloc(f->ntypes, sizeof *r->rd);
    r->batch.cols = calloc(n ? n : 1, sizeof *r->batch.cols);
    if (!r->cols || !r->rd || !r->batch.cols) return icd_fail_nomem(err);
    r->ncols = n;
    for (size_t i = 0; i < n; i++) {
        const orc_type *t;
        if (all)
            t = root->kind == ORC_STRUCT ? root->children[i] : root;
        else
            t = opts->columns[i];
        bool top = t && t->id < f->ntypes && &f->types[t->id] == t &&
                   (root->kind == ORC_STRUCT ? t->parent == root : t == root);
        if (!top)
            return icd_fail(err, ICD_EINVALID, f->location, -1,
                            "ORC reader: selected column %zu is not a top-level column of this "
                            "file",
                            i);
        ICD_TRY(check_supported(t, t, err, f->location));
        r->cols[i] = t;
        ICD_TRY(add_subtree(r, t, err));
    }
    /* The root struct's own PRESENT stream marks nothing useful; it is not read. */
    return 0;
}

int orc_reader_open(orc_reader **out, orc_file *f, const orc_read_opts *opts, icd_error *err)
{
    *out = NULL;
    orc_reader *r = calloc(1, sizeof *r);
    if (!r) return icd_fail_nomem(err);
    r->f = f;
    r->batch_rows = opts && opts->batch_rows ? opts->batch_rows : 1024;
    r->max_values = opts && opts->max_batch_values ? opts->max_batch_values : ((size_t)64 << 20);
    if (r->batch_rows > r->max_values) r->batch_rows = r->max_values;
    r->keep = opts ? opts->keep_stripe : NULL;
    r->keep_ctx = opts ? opts->keep_ctx : NULL;
    int rc = setup_columns(r, opts, err);
    if (rc) {
        orc_reader_free(r);
        return rc;
    }
    r->batch.ncols = r->ncols;
    *out = r;
    return 0;
}

int orc_reader_next(orc_reader *r, orc_batch **out, icd_error *err)
{
    *out = NULL;
    orc_file *f = r->f;
    while (!r->loaded || r->rows_left == 0) {
        if (r->loaded) {
            unload_stripe(r);
            r->stripe++;
        }
        if (r->stripe >= f->nstripes) return 0;
        if (f->stripes[r->stripe].rows == 0 || (r->keep && !r->keep(r->keep_ctx, f, r->stripe))) {
            r->stripe++;
            continue;
        }
        ICD_TRY(load_stripe(r, err));
    }
    const orc_stripe_info *si = &f->stripes[r->stripe];
    size_t n = r->rows_left < r->batch_rows ? (size_t)r->rows_left : r->batch_rows;
    icd_arena_reset(&r->arena);
    r->values = 0;
    for (size_t i = 0; i < r->ncols; i++) {
        const orc_type *t = r->cols[i];
        ICD_TRY(read_col(r, r->rd[t->id], n, NULL, &r->batch.cols[i], err));
    }
    r->batch.row_start = si->first_row + (si->rows - r->rows_left);
    r->batch.n = n;
    r->batch.stripe = r->stripe;
    r->rows_left -= n;
    *out = &r->batch;
    return 1;
}

void orc_reader_free(orc_reader *r)
{
    if (!r) return;
    if (r->rd) {
        unload_stripe(r);
        for (size_t i = 0; i < r->f->ntypes; i++)
            free(r->rd[i]);
    }
    free(r->bufs);
    free(r->rd);
    free(r->cols);
    free(r->batch.cols);
    icd_arena_free(&r->arena);
    free(r);
}
