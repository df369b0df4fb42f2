/*
 * icd_batch (include/icedruid/scan.h): an ice_row_sink that gathers the reader's typed
 * values into batches of rows, column by column, and hands each full batch to the caller.
 *
 * Top-level primitive values are kept as they come (already converted to the column's
 * Iceberg type by the reader). A struct, list, map or variant value is rendered to JSON
 * by the `scan` row writer (iceberg/scan_json.h), driven for that one value: the batch
 * sink forwards every callback between the value's begin and its end to it. Strings,
 * bytes and JSON texts are appended to one byte buffer per batch; cells keep offsets
 * into it (the buffer may move while the batch fills), turned into pointers by
 * icd_batch_get.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/buf.h"
#include "iceberg/scan_json.h"
#include "iceberg/tvalue.h"
#include "iceberg/types.h"

/* A batch is handed over when its rows' bytes pass this much (after a whole row). */
#define BATCH_BYTES (4u << 20)
/* The cells of a batch take at most about this much: wide rows make shorter batches. */
#define CELL_BYTES (2u << 20)
#define MIN_ROWS 64

typedef struct cell {
    int64_t i; /* BOOL, INT; the offset into bytes for BYTES and JSON */
    double d;
    size_t n;
    icd_value_kind kind;
} cell;

struct icd_batch {
    const ice_field *const *fields; /* the scan's columns */
    size_t ncols;
    size_t task;
    const char *file;
    size_t nrows;
    size_t cap;     /* rows a batch holds: ICD_BATCH_MAX_ROWS, fewer for wide rows */
    cell *cells;    /* ncols x cap, column-major */
    int64_t *pos;   /* cap */
    icd_buf bytes;  /* the rows' strings, bytes and JSON texts */
    size_t col;     /* the column the next value belongs to */
    bool bad_field; /* a field the batch has no column for (a bug) */
    /* nested values: the depth inside the current top-level value, and its JSON writer */
    int depth;
    size_t json_start;
    ice_scan_json json;
    ice_row_sink json_sink;
    /* the caller */
    icd_batch_fn fn;
    void *ctx;
    pthread_mutex_t *serialise;
    int failed;
};

/* --- the public accessors --- */

size_t icd_batch_row_count(const icd_batch *b)
{
    return b->nrows;
}

size_t icd_batch_column_count(const icd_batch *b)
{
    return b->ncols;
}

size_t icd_batch_task(const icd_batch *b)
{
    return b->task;
}

const char *icd_batch_data_file(const icd_batch *b)
{
    return b->file;
}

int64_t icd_batch_position(const icd_batch *b, size_t row)
{
    return row < b->nrows ? b->pos[row] : -1;
}

void icd_batch_get(const icd_batch *b, size_t row, size_t col, icd_value *out)
{
    memset(out, 0, sizeof *out);
    if (row >= b->nrows || col >= b->ncols) return;
    const cell *c = &b->cells[col * b->cap + row];
    out->kind = c->kind;
    switch (c->kind) {
    case ICD_VALUE_BYTES:
    case ICD_VALUE_JSON:
        out->p = b->bytes.data + c->i;
        out->n = c->n;
        break;
    case ICD_VALUE_DOUBLE:
        out->d = c->d;
        break;
    default:
        out->i = c->i;
        break;
    }
}

/* --- the sink --- */

static inline cell *cur(icd_batch *b)
{
    return &b->cells[b->col * b->cap + b->nrows];
}

static void set_bytes(icd_batch *b, cell *c, icd_value_kind kind, const void *p, size_t n)
{
    c->kind = kind;
    c->i = (int64_t)b->bytes.len;
    c->n = n;
    icd_buf_append(&b->bytes, p, n);
}

static void put_bytes(icd_batch *b, icd_value_kind kind, const void *p, size_t n)
{
    set_bytes(b, cur(b), kind, p, n);
}

static void begin_row(void *ctx, const char *file, int64_t pos)
{
    icd_batch *b = ctx;
    b->file = file;
    b->pos[b->nrows] = pos;
    b->col = 0;
    b->depth = 0;
    for (size_t k = 0; k < b->ncols; k++) /* a column the reader leaves out reads as null */
        b->cells[k * b->cap + b->nrows].kind = ICD_VALUE_NULL;
}

