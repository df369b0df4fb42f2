/*
 * The Druid row sink (see druid_sink.h): adapter between the merge-on-read reader's
 * push interface (ice_row_sink) and the Druid input-row writer (row.h). Top-level values
 * pass straight through; nested columns arrive as scan-convention JSON and are replayed
 * value by value with their Iceberg type, so the Druid conversion rules live in one
 * place (row.c) for both.
 */
#include "druid/rows/druid_sink.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/literal.h"

#define MAX_REPLAY_DEPTH 200

dr_row_dialect dr_dialect_of_format(ice_file_format format)
{
    switch (format) {
    case ICE_FORMAT_PARQUET:
        return DR_ROW_PARQUET;
    case ICE_FORMAT_ORC:
        return DR_ROW_ORC;
    case ICE_FORMAT_AVRO:
        return DR_ROW_AVRO;
    default:
        return DR_ROW_GENERIC;
    }
}

static void on_begin_file(void *c, const char *path, ice_file_format format)
{
    dr_sink *s = c;
    dr_row_set_dialect(s->w, dr_dialect_of_format(format));
    (void)path; /* on_begin_row names the file of each row */
}

static void on_begin_row(void *c, const char *file, int64_t pos)
{
    dr_sink *s = c;
    if (file && (!s->cur_file || strcmp(s->cur_file, file))) {
        icd_error tmp;
        char *copy = strdup(file);
        if (copy && dr_row_set_source(s->w, file, &tmp) == 0) {
            free(s->cur_file);
            s->cur_file = copy;
        } else {
            free(copy);
        }
    }
    s->next_field = 0;
    s->cur_type = NULL;
    s->depth = 0;
    s->raw_fail = 0;
    dr_row_begin(s->w, pos);
}

/* The Iceberg type of a top-level column, by position (columns arrive in projection
 * order) with a by-name fallback. */
static const ice_type *column_type(dr_sink *s, const char *name, size_t n)
{
    size_t count = ice_scan_reader_field_count(s->reader);
    if (s->next_field < count) {
        const ice_field *f = ice_scan_reader_field(s->reader, s->next_field);
        if (strlen(f->name) == n && !memcmp(f->name, name, n)) {
            s->next_field++;
            return f->type;
        }
    }
    for (size_t i = 0; i < count; i++) {
        const ice_field *f = ice_scan_reader_field(s->reader, i);
        if (strlen(f->name) == n && !memcmp(f->name, name, n)) return f->type;
    }
    return NULL;
}

/* A column the reader of the current file's format does not discover (schemaless). */
static bool dropped_for_parquet(const dr_sink *s, const char *name, size_t n)
{
    const char *const *drop = NULL;
    size_t nd = 0;
    switch (dr_row_current_dialect(s->w)) {
    case DR_ROW_PARQUET:
        drop = s->parquet_drop, nd = s->n_parquet_drop;
        break;
    case DR_ROW_ORC:
        drop = s->orc_drop, nd = s->n_orc_drop;
        break;
    case DR_ROW_AVRO:
        drop = s->avro_drop, nd = s->n_avro_drop;
        break;
    default:
        break;
    }
    for (size_t i = 0; i < nd; i++)
        if (strlen(drop[i]) == n && !memcmp(drop[i], name, n)) return true;
    return false;
}

static void on_field(void *c, const char *name, size_t n)
{
    dr_sink *s = c;
    if (s->depth == 0) {
        s->cur_type = column_type(s, name, n);
        if (dropped_for_parquet(s, name, n)) {
            dr_row_field_discard(s->w, name, n);
            return;
        }
    }
    dr_row_field(s->w, name, n);
}

