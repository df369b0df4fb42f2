/*
 * Druid input-row writer (see row.h): the last step of the v2 read path. The
 * merge-on-read reader walks each surviving row's values and calls this visitor; the
 * writer turns them into one JSON object in Druid's conventions, computes __time from
 * the timestampSpec, and reports unparseable timestamps as parse exceptions that
 * dr_parse_exceptions_add counts against maxParseExceptions.
 *
 * Rows are written into a body buffer first because __time must come first while the
 * timestamp column may come anywhere; dr_row_end assembles {"__time":..., body}.
 */
#include "druid/rows/row.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/javanum.h"
#include "base/jsonw.h"

#define MAX_DEPTH 256

typedef enum fr_kind { FR_OBJECT, FR_ARRAY, FR_MAP } fr_kind;

typedef struct frame {
    fr_kind kind;
    int64_t count;  /* values (object/array) or entries (map) written */
    bool key_next;  /* map: the next value is a key */
    bool named;     /* object: a field name is pending */
    bool is_key;    /* this container is a map key being captured */
    icd_buf *saved; /* output to restore when a key container ends */
} frame;

struct dr_row_writer {
    const dr_timestamp_spec *ts;
    char *file;
    int64_t position;
    icd_buf body, keybuf, discard, scratch, tsbuf;
    icd_buf *out;
    frame stack[MAX_DEPTH];
    int depth; /* index of the top frame; 0 = the row object */
    int fail;  /* sticky: 0, ICD_EINTERNAL or ICD_ENOMEM */
    const char *fail_msg;
    bool in_row;
    /* root-level bookkeeping for the value being written */
    bool ts_next, skip_next; /* the pending column is the timestamp / "__time" */
    bool ts_active, skip_active;
    bool ts_container;
    size_t ts_start;
    dr_tsv_kind ts_kind;
    int64_t ts_long;
    double ts_double;
    dr_row_dialect dialect; /* whose reader's values (the data file's format) */
    bool binary_as_string;  /* inputFormat.binaryAsString */
    bool omit_ts;           /* read the timestamp column for __time, do not write it */
    bool discard_next;      /* dr_row_field_discard: the next top-level value is dropped */
};

int dr_row_writer_new(dr_row_writer **out, const dr_timestamp_spec *ts, icd_error *err)
{
    dr_row_writer *w = calloc(1, sizeof *w);
    if (!w) return icd_fail_nomem(err);
    w->ts = ts;
    w->out = &w->body;
    *out = w;
    return 0;
}

void dr_row_writer_free(dr_row_writer *w)
{
    if (!w) return;
    free(w->file);
    icd_buf_free(&w->body);
    icd_buf_free(&w->keybuf);
    icd_buf_free(&w->discard);
    icd_buf_free(&w->scratch);
    icd_buf_free(&w->tsbuf);
    free(w);
}

int dr_row_set_source(dr_row_writer *w, const char *file, icd_error *err)
{
    char *f = file ? strdup(file) : NULL;
    if (file && !f) return icd_fail_nomem(err);
    free(w->file);
    w->file = f;
    return 0;
}

void dr_row_set_dialect(dr_row_writer *w, dr_row_dialect d)
{
    w->dialect = d;
}

void dr_row_set_binary_as_string(dr_row_writer *w, bool on)
{
    w->binary_as_string = on;
}

void dr_row_set_omit_timestamp_column(dr_row_writer *w, bool on)
{
    w->omit_ts = on;
}

dr_row_dialect dr_row_current_dialect(const dr_row_writer *w)
{
    return w->dialect;
}

static void misuse(dr_row_writer *w, const char *msg)
{
    if (!w->fail) {
        w->fail = ICD_EINTERNAL;
        w->fail_msg = msg;
    }
}