static void begin_file(void *ctx, const char *path, ice_file_format format)
{
    (void)format;
    icd_batch *b = ctx;
    b->file = path;
}

static void field(void *ctx, const char *name, size_t n)
{
    icd_batch *b = ctx;
    if (b->depth) {
        b->json_sink.field(&b->json, name, n);
        return;
    }
    /* the reader gives the columns in order, by the field's own name pointer */
    size_t k = b->col < b->ncols && b->fields[b->col]->name == name ? b->col : b->ncols;
    for (size_t i = 0; k == b->ncols && i < b->ncols; i++)
        if (strlen(b->fields[i]->name) == n && !memcmp(b->fields[i]->name, name, n)) k = i;
    if (k == b->ncols) b->bad_field = true;
    b->col = k;
}

/* A value at the top level goes into its cell (none when the field had no column);
 * inside a nested value, to the JSON writer. */
#define TOP(b) ((b)->depth == 0 && (b)->col < (b)->ncols)

static void v_null(void *ctx)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.null_value(&b->json);
    else if (TOP(b))
        cur(b)->kind = ICD_VALUE_NULL;
}

static void put_int(icd_batch *b, icd_value_kind kind, int64_t v)
{
    cell *c = cur(b);
    c->kind = kind;
    c->i = v;
}

static void v_bool(void *ctx, bool v)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.boolean(&b->json, v);
    else if (TOP(b))
        put_int(b, ICD_VALUE_BOOL, v);
}

static void v_i64(void *ctx, int64_t v)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.i64(&b->json, v);
    else if (TOP(b))
        put_int(b, ICD_VALUE_INT, v);
}

static void put_double(icd_batch *b, double v)
{
    cell *c = cur(b);
    c->kind = ICD_VALUE_DOUBLE;
    c->d = v;
}

static void v_f32(void *ctx, float v)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.f32(&b->json, v);
    else if (TOP(b))
        put_double(b, (double)v);
}

static void v_f64(void *ctx, double v)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.f64(&b->json, v);
    else if (TOP(b))
        put_double(b, v);
}

/* A decimal of precision <= 18 whose unscaled value came as big-endian bytes: as an int64
 * (a precision <= 18 value always fits; sign-extended from the first byte). */
static int64_t be_to_i64(const uint8_t *be, size_t n)
{
    uint64_t v = n && (be[0] & 0x80) ? UINT64_MAX : 0;
    for (size_t k = n > 8 ? n - 8 : 0; k < n; k++)
        v = v << 8 | be[k];
    return (int64_t)v;
}

/* A decimal by its column's precision: <= 18 digits as the unscaled int64, more as the
 * unscaled big-endian two's complement (the 8 bytes of an int64 when the reader had it
 * as one). */
static void set_dec64(icd_batch *b, cell *c, const ice_type *t, int64_t v)
{
    if (t->precision <= 18) {
        c->kind = ICD_VALUE_INT;
        c->i = v;
        return;
    }
    uint8_t be[8];
    uint64_t u = (uint64_t)v;
    for (int k = 7; k >= 0; k--, u >>= 8)
        be[k] = (uint8_t)u;
    set_bytes(b, c, ICD_VALUE_BYTES, be, sizeof be);
}

static void set_decbe(icd_batch *b, cell *c, const ice_type *t, const uint8_t *p, size_t n)
{
    if (t->precision > 18) {
        set_bytes(b, c, ICD_VALUE_BYTES, p, n);
        return;
    }
    c->kind = ICD_VALUE_INT;
    c->i = be_to_i64(p, n);
}

static void v_dec64(void *ctx, int64_t v, int scale)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.decimal_i64(&b->json, v, scale);
    else if (TOP(b))
        set_dec64(b, cur(b), b->fields[b->col]->type, v);
}

static void v_decbe(void *ctx, const uint8_t *p, size_t n, int scale)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.decimal_be(&b->json, p, n, scale);
    else if (TOP(b))
        set_decbe(b, cur(b), b->fields[b->col]->type, p, n);
}

static void v_date(void *ctx, int32_t days)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.date(&b->json, days);
    else if (TOP(b))
        put_int(b, ICD_VALUE_INT, days);
}

static void v_time(void *ctx, int64_t us)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.time(&b->json, us);
    else if (TOP(b))
        put_int(b, ICD_VALUE_INT, us);
}

