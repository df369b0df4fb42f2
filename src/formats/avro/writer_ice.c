/*
 * Iceberg rows -> Avro datums (see writer_ice.h). The sink follows the reader's calls
 * with a stack of frames (the row's record, nested records, arrays, maps): each value
 * finds its Iceberg field from the top frame (the field() name in a record, the element
 * of a list, key / value of a map), writes the union branch of an optional field, then
 * the value in the field's Avro form. Arrays and maps are buffered per frame until their
 * end, since Avro writes the item count before the items.
 */
#include "formats/avro/writer_ice.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"

#define AVRO_ICE_MAX_DEPTH 64

/* ---- schema -------------------------------------------------------------------------- */

static int decimal_bytes(int precision)
{
    int n = 1;
    while (n < 16 && pow(2.0, 8.0 * n - 1) < pow(10.0, precision))
        n++;
    return n;
}

static int put_type(icd_buf *b, const ice_field *f, const char *column, icd_error *err);

static int put_field_type(icd_buf *b, const ice_field *f, const char *column, icd_error *err)
{
    if (f->required) return put_type(b, f, column, err);
    icd_buf_puts(b, "[\"null\",");
    ICD_TRY(put_type(b, f, column, err));
    icd_buf_putc(b, ']');
    return 0;
}

static int put_record(icd_buf *b, const char *name, const ice_field *fields, size_t n,
                      const char *column, icd_error *err)
{
    icd_buf_puts(b, "{\"type\":\"record\",\"name\":");
    icd_json_cstr(b, name);
    icd_buf_puts(b, ",\"fields\":[");
    for (size_t i = 0; i < n; i++) {
        const ice_field *f = &fields[i];
        if (i) icd_buf_putc(b, ',');
        icd_buf_puts(b, "{\"name\":");
        icd_json_cstr(b, f->name);
        icd_buf_puts(b, ",\"type\":");
        ICD_TRY(put_field_type(b, f, column ? column : f->name, err));
        if (!f->required) icd_buf_puts(b, ",\"default\":null");
        icd_buf_printf(b, ",\"field-id\":%d}", (int)f->id);
    }
    icd_buf_puts(b, "]}");
    return 0;
}

static int put_type(icd_buf *b, const ice_field *f, const char *column, icd_error *err)
{
    const ice_type *t = f->type;
    char name[48];
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        icd_buf_puts(b, "\"boolean\"");
        return 0;
    case ICE_T_INT:
        icd_buf_puts(b, "\"int\"");
        return 0;
    case ICE_T_LONG:
        icd_buf_puts(b, "\"long\"");
        return 0;
    case ICE_T_FLOAT:
        icd_buf_puts(b, "\"float\"");
        return 0;
    case ICE_T_DOUBLE:
        icd_buf_puts(b, "\"double\"");
        return 0;
    case ICE_T_STRING:
        icd_buf_puts(b, "\"string\"");
        return 0;
    case ICE_T_BINARY:
        icd_buf_puts(b, "\"bytes\"");
        return 0;
    case ICE_T_DATE:
        icd_buf_puts(b, "{\"type\":\"int\",\"logicalType\":\"date\"}");
        return 0;
    case ICE_T_TIME:
        icd_buf_puts(b, "{\"type\":\"long\",\"logicalType\":\"time-micros\"}");
        return 0;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        bool ns = t->kind == ICE_T_TIMESTAMP_NS || t->kind == ICE_T_TIMESTAMPTZ_NS;
        bool utc = t->kind == ICE_T_TIMESTAMPTZ || t->kind == ICE_T_TIMESTAMPTZ_NS;
        icd_buf_printf(b,
                       "{\"type\":\"long\",\"logicalType\":\"timestamp-%s\",\"adjust-to-utc\":%s}",
                       ns ? "nanos" : "micros", utc ? "true" : "false");
        return 0;
    }
    case ICE_T_DECIMAL:
        icd_buf_printf(b,
                       "{\"type\":\"fixed\",\"name\":\"decimal_%d_%d_f%d\",\"size\":%d,"
                       "\"logicalType\":\"decimal\",\"precision\":%d,\"scale\":%d}",
                       (int)t->precision, (int)t->scale, (int)f->id, decimal_bytes(t->precision),
                       (int)t->precision, (int)t->scale);
        return 0;
    case ICE_T_UUID:
        icd_buf_printf(b,
                       "{\"type\":\"fixed\",\"name\":\"uuid_fixed_f%d\",\"size\":16,"
                       "\"logicalType\":\"uuid\"}",
                       (int)f->id);
        return 0;
    case ICE_T_FIXED:
        icd_buf_printf(b, "{\"type\":\"fixed\",\"name\":\"fixed_%d_f%d\",\"size\":%d}",
                       (int)t->length, (int)f->id, (int)t->length);
        return 0;
    case ICE_T_STRUCT:
        snprintf(name, sizeof name, "r%d", (int)f->id);
        return put_record(b, name, t->fields, t->nfields, column, err);
    case ICE_T_LIST:
        icd_buf_puts(b, "{\"type\":\"array\",\"items\":");
        ICD_TRY(put_field_type(b, t->element, column, err));
        icd_buf_printf(b, ",\"element-id\":%d}", (int)t->element->id);
        return 0;
    case ICE_T_MAP:
        if (t->key->type->kind == ICE_T_STRING) {
            icd_buf_puts(b, "{\"type\":\"map\",\"values\":");
            ICD_TRY(put_field_type(b, t->value, column, err));
            icd_buf_printf(b, ",\"key-id\":%d,\"value-id\":%d}", (int)t->key->id,
                           (int)t->value->id);
            return 0;
        }
        icd_buf_puts(b, "{\"type\":\"array\",\"logicalType\":\"map\",\"items\":");
        {
            ice_field kv[2] = {*t->key, *t->value};
            kv[0].name = "key";
            kv[1].name = "value";
            snprintf(name, sizeof name, "k%d_v%d", (int)t->key->id, (int)t->value->id);
            ICD_TRY(put_record(b, name, kv, 2, column, err));
        }
        icd_buf_putc(b, '}');
        return 0;
    default:
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "column '%s': type %s cannot be written to Avro", column,
                        ice_type_kind_name(t->kind));
    }
}