void dr_row_begin(dr_row_writer *w, int64_t position)
{
    w->position = position;
    w->in_row = true;
    w->fail = 0;
    w->fail_msg = NULL;
    icd_buf_clear(&w->body);
    icd_buf_clear(&w->tsbuf);
    icd_buf_clear(&w->discard);
    w->out = &w->body;
    w->depth = 0;
    memset(&w->stack[0], 0, sizeof w->stack[0]);
    w->stack[0].kind = FR_OBJECT;
    w->ts_next = w->skip_next = w->ts_active = w->skip_active = w->ts_container = false;
    w->ts_kind = DR_TSV_NULL;
}

static frame *top(dr_row_writer *w)
{
    return &w->stack[w->depth];
}

/* Writes `,"key":` for a map entry from the key's text. */
static void emit_key(dr_row_writer *w, const char *s, size_t n)
{
    frame *f = top(w);
    if (f->count > 0) icd_buf_putc(w->out, ',');
    icd_json_str(w->out, s, n);
    icd_buf_putc(w->out, ':');
}

void dr_row_field_discard(dr_row_writer *w, const char *name, size_t n)
{
    w->discard_next = true;
    dr_row_field(w, name, n);
}

void dr_row_field(dr_row_writer *w, const char *name, size_t n)
{
    frame *f = top(w);
    if (!w->in_row || f->kind != FR_OBJECT || f->named) {
        misuse(w, "dr_row_field outside an object or twice in a row");
        return;
    }
    f->named = true;
    if (w->depth == 0 && w->out == &w->body) {
        const char *col = w->ts ? w->ts->column : NULL;
        w->ts_next = col && strlen(col) == n && memcmp(col, name, n) == 0;
        w->skip_next = (n == 6 && memcmp(name, "__time", 6) == 0) || (w->omit_ts && w->ts_next) ||
                       w->discard_next;
        w->discard_next = false;
        if (w->skip_next) return; /* the key is not written either */
    }
    if (f->count > 0) icd_buf_putc(w->out, ',');
    icd_json_str(w->out, name, n);
    icd_buf_putc(w->out, ':');
}

/* Before any value: separators and root bookkeeping. Returns false on misuse. */
static bool pre_value(dr_row_writer *w, bool container)
{
    frame *f = top(w);
    if (!w->in_row) {
        misuse(w, "a value outside dr_row_begin/dr_row_end");
        return false;
    }
    if (f->kind == FR_OBJECT && !f->named) {
        misuse(w, "an object value without a field name");
        return false;
    }
    if (f->kind == FR_ARRAY && f->count > 0) icd_buf_putc(w->out, ',');
    if (w->depth == 0) {
        w->ts_active = w->ts_next;
        w->skip_active = w->skip_next;
        w->ts_next = w->skip_next = false;
        if (w->skip_active) w->out = &w->discard;
        if (w->ts_active) {
            w->ts_container = container;
            w->ts_start = w->out->len;
        }
    }
    return true;
}

/* After a value (a scalar, or a container that just closed). */
static void post_value(dr_row_writer *w)
{
    frame *f = top(w);
    switch (f->kind) {
    case FR_OBJECT:
        f->named = false;
        if (!(w->depth == 0 && w->skip_active)) f->count++;
        break;
    case FR_ARRAY:
        f->count++;
        break;
    case FR_MAP:
        if (f->key_next) { /* a key was written: its value comes next */
            f->key_next = false;
        } else { /* a value ended the entry */
            f->count++;
            f->key_next = true;
        }
        break;
    }
    if (w->depth == 0) {
        if (w->ts_active && w->ts_container) {
            /* a container in the timestamp column: Druid would see its text */
            icd_buf_clear(&w->tsbuf);
            icd_buf_append(&w->tsbuf, w->out->data + w->ts_start, w->out->len - w->ts_start);
            w->ts_kind = DR_TSV_STRING;
        }
        if (w->skip_active) w->out = &w->body;
        w->ts_active = w->skip_active = w->ts_container = false;
    }
}

