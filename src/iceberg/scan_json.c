/*
 * The `scan` row writer (see scan_json.h): Iceberg values -> JSON text per design.md §3,
 * through the one set of value formatters in base/jsonw.h. Maps are arrays of
 * {"key":…, "value":…} objects.
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/jsonw.h"
#include "iceberg/tvalue.h"
#include "iceberg/scan_json.h"

static void pre_nested(ice_scan_json *j)
{
    int d = j->depth;
    switch (j->kind[d]) {
    case 'a':
        if (!j->first[d]) icd_buf_putc(j->out, ',');
        j->first[d] = false;
        break;
    case 'm':
        if (j->state[d] == 0) {
            if (!j->first[d]) icd_buf_putc(j->out, ',');
            j->first[d] = false;
            icd_buf_append(j->out, "{\"key\":", 7);
            j->state[d] = 1;
        } else {
            icd_buf_append(j->out, ",\"value\":", 9);
        }
        break;
    default:
        break;
    }
}

/* Separators before and after a value: nothing inside an object (every top-level value),
 * so that case costs one test. */
static inline void pre(ice_scan_json *j)
{
    if (j->kind[j->depth] != 'o') pre_nested(j);
}

static inline void post(ice_scan_json *j)
{
    int d = j->depth;
    if (j->kind[d] != 'm') return;
    if (j->state[d] == 1) {
        j->state[d] = 2;
    } else {
        icd_buf_putc(j->out, '}');
        j->state[d] = 0;
    }
}

static void push(ice_scan_json *j, char kind, char open)
{
    pre(j);
    icd_buf_putc(j->out, open);
    if (j->depth + 1 < ICE_SCAN_JSON_MAX_DEPTH) j->depth++;
    j->kind[j->depth] = kind;
    j->first[j->depth] = true;
    j->state[j->depth] = 0;
}

static void pop(ice_scan_json *j, char close)
{
    icd_buf_putc(j->out, close);
    if (j->depth > 0) j->depth--;
    post(j);
}

static void begin_row(void *c, const char *file, int64_t pos)
{
    (void)file;
    (void)pos;
    ice_scan_json *j = c;
    j->depth = 0;
    j->next_name = 0;
    j->kind[0] = 'o';
    j->first[0] = true;
    icd_buf_putc(j->out, '{');
}

void ice_scan_json_begin_value(ice_scan_json *j)
{
    j->depth = 0;
    j->kind[0] = 'v'; /* neither object, array nor map: no separators */
    j->first[0] = true;
}

/* The pre-encoded `,"name":` of a top-level field, added to the table when new (NULL when
 * memory ran out). Fields come in the same order in every row, so the slot after the last
 * hit is tried first; a miss (a name out of order) searches the whole table. */
static const ice_scan_json_name *top_name(ice_scan_json *j, const char *name, size_t n)
{
    size_t k = j->next_name < j->nnames ? j->next_name : 0;
    for (size_t tries = 0; tries < j->nnames; tries++) {
        const ice_scan_json_name *e = &j->names[k];
        if (e->name == name && e->n == n) {
            j->next_name = k + 1;
            return e;
        }
        if (++k == j->nnames) k = 0;
    }
    if (j->names_oom) return NULL;
    if (ICD_ARRAY_RESERVE(j->names, j->cap, j->nnames + 1, 64)) {
        j->names_oom = true;
        return NULL;
    }
    icd_buf t = ICD_BUF_INIT;
    icd_buf_putc(&t, ',');
    icd_json_str(&t, name, n);
    icd_buf_putc(&t, ':');
    if (!icd_buf_ok(&t)) {
        icd_buf_free(&t);
        j->names_oom = true;
        return NULL;
    }
    ice_scan_json_name *e = &j->names[j->nnames];
    memset(e, 0, sizeof *e);
    e->name = name;
    e->n = n;
    e->len = t.len;
    if (t.len <= ICE_SCAN_JSON_NAME_MAX) {
        memcpy(e->text, t.data, t.len);
        icd_buf_free(&t);
    } else {
        e->long_text = icd_buf_detach(&t);
        if (!e->long_text) {
            j->names_oom = true;
            return NULL;
        }
    }
    j->nnames++;
    j->next_name = j->nnames;
    return e;
}

static inline const char *name_text(const ice_scan_json_name *e)
{
    return e->long_text ? e->long_text : e->text;
}

/* field() when the fast path does not apply: nested fields, a name not seen yet (or out
 * of order), a long name, or a buffer that needs to grow. */