int icd_avro_ice_schema_json(const ice_field *fields, size_t nfields, icd_buf *out, icd_error *err)
{
    ICD_TRY(put_record(out, "table", fields, nfields, NULL, err));
    return icd_buf_ok(out) ? 0 : icd_fail_nomem(err);
}

/* ---- the row sink -------------------------------------------------------------------- */

enum { FR_STRUCT, FR_LIST, FR_MAP };

typedef struct frame {
    int kind;
    const ice_type *type;
    size_t next;          /* struct: next field index; map: 0 = key next, 1 = value next */
    const ice_field *cur; /* struct: the field named last */
    int64_t count;        /* list / map items */
    icd_buf buf;          /* list / map: the items */
    icd_buf *out;         /* where this frame's values go */
} frame;

struct icd_avro_ice_sink {
    icd_avro_writer *w;
    ice_type root;
    frame st[AVRO_ICE_MAX_DEPTH];
    int depth;
    bool bad;
    char msg[200];
    const char *file;
    int64_t pos;
    int64_t rows;
    ice_row_sink sink;
};

static void fail(icd_avro_ice_sink *s, const char *fmt, ...) ICD_PRINTF(2, 3);
static void fail(icd_avro_ice_sink *s, const char *fmt, ...)
{
    if (s->bad) return;
    s->bad = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
}

static const ice_field *expect(icd_avro_ice_sink *s)
{
    if (s->bad || s->depth < 1) return NULL;
    frame *f = &s->st[s->depth - 1];
    if (f->kind == FR_STRUCT) {
        const ice_field *c = f->cur;
        f->cur = NULL;
        if (!c) fail(s, "a value without its field name");
        return c;
    }
    if (f->kind == FR_LIST) {
        f->count++;
        return f->type->element;
    }
    if (f->next == 0) {
        f->next = 1;
        f->count++;
        return f->type->key;
    }
    f->next = 0;
    return f->type->value;
}

/* The field of the next value, its union branch written; NULL when the row is bad. */
static const ice_field *start(icd_avro_ice_sink *s, bool null)
{
    const ice_field *f = expect(s);
    if (!f) return NULL;
    icd_buf *out = s->st[s->depth - 1].out;
    if (!f->required)
        icd_avro_put_long(out, null ? 0 : 1);
    else if (null) {
        fail(s, "column '%s' is required but the value is null", f->name);
        return NULL;
    }
    return f;
}

static icd_buf *out_of(icd_avro_ice_sink *s)
{
    return s->st[s->depth - 1].out;
}