static bool at_key(dr_row_writer *w)
{
    frame *f = top(w);
    return f->kind == FR_MAP && f->key_next;
}

/* The scalar in key position, or captured as the timestamp, as text. */
static void capture_text(dr_row_writer *w, const char *s, size_t n)
{
    if (w->depth == 0 && w->ts_active && !w->ts_container) {
        icd_buf_clear(&w->tsbuf);
        icd_buf_append(&w->tsbuf, s, n);
        w->ts_kind = DR_TSV_STRING;
    }
}

static void capture_long(dr_row_writer *w, int64_t v)
{
    if (w->depth == 0 && w->ts_active && !w->ts_container) {
        w->ts_kind = DR_TSV_LONG;
        w->ts_long = v;
    }
}

static void capture_double(dr_row_writer *w, double v)
{
    if (w->depth == 0 && w->ts_active && !w->ts_container) {
        w->ts_kind = DR_TSV_DOUBLE;
        w->ts_double = v;
    }
}

/* Writes a scalar whose JSON form and key form are the same text, quoted as a string. */
static void string_like(dr_row_writer *w, const char *s, size_t n)
{
    if (at_key(w))
        emit_key(w, s, n);
    else {
        icd_json_str(w->out, s, n);
        capture_text(w, s, n);
    }
}

void dr_row_null(dr_row_writer *w)
{
    /* AvroFlattenerMaker: a list keeps its non-null items only */
    if (w->dialect == DR_ROW_AVRO && w->depth > 0 && top(w)->kind == FR_ARRAY) return;
    if (!pre_value(w, false)) return;
    if (at_key(w))
        emit_key(w, "null", 4); /* Iceberg map keys are never null */
    else
        icd_buf_append(w->out, "null", 4);
    post_value(w);
}

void dr_row_bool(dr_row_writer *w, bool v)
{
    if (!pre_value(w, false)) return;
    const char *t = v ? "true" : "false";
    if (at_key(w)) {
        emit_key(w, t, strlen(t));
    } else {
        icd_buf_puts(w->out, t);
        capture_text(w, t, strlen(t)); /* a Boolean is not a Number: its string is parsed */
    }
    post_value(w);
}

void dr_row_long(dr_row_writer *w, int64_t v)
{
    if (!pre_value(w, false)) return;
    if (at_key(w)) {
        char t[24];
        int n = snprintf(t, sizeof t, "%lld", (long long)v);
        emit_key(w, t, (size_t)n);
    } else {
        icd_json_i64(w->out, v);
        capture_long(w, v);
    }
    post_value(w);
}

static void floating(dr_row_writer *w, double v, bool is_float)
{
    if (!pre_value(w, false)) return;
    if (at_key(w)) {
        icd_buf_clear(&w->scratch);
        if (is_float)
            icd_java_fmt_float(&w->scratch, (float)v);
        else
            icd_java_fmt_double(&w->scratch, v);
        emit_key(w, w->scratch.data ? w->scratch.data : "", w->scratch.len);
    } else {
        /* Java's Float/Double.toString text: always a '.' or an exponent, so Druid's JSON
         * reader (Jackson) gets a Double back, never a Long ("1.0E7", "1.0E15"); NaN and
         * +-Infinity as Jackson's ALLOW_NON_NUMERIC_NUMBERS reads them (the rewritten
         * spec's json inputFormat turns that feature on) */
        if (is_float)
            icd_java_fmt_float(w->out, (float)v);
        else
            icd_java_fmt_double(w->out, v);
        capture_double(w, v);
    }
    post_value(w);
}

void dr_row_float(dr_row_writer *w, float v)
{
    floating(w, v, true);
}
void dr_row_double(dr_row_writer *w, double v)
{
    floating(w, v, false);
}

