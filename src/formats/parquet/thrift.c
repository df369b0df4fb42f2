/*
 * Thrift compact protocol reader (see thrift.h). The metadata decoder (metadata.c) and the
 * page-header decoder (page.c) drive it field by field; anything they do not know is
 * skipped with pq_thrift_skip, so newer writers' extra fields never break reading.
 * The writer half (pq_tw_*) encodes the same protocol for the Parquet writer (writer.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/varint.h"
#include "base/buf.h"
#include "formats/parquet/thrift.h"

void pq_thrift_init(pq_thrift *r, const uint8_t *p, size_t n, const char *location,
                    int64_t base_offset, const char *what, icd_error *err)
{
    r->start = p;
    r->p = p;
    r->end = p + n;
    r->depth = 0;
    r->location = location;
    r->base_offset = base_offset;
    r->what = what ? what : "thrift";
    r->err = err;
}

int pq_thrift_corrupt(pq_thrift *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int64_t off = r->base_offset >= 0 ? r->base_offset + (int64_t)pq_thrift_pos(r) : -1;
    return icd_fail(r->err, ICD_ECORRUPT, r->location, off, "corrupt %s: %s", r->what, msg);
}

static int truncated(pq_thrift *r)
{
    return pq_thrift_corrupt(r, "truncated Thrift data");
}

int pq_thrift_varint(pq_thrift *r, uint64_t *v)
{
    int n = icd_uleb128_decode(r->p, r->end, v);
    if (n > 0) {
        r->p += n;
        return 0;
    }
    if (n == ICD_VARINT_TRUNCATED) return truncated(r);
    return pq_thrift_corrupt(r, "varint longer than 10 bytes or beyond 64 bits");
}

int pq_thrift_i64(pq_thrift *r, int64_t *v)
{
    uint64_t u;
    ICD_TRY(pq_thrift_varint(r, &u));
    *v = icd_unzigzag64(u);
    return 0;
}

int pq_thrift_i32(pq_thrift *r, int32_t *v)
{
    int64_t x;
    ICD_TRY(pq_thrift_i64(r, &x));
    if (x < INT32_MIN || x > INT32_MAX)
        return pq_thrift_corrupt(r, "i32 value %lld out of range", (long long)x);
    *v = (int32_t)x;
    return 0;
}

int pq_thrift_i16(pq_thrift *r, int16_t *v)
{
    int64_t x;
    ICD_TRY(pq_thrift_i64(r, &x));
    if (x < INT16_MIN || x > INT16_MAX)
        return pq_thrift_corrupt(r, "i16 value %lld out of range", (long long)x);
    *v = (int16_t)x;
    return 0;
}

int pq_thrift_byte(pq_thrift *r, int8_t *v)
{
    if (r->p >= r->end) return truncated(r);
    *v = (int8_t)*r->p++;
    return 0;
}

int pq_thrift_double(pq_thrift *r, double *v)
{
    if (r->end - r->p < 8) return truncated(r);
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = (u << 8) | r->p[i];
    memcpy(v, &u, 8);
    r->p += 8;
    return 0;
}

int pq_thrift_binary(pq_thrift *r, const uint8_t **p, uint32_t *n)
{
    uint64_t len;
    ICD_TRY(pq_thrift_varint(r, &len));
    if (len > (uint64_t)(r->end - r->p))
        return pq_thrift_corrupt(r, "binary length %llu exceeds the %zu bytes left",
                                 (unsigned long long)len, (size_t)(r->end - r->p));
    if (len > UINT32_MAX)
        return pq_thrift_corrupt(r, "binary length %llu too large", (unsigned long long)len);
    *p = r->p;
    *n = (uint32_t)len;
    r->p += len;
    return 0;
}

int pq_thrift_bool_field(pq_thrift *r, const pq_tfield *f, bool *v)
{
    if (f->type == PQ_T_TRUE)
        *v = true;
    else if (f->type == PQ_T_FALSE)
        *v = false;
    else
        return pq_thrift_corrupt(r, "field %d: expected a boolean, found type %d", f->id, f->type);
    return 0;
}

int pq_thrift_bool_elem(pq_thrift *r, bool *v)
{
    int8_t b = 0;
    ICD_TRY(pq_thrift_byte(r, &b));
    if (b != 0 && b != 1 && b != 2) return pq_thrift_corrupt(r, "invalid boolean element %d", b);
    *v = b == 1;
    return 0;
}

static int enter(pq_thrift *r)
{
    if (++r->depth > PQ_THRIFT_MAX_DEPTH)
        return pq_thrift_corrupt(r, "nesting deeper than %d levels", PQ_THRIFT_MAX_DEPTH);
    return 0;
}

int pq_thrift_struct_begin(pq_thrift *r)
{
    return enter(r);
}
void pq_thrift_struct_end(pq_thrift *r)
{
    r->depth--;
}
void pq_thrift_container_end(pq_thrift *r)
{
    r->depth--;
}

int pq_thrift_field(pq_thrift *r, int16_t *last_id, pq_tfield *f)
{
    if (r->p >= r->end) return truncated(r);
    uint8_t b = *r->p++;
    f->type = b & 0x0f;
    if (f->type == PQ_T_STOP) {
        if (b != 0) return pq_thrift_corrupt(r, "invalid field header 0x%02x", b);
        f->id = 0;
        return 0;
    }
    if (f->type > PQ_T_STRUCT) return pq_thrift_corrupt(r, "unknown field type %d", f->type);
    int delta = b >> 4;
    if (delta) {
        int id = *last_id + delta;
        if (id > INT16_MAX) return pq_thrift_corrupt(r, "field id overflows");
        f->id = (int16_t)id;
    } else {
        ICD_TRY(pq_thrift_i16(r, &f->id));
    }
    *last_id = f->id;
    return 0;
}

/* Smallest encoded size of one element of a type (for count bounds checks). */
static size_t min_size(int type)
{
    return type == PQ_T_DOUBLE ? 8 : 1;
}