static const ice_field *start_kind(icd_avro_ice_sink *s, const char *what,
                                   bool ok_kind(ice_type_kind))
{
    const ice_field *f = start(s, false);
    if (f && !ok_kind(f->type->kind)) {
        fail(s, "column '%s' (%s): got a %s value", f->name, ice_type_kind_name(f->type->kind),
             what);
        return NULL;
    }
    return f;
}

static bool k_bool(ice_type_kind k)
{
    return k == ICE_T_BOOLEAN;
}
static bool k_int(ice_type_kind k)
{
    return k == ICE_T_INT || k == ICE_T_LONG;
}
static bool k_float(ice_type_kind k)
{
    return k == ICE_T_FLOAT || k == ICE_T_DOUBLE;
}
static bool k_double(ice_type_kind k)
{
    return k == ICE_T_DOUBLE;
}
static bool k_decimal(ice_type_kind k)
{
    return k == ICE_T_DECIMAL;
}
static bool k_date(ice_type_kind k)
{
    return k == ICE_T_DATE;
}
static bool k_time(ice_type_kind k)
{
    return k == ICE_T_TIME;
}
static bool k_ts(ice_type_kind k)
{
    return ice_type_kind_is_timestamp(k);
}
static bool k_string(ice_type_kind k)
{
    return k == ICE_T_STRING;
}
static bool k_uuid(ice_type_kind k)
{
    return k == ICE_T_UUID;
}
static bool k_binary(ice_type_kind k)
{
    return k == ICE_T_BINARY || k == ICE_T_FIXED;
}
static bool k_struct(ice_type_kind k)
{
    return k == ICE_T_STRUCT;
}
static bool k_list(ice_type_kind k)
{
    return k == ICE_T_LIST;
}
static bool k_map(ice_type_kind k)
{
    return k == ICE_T_MAP;
}

static void s_begin_row(void *ctx, const char *file, int64_t pos)
{
    icd_avro_ice_sink *s = ctx;
    s->file = file;
    s->pos = pos;
    s->bad = false;
    s->depth = 1;
    frame *r = &s->st[0];
    r->kind = FR_STRUCT;
    r->type = &s->root;
    r->next = 0;
    r->cur = NULL;
    r->out = icd_avro_writer_datum(s->w);
}

static void s_field(void *ctx, const char *name, size_t n)
{
    icd_avro_ice_sink *s = ctx;
    if (s->bad) return;
    frame *f = &s->st[s->depth - 1];
    if (f->kind != FR_STRUCT) {
        fail(s, "a field name outside a record");
        return;
    }
    const ice_type *t = f->type;
    if (f->next < t->nfields && strlen(t->fields[f->next].name) == n &&
        !memcmp(t->fields[f->next].name, name, n)) {
        f->cur = &t->fields[f->next++];
        return;
    }
    fail(s, "field '%.*s' arrives out of the schema's order", (int)n, name);
}

static void s_null(void *ctx)
{
    start(ctx, true);
}
static void s_bool(void *ctx, bool v)
{
    icd_avro_ice_sink *s = ctx;
    if (start_kind(s, "boolean", k_bool)) icd_buf_putc(out_of(s), v ? 1 : 0);
}
static void s_i64(void *ctx, int64_t v)
{
    icd_avro_ice_sink *s = ctx;
    if (start_kind(s, "integer", k_int)) icd_avro_put_long(out_of(s), v);
}
static void s_f32(void *ctx, float v)
{
    icd_avro_ice_sink *s = ctx;
    const ice_field *f = start_kind(s, "float", k_float);
    if (!f) return;
    if (f->type->kind == ICE_T_DOUBLE)
        icd_avro_put_double(out_of(s), (double)v);
    else
        icd_avro_put_float(out_of(s), v);
}
static void s_f64(void *ctx, double v)
{
    icd_avro_ice_sink *s = ctx;
    if (start_kind(s, "double", k_double)) icd_avro_put_double(out_of(s), v);
}

/* A big-endian two's-complement integer re-sized to the field's fixed width. */
static void put_decimal(icd_avro_ice_sink *s, const ice_field *f, const uint8_t *be, size_t m)
{
    size_t n = (size_t)decimal_bytes(f->type->precision);
    uint8_t sign = m && (be[0] & 0x80) ? 0xff : 0x00;
    uint8_t tmp[32];
    if (m > n) {
        for (size_t i = 0; i < m - n; i++)
            if (be[i] != sign) {
                fail(s, "column '%s': decimal does not fit decimal(%d,%d)", f->name,
                     (int)f->type->precision, (int)f->type->scale);
                return;
            }
        if (n && ((be[m - n] & 0x80) ? 0xff : 0x00) != sign) {
            fail(s, "column '%s': decimal does not fit its width", f->name);
            return;
        }
        be += m - n;
        m = n;
    }
    memset(tmp, sign, n - m);
    memcpy(tmp + (n - m), be, m);
    icd_buf_append(out_of(s), tmp, n);
}