static void v_ts(void *ctx, int64_t v, int digits, bool utc)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.timestamp(&b->json, v, digits, utc);
    else if (TOP(b))
        put_int(b, ICD_VALUE_INT, v);
}

static void v_str(void *ctx, const char *s, size_t n)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.string(&b->json, s, n);
    else if (TOP(b))
        put_bytes(b, ICD_VALUE_BYTES, s, n);
}

static void v_uuid(void *ctx, const uint8_t v[16])
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.uuid(&b->json, v);
    else if (TOP(b))
        put_bytes(b, ICD_VALUE_BYTES, v, 16);
}

static void v_bin(void *ctx, const uint8_t *p, size_t n)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.binary(&b->json, p, n);
    else if (TOP(b))
        put_bytes(b, ICD_VALUE_BYTES, p, n);
}

static void v_raw(void *ctx, const char *json, size_t n)
{
    icd_batch *b = ctx;
    if (b->depth)
        b->json_sink.raw_json(&b->json, json, n);
    else if (TOP(b))
        put_bytes(b, ICD_VALUE_JSON, json, n);
}

/* A nested value begins: at the top level, the JSON writer starts a bare value. */
static void nest(icd_batch *b, void (*open)(void *ctx))
{
    if (b->depth == 0) {
        b->json_start = b->bytes.len;
        ice_scan_json_begin_value(&b->json);
    }
    b->depth++;
    open(&b->json);
}

static void unnest(icd_batch *b, void (*close)(void *ctx))
{
    if (b->depth == 0) return; /* unbalanced (a bug): ignored, the cell stays as it is */
    close(&b->json);
    if (--b->depth) return;
    if (!TOP(b)) {
        b->bytes.len = b->json_start; /* no column to keep it in */
        return;
    }
    cell *c = cur(b);
    c->kind = ICD_VALUE_JSON;
    c->i = (int64_t)b->json_start;
    c->n = b->bytes.len - b->json_start;
}

static void struct_begin(void *ctx)
{
    icd_batch *b = ctx;
    nest(b, b->json_sink.struct_begin);
}
static void struct_end(void *ctx)
{
    icd_batch *b = ctx;
    unnest(b, b->json_sink.struct_end);
}
static void list_begin(void *ctx)
{
    icd_batch *b = ctx;
    nest(b, b->json_sink.list_begin);
}
static void list_end(void *ctx)
{
    icd_batch *b = ctx;
    unnest(b, b->json_sink.list_end);
}
static void map_begin(void *ctx)
{
    icd_batch *b = ctx;
    nest(b, b->json_sink.map_begin);
}
static void map_end(void *ctx)
{
    icd_batch *b = ctx;
    unnest(b, b->json_sink.map_end);
}

/* --- whole batches (ice_row_sink.columns: every column primitive) --- */

/* A typed value of the reader into the cell of column `col`, row `row`. */
static void put_tvalue(icd_batch *b, size_t col, size_t row, const ice_tvalue *v)
{
    cell *c = &b->cells[col * b->cap + row];
    const ice_type *t = b->fields[col]->type;
    switch (v->cls) {
    case ICE_TV_NULL:
        c->kind = ICD_VALUE_NULL;
        return;
    case ICE_TV_BOOL:
        c->kind = ICD_VALUE_BOOL;
        c->i = v->i != 0;
        return;
    case ICE_TV_INT:
    case ICE_TV_DATE:
    case ICE_TV_TIME:
    case ICE_TV_TS: /* (an INT96's converted value; its 12 bytes are not kept) */
        c->kind = ICD_VALUE_INT;
        c->i = v->i;
        return;
    case ICE_TV_FLOAT:
        c->kind = ICD_VALUE_DOUBLE;
        c->d = (double)v->f;
        return;
    case ICE_TV_DOUBLE:
        c->kind = ICD_VALUE_DOUBLE;
        c->d = v->d;
        return;
    case ICE_TV_DEC64:
        set_dec64(b, c, t, v->i);
        return;
    case ICE_TV_DECBE:
        set_decbe(b, c, t, v->p, v->n);
        return;
    case ICE_TV_STRING:
    case ICE_TV_UUID:
    case ICE_TV_BINARY:
        set_bytes(b, c, ICD_VALUE_BYTES, v->p, v->n);
        return;
    }
}