int pq_thrift_list_begin(pq_thrift *r, int *elem_type, uint32_t *count)
{
    if (r->p >= r->end) return truncated(r);
    uint8_t b = *r->p++;
    *elem_type = b & 0x0f;
    uint64_t n = b >> 4;
    if (n == 15) ICD_TRY(pq_thrift_varint(r, &n));
    if (*elem_type == PQ_T_STOP || *elem_type > PQ_T_STRUCT) {
        if (n != 0 || *elem_type > PQ_T_STRUCT)
            return pq_thrift_corrupt(r, "list of unknown element type %d", *elem_type);
    }
    if (n > (uint64_t)(r->end - r->p) / min_size(*elem_type))
        return pq_thrift_corrupt(r, "list of %llu elements exceeds the %zu bytes left",
                                 (unsigned long long)n, (size_t)(r->end - r->p));
    *count = (uint32_t)n;
    return enter(r);
}

int pq_thrift_map_begin(pq_thrift *r, int *key_type, int *val_type, uint32_t *count)
{
    uint64_t n;
    ICD_TRY(pq_thrift_varint(r, &n));
    *key_type = *val_type = PQ_T_STOP;
    if (n) {
        if (r->p >= r->end) return truncated(r);
        uint8_t b = *r->p++;
        *key_type = b >> 4;
        *val_type = b & 0x0f;
        if (*key_type == PQ_T_STOP || *key_type > PQ_T_STRUCT || *val_type == PQ_T_STOP ||
            *val_type > PQ_T_STRUCT)
            return pq_thrift_corrupt(r, "map of unknown key/value types 0x%02x", b);
        if (n > (uint64_t)(r->end - r->p) / (min_size(*key_type) + min_size(*val_type)))
            return pq_thrift_corrupt(r, "map of %llu entries exceeds the %zu bytes left",
                                     (unsigned long long)n, (size_t)(r->end - r->p));
    }
    *count = (uint32_t)n;
    return enter(r);
}

int pq_thrift_expect(pq_thrift *r, const pq_tfield *f, int type)
{
    int t = f->type == PQ_T_FALSE ? PQ_T_TRUE : f->type;
    int want = type == PQ_T_FALSE ? PQ_T_TRUE : type;
    if (t == PQ_T_SET) t = PQ_T_LIST;
    if (t != want)
        return pq_thrift_corrupt(r, "field %d has wire type %d, expected %d", f->id, f->type, type);
    return 0;
}

/* Skips a value; `in_container` distinguishes a boolean list element (one byte) from a
 * boolean field (value in the header, nothing to skip). */
