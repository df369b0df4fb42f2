/*
 * Variant binary decoding (see variant.h): parses the metadata dictionary once per value,
 * then walks the value recursively and writes JSON through base/jsonw.h.
 *
 * Every length and offset comes from the file, so each is checked before use: the
 * dictionary's offset table must fit the metadata, each key's [start, end) must lie in
 * the string bytes, an object/array header (count, ids, offsets) must fit its value, and
 * each child starts inside the parent's field area and is bounded by it. Children may
 * legally appear in any order, so offsets could make several children share bytes; to keep
 * such input from rendering exponentially many values, the number of values visited is
 * limited to the value's byte count (a well-formed value, whose values are disjoint, never
 * reaches it), and the JSON of one variant is capped.
 */
#include <string.h>

#include "base/jsonw.h"
#include "formats/parquet/variant.h"

/* Largest JSON rendering of one variant value. */
#define VARIANT_MAX_JSON ((size_t)256 << 20)

typedef struct vmeta {
    unsigned osz;         /* bytes per dictionary size / offset */
    uint32_t dict_size;   /* strings in the dictionary */
    const uint8_t *offs;  /* dict_size + 1 offsets */
    const uint8_t *bytes; /* string bytes */
    size_t bytes_len;
} vmeta;

typedef struct vctx {
    vmeta m;
    icd_buf *out;
    size_t out_start;
    const uint8_t *base; /* first byte of the whole value (for offsets in messages) */
    size_t budget;       /* values that may still be visited */
    icd_error *err;
} vctx;

static uint32_t le_u32(const uint8_t *p, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static uint64_t le_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int meta_fail(icd_error *err, const char *what)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, -1, "variant metadata: %s", what);
}

static int meta_parse(vmeta *m, const uint8_t *p, size_t n, icd_error *err)
{
    if (n < 1) return meta_fail(err, "empty");
    unsigned version = p[0] & 15;
    if (version != 1)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "variant metadata: version %u, expected 1",
                        version);
    m->osz = ((p[0] >> 6) & 3) + 1;
    if (n < 1 + (size_t)m->osz) return meta_fail(err, "truncated header");
    m->dict_size = le_u32(p + 1, m->osz);
    uint64_t table = ((uint64_t)m->dict_size + 1) * m->osz;
    if (table > n - 1 - m->osz)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "variant metadata: a dictionary of %u strings does not fit in %zu bytes",
                        m->dict_size, n);
    m->offs = p + 1 + m->osz;
    m->bytes = m->offs + table;
    m->bytes_len = n - 1 - m->osz - (size_t)table;
    uint32_t last = le_u32(m->offs + (size_t)m->dict_size * m->osz, m->osz);
    if (last > m->bytes_len)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "variant metadata: string bytes end at %u, past the %zu available", last,
                        m->bytes_len);
    return 0;
}

static int vfail(vctx *c, const uint8_t *at, const char *fmt, const char *detail)
{
    return icd_fail(c->err, ICD_ECORRUPT, NULL, -1, "variant value at byte %lld: %s%s",
                    (long long)(at - c->base), fmt, detail ? detail : "");
}

static int put_key(vctx *c, const uint8_t *at, uint32_t id)
{
    const vmeta *m = &c->m;
    if (id >= m->dict_size)
        return icd_fail(c->err, ICD_ECORRUPT, NULL, -1,
                        "variant value at byte %lld: field id %u is not in the dictionary of %u",
                        (long long)(at - c->base), id, m->dict_size);
    uint32_t a = le_u32(m->offs + (size_t)id * m->osz, m->osz);
    uint32_t b = le_u32(m->offs + ((size_t)id + 1) * m->osz, m->osz);
    if (a > b || b > m->bytes_len)
        return icd_fail(c->err, ICD_ECORRUPT, NULL, -1,
                        "variant metadata: dictionary string %u has bad offsets", id);
    icd_json_str(c->out, (const char *)m->bytes + a, b - a);
    icd_buf_putc(c->out, ':');
    return 0;
}

/* Fixed-size primitive payload sizes by type id (-1: variable or none). */
static int fixed_size(unsigned id)
{
    switch (id) {
    case 0:
    case 1:
    case 2:
        return 0;
    case 3:
        return 1;
    case 4:
        return 2;
    case 5:
    case 11:
    case 14:
        return 4;
    case 6:
    case 7:
    case 12:
    case 13:
    case 17:
    case 18:
    case 19:
        return 8;
    case 8:
        return 5;
    case 9:
        return 9;
    case 10:
        return 17;
    case 20:
        return 16;
    default:
        return -1;
    }
}

