/*
 * Partition transforms: parsing their text, their result types, and applying them to
 * literals (identity, bucket with Murmur3, truncate, year/month/day/hour, void). The scan
 * planner uses ice_transform_apply to turn filter constants into partition values;
 * partition-tuple equality for delete matching compares stored values and needs none of
 * this arithmetic.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/datetime.h"
#include "iceberg/transform.h"

/* ---- parsing ------------------------------------------------------------------------- */

/* "name[123]" with a positive int parameter; false when the text has another shape. */
static bool parse_param(const char *text, const char *name, int32_t *param)
{
    size_t n = strlen(name);
    if (strncasecmp(text, name, n) != 0 || text[n] != '[') return false;
    const char *p = text + n + 1;
    if (!isdigit((unsigned char)*p)) return false;
    int64_t v = 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p++ - '0');
        if (v > INT32_MAX) return false;
    }
    if (p[0] != ']' || p[1] != '\0' || v <= 0) return false;
    *param = (int32_t)v;
    return true;
}

void ice_transform_parse(const char *text, ice_transform *out)
{
    static const struct {
        const char *name;
        ice_transform_kind kind;
    } NAMED[] = {{"identity", ICE_TR_IDENTITY}, {"year", ICE_TR_YEAR}, {"month", ICE_TR_MONTH},
                 {"day", ICE_TR_DAY},           {"hour", ICE_TR_HOUR}, {"void", ICE_TR_VOID}};
    out->text = text;
    out->param = 0;
    for (size_t i = 0; i < sizeof NAMED / sizeof NAMED[0]; i++) {
        if (!strcasecmp(text, NAMED[i].name)) {
            out->kind = NAMED[i].kind;
            return;
        }
    }
    if (parse_param(text, "bucket", &out->param))
        out->kind = ICE_TR_BUCKET;
    else if (parse_param(text, "truncate", &out->param))
        out->kind = ICE_TR_TRUNCATE;
    else
        out->kind = ICE_TR_UNKNOWN;
}

bool ice_transform_equal(const ice_transform *a, const ice_transform *b)
{
    if (a->kind != b->kind) return false;
    if (a->kind == ICE_TR_UNKNOWN)
        return strcmp(a->text ? a->text : "", b->text ? b->text : "") == 0;
    return a->param == b->param;
}

void ice_transform_format(icd_buf *b, const ice_transform *t)
{
    switch (t->kind) {
    case ICE_TR_IDENTITY:
        icd_buf_puts(b, "identity");
        break;
    case ICE_TR_BUCKET:
        icd_buf_printf(b, "bucket[%d]", t->param);
        break;
    case ICE_TR_TRUNCATE:
        icd_buf_printf(b, "truncate[%d]", t->param);
        break;
    case ICE_TR_YEAR:
        icd_buf_puts(b, "year");
        break;
    case ICE_TR_MONTH:
        icd_buf_puts(b, "month");
        break;
    case ICE_TR_DAY:
        icd_buf_puts(b, "day");
        break;
    case ICE_TR_HOUR:
        icd_buf_puts(b, "hour");
        break;
    case ICE_TR_VOID:
        icd_buf_puts(b, "void");
        break;
    case ICE_TR_UNKNOWN:
        icd_buf_puts(b, t->text ? t->text : "");
        break;
    }
}

/* ---- source and result types --------------------------------------------------------- */

static bool is_nanos(ice_type_kind k)
{
    return k == ICE_T_TIMESTAMP_NS || k == ICE_T_TIMESTAMPTZ_NS;
}

bool ice_transform_accepts(const ice_transform *t, ice_type_kind k)
{
    switch (t->kind) {
    case ICE_TR_IDENTITY:
        return k != ICE_T_GEOMETRY && k != ICE_T_GEOGRAPHY && k != ICE_T_VARIANT &&
               k != ICE_T_STRUCT && k != ICE_T_LIST && k != ICE_T_MAP;
    case ICE_TR_BUCKET:
        return k == ICE_T_INT || k == ICE_T_LONG || k == ICE_T_DECIMAL || k == ICE_T_DATE ||
               k == ICE_T_TIME || ice_type_kind_is_timestamp(k) || k == ICE_T_STRING ||
               k == ICE_T_UUID || k == ICE_T_FIXED || k == ICE_T_BINARY;
    case ICE_TR_TRUNCATE:
        return k == ICE_T_INT || k == ICE_T_LONG || k == ICE_T_DECIMAL || k == ICE_T_STRING ||
               k == ICE_T_BINARY;
    case ICE_TR_YEAR:
    case ICE_TR_MONTH:
    case ICE_TR_DAY:
        return k == ICE_T_DATE || ice_type_kind_is_timestamp(k);
    case ICE_TR_HOUR:
        return ice_type_kind_is_timestamp(k);
    case ICE_TR_VOID:
    case ICE_TR_UNKNOWN:
        return true;
    }
    return false;
}