static void on_null(void *c)
{
    dr_row_null(((dr_sink *)c)->w);
}
static void on_bool(void *c, bool v)
{
    dr_row_bool(((dr_sink *)c)->w, v);
}
static void on_i64(void *c, int64_t v)
{
    dr_row_long(((dr_sink *)c)->w, v);
}
static void on_f32(void *c, float v)
{
    dr_row_float(((dr_sink *)c)->w, v);
}
static void on_f64(void *c, double v)
{
    dr_row_double(((dr_sink *)c)->w, v);
}
static void on_dec64(void *c, int64_t v, int scale)
{
    dr_row_decimal_i64(((dr_sink *)c)->w, v, scale);
}
static void on_decbe(void *c, const uint8_t *p, size_t n, int scale)
{
    dr_row_decimal(((dr_sink *)c)->w, p, n, scale);
}
static void on_date(void *c, int32_t d)
{
    dr_row_date(((dr_sink *)c)->w, d);
}
static void on_time(void *c, int64_t us)
{
    dr_row_time(((dr_sink *)c)->w, us);
}
static void on_ts(void *c, int64_t v, int digits, bool utc)
{
    dr_row_timestamp(((dr_sink *)c)->w, v, digits, utc);
}
static void on_ts96(void *c, int64_t v, int digits, bool utc, int32_t julian, int64_t nanos)
{
    dr_row_timestamp_int96(((dr_sink *)c)->w, v, digits, utc, julian, nanos);
}
static void on_str(void *c, const char *p, size_t n)
{
    dr_row_string(((dr_sink *)c)->w, p, n);
}
static void on_uuid(void *c, const uint8_t v[16])
{
    dr_row_uuid(((dr_sink *)c)->w, v);
}
static void on_bin(void *c, const uint8_t *p, size_t n)
{
    dr_row_binary(((dr_sink *)c)->w, p, n);
}
static void on_struct_begin(void *c)
{
    dr_sink *s = c;
    s->depth++;
    dr_row_struct_begin(s->w);
}
static void on_struct_end(void *c)
{
    dr_sink *s = c;
    s->depth--;
    dr_row_struct_end(s->w);
}
static void on_list_begin(void *c)
{
    dr_sink *s = c;
    s->depth++;
    dr_row_list_begin(s->w);
}
static void on_list_end(void *c)
{
    dr_sink *s = c;
    s->depth--;
    dr_row_list_end(s->w);
}
static void on_map_begin(void *c)
{
    dr_sink *s = c;
    s->depth++;
    dr_row_map_begin(s->w);
}
static void on_map_end(void *c)
{
    dr_sink *s = c;
    s->depth--;
    dr_row_map_end(s->w);
}

/* ---- nested values: scan JSON -> typed dr_row_* calls --------------------------------- */

static void replay(dr_sink *s, const json_t *v, const ice_type *t, int depth);

static void replay_fail(dr_sink *s, const char *what, const ice_type *t)
{
    if (!s->raw_fail)
        s->raw_fail = icd_fail(&s->raw_err, ICD_EINTERNAL, NULL, -1,
                               "a nested %s value could not be converted (%s)",
                               t ? ice_type_kind_name(t->kind) : "untyped", what);
    dr_row_null(s->w);
}

/* A value without a usable Iceberg type: its JSON shape decides. */
static void replay_untyped(dr_sink *s, const json_t *v, int depth)
{
    dr_row_writer *w = s->w;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        dr_row_struct_begin(w);
        json_object_foreach((json_t *)v, k, x)
        {
            dr_row_field(w, k, strlen(k));
            replay(s, x, NULL, depth + 1);
        }
        dr_row_struct_end(w);
    } else if (json_is_array(v)) {
        dr_row_list_begin(w);
        for (size_t i = 0; i < json_array_size(v); i++)
            replay(s, json_array_get(v, i), NULL, depth + 1);
        dr_row_list_end(w);
    } else if (json_is_string(v)) {
        dr_row_string(w, json_string_value(v), json_string_length(v));
    } else if (json_is_integer(v)) {
        dr_row_long(w, json_integer_value(v));
    } else if (json_is_real(v)) {
        dr_row_double(w, json_real_value(v));
    } else if (json_is_boolean(v)) {
        dr_row_bool(w, json_is_true(v));
    } else {
        dr_row_null(w);
    }
}

static bool special_float(const json_t *v, double *out)
{
    const char *s = json_string_value(v);
    if (!s) return false;
    if (!strcmp(s, "NaN"))
        *out = NAN;
    else if (!strcmp(s, "Infinity"))
        *out = INFINITY;
    else if (!strcmp(s, "-Infinity"))
        *out = -INFINITY;
    else
        return false;
    return true;
}