static void s_decimal_i64(void *ctx, int64_t v, int scale)
{
    icd_avro_ice_sink *s = ctx;
    const ice_field *f = start_kind(s, "decimal", k_decimal);
    if (!f) return;
    if (scale != f->type->scale) {
        fail(s, "column '%s': decimal of scale %d for decimal(%d,%d)", f->name, scale,
             (int)f->type->precision, (int)f->type->scale);
        return;
    }
    uint8_t be[8];
    for (int i = 0; i < 8; i++)
        be[i] = (uint8_t)((uint64_t)v >> (56 - 8 * i));
    put_decimal(s, f, be, 8);
}
static void s_decimal_be(void *ctx, const uint8_t *be, size_t n, int scale)
{
    icd_avro_ice_sink *s = ctx;
    const ice_field *f = start_kind(s, "decimal", k_decimal);
    if (!f) return;
    if (scale != f->type->scale) {
        fail(s, "column '%s': decimal of scale %d for decimal(%d,%d)", f->name, scale,
             (int)f->type->precision, (int)f->type->scale);
        return;
    }
    put_decimal(s, f, be, n);
}
static void s_date(void *ctx, int32_t days)
{
    icd_avro_ice_sink *s = ctx;
    if (start_kind(s, "date", k_date)) icd_avro_put_long(out_of(s), days);
}
static void s_time(void *ctx, int64_t us)
{
    icd_avro_ice_sink *s = ctx;
    if (start_kind(s, "time", k_time)) icd_avro_put_long(out_of(s), us);
}
static void s_timestamp(void *ctx, int64_t v, int unit_digits, bool utc)
{
    (void)utc;
    icd_avro_ice_sink *s = ctx;
    const ice_field *f = start_kind(s, "timestamp", k_ts);
    if (!f) return;
    bool ns = f->type->kind == ICE_T_TIMESTAMP_NS || f->type->kind == ICE_T_TIMESTAMPTZ_NS;
    if (ns && unit_digits == 6)
        v *= 1000;
    else if (!ns && unit_digits == 9)
        v = v >= 0 ? v / 1000 : -((-v + 999) / 1000);
    icd_avro_put_long(out_of(s), v);
}
static void s_string(void *ctx, const char *p, size_t n)
{
    icd_avro_ice_sink *s = ctx;
    if (start_kind(s, "string", k_string)) icd_avro_put_bytes(out_of(s), p, n);
}
static void s_uuid(void *ctx, const uint8_t v[16])
{
    icd_avro_ice_sink *s = ctx;
    if (start_kind(s, "uuid", k_uuid)) icd_buf_append(out_of(s), v, 16);
}
static void s_binary(void *ctx, const uint8_t *p, size_t n)
{
    icd_avro_ice_sink *s = ctx;
    const ice_field *f = start_kind(s, "binary", k_binary);
    if (!f) return;
    if (f->type->kind == ICE_T_BINARY) {
        icd_avro_put_bytes(out_of(s), p, n);
    } else if ((int32_t)n != f->type->length) {
        fail(s, "column '%s': a %zu-byte value for fixed[%d]", f->name, n, (int)f->type->length);
    } else {
        icd_buf_append(out_of(s), p, n);
    }
}

static frame *push(icd_avro_ice_sink *s, int kind, const ice_type *t, bool own_buf)
{
    if (s->depth >= AVRO_ICE_MAX_DEPTH) {
        fail(s, "values nested deeper than %d", AVRO_ICE_MAX_DEPTH);
        return NULL;
    }
    icd_buf *parent_out = s->st[s->depth - 1].out;
    frame *f = &s->st[s->depth++];
    f->kind = kind;
    f->type = t;
    f->next = 0;
    f->cur = NULL;
    f->count = 0;
    icd_buf_clear(&f->buf);
    f->out = own_buf ? &f->buf : parent_out;
    return f;
}