void dr_fmt_big_decimal(icd_buf *b, const uint8_t *be, size_t n, int scale)
{
    /* BigDecimal.toString: plain when scale >= 0 and the adjusted exponent >= -6,
     * otherwise d.dddE-n */
    icd_buf digits = ICD_BUF_INIT;
    icd_fmt_decimal_be(&digits, be, n, 0);
    if (!icd_buf_ok(&digits)) {
        b->oom = true;
        icd_buf_free(&digits);
        return;
    }
    const char *d = digits.data;
    bool neg = d[0] == '-';
    if (neg) d++;
    size_t nd = strlen(d);
    int64_t adjusted = (int64_t)nd - 1 - scale;
    if (scale >= 0 && adjusted >= -6) {
        icd_fmt_decimal_be(b, be, n, scale);
    } else {
        if (neg) icd_buf_putc(b, '-');
        icd_buf_putc(b, d[0]);
        if (nd > 1) {
            icd_buf_putc(b, '.');
            icd_buf_append(b, d + 1, nd - 1);
        }
        icd_buf_printf(b, "E%s%lld", adjusted >= 0 ? "+" : "", (long long)adjusted);
    }
    icd_buf_free(&digits);
}

/* ParquetGroupConverter's DECIMAL on FIXED_LEN_BYTE_ARRAY / BINARY: precision <= 18 (at
 * most 8 bytes here) gives BigDecimal.valueOf(unscaled / Math.pow(10, scale)), a double
 * division, except |unscaled| >= 1e18 (the unscaled integer); wider ones stay exact. */
static bool parquet_binary_decimal(dr_row_writer *w, const uint8_t *be, size_t n, int scale)
{
    if (n > 8) return false;
    uint64_t u = 0;
    for (size_t i = 0; i < n; i++)
        u = u << 8 | be[i];
    int bits = (int)(8 * n);
    int64_t v =
        bits == 64 ? (int64_t)u : (int64_t)(u << (64 - bits)) >> (64 - bits); /* sign-extend */
    if ((double)v <= -1e18 || (double)v >= 1e18) {
        dr_row_long(w, v);
        return true;
    }
    dr_row_double(w, (double)v / pow(10, scale));
    return true;
}

/* HiveDecimal.doubleValue: the double nearest the decimal's exact value. */
static void decimal_as_double(dr_row_writer *w, const uint8_t *be, size_t n, int scale)
{
    icd_buf_clear(&w->scratch);
    icd_fmt_decimal_be(&w->scratch, be, n, scale);
    icd_buf_putc(&w->scratch, '\0');
    dr_row_double(w, icd_buf_ok(&w->scratch) ? strtod(w->scratch.data, NULL) : 0);
}

void dr_row_decimal(dr_row_writer *w, const uint8_t *be, size_t n, int scale)
{
    if (w->dialect == DR_ROW_PARQUET && scale >= 0 && n > 0 &&
        parquet_binary_decimal(w, be, n, scale))
        return;
    if (w->dialect == DR_ROW_ORC && scale >= 0 && n > 0) {
        decimal_as_double(w, be, n, scale);
        return;
    }
    if (w->dialect == DR_ROW_AVRO) { /* the fixed's bytes (a GenericFixed): base64 */
        dr_row_binary(w, be, n);
        return;
    }
    if (!pre_value(w, false)) return;
    if (n == 0 || scale < 0) {
        misuse(w, "a decimal needs at least one byte and a scale >= 0");
        return;
    }
    if (at_key(w)) {
        icd_buf_clear(&w->scratch);
        dr_fmt_big_decimal(&w->scratch, be, n, scale);
        emit_key(w, w->scratch.data ? w->scratch.data : "", w->scratch.len);
    } else {
        size_t start = w->out->len;
        icd_fmt_decimal_be(w->out, be, n, scale);
        if (w->depth == 0 && w->ts_active && !w->ts_container && icd_buf_ok(w->out)) {
            /* a BigDecimal is a Number: numeric formats read its value */
            char tmp[96];
            size_t len = w->out->len - start;
            if (len < sizeof tmp) {
                memcpy(tmp, w->out->data + start, len);
                tmp[len] = '\0';
                capture_double(w, strtod(tmp, NULL));
            } else {
                capture_double(w, (w->out->data[start] == '-' ? -1 : 1) * HUGE_VAL);
            }
        }
    }
    post_value(w);
}