static __attribute__((noinline)) void field_slow(ice_scan_json *j, const char *name, size_t n)
{
    int d = j->depth;
    bool first = j->first[d];
    j->first[d] = false;
    const ice_scan_json_name *e = d == 0 ? top_name(j, name, n) : NULL;
    if (e) {
        icd_buf_append(j->out, name_text(e) + first, e->len - first);
        return;
    }
    if (!first) icd_buf_putc(j->out, ',');
    icd_json_str(j->out, name, n);
    icd_buf_putc(j->out, ':');
}

static void field(void *c, const char *name, size_t n)
{
    ice_scan_json *j = c;
    icd_buf *b = j->out;
    size_t k = j->next_name;
    /* the next top-level name in row order, short, with room in the buffer: copy its whole
     * fixed-size slot (a few vector moves, no call) and count only its text; the comma
     * is skipped for the first field */
    if (j->depth == 0 && k < j->nnames && j->names[k].name == name && j->names[k].n == n &&
        !j->names[k].long_text && b->cap - b->len > ICE_SCAN_JSON_NAME_MAX) {
        const ice_scan_json_name *e = &j->names[k];
        bool first = j->first[0];
        j->first[0] = false;
        j->next_name = k + 1;
        memcpy(b->data + b->len, e->text + first, ICE_SCAN_JSON_NAME_MAX - 1);
        b->len += e->len - first;
        b->data[b->len] = '\0';
        return;
    }
    field_slow(j, name, n);
}

#define SCALAR(name, args, body)                                                                   \
    static void name args                                                                          \
    {                                                                                              \
        ice_scan_json *j = c;                                                                      \
        pre(j);                                                                                    \
        body;                                                                                      \
        post(j);                                                                                   \
    }

SCALAR(v_null, (void *c), icd_buf_append(j->out, "null", 4))
SCALAR(v_bool, (void *c, bool v),
       v ? icd_buf_append(j->out, "true", 4) : icd_buf_append(j->out, "false", 5))
SCALAR(v_i64, (void *c, int64_t v), icd_json_i64(j->out, v))
SCALAR(v_f32, (void *c, float v), icd_json_float(j->out, v))
SCALAR(v_f64, (void *c, double v), icd_json_double(j->out, v))
SCALAR(v_dec64, (void *c, int64_t v, int scale), icd_json_decimal_i64(j->out, v, scale))
SCALAR(v_decbe, (void *c, const uint8_t *p, size_t n, int scale),
       icd_json_decimal_be(j->out, p, n, scale))
SCALAR(v_date, (void *c, int32_t d), icd_json_date(j->out, d))
SCALAR(v_time, (void *c, int64_t us), icd_json_time(j->out, us, 6))
SCALAR(v_ts, (void *c, int64_t v, int digits, bool utc), icd_json_timestamp(j->out, v, digits, utc))
SCALAR(v_str, (void *c, const char *s, size_t n), icd_json_str(j->out, s, n))
SCALAR(v_uuid, (void *c, const uint8_t v[16]), icd_json_uuid(j->out, v))
SCALAR(v_bin, (void *c, const uint8_t *p, size_t n), icd_json_base64(j->out, p, n))
SCALAR(v_raw, (void *c, const char *s, size_t n), icd_buf_append(j->out, s, n))

static void struct_begin(void *c)
{
    push(c, 'o', '{');
}
static void struct_end(void *c)
{
    pop(c, '}');
}
static void list_begin(void *c)
{
    push(c, 'a', '[');
}
static void list_end(void *c)
{
    pop(c, ']');
}
static void map_begin(void *c)
{
    push(c, 'm', '[');
}
static void map_end(void *c)
{
    pop(c, ']');
}

static int end_row(void *c, icd_error *err)
{
    ice_scan_json *j = c;
    icd_buf_append(j->out, "}\n", 2);
    return j->on_row ? j->on_row(j->on_row_ctx, j->out, err) : 0;
}

/* --- whole batches (ice_row_sink.columns) --- */

/* How a column's values are written: constants and the common kinds straight from the
 * typed value, the others through the callbacks. */
enum { COL_GENERIC, COL_CONST, COL_INT, COL_F64, COL_STR, COL_TS };

static int plan_column(const ice_sink_column *c)
{
    if (!c->values) return COL_CONST;
    switch (c->field->type->kind) {
    case ICE_T_INT:
    case ICE_T_LONG:
        return COL_INT;
    case ICE_T_DOUBLE:
        return COL_F64;
    case ICE_T_STRING:
        return COL_STR;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        return COL_TS;
    default:
        return COL_GENERIC;
    }
}

/* The rows of a batch, column by column into each row: the same bytes as the row-by-row
 * callbacks give (the same name texts and value formatters), without a call per value
 * for the common column kinds. */