static void s_struct_begin(void *ctx)
{
    icd_avro_ice_sink *s = ctx;
    const ice_field *f = start_kind(s, "struct", k_struct);
    if (f) push(s, FR_STRUCT, f->type, false);
}
static void s_struct_end(void *ctx)
{
    icd_avro_ice_sink *s = ctx;
    if (s->bad) return;
    frame *f = &s->st[s->depth - 1];
    if (f->kind != FR_STRUCT || s->depth < 2 || f->next != f->type->nfields) {
        fail(s, "a record ends before all its fields");
        return;
    }
    s->depth--;
}
static void begin_items(icd_avro_ice_sink *s, const char *what, bool ok(ice_type_kind), int kind)
{
    const ice_field *f = start_kind(s, what, ok);
    if (f) push(s, kind, f->type, true);
}
static void end_items(icd_avro_ice_sink *s, int kind)
{
    if (s->bad) return;
    frame *f = &s->st[s->depth - 1];
    if (f->kind != kind || (kind == FR_MAP && f->next != 0)) {
        fail(s, "a list or map ends out of place");
        return;
    }
    s->depth--;
    icd_buf *out = s->st[s->depth - 1].out;
    if (f->count) {
        icd_avro_put_long(out, f->count);
        icd_buf_append(out, f->buf.data, f->buf.len);
    }
    icd_avro_put_long(out, 0);
}
static void s_list_begin(void *ctx)
{
    begin_items(ctx, "list", k_list, FR_LIST);
}
static void s_list_end(void *ctx)
{
    end_items(ctx, FR_LIST);
}
static void s_map_begin(void *ctx)
{
    begin_items(ctx, "map", k_map, FR_MAP);
}
static void s_map_end(void *ctx)
{
    end_items(ctx, FR_MAP);
}
static void s_raw_json(void *ctx, const char *json, size_t n)
{
    (void)json;
    (void)n;
    fail(ctx, "variant values cannot be written to Avro");
}

static int s_end_row(void *ctx, icd_error *err)
{
    icd_avro_ice_sink *s = ctx;
    if (!s->bad && (s->depth != 1 || s->st[0].next != s->root.nfields))
        fail(s, "the row ends before all its fields");
    for (int i = 0; i < AVRO_ICE_MAX_DEPTH && !s->bad; i++)
        if (!icd_buf_ok(&s->st[i].buf)) return icd_fail_nomem(err);
    if (s->bad) {
        icd_avro_writer_drop_datum(s->w);
        return icd_fail(err, ICD_EINVALID, s->file, -1, "row %lld: cannot write it to Avro: %s",
                        (long long)s->pos, s->msg);
    }
    s->rows++;
    return icd_avro_writer_end_datum(s->w, err);
}

int icd_avro_ice_sink_new(icd_avro_writer *w, const ice_field *fields, size_t nfields,
                          icd_avro_ice_sink **out, icd_error *err)
{
    *out = NULL;
    icd_avro_ice_sink *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    s->w = w;
    s->root.kind = ICE_T_STRUCT;
    s->root.fields = (ice_field *)fields;
    s->root.nfields = nfields;
    s->sink = (ice_row_sink){.ctx = s,
                             .begin_row = s_begin_row,
                             .field = s_field,
                             .null_value = s_null,
                             .boolean = s_bool,
                             .i64 = s_i64,
                             .f32 = s_f32,
                             .f64 = s_f64,
                             .decimal_i64 = s_decimal_i64,
                             .decimal_be = s_decimal_be,
                             .date = s_date,
                             .time = s_time,
                             .timestamp = s_timestamp,
                             .string = s_string,
                             .uuid = s_uuid,
                             .binary = s_binary,
                             .struct_begin = s_struct_begin,
                             .struct_end = s_struct_end,
                             .list_begin = s_list_begin,
                             .list_end = s_list_end,
                             .map_begin = s_map_begin,
                             .map_end = s_map_end,
                             .raw_json = s_raw_json,
                             .end_row = s_end_row};
    *out = s;
    return 0;
}

const ice_row_sink *icd_avro_ice_sink_get(icd_avro_ice_sink *s)
{
    return &s->sink;
}
int64_t icd_avro_ice_sink_rows(const icd_avro_ice_sink *s)
{
    return s->rows;
}
void icd_avro_ice_sink_free(icd_avro_ice_sink *s)
{
    if (!s) return;
    for (int i = 0; i < AVRO_ICE_MAX_DEPTH; i++)
        icd_buf_free(&s->st[i].buf);
    free(s);
}