static int deliver(icd_batch *b, icd_error *err);

/* The kept rows of a reader batch, cut into batches of at most cap rows. */
static int columns(void *ctx, const ice_sink_column *cols, size_t ncols, size_t nrows,
                   const uint32_t *rows, const int64_t *positions, icd_error *err)
{
    icd_batch *b = ctx;
    if (ncols != b->ncols)
        return icd_fail(err, ICD_EINTERNAL, b->file, -1,
                        "the reader gave %zu columns for the batch's %zu", ncols, b->ncols);
    for (size_t done = 0; done < nrows;) {
        size_t n = nrows - done, start = b->nrows;
        if (n > b->cap - start) n = b->cap - start;
        for (size_t i = 0; i < n; i++)
            b->pos[start + i] = positions[done + i];
        for (size_t k = 0; k < ncols; k++) {
            const ice_sink_column *c = &cols[k];
            for (size_t i = 0; i < n; i++)
                put_tvalue(b, k, start + i, c->values ? &c->values[rows[done + i]] : c->constant);
        }
        b->nrows = start + n;
        done += n;
        if (b->nrows == b->cap || b->bytes.len >= BATCH_BYTES) ICD_TRY(deliver(b, err));
    }
    return 0;
}

/* Hands the batch's rows to the caller (under the run's lock) and empties it. */
static int deliver(icd_batch *b, icd_error *err)
{
    if (!icd_buf_ok(&b->bytes)) return icd_fail_nomem(err);
    if (!b->nrows) return 0;
    icd_error cb_err;
    icd_error_clear(&cb_err);
    if (b->serialise) pthread_mutex_lock(b->serialise);
    int rc = b->fn(b->ctx, b, &cb_err);
    if (b->serialise) pthread_mutex_unlock(b->serialise);
    b->nrows = 0;
    icd_buf_clear(&b->bytes);
    if (rc) b->failed = rc;
    return icd_api_callback_result(rc, &cb_err, "batch", err);
}

static int end_row(void *ctx, icd_error *err)
{
    icd_batch *b = ctx;
    if (b->bad_field || b->depth)
        return icd_fail(err, ICD_EINTERNAL, b->file, -1,
                        "row at position %lld: the reader gave a value the batch has no "
                        "column for",
                        (long long)b->pos[b->nrows]);
    b->nrows++;
    if (b->nrows == b->cap || b->bytes.len >= BATCH_BYTES) return deliver(b, err);
    return 0;
}

int icd_api_batch_new(icd_batch **out, const ice_field *const *fields, size_t ncols, size_t task,
                      icd_batch_fn fn, void *ctx, pthread_mutex_t *serialise, ice_row_sink *sink,
                      icd_error *err)
{
    *out = NULL;
    icd_batch *b = calloc(1, sizeof *b);
    if (!b) return icd_fail_nomem(err);
    b->fields = fields;
    b->ncols = ncols;
    b->task = task;
    b->fn = fn;
    b->ctx = ctx;
    b->serialise = serialise;
    size_t row_bytes = (ncols ? ncols : 1) * sizeof(cell);
    b->cap = CELL_BYTES / row_bytes;
    if (b->cap > ICD_BATCH_MAX_ROWS) b->cap = ICD_BATCH_MAX_ROWS;
    if (b->cap < MIN_ROWS) b->cap = MIN_ROWS;
    b->pos = malloc(b->cap * sizeof *b->pos);
    b->cells = calloc(b->cap * (ncols ? ncols : 1), sizeof *b->cells);
    if (!b->pos || !b->cells) {
        icd_api_batch_free(b);
        return icd_fail_nomem(err);
    }
    b->json.out = &b->bytes;
    ice_scan_json_sink(&b->json, &b->json_sink);
    *sink = (ice_row_sink){.ctx = b,
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
                           .begin_file = begin_file,
                           .columns = columns};
    *out = b;
    return 0;
}

int icd_api_batch_finish(icd_batch *b, icd_error *err)
{
    return deliver(b, err);
}

void icd_api_batch_free(icd_batch *b)
{
    if (!b) return;
    ice_scan_json_free(&b->json);
    icd_buf_free(&b->bytes);
    free(b->cells);
    free(b->pos);
    free(b);
}