void dr_row_decimal_i64(dr_row_writer *w, int64_t unscaled, int scale)
{
    /* ParquetGroupConverter: DECIMAL on INT32/INT64 is new BigDecimal(unscaled), the
     * unscaled integer (the scale is dropped) */
    if (w->dialect == DR_ROW_PARQUET) {
        dr_row_long(w, unscaled);
        return;
    }
    uint8_t be[8];
    uint64_t u = (uint64_t)unscaled;
    for (int i = 7; i >= 0; i--, u >>= 8)
        be[i] = (uint8_t)u;
    dr_row_decimal(w, be, 8, scale);
}

void dr_row_date(dr_row_writer *w, int32_t days)
{
    if (w->dialect == DR_ROW_PARQUET) { /* DATE: days * MILLIS_IN_DAY, a Long */
        dr_row_long(w, (int64_t)days * 86400000);
        return;
    }
    if (w->dialect == DR_ROW_AVRO) { /* the Avro int, no logical-type conversion */
        dr_row_long(w, days);
        return;
    }
    if (w->dialect == DR_ROW_ORC && days >= -719528 && days <= 2932896) {
        /* DateTimes.utc(millis): the DateTime's text (years 0000..9999) */
        if (!pre_value(w, false)) return;
        icd_buf_clear(&w->scratch);
        icd_fmt_date(&w->scratch, days);
        icd_buf_puts(&w->scratch, "T00:00:00.000Z");
        string_like(w, w->scratch.data ? w->scratch.data : "", w->scratch.len);
        post_value(w);
        return;
    }
    if (!pre_value(w, false)) return;
    icd_buf_clear(&w->scratch);
    icd_fmt_date(&w->scratch, days);
    string_like(w, w->scratch.data ? w->scratch.data : "", w->scratch.len);
    post_value(w);
}

void dr_fmt_local_time(icd_buf *b, int64_t us)
{
    int64_t s = us / 1000000, frac = us % 1000000;
    icd_buf_printf(b, "%02d:%02d", (int)(s / 3600), (int)(s / 60 % 60));
    if (s % 60 == 0 && frac == 0) return;
    icd_buf_printf(b, ":%02d", (int)(s % 60));
    if (frac == 0) return;
    if (frac % 1000 == 0)
        icd_buf_printf(b, ".%03d", (int)(frac / 1000));
    else
        icd_buf_printf(b, ".%06d", (int)frac);
}

void dr_row_time(dr_row_writer *w, int64_t micros_of_day)
{
    if (w->dialect != DR_ROW_GENERIC) { /* Parquet TIME_MICROS, the ORC or Avro long */
        dr_row_long(w, micros_of_day);
        return;
    }
    if (!pre_value(w, false)) return;
    if (micros_of_day < 0 || micros_of_day >= 86400000000LL) {
        misuse(w, "a time of day outside [00:00, 24:00)");
        return;
    }
    icd_buf_clear(&w->scratch);
    dr_fmt_local_time(&w->scratch, micros_of_day);
    string_like(w, w->scratch.data ? w->scratch.data : "", w->scratch.len);
    post_value(w);
}

void dr_row_timestamp(dr_row_writer *w, int64_t v, int unit_digits, bool utc)
{
    (void)utc;
    if (w->dialect == DR_ROW_PARQUET) {
        /* TIMESTAMP_MICROS: TimeUnit.MILLISECONDS.convert, truncation toward zero;
         * TIMESTAMP(NANOS) has no OriginalType, so its raw INT64 passes through */
        dr_row_long(w, unit_digits == 9 ? v : unit_digits == 3 ? v : v / 1000);
        return;
    }
    if (w->dialect == DR_ROW_AVRO) { /* the Avro long as written */
        dr_row_long(w, v);
        return;
    }
    int64_t ms = unit_digits == 9   ? dr_millis_from_nanos(v)
                 : unit_digits == 3 ? v
                                    : dr_millis_from_micros(v);
    dr_row_long(w, ms);
}