static void replay_struct(dr_sink *s, const json_t *v, const ice_type *t, int depth)
{
    if (!json_is_object(v)) {
        replay_fail(s, "not an object", t);
        return;
    }
    dr_row_writer *w = s->w;
    dr_row_struct_begin(w);
    /* fields by name; a file whose names differ (a renamed field) by position */
    bool positional = json_object_size(v) == t->nfields;
    void *it = json_object_iter((json_t *)v);
    for (size_t i = 0; i < t->nfields; i++) {
        const ice_field *f = &t->fields[i];
        const json_t *x = json_object_get(v, f->name);
        if (!x && positional && it) x = json_object_iter_value(it);
        if (it) it = json_object_iter_next((json_t *)v, it);
        dr_row_field(w, f->name, strlen(f->name));
        replay(s, x, f->type, depth + 1);
    }
    dr_row_struct_end(w);
}

static void replay_map(dr_sink *s, const json_t *v, const ice_type *t, int depth)
{
    dr_row_writer *w = s->w;
    if (json_is_object(v)) { /* string keys rendered as an object */
        const char *k;
        json_t *x;
        dr_row_map_begin(w);
        json_object_foreach((json_t *)v, k, x)
        {
            dr_row_string(w, k, strlen(k));
            replay(s, x, t->value->type, depth + 1);
        }
        dr_row_map_end(w);
        return;
    }
    if (!json_is_array(v)) {
        replay_fail(s, "not an array of entries", t);
        return;
    }
    dr_row_map_begin(w);
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        const json_t *k = json_object_get(e, "key");
        if (!k) {
            replay_fail(s, "a map entry without a key", t);
            dr_row_null(w);
            continue;
        }
        replay(s, k, t->key->type, depth + 1);
        replay(s, json_object_get(e, "value"), t->value->type, depth + 1);
    }
    dr_row_map_end(w);
}

static void replay_text(dr_sink *s, const char *p, size_t n, const ice_type *t)
{
    dr_row_writer *w = s->w;
    switch (t->kind) {
    case ICE_T_DECIMAL: {
        ice_i128 u;
        uint8_t be[16];
        if (!ice_decimal_parse(p, n, t->precision, t->scale, &u))
            return replay_fail(s, "bad decimal text", t);
        size_t len = ice_decimal_from_i128(u, be);
        dr_row_decimal(w, be, len, t->scale);
        return;
    }
    case ICE_T_DATE: {
        int32_t days;
        if (!ice_parse_date(p, n, &days)) return replay_fail(s, "bad date text", t);
        dr_row_date(w, days);
        return;
    }
    case ICE_T_TIME: {
        int64_t ns;
        if (!ice_parse_time(p, n, &ns)) return replay_fail(s, "bad time text", t);
        dr_row_time(w, ns / 1000);
        return;
    }
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        int64_t ms;
        bool zone;
        if (!ice_parse_timestamp(p, n, 3, &zone, &ms))
            return replay_fail(s, "bad timestamp text", t);
        dr_row_timestamp(w, ms, 3, zone);
        return;
    }
    default: /* string, uuid (canonical text), fixed/binary (base64 either way) */
        dr_row_string(w, p, n);
        return;
    }
}

