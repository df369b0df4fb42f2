/*
 * Thrift binary protocol codec (see thrift_binary.h): the request writer and the bounded
 * reply reader the Hive Metastore client (hive.c) is built on. Requests are small and
 * written whole into an icd_buf; replies are decoded from one buffer after the transport
 * has received them (framed) or while it is still receiving them (unframed: a truncated
 * decode asks for more bytes).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/thrift_binary.h"

/* ---- writer ---------------------------------------------------------------------------- */

void cat_tb_put_i8(icd_buf *b, int8_t v)
{
    icd_buf_putc(b, (char)v);
}

void cat_tb_put_i16(icd_buf *b, int16_t v)
{
    uint16_t u = (uint16_t)v;
    char s[2] = {(char)(u >> 8), (char)u};
    icd_buf_append(b, s, 2);
}

void cat_tb_put_i32(icd_buf *b, int32_t v)
{
    uint32_t u = (uint32_t)v;
    char s[4] = {(char)(u >> 24), (char)(u >> 16), (char)(u >> 8), (char)u};
    icd_buf_append(b, s, 4);
}

void cat_tb_put_string(icd_buf *b, const char *s, size_t n)
{
    if (n > INT32_MAX) {
        b->oom = true; /* cannot be encoded; callers check icd_buf_ok */
        return;
    }
    cat_tb_put_i32(b, (int32_t)n);
    icd_buf_append(b, s, n);
}

void cat_tb_put_field(icd_buf *b, int type, int16_t id)
{
    cat_tb_put_i8(b, (int8_t)type);
    cat_tb_put_i16(b, id);
}

void cat_tb_put_message(icd_buf *b, const char *name, int type, int32_t seqid)
{
    cat_tb_put_i32(b, (int32_t)(CAT_TB_VERSION_1 | (uint32_t)type));
    cat_tb_put_string(b, name, strlen(name));
    cat_tb_put_i32(b, seqid);
}

/* ---- reader ---------------------------------------------------------------------------- */

void cat_tb_init(cat_tb *r, const void *p, size_t n, const char *location, icd_error *err)
{
    r->start = r->p = p;
    r->end = r->start + n;
    r->depth = 0;
    r->truncated = false;
    r->location = location;
    r->err = err;
}

int cat_tb_corrupt(cat_tb *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return icd_fail(r->err, ICD_ECORRUPT, r->location, (int64_t)cat_tb_pos(r),
                    "Thrift binary reply: %s", msg);
}

static size_t left(const cat_tb *r)
{
    return (size_t)(r->end - r->p);
}

static int need(cat_tb *r, size_t n)
{
    if (left(r) >= n) return 0;
    r->truncated = true;
    return cat_tb_corrupt(r, "truncated: %zu more bytes needed, %zu left", n, left(r));
}

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

int cat_tb_i8(cat_tb *r, int8_t *v)
{
    ICD_TRY(need(r, 1));
    *v = (int8_t)*r->p++;
    return 0;
}

int cat_tb_i16(cat_tb *r, int16_t *v)
{
    ICD_TRY(need(r, 2));
    *v = (int16_t)(uint16_t)be(r->p, 2);
    r->p += 2;
    return 0;
}

int cat_tb_i32(cat_tb *r, int32_t *v)
{
    ICD_TRY(need(r, 4));
    *v = (int32_t)(uint32_t)be(r->p, 4);
    r->p += 4;
    return 0;
}

int cat_tb_i64(cat_tb *r, int64_t *v)
{
    ICD_TRY(need(r, 8));
    *v = (int64_t)be(r->p, 8);
    r->p += 8;
    return 0;
}

int cat_tb_string(cat_tb *r, const uint8_t **p, uint32_t *n)
{
    int32_t len;
    ICD_TRY(cat_tb_i32(r, &len));
    if (len < 0) {
        r->p -= 4;
        return cat_tb_corrupt(r, "negative string length %d", len);
    }
    ICD_TRY(need(r, (size_t)len));
    *p = r->p;
    *n = (uint32_t)len;
    r->p += len;
    return 0;
}

int cat_tb_string_dup(cat_tb *r, char **out)
{
    *out = NULL;
    const uint8_t *p;
    uint32_t n;
    ICD_TRY(cat_tb_string(r, &p, &n));
    if (memchr(p, 0, n)) return cat_tb_corrupt(r, "a string holds a NUL byte");
    char *s = malloc((size_t)n + 1);
    if (!s) return icd_fail_nomem(r->err);
    memcpy(s, p, n);
    s[n] = '\0';
    *out = s;
    return 0;
}

int cat_tb_message_begin(cat_tb *r, const uint8_t **name, uint32_t *name_len, int *type,
                         int32_t *seqid)
{
    int32_t word;
    ICD_TRY(cat_tb_i32(r, &word));
    uint32_t u = (uint32_t)word;
    if ((u & 0xffff0000u) != CAT_TB_VERSION_1) {
        r->p -= 4;
        if (word >= 0)
            return cat_tb_corrupt(r, "an old unversioned message header (the server must use "
                                     "the strict binary protocol)");
        return cat_tb_corrupt(r,
                              "bad protocol version 0x%08x (not the binary protocol? a "
                              "framed server read unframed, or the other way round)",
                              u);
    }
    *type = (int)(u & 0xff);
    ICD_TRY(cat_tb_string(r, name, name_len));
    return cat_tb_i32(r, seqid);
}