void dr_row_timestamp_int96(dr_row_writer *w, int64_t v, int unit_digits, bool utc,
                            int32_t julian_day, int64_t nanos_of_day)
{
    if (w->dialect != DR_ROW_PARQUET) {
        dr_row_timestamp(w, v, unit_digits, utc);
        return;
    }
    /* a Julian day fits int32, so the product fits int64 (|day| * 86400000 < 2^63) */
    dr_row_long(w, ((int64_t)julian_day - 2440588) * 86400000 + nanos_of_day / 1000000);
}

void dr_row_string(dr_row_writer *w, const char *s, size_t n)
{
    if (!pre_value(w, false)) return;
    string_like(w, s, n);
    post_value(w);
}

void dr_row_uuid(dr_row_writer *w, const uint8_t uuid[16])
{
    if (w->dialect != DR_ROW_GENERIC) { /* Parquet/Avro fixed(16), ORC binary: bytes */
        dr_row_binary(w, uuid, 16);
        return;
    }
    if (!pre_value(w, false)) return;
    icd_buf_clear(&w->scratch);
    icd_json_uuid(&w->scratch, uuid);
    /* icd_json_uuid quotes: strip them for the text form */
    if (w->scratch.len >= 2) string_like(w, w->scratch.data + 1, w->scratch.len - 2);
    post_value(w);
}

void dr_row_binary(dr_row_writer *w, const uint8_t *p, size_t n)
{
    if (!pre_value(w, false)) return;
    if (w->binary_as_string) { /* StringUtils.fromUtf8: bad bytes become U+FFFD */
        string_like(w, (const char *)p, n);
        post_value(w);
        return;
    }
    icd_buf_clear(&w->scratch);
    icd_base64_raw(&w->scratch, p, n);
    if (at_key(w)) {
        emit_key(w, w->scratch.data ? w->scratch.data : "", w->scratch.len);
    } else {
        icd_json_str(w->out, w->scratch.data ? w->scratch.data : "", w->scratch.len);
        capture_text(w, "[binary]", 8); /* Java's byte[] text never parses as a time */
    }
    post_value(w);
}

static void open_container(dr_row_writer *w, fr_kind kind, char c)
{
    if (!pre_value(w, true)) return;
    if (w->depth + 1 >= MAX_DEPTH) {
        misuse(w, "values nested too deeply");
        return;
    }
    bool key = at_key(w);
    if (key && w->out == &w->keybuf && top(w)->count > 0) icd_buf_putc(w->out, ',');
    frame *f = &w->stack[++w->depth];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->key_next = kind == FR_MAP;
    if (key && w->out != &w->keybuf) {
        /* a container used as a map key: its JSON text becomes the key string */
        f->is_key = true;
        f->saved = w->out;
        icd_buf_clear(&w->keybuf);
        w->out = &w->keybuf;
    }
    icd_buf_putc(w->out, c);
}

static void close_container(dr_row_writer *w, fr_kind kind, char c)
{
    frame *f = top(w);
    if (w->depth == 0 || f->kind != kind) {
        misuse(w, "an end call that does not match the open container");
        return;
    }
    if (kind == FR_MAP && !f->key_next) {
        misuse(w, "a map key without a value");
        return;
    }
    icd_buf_putc(w->out, c);
    bool is_key = f->is_key;
    icd_buf *saved = f->saved;
    w->depth--;
    if (is_key) {
        w->out = saved;
        /* copy: emit_key writes into w->out, never into keybuf */
        emit_key(w, w->keybuf.data ? w->keybuf.data : "", w->keybuf.len);
    } else if (at_key(w)) {
        /* a key container nested inside a key being captured: its text is the key */
        icd_buf_putc(w->out, ':');
    }
    post_value(w);
}