static int columns(void *ctx, const ice_sink_column *cols, size_t ncols, size_t nrows,
                   const uint32_t *rows, const int64_t *positions, icd_error *err)
{
    (void)positions;
    ice_scan_json *j = ctx;
    if (ICD_ARRAY_RESERVE(j->plan, j->plan_cap, ncols, 16)) return icd_fail_nomem(err);
    /* each column's name text, from the writer's table (added to it first: pointers into
     * the table are taken once it stops growing) */
    bool names = true;
    for (size_t k = 0; k < ncols; k++) {
        const char *name = cols[k].field->name;
        size_t n = strlen(name);
        ice_type_kind tk = cols[k].field->type->kind;
        j->plan[k] = (struct ice_scan_json_col){.kind = plan_column(&cols[k]),
                                                .ts_digits = ice_ts_digits(tk),
                                                .ts_utc = ice_is_utc_type(tk),
                                                .name_len = n};
        names = names && top_name(j, name, n);
    }
    for (size_t k = 0; k < ncols && names; k++) {
        j->plan[k].name = top_name(j, cols[k].field->name, j->plan[k].name_len);
        const ice_scan_json_name *e = j->plan[k].name;
        j->plan[k].copy = !e || e->long_text ? 0
                          : e->len <= 16     ? 16
                          : e->len <= 32     ? 32
                                             : ICE_SCAN_JSON_NAME_MAX - 1;
    }
    ice_row_sink self;
    ice_scan_json_sink(j, &self);
    icd_buf *out = j->out;
    for (size_t i = 0; i < nrows; i++) {
        begin_row(j, NULL, 0);
        for (size_t k = 0; k < ncols; k++) {
            const ice_sink_column *c = &cols[k];
            const struct ice_scan_json_col *pc = &j->plan[k];
            const ice_scan_json_name *e = pc->name;
            if (pc->copy && out->cap - out->len > ICE_SCAN_JSON_NAME_MAX) {
                /* `,"name":` (without the comma for the first column): the slot is copied
                 * by a fixed-size move that covers the text, and only the text counted */
                char *d = out->data + out->len;
                const char *t = e->text + (k == 0);
                if (pc->copy == 16) /* (most names: one move) */
                    memcpy(d, t, 16);
                else if (pc->copy == 32)
                    memcpy(d, t, 32);
                else
                    memcpy(d, t, ICE_SCAN_JSON_NAME_MAX - 1);
                out->len += e->len - (k == 0);
                out->data[out->len] = '\0';
                j->first[0] = false;
            } else if (e) {
                icd_buf_append(out, name_text(e) + (k == 0), e->len - (k == 0));
                j->first[0] = false;
            } else {
                field(j, c->field->name, pc->name_len);
            }
            int kind = pc->kind;
            if (kind == COL_CONST) {
                ice_emit_tvalue(&self, c->constant, c->field->type);
                continue;
            }
            const ice_tvalue *v = &c->values[rows[i]];
            if (v->cls == ICE_TV_NULL) {
                icd_buf_append(out, "null", 4);
                continue;
            }
            switch (kind) {
            case COL_INT:
                icd_json_i64(out, v->i);
                break;
            case COL_F64:
                icd_json_double(out, v->d);
                break;
            case COL_STR:
                icd_json_str(out, (const char *)v->p, v->n);
                break;
            case COL_TS:
                icd_json_timestamp(out, v->i, pc->ts_digits, pc->ts_utc);
                break;
            default:
                ice_emit_tvalue(&self, v, c->field->type);
                break;
            }
        }
        ICD_TRY(end_row(j, err));
    }
    return 0;
}

void ice_scan_json_sink(ice_scan_json *j, ice_row_sink *s)
{
    *s = (ice_row_sink){.ctx = j,
                        .begin_row = begin_row,
                        .field = field,
                        .null_value = v_null,
                        .boolean = v_bool,
                        .i64 = v_i64,
                        .f32 = v_f32,
                        .f64 = v_f64,
                        .decimal_i64 = v_dec64,
                        .decimal_be = v_decbe,
                        .date = v_date,
                        .time = v_time,
                        .timestamp = v_ts,
                        .string = v_str,
                        .uuid = v_uuid,
                        .binary = v_bin,
                        .struct_begin = struct_begin,
                        .struct_end = struct_end,
                        .list_begin = list_begin,
                        .list_end = list_end,
                        .map_begin = map_begin,
                        .map_end = map_end,
                        .raw_json = v_raw,
                        .end_row = end_row,
                        .columns = columns};
}

void ice_scan_json_free(ice_scan_json *j)
{
    for (size_t i = 0; i < j->nnames; i++)
        free(j->names[i].long_text);
    free(j->names);
    j->names = NULL;
    free(j->plan);
    j->plan = NULL;
    j->plan_cap = 0;
    j->nnames = j->cap = j->next_name = 0;
    j->names_oom = false;
}