int ice_transform_result_type(const ice_transform *t, const ice_type *source, ice_type *out,
                              icd_error *err)
{
    icd_buf tb = ICD_BUF_INIT;
    if (!ice_transform_accepts(t, source->kind)) {
        ice_transform_format(&tb, t);
        int rc = icd_fail(err, ICD_EINVALID, NULL, -1, "transform %s cannot apply to type %s",
                          tb.data ? tb.data : "?", ice_type_kind_name(source->kind));
        icd_buf_free(&tb);
        return rc;
    }
    switch (t->kind) {
    case ICE_TR_IDENTITY:
    case ICE_TR_TRUNCATE:
    case ICE_TR_VOID:
        *out = *source;
        return 0;
    case ICE_TR_UNKNOWN:
        memset(out, 0, sizeof *out);
        out->kind = ICE_T_UNKNOWN;
        return 0;
    default:
        memset(out, 0, sizeof *out);
        out->kind = ICE_T_INT;
        return 0;
    }
}

/* ---- hashing ------------------------------------------------------------------------- */

static uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

uint32_t ice_murmur3_32(const void *data, size_t n, uint32_t seed)
{
    const uint8_t *p = data;
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h = seed;
    size_t blocks = n / 4;
    for (size_t i = 0; i < blocks; i++) {
        uint32_t k = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                     (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
        h = rotl32(h, 13);
        h = h * 5 + 0xe6546b64u;
    }
    const uint8_t *tail = p + blocks * 4;
    uint32_t k = 0;
    switch (n & 3) {
    case 3:
        k ^= (uint32_t)tail[2] << 16; /* fall through */
    case 2:
        k ^= (uint32_t)tail[1] << 8; /* fall through */
    case 1:
        k ^= tail[0];
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
    }
    h ^= (uint32_t)n;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

int32_t ice_hash_long(int64_t v)
{
    uint8_t b[8];
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(u >> (8 * i));
    return (int32_t)ice_murmur3_32(b, 8, 0);
}

int32_t ice_hash_bytes(const uint8_t *p, size_t n)
{
    return (int32_t)ice_murmur3_32(p, n, 0);
}

int ice_literal_hash(const ice_literal *l, int32_t *out, icd_error *err)
{
    if (l->is_null) return icd_fail(err, ICD_EINVALID, NULL, -1, "cannot hash a null value");
    switch (l->kind) {
    case ICE_T_BOOLEAN: /* the spec's hashInt(0/1): Iceberg hashes ints as longs (test vector) */
        *out = ice_hash_long(l->v.b ? 1 : 0);
        return 0;
    case ICE_T_INT:
    case ICE_T_DATE:
        *out = ice_hash_long(l->v.i32);
        return 0;
    case ICE_T_LONG:
    case ICE_T_TIME:
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
        *out = ice_hash_long(l->v.i64);
        return 0;
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        *out = ice_hash_long(icd_floordiv(l->v.i64, 1000));
        return 0;
    case ICE_T_FLOAT:
    case ICE_T_DOUBLE: {
        double d = l->kind == ICE_T_FLOAT ? (double)l->v.f32 : l->v.f64;
        uint64_t bits;
        if (isnan(d)) {
            bits = 0x7ff8000000000000ull;
        } else {
            if (d == 0.0) d = 0.0; /* -0.0 hashes as +0.0 */
            memcpy(&bits, &d, sizeof bits);
        }
        *out = ice_hash_long((int64_t)bits);
        return 0;
    }
    case ICE_T_DECIMAL: {
        ice_i128 v;
        uint8_t be[16];
        if (!ice_decimal_to_i128(l->v.bytes.ptr, l->v.bytes.len, &v))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "decimal value is longer than 16 bytes");
        size_t n = ice_decimal_from_i128(v, be);
        *out = ice_hash_bytes(be, n);
        return 0;
    }
    case ICE_T_STRING:
    case ICE_T_UUID:
    case ICE_T_FIXED:
    case ICE_T_BINARY:
        *out = ice_hash_bytes(l->v.bytes.ptr, l->v.bytes.len);
        return 0;
    default:
        return icd_fail(err, ICD_EINVALID, NULL, -1, "values of type %s have no 32-bit hash",
                        ice_type_kind_name(l->kind));
    }
}

/* ---- application --------------------------------------------------------------------- */

/* Java narrows these results with an (int) cast; do the same so values written by Java
 * for absurd timestamps still match. */
static int32_t narrow(int64_t v)
{
    return (int32_t)(uint32_t)(uint64_t)v;
}

/* Days since the epoch (date) or floor of micros/nanos in `unit` (timestamps). */
static int64_t floor_units(const ice_literal *in, int64_t micros_per_unit)
{
    if (in->kind == ICE_T_DATE) return in->v.i32; /* caller only asks dates for whole days */
    int64_t per = is_nanos(in->kind) ? micros_per_unit * 1000 : micros_per_unit;
    return icd_floordiv(in->v.i64, per);
}

static int apply_temporal(const ice_transform *t, const ice_literal *in, ice_literal *out)
{
    const int64_t DAY_US = 86400000000LL, HOUR_US = 3600000000LL;
    if (t->kind == ICE_TR_HOUR) {
        *out = ice_lit_int(narrow(floor_units(in, HOUR_US)));
        return 0;
    }
    int64_t days = floor_units(in, DAY_US);
    if (t->kind == ICE_TR_DAY) {
        *out = ice_lit_int(narrow(days));
        return 0;
    }
    int64_t y;
    int m, d;
    icd_civil_from_days(days, &y, &m, &d);
    if (t->kind == ICE_TR_YEAR)
        *out = ice_lit_int(narrow(y - 1970));
    else
        *out = ice_lit_int(narrow((y - 1970) * 12 + (m - 1)));
    return 0;
}

/* v - (((v % W) + W) % W), wrapping like Java's long arithmetic. */
static int64_t truncate_i64(int64_t v, int64_t w)
{
    int64_t r = ((v % w) + w) % w;
    return (int64_t)((uint64_t)v - (uint64_t)r);
}

/* Byte length of the first `w` code points of UTF-8 text (a lead byte starts each one). */
static size_t utf8_prefix(const uint8_t *p, size_t n, int32_t w)
{
    size_t i = 0;
    int32_t cps = 0;
    while (i < n) {
        if ((p[i] & 0xC0) != 0x80) {
            if (cps == w) break;
            cps++;
        }
        i++;
    }
    return i;
}

static int apply_truncate(const ice_transform *t, const ice_literal *in, icd_arena *arena,
                          ice_literal *out, icd_error *err)
{
    int64_t w = t->param;
    *out = *in;
    switch (in->kind) {
    case ICE_T_INT:
        out->v.i32 = narrow(truncate_i64(in->v.i32, w));
        return 0;
    case ICE_T_LONG:
        out->v.i64 = truncate_i64(in->v.i64, w);
        return 0;
    case ICE_T_STRING:
        out->v.bytes.len = utf8_prefix(in->v.bytes.ptr, in->v.bytes.len, t->param);
        return 0;
    case ICE_T_BINARY:
        if (in->v.bytes.len > (size_t)w) out->v.bytes.len = (size_t)w;
        return 0;
    case ICE_T_DECIMAL: {
        ice_i128 v;
        if (!ice_decimal_to_i128(in->v.bytes.ptr, in->v.bytes.len, &v))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "decimal value is longer than 16 bytes");
        ice_i128 r = ((v % w) + w) % w;
        uint8_t *p = arena ? icd_arena_alloc(arena, 16) : NULL;
        if (!p)
            return arena ? icd_fail_nomem(err)
                         : icd_fail(err, ICD_EINTERNAL, NULL, -1,
                                    "decimal truncation needs an arena");
        out->v.bytes.len = ice_decimal_from_i128(v - r, p);
        out->v.bytes.ptr = p;
        return 0;
    }
    default:
        return icd_fail(err, ICD_EINTERNAL, NULL, -1, "truncate: unexpected type");
    }
}