static void replay(dr_sink *s, const json_t *v, const ice_type *t, int depth)
{
    dr_row_writer *w = s->w;
    if (!v || json_is_null(v)) {
        dr_row_null(w);
        return;
    }
    if (depth > MAX_REPLAY_DEPTH) return replay_fail(s, "nested too deeply", t);
    if (!t) return replay_untyped(s, v, depth);
    double d;
    switch (t->kind) {
    case ICE_T_STRUCT:
        return replay_struct(s, v, t, depth);
    case ICE_T_LIST:
        if (!json_is_array(v)) return replay_fail(s, "not an array", t);
        dr_row_list_begin(w);
        for (size_t i = 0; i < json_array_size(v); i++)
            replay(s, json_array_get(v, i), t->element->type, depth + 1);
        dr_row_list_end(w);
        return;
    case ICE_T_MAP:
        return replay_map(s, v, t, depth);
    case ICE_T_BOOLEAN:
        if (!json_is_boolean(v)) return replay_fail(s, "not a boolean", t);
        dr_row_bool(w, json_is_true(v));
        return;
    case ICE_T_INT:
    case ICE_T_LONG:
        if (!json_is_integer(v)) return replay_fail(s, "not an integer", t);
        dr_row_long(w, json_integer_value(v));
        return;
    case ICE_T_FLOAT:
    case ICE_T_DOUBLE:
        if (json_is_number(v))
            d = json_number_value(v);
        else if (!special_float(v, &d))
            return replay_fail(s, "not a number", t);
        if (t->kind == ICE_T_FLOAT)
            dr_row_float(w, (float)d);
        else
            dr_row_double(w, d);
        return;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        if (json_is_integer(v)) { /* a raw count in the type's unit */
            bool ns = t->kind == ICE_T_TIMESTAMP_NS || t->kind == ICE_T_TIMESTAMPTZ_NS;
            dr_row_timestamp(w, json_integer_value(v), ns ? 9 : 6, false);
            return;
        }
        break;
    case ICE_T_DECIMAL:
        if (json_is_number(v)) {
            dr_row_double(w, json_number_value(v));
            return;
        }
        break;
    default:
        break;
    }
    if (!json_is_string(v)) return replay_untyped(s, v, depth);
    replay_text(s, json_string_value(v), json_string_length(v), t);
}

static void on_raw_json(void *c, const char *json, size_t n)
{
    dr_sink *s = c;
    json_error_t jerr;
    json_t *v = json_loadb(json, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!v) {
        replay_fail(s, "invalid JSON", s->depth == 0 ? s->cur_type : NULL);
        return;
    }
    replay(s, v, s->depth == 0 ? s->cur_type : NULL, 0);
    json_decref(v);
}

static int on_end_row(void *c, icd_error *err)
{
    dr_sink *s = c;
    if (s->cancel && atomic_load(s->cancel))
        return icd_fail(err, ICD_ECANCELED, NULL, -1, "the read was canceled");
    size_t mark = s->out->len;
    int rc = dr_row_end(s->w, s->out, err);
    if (!rc && s->raw_fail) {
        s->out->len = mark;
        *err = s->raw_err;
        icd_error_set_file(err, s->cur_file);
        return s->raw_fail;
    }
    if (rc == ICD_EINVALID) { /* an unparseable row: Druid's parse exception */
        s->out->len = mark;
        if (!s->on_parse_exception) return rc;
        icd_error row_err = *err;
        ICD_TRY(s->on_parse_exception(s->ctx, &row_err, err));
        s->parse_exceptions++;
        return 1; /* skip the row */
    }
    if (rc) return rc;
    icd_buf_putc(s->out, '\n');
    if (!icd_buf_ok(s->out)) return icd_fail_nomem(err);
    s->rows++;
    return s->on_row ? s->on_row(s->ctx, s->out, err) : 0;
}

int dr_sink_init(dr_sink *s, const dr_timestamp_spec *ts, const ice_scan_reader *reader,
                 icd_buf *out, icd_error *err)
{
    memset(s, 0, sizeof *s);
    s->out = out;
    s->reader = reader;
    return dr_row_writer_new(&s->w, ts, err);
}

void dr_sink_clear(dr_sink *s)
{
    dr_row_writer_free(s->w);
    s->w = NULL;
    free(s->cur_file);
    s->cur_file = NULL;
}

void dr_sink_row_sink(dr_sink *s, ice_row_sink *rs)
{
    *rs = (ice_row_sink){.ctx = s,
                         .begin_file = on_begin_file,
                         .begin_row = on_begin_row,
                         .field = on_field,
                         .null_value = on_null,
                         .boolean = on_bool,
                         .i64 = on_i64,
                         .f32 = on_f32,
                         .f64 = on_f64,
                         .decimal_i64 = on_dec64,
                         .decimal_be = on_decbe,
                         .date = on_date,
                         .time = on_time,
                         .timestamp = on_ts,
                         .timestamp_int96 = on_ts96,
                         .string = on_str,
                         .uuid = on_uuid,
                         .binary = on_bin,
                         .struct_begin = on_struct_begin,
                         .struct_end = on_struct_end,
                         .list_begin = on_list_begin,
                         .list_end = on_list_end,
                         .map_begin = on_map_begin,
                         .map_end = on_map_end,
                         .raw_json = on_raw_json,
                         .end_row = on_end_row};
}