static int primitive(vctx *c, unsigned id, const uint8_t *p, size_t n)
{
    icd_buf *o = c->out;
    const uint8_t *at = p - 1;
    if (id == 15 || id == 16) { /* binary, string: 4-byte length, then the bytes */
        if (n < 4) return vfail(c, at, "truncated length of a ", id == 15 ? "binary" : "string");
        uint32_t len = le_u32(p, 4);
        if (len > n - 4)
            return vfail(c, at, "length runs past the end of a ", id == 15 ? "binary" : "string");
        if (id == 15)
            icd_json_base64(o, p + 4, len);
        else
            icd_json_str(o, (const char *)p + 4, len);
        return 0;
    }
    int need = fixed_size(id);
    if (need < 0)
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                        "variant value at byte %lld: primitive type id %u is not supported",
                        (long long)(at - c->base), id);
    if ((size_t)need > n) return vfail(c, at, "truncated primitive value", NULL);
    switch (id) {
    case 0:
        icd_buf_append(o, "null", 4);
        return 0;
    case 1:
        icd_buf_append(o, "true", 4);
        return 0;
    case 2:
        icd_buf_append(o, "false", 5);
        return 0;
    case 3:
        icd_json_i64(o, (int8_t)p[0]);
        return 0;
    case 4:
        icd_json_i64(o, (int16_t)le_u32(p, 2));
        return 0;
    case 5:
        icd_json_i64(o, (int32_t)le_u32(p, 4));
        return 0;
    case 6:
        icd_json_i64(o, (int64_t)le_u64(p));
        return 0;
    case 7: {
        uint64_t bits = le_u64(p);
        double d;
        memcpy(&d, &bits, 8);
        icd_json_double(o, d);
        return 0;
    }
    case 14: {
        uint32_t bits = le_u32(p, 4);
        float f;
        memcpy(&f, &bits, 4);
        icd_json_float(o, f);
        return 0;
    }
    case 8:
    case 9:
    case 10: {
        unsigned scale = p[0];
        if (scale > 38) return vfail(c, at, "decimal scale above 38", NULL);
        if (id == 8) {
            icd_json_decimal_i64(o, (int32_t)le_u32(p + 1, 4), (int)scale);
        } else if (id == 9) {
            icd_json_decimal_i64(o, (int64_t)le_u64(p + 1), (int)scale);
        } else {
            uint8_t be[16];
            for (int i = 0; i < 16; i++)
                be[i] = p[16 - i];
            icd_json_decimal_be(o, be, 16, (int)scale);
        }
        return 0;
    }
    case 11:
        icd_json_date(o, (int32_t)le_u32(p, 4));
        return 0;
    case 12:
    case 13:
        icd_json_timestamp(o, (int64_t)le_u64(p), 6, id == 12);
        return 0;
    case 18:
    case 19:
        icd_json_timestamp(o, (int64_t)le_u64(p), 9, id == 18);
        return 0;
    case 17: {
        int64_t us = (int64_t)le_u64(p);
        if (us < 0 || us >= 86400LL * 1000000)
            return vfail(c, at, "time of day out of range", NULL);
        icd_json_time(o, us, 6);
        return 0;
    }
    default: /* 20: uuid, 16 bytes big-endian */
        icd_json_uuid(o, p);
        return 0;
    }
}

static int render(vctx *c, const uint8_t *p, size_t n, int depth);

/* Object (basic type 2) or array (3) whose header byte is p[0]. */
static int container(vctx *c, const uint8_t *p, size_t n, int depth, bool object)
{
    unsigned hdr = p[0] >> 2;
    unsigned offsz = (hdr & 3) + 1;
    unsigned idsz = object ? ((hdr >> 2) & 3) + 1 : 0;
    unsigned nsz = ((object ? hdr >> 4 : hdr >> 2) & 1) ? 4 : 1;
    const char *what = object ? "object" : "array";
    if (depth >= PQ_VARIANT_MAX_DEPTH)
        return vfail(c, p, "nesting deeper than the limit at an ", what);
    if (n - 1 < nsz) return vfail(c, p, "truncated element count of an ", what);
    uint32_t count = le_u32(p + 1, nsz);
    uint64_t head = (uint64_t)nsz + (uint64_t)count * idsz + ((uint64_t)count + 1) * offsz;
    if (head > n - 1) return vfail(c, p, "field ids and offsets run past the end of an ", what);
    const uint8_t *ids = p + 1 + nsz;
    const uint8_t *offs = ids + (size_t)count * idsz;
    const uint8_t *fields = p + 1 + head;
    size_t flen = n - 1 - (size_t)head;
    uint32_t last = le_u32(offs + (size_t)count * offsz, offsz);
    if (last > flen) return vfail(c, p, "last offset runs past the end of an ", what);
    icd_buf_putc(c->out, object ? '{' : '[');
    for (uint32_t i = 0; i < count; i++) {
        if (i) icd_buf_putc(c->out, ',');
        if (object) ICD_TRY(put_key(c, p, le_u32(ids + (size_t)i * idsz, idsz)));
        uint32_t off = le_u32(offs + (size_t)i * offsz, offsz);
        if (off >= last) return vfail(c, p, "element offset out of range in an ", what);
        ICD_TRY(render(c, fields + off, last - off, depth + 1));
    }
    icd_buf_putc(c->out, object ? '}' : ']');
    return 0;
}

static int render(vctx *c, const uint8_t *p, size_t n, int depth)
{
    if (n < 1) return vfail(c, p, "empty value", NULL);
    if (c->budget == 0)
        return vfail(c, p, "element offsets overlap (more values than bytes)", NULL);
    c->budget--;
    if (c->out->len - c->out_start > VARIANT_MAX_JSON)
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                        "variant value renders to more than %zu MiB of JSON",
                        VARIANT_MAX_JSON >> 20);
    switch (p[0] & 3) {
    case 0:
        return primitive(c, p[0] >> 2, p + 1, n - 1);
    case 1: {
        size_t len = p[0] >> 2;
        if (len > n - 1) return vfail(c, p, "short string runs past the end", NULL);
        icd_json_str(c->out, (const char *)p + 1, len);
        return 0;
    }
    case 2:
        return container(c, p, n, depth, true);
    default:
        return container(c, p, n, depth, false);
    }
}

int pq_variant_to_json(icd_buf *out, const uint8_t *metadata, size_t metadata_len,
                       const uint8_t *value, size_t value_len, icd_error *err)
{
    vctx c = {.out = out, .out_start = out->len, .base = value, .budget = value_len, .err = err};
    int rc = meta_parse(&c.m, metadata, metadata_len, err);
    if (!rc) rc = render(&c, value, value_len, 0);
    if (!rc && !icd_buf_ok(out)) rc = icd_fail_nomem(err);
    if (rc) {
        out->len = c.out_start < out->len ? c.out_start : out->len;
        if (out->data) out->data[out->len] = '\0';
    }
    return rc;
}