int ice_transform_apply(const ice_transform *t, const ice_literal *in, icd_arena *arena,
                        ice_literal *out, icd_error *err)
{
    if (t->kind == ICE_TR_UNKNOWN)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "unknown transform '%s'",
                        t->text ? t->text : "");
    if (!ice_transform_accepts(t, in->kind)) {
        icd_buf tb = ICD_BUF_INIT;
        ice_transform_format(&tb, t);
        int rc = icd_fail(err, ICD_EINVALID, NULL, -1, "transform %s cannot apply to type %s",
                          tb.data ? tb.data : "?", ice_type_kind_name(in->kind));
        icd_buf_free(&tb);
        return rc;
    }
    bool keeps_type =
        t->kind == ICE_TR_IDENTITY || t->kind == ICE_TR_TRUNCATE || t->kind == ICE_TR_VOID;
    if (in->is_null || t->kind == ICE_TR_VOID) {
        *out = ice_lit_null(keeps_type ? in->kind : ICE_T_INT);
        out->scale = in->scale;
        return 0;
    }
    switch (t->kind) {
    case ICE_TR_IDENTITY:
        *out = *in;
        return 0;
    case ICE_TR_BUCKET: {
        int32_t h;
        ICD_TRY(ice_literal_hash(in, &h, err));
        *out = ice_lit_int((int32_t)(((uint32_t)h & 0x7FFFFFFFu) % (uint32_t)t->param));
        return 0;
    }
    case ICE_TR_TRUNCATE:
        return apply_truncate(t, in, arena, out, err);
    default:
        return apply_temporal(t, in, out);
    }
}