void dr_row_struct_begin(dr_row_writer *w)
{
    open_container(w, FR_OBJECT, '{');
}
void dr_row_struct_end(dr_row_writer *w)
{
    close_container(w, FR_OBJECT, '}');
}
void dr_row_list_begin(dr_row_writer *w)
{
    open_container(w, FR_ARRAY, '[');
}
void dr_row_list_end(dr_row_writer *w)
{
    close_container(w, FR_ARRAY, ']');
}
void dr_row_map_begin(dr_row_writer *w)
{
    open_container(w, FR_MAP, '{');
}
void dr_row_map_end(dr_row_writer *w)
{
    close_container(w, FR_MAP, '}');
}

int dr_row_end_time(dr_row_writer *w, int64_t *ms, dr_tsv_kind *kind, icd_error *err)
{
    if (!w->in_row)
        return icd_fail(err, ICD_EINTERNAL, w->file, -1, "dr_row_end without dr_row_begin");
    w->in_row = false;
    if (!w->fail && (w->depth != 0 || top(w)->named))
        misuse(w, "the row ended inside a container or after a field name without a value");
    if (!icd_buf_ok(&w->body) || !icd_buf_ok(&w->keybuf) || !icd_buf_ok(&w->scratch) ||
        !icd_buf_ok(&w->tsbuf) || !icd_buf_ok(&w->discard))
        w->fail = ICD_ENOMEM;
    if (w->fail == ICD_ENOMEM) return icd_fail_nomem(err);
    if (w->fail)
        return icd_fail(err, w->fail, w->file, -1, "row %lld: %s", (long long)w->position,
                        w->fail_msg ? w->fail_msg : "invalid row");
    dr_ts_value v = {w->ts_kind, w->ts_long, w->ts_double, w->tsbuf.data ? w->tsbuf.data : "",
                     w->tsbuf.len};
    if (kind) *kind = w->ts_kind;
    *ms = 0;
    if (w->ts && dr_timestamp_extract(w->ts, &v, ms, err) < 0) {
        if (err->code == ICD_ENOMEM) return err->code;
        icd_error_wrap(err, "row %lld", (long long)w->position);
        if (w->file) icd_error_set_file(err, w->file);
        /* a value icedruid cannot parse the way Druid would (a Joda zone name other than
         * UTC) stops the read: counting it as a parse exception would drop a row Druid keeps */
        return err->code == ICD_EUNSUPPORTED ? ICD_EUNSUPPORTED : ICD_EINVALID;
    }
    return 0;
}

int dr_row_end(dr_row_writer *w, icd_buf *out, icd_error *err)
{
    int64_t ms;
    ICD_TRY(dr_row_end_time(w, &ms, NULL, err));
    icd_buf_puts(out, "{\"__time\":");
    icd_json_i64(out, ms);
    if (w->body.len) {
        icd_buf_putc(out, ',');
        icd_buf_append(out, w->body.data, w->body.len);
    }
    icd_buf_putc(out, '}');
    return icd_buf_ok(out) ? 0 : icd_fail_nomem(err);
}

void dr_parse_exceptions_init(dr_parse_exceptions *pe, int64_t max)
{
    memset(pe, 0, sizeof *pe);
    pe->max = max;
    icd_error_clear(&pe->last);
}

int dr_parse_exceptions_add(dr_parse_exceptions *pe, const icd_error *row_err, icd_error *err)
{
    pe->count++;
    if (row_err) pe->last = *row_err;
    if (pe->count <= pe->max) return 0;
    char line[2200];
    icd_error_format(&pe->last, line, sizeof line);
    return icd_fail(err, ICD_EINVALID, NULL, -1, "Max parse exceptions[%lld] exceeded; last: %s",
                    (long long)pe->max, line);
}
