/*
 * Avro value tree -> JSON (see json.h). Records become objects in schema order, maps
 * arrays of {"key":…, "value":…}, unions the value of their branch; logical types pick
 * the jsonw formatter (decimal strings, dates, times, timestamps with "+00:00" when UTC
 * adjusted, uuids). Bytes and fixed without a logical type are base64.
 */
#include "base/jsonw.h"
#include "formats/avro/json.h"

/* Bytes a two's complement integer of `precision` decimal digits can need (log2(10) <
 * 3.33, plus the sign bit). Longer values (after dropping sign-extension padding, which
 * writers of wide fixed types add) are corrupt; refusing them also keeps the quadratic
 * big-number formatting bounded. */
static size_t decimal_max_bytes(int precision)
{
    return (size_t)precision * 333 / 800 + 2;
}

static void strip_sign_padding(const uint8_t **p, size_t *n)
{
    while (*n > 1 &&
           (((*p)[0] == 0x00 && !((*p)[1] & 0x80)) || ((*p)[0] == 0xff && ((*p)[1] & 0x80)))) {
        (*p)++;
        (*n)--;
    }
}

static int write_bytes(icd_buf *b, const icd_avro_value *v, icd_error *err)
{
    const icd_avro_schema *s = v->schema;
    const icd_avro_bytes *x = &v->u.bytes;
    switch (s->logical) {
    case AVRO_LT_DECIMAL: {
        const uint8_t *p = x->ptr;
        size_t n = x->len;
        strip_sign_padding(&p, &n);
        if (n > decimal_max_bytes(s->precision))
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "decimal(%d,%d) value of %zu bytes is longer than its precision "
                            "allows",
                            s->precision, s->scale, x->len);
        icd_json_decimal_be(b, p, n, s->scale);
        return 0;
    }
    case AVRO_LT_UUID:
        if (s->type == AVRO_FIXED && x->len == 16) {
            icd_json_uuid(b, x->ptr);
            return 0;
        }
        break;
    default:
        break;
    }
    if (s->type == AVRO_STRING)
        icd_json_str(b, (const char *)x->ptr, x->len);
    else
        icd_json_base64(b, x->ptr, x->len);
    return 0;
}

static void write_long(icd_buf *b, const icd_avro_value *v)
{
    const icd_avro_schema *s = v->schema;
    int64_t x = v->u.i64;
    switch (s->logical) {
    case AVRO_LT_DATE:
        icd_json_date(b, x);
        return;
    case AVRO_LT_TIME_MILLIS:
        icd_json_time(b, x, 3);
        return;
    case AVRO_LT_TIME_MICROS:
        icd_json_time(b, x, 6);
        return;
    case AVRO_LT_TIMESTAMP_MILLIS:
        icd_json_timestamp(b, x, 3, s->utc);
        return;
    case AVRO_LT_TIMESTAMP_MICROS:
        icd_json_timestamp(b, x, 6, s->utc);
        return;
    case AVRO_LT_TIMESTAMP_NANOS:
        icd_json_timestamp(b, x, 9, s->utc);
        return;
    default:
        icd_json_i64(b, x);
        return;
    }
}

int icd_avro_value_json(icd_buf *b, const icd_avro_value *v, icd_error *err)
{
    const icd_avro_schema *s = v->schema;
    switch (v->type) {
    case AVRO_NULL:
        icd_buf_append(b, "null", 4);
        return 0;
    case AVRO_BOOLEAN:
        if (v->u.boolean)
            icd_buf_append(b, "true", 4);
        else
            icd_buf_append(b, "false", 5);
        return 0;
    case AVRO_INT:
    case AVRO_LONG:
        write_long(b, v);
        return 0;
    case AVRO_FLOAT:
        icd_json_float(b, v->u.f32);
        return 0;
    case AVRO_DOUBLE:
        icd_json_double(b, v->u.f64);
        return 0;
    case AVRO_BYTES:
    case AVRO_STRING:
    case AVRO_FIXED:
        return write_bytes(b, v, err);
    case AVRO_ENUM:
        icd_json_cstr(b, s->symbols[v->u.i64]);
        return 0;
    case AVRO_RECORD:
        icd_buf_putc(b, '{');
        for (size_t i = 0; i < v->u.list.count; i++) {
            if (i) icd_buf_putc(b, ',');
            icd_json_cstr(b, s->fields[i].name);
            icd_buf_putc(b, ':');
            ICD_TRY(icd_avro_value_json(b, &v->u.list.items[i], err));
        }
        icd_buf_putc(b, '}');
        return 0;
    case AVRO_ARRAY:
        icd_buf_putc(b, '[');
        for (size_t i = 0; i < v->u.list.count; i++) {
            if (i) icd_buf_putc(b, ',');
            ICD_TRY(icd_avro_value_json(b, &v->u.list.items[i], err));
        }
        icd_buf_putc(b, ']');
        return 0;
    case AVRO_MAP:
        icd_buf_putc(b, '[');
        for (size_t i = 0; i < v->u.map.count; i++) {
            if (i) icd_buf_putc(b, ',');
            icd_buf_append(b, "{\"key\":", 7);
            icd_json_str(b, (const char *)v->u.map.keys[i].ptr, v->u.map.keys[i].len);
            icd_buf_append(b, ",\"value\":", 9);
            ICD_TRY(icd_avro_value_json(b, &v->u.map.values[i], err));
            icd_buf_putc(b, '}');
        }
        icd_buf_putc(b, ']');
        return 0;
    case AVRO_UNION:
        break; /* never stored: a union value is its branch */
    }
    return icd_fail(err, ICD_EINTERNAL, NULL, -1, "unexpected Avro value type %d", (int)v->type);
}