int cat_tb_struct_begin(cat_tb *r)
{
    if (r->depth >= CAT_TB_MAX_DEPTH)
        return cat_tb_corrupt(r, "nesting deeper than %d levels", CAT_TB_MAX_DEPTH);
    r->depth++;
    return 0;
}

void cat_tb_struct_end(cat_tb *r)
{
    if (r->depth > 0) r->depth--;
}

void cat_tb_container_end(cat_tb *r)
{
    cat_tb_struct_end(r);
}

/* The wire size of one value of a fixed-size type, or 0 for variable-size types. */
static size_t fixed_size(int type)
{
    switch (type) {
    case CAT_TB_BOOL:
    case CAT_TB_BYTE:
        return 1;
    case CAT_TB_I16:
        return 2;
    case CAT_TB_I32:
        return 4;
    case CAT_TB_DOUBLE:
    case CAT_TB_I64:
        return 8;
    case CAT_TB_UUID:
        return 16;
    default:
        return 0;
    }
}

static bool valid_type(int type)
{
    return fixed_size(type) || type == CAT_TB_STRING || type == CAT_TB_STRUCT ||
           type == CAT_TB_MAP || type == CAT_TB_SET || type == CAT_TB_LIST;
}

int cat_tb_field(cat_tb *r, int *type, int16_t *id)
{
    int8_t t;
    *id = 0;
    ICD_TRY(cat_tb_i8(r, &t));
    *type = t;
    if (t == CAT_TB_STOP) return 0;
    if (!valid_type(t)) {
        r->p--;
        return cat_tb_corrupt(r, "unknown field type %d", t);
    }
    return cat_tb_i16(r, id);
}

/* Checks that `count` elements of at least `min_size` bytes each can fit in what is left,
 * so a hostile count cannot make the caller loop for long or allocate much. */
static int check_count(cat_tb *r, int32_t count, size_t min_size, const char *what)
{
    if (count < 0) return cat_tb_corrupt(r, "negative %s size %d", what, count);
    if (min_size && (size_t)count > left(r) / min_size) {
        r->truncated = true;
        return cat_tb_corrupt(r, "%s of %d elements does not fit in the %zu bytes left", what,
                              count, left(r));
    }
    return 0;
}

/* The smallest wire size of one value: a STRING is its 4-byte length, a STRUCT its STOP
 * byte, a container its header. */
static size_t min_size(int type)
{
    size_t f = fixed_size(type);
    if (f) return f;
    switch (type) {
    case CAT_TB_STRING:
        return 4;
    case CAT_TB_STRUCT:
        return 1;
    case CAT_TB_MAP:
        return 6;
    default:
        return 5; /* list, set */
    }
}

int cat_tb_map_begin(cat_tb *r, int *key_type, int *val_type, uint32_t *count)
{
    int8_t k, v;
    int32_t n;
    ICD_TRY(cat_tb_i8(r, &k));
    ICD_TRY(cat_tb_i8(r, &v));
    ICD_TRY(cat_tb_i32(r, &n));
    if (n > 0 && (!valid_type(k) || !valid_type(v)))
        return cat_tb_corrupt(r, "map of unknown key/value types %d/%d", k, v);
    ICD_TRY(check_count(r, n, n > 0 ? min_size(k) + min_size(v) : 0, "map"));
    ICD_TRY(cat_tb_struct_begin(r));
    *key_type = k;
    *val_type = v;
    *count = (uint32_t)n;
    return 0;
}

int cat_tb_list_begin(cat_tb *r, int *elem_type, uint32_t *count)
{
    int8_t e;
    int32_t n;
    ICD_TRY(cat_tb_i8(r, &e));
    ICD_TRY(cat_tb_i32(r, &n));
    if (n > 0 && !valid_type(e)) return cat_tb_corrupt(r, "list of unknown element type %d", e);
    ICD_TRY(check_count(r, n, n > 0 ? min_size(e) : 0, "list"));
    ICD_TRY(cat_tb_struct_begin(r));
    *elem_type = e;
    *count = (uint32_t)n;
    return 0;
}

int cat_tb_skip(cat_tb *r, int type)
{
    size_t f = fixed_size(type);
    if (f) {
        ICD_TRY(need(r, f));
        r->p += f;
        return 0;
    }
    switch (type) {
    case CAT_TB_STRING: {
        const uint8_t *p;
        uint32_t n;
        return cat_tb_string(r, &p, &n);
    }
    case CAT_TB_STRUCT: {
        ICD_TRY(cat_tb_struct_begin(r));
        for (;;) {
            int t;
            int16_t id;
            ICD_TRY(cat_tb_field(r, &t, &id));
            if (t == CAT_TB_STOP) break;
            ICD_TRY(cat_tb_skip(r, t));
        }
        cat_tb_struct_end(r);
        return 0;
    }
    case CAT_TB_MAP: {
        int k, v;
        uint32_t n;
        ICD_TRY(cat_tb_map_begin(r, &k, &v, &n));
        for (uint32_t i = 0; i < n; i++) {
            ICD_TRY(cat_tb_skip(r, k));
            ICD_TRY(cat_tb_skip(r, v));
        }
        cat_tb_container_end(r);
        return 0;
    }
    case CAT_TB_SET:
    case CAT_TB_LIST: {
        int e;
        uint32_t n;
        ICD_TRY(cat_tb_list_begin(r, &e, &n));
        for (uint32_t i = 0; i < n; i++)
            ICD_TRY(cat_tb_skip(r, e));
        cat_tb_container_end(r);
        return 0;
    }
    default:
        return cat_tb_corrupt(r, "cannot skip a value of unknown type %d", type);
    }
}
