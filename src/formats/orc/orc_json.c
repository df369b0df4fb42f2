/*
 * ORC values to JSON text: one function per orc_vec entry, recursive for struct, list and
 * map, every scalar formatted by src/base/jsonw.c so that ORC, Parquet and Avro rows print
 * alike (design.md §3).
 */
#include "formats/orc/orc_json.h"

#include "base/datetime.h"
#include "base/jsonw.h"

static void json_timestamp(icd_buf *b, int64_t secs, int32_t nanos, int digits, bool utc)
{
    int64_t days = icd_floordiv(secs, 86400);
    int64_t sod = icd_floormod(secs, 86400);
    icd_buf_putc(b, '"');
    icd_fmt_timestamp(b, days, sod * 1000000000 + nanos, digits, utc);
    icd_buf_putc(b, '"');
}

void orc_json_value(icd_buf *b, const orc_vec *v, size_t i, int ts_digits)
{
    if (v->nulls && v->nulls[i]) {
        icd_buf_append(b, "null", 4);
        return;
    }
    const orc_type *t = v->type;
    switch (t->kind) {
    case ORC_BOOLEAN:
        icd_buf_puts(b, v->i64[i] ? "true" : "false");
        break;
    case ORC_BYTE:
    case ORC_SHORT:
    case ORC_INT:
    case ORC_LONG:
        icd_json_i64(b, v->i64[i]);
        break;
    case ORC_FLOAT:
        icd_json_float(b, (float)v->f64[i]);
        break;
    case ORC_DOUBLE:
        icd_json_double(b, v->f64[i]);
        break;
    case ORC_DECIMAL:
        if (v->dec16)
            icd_json_decimal_be(b, v->dec16 + i * 16, 16, (int)t->scale);
        else
            icd_json_decimal_i64(b, v->i64[i], (int)t->scale);
        break;
    case ORC_DATE:
        icd_json_date(b, v->i64[i]);
        break;
    case ORC_TIMESTAMP:
    case ORC_TIMESTAMP_INSTANT:
        json_timestamp(b, v->i64[i], v->nanos[i], ts_digits, t->kind == ORC_TIMESTAMP_INSTANT);
        break;
    case ORC_STRING:
    case ORC_VARCHAR:
    case ORC_CHAR:
        icd_json_str(b, v->str[i].ptr, v->str[i].len);
        break;
    case ORC_BINARY:
        icd_json_base64(b, (const uint8_t *)v->str[i].ptr, v->str[i].len);
        break;
    case ORC_STRUCT:
        icd_buf_putc(b, '{');
        for (uint32_t k = 0; k < t->nchildren; k++) {
            if (k) icd_buf_putc(b, ',');
            icd_json_cstr(b, t->children[k]->name);
            icd_buf_putc(b, ':');
            orc_json_value(b, &v->children[k], i, ts_digits);
        }
        icd_buf_putc(b, '}');
        break;
    case ORC_LIST:
        icd_buf_putc(b, '[');
        for (uint64_t k = v->offsets[i]; k < v->offsets[i + 1]; k++) {
            if (k > v->offsets[i]) icd_buf_putc(b, ',');
            orc_json_value(b, &v->children[0], (size_t)k, ts_digits);
        }
        icd_buf_putc(b, ']');
        break;
    case ORC_MAP:
        icd_buf_putc(b, '[');
        for (uint64_t k = v->offsets[i]; k < v->offsets[i + 1]; k++) {
            if (k > v->offsets[i]) icd_buf_putc(b, ',');
            icd_buf_puts(b, "{\"key\":");
            orc_json_value(b, &v->children[0], (size_t)k, ts_digits);
            icd_buf_puts(b, ",\"value\":");
            orc_json_value(b, &v->children[1], (size_t)k, ts_digits);
            icd_buf_putc(b, '}');
        }
        icd_buf_putc(b, ']');
        break;
    default:
        icd_buf_append(b, "null", 4);
        break; /* unions never reach a batch */
    }
}

void orc_json_row(icd_buf *b, const orc_batch *batch, size_t row, int ts_digits)
{
    icd_buf_putc(b, '{');
    for (size_t c = 0; c < batch->ncols; c++) {
        if (c) icd_buf_putc(b, ',');
        icd_json_cstr(b, batch->cols[c].type->name);
        icd_buf_putc(b, ':');
        orc_json_value(b, &batch->cols[c], row, ts_digits);
    }
    icd_buf_putc(b, '}');
}