static int skip(pq_thrift *r, int type, bool in_container)
{
    uint64_t u;
    const uint8_t *bp;
    uint32_t bn;
    switch (type) {
    case PQ_T_TRUE:
    case PQ_T_FALSE:
        if (in_container) {
            if (r->p >= r->end) return truncated(r);
            r->p++;
        }
        return 0;
    case PQ_T_BYTE:
        if (r->p >= r->end) return truncated(r);
        r->p++;
        return 0;
    case PQ_T_I16:
    case PQ_T_I32:
    case PQ_T_I64:
        return pq_thrift_varint(r, &u);
    case PQ_T_DOUBLE:
        if (r->end - r->p < 8) return truncated(r);
        r->p += 8;
        return 0;
    case PQ_T_BINARY:
        return pq_thrift_binary(r, &bp, &bn);
    case PQ_T_LIST:
    case PQ_T_SET: {
        int et;
        uint32_t n;
        ICD_TRY(pq_thrift_list_begin(r, &et, &n));
        for (uint32_t i = 0; i < n; i++)
            ICD_TRY(skip(r, et, true));
        pq_thrift_container_end(r);
        return 0;
    }
    case PQ_T_MAP: {
        int kt, vt;
        uint32_t n;
        ICD_TRY(pq_thrift_map_begin(r, &kt, &vt, &n));
        for (uint32_t i = 0; i < n; i++) {
            ICD_TRY(skip(r, kt, true));
            ICD_TRY(skip(r, vt, true));
        }
        pq_thrift_container_end(r);
        return 0;
    }
    case PQ_T_STRUCT: {
        ICD_TRY(pq_thrift_struct_begin(r));
        int16_t last = 0;
        pq_tfield f;
        for (;;) {
            ICD_TRY(pq_thrift_field(r, &last, &f));
            if (f.type == PQ_T_STOP) break;
            ICD_TRY(skip(r, f.type, false));
        }
        pq_thrift_struct_end(r);
        return 0;
    }
    default:
        return pq_thrift_corrupt(r, "cannot skip unknown type %d", type);
    }
}

int pq_thrift_skip(pq_thrift *r, int type)
{
    return skip(r, type, false);
}
int pq_thrift_skip_elem(pq_thrift *r, int type)
{
    return skip(r, type, true);
}

/* --- writer --- */

void pq_tw_init(pq_tw *w, icd_buf *out)
{
    w->out = out;
    w->depth = 0;
    w->last[0] = 0;
}

void pq_tw_varint(pq_tw *w, uint64_t v)
{
    icd_uleb128_put(w->out, v);
}

void pq_tw_i64(pq_tw *w, int64_t v)
{
    pq_tw_varint(w, icd_zigzag64(v));
}

void pq_tw_struct_begin(pq_tw *w)
{
    /* Deeper nesting than the reader accepts is a writer bug; keep the stack in bounds. */
    if (w->depth < PQ_THRIFT_MAX_DEPTH - 1) w->depth++;
    w->last[w->depth] = 0;
}

void pq_tw_struct_end(pq_tw *w)
{
    icd_buf_putc(w->out, 0);
    if (w->depth > 0) w->depth--;
}

void pq_tw_field_begin(pq_tw *w, int16_t id, int type)
{
    int delta = id - w->last[w->depth];
    if (delta > 0 && delta <= 15) {
        icd_buf_putc(w->out, (char)(delta << 4 | type));
    } else {
        icd_buf_putc(w->out, (char)type);
        pq_tw_i64(w, id);
    }
    w->last[w->depth] = id;
}

void pq_tw_list_begin(pq_tw *w, int elem_type, uint32_t count)
{
    if (count < 15) {
        icd_buf_putc(w->out, (char)(count << 4 | (uint32_t)elem_type));
    } else {
        icd_buf_putc(w->out, (char)(0xf0 | elem_type));
        pq_tw_varint(w, count);
    }
}

void pq_tw_binary(pq_tw *w, const void *p, size_t n)
{
    pq_tw_varint(w, n);
    icd_buf_append(w->out, p, n);
}

void pq_tw_field_i32(pq_tw *w, int16_t id, int32_t v)
{
    pq_tw_field_begin(w, id, PQ_T_I32);
    pq_tw_i64(w, v);
}

void pq_tw_field_i64(pq_tw *w, int16_t id, int64_t v)
{
    pq_tw_field_begin(w, id, PQ_T_I64);
    pq_tw_i64(w, v);
}

void pq_tw_field_i8(pq_tw *w, int16_t id, int8_t v)
{
    pq_tw_field_begin(w, id, PQ_T_BYTE);
    icd_buf_putc(w->out, (char)v);
}

void pq_tw_field_bool(pq_tw *w, int16_t id, bool v)
{
    pq_tw_field_begin(w, id, v ? PQ_T_TRUE : PQ_T_FALSE);
}

void pq_tw_field_binary(pq_tw *w, int16_t id, const void *p, size_t n)
{
    pq_tw_field_begin(w, id, PQ_T_BINARY);
    pq_tw_binary(w, p, n);
}

void pq_tw_field_empty_struct(pq_tw *w, int16_t id)
{
    pq_tw_field_begin(w, id, PQ_T_STRUCT);
    pq_tw_struct_begin(w);
    pq_tw_struct_end(w);
}
