/*
 * Phase 2 diff (see diff.h): which Druid segment intervals changed between snapshots A and
 * B of the spec's table. The last step before the emitters (emit.c) and `sync`.
 *
 * Model. Druid holds the rows of A, bucketed by the timestampSpec and the granularity. An
 * interval must be replaced when the multiset of rows A has in it is not contained in
 * B's (some row was removed); it may be appended to when B only has more rows there.
 * Only files whose rows can differ are looked at:
 *
 *   1. Plan A and plan B (every live data file with the delete files that apply to it).
 *      Match data files by location. A file live in both with the same delete files has
 *      the same live rows: skipped without reading. The others are
 *        removed   live in A only: its A-live rows left (or moved: compaction),
 *        added     live in B only: its B-live rows arrived (or moved in),
 *        changed   live in both, different delete files: positions live in A and not in
 *                  B were removed, positions live in B and not in A came back.
 *   2. Phase 1 reads only the timestamp column (plus the equality-key columns the reader
 *      needs for deletes) and counts physical removals and additions per bucket. A removed
 *      or added file whose timestamp bounds put every row in one bucket is not read: its
 *      record count is used (exact without deletes, "unknown" with them).
 *   3. Buckets where rows of removed files and added rows meet may hold moved rows
 *      (compaction, copy-on-write rewrites). Phase 2 re-reads the files touching those
 *      buckets with the columns Druid keeps (the spec's ColumnsFilter), hashes each removed and
 * added row (two independent 64-bit hashes of a canonical encoding of all values), and cancels
 * equal rows per bucket: what remains is exactly "rows of A not in B" and "rows of B not in A" as
 *      multisets. A replace snapshot therefore gives no interval without trusting its
 *      `operation`. Buckets whose removals all come from delete files (the data file
 *      stays live) are not hashed: rows there really left; an identical row inserted
 *      again is not matched against them (conservative, see below), which keeps the
 *      common "deletes plus late rows in the same interval" case at phase-1 cost.
 *
 * Classification per bucket: removed rows left after cancelling → replace. No removed
 * rows, added rows, and no rewritten rows → append. Conservative choices (more intervals
 * or larger counts than the multiset difference, never fewer):
 *   - added rows mixed with rewritten rows (rows moved and nothing removed) → replace, with
 *     rowsRemoved 0: an appender that re-reads the new files for that interval would
 *     duplicate the rewritten rows;
 *   - a row removed by a delete file and an identical row added again in a bucket without
 *     moved rows: both are counted (rowsRemoved and rowsAdded exceed the multiset counts
 *     by the same amount), the interval is replaced;
 *   - a removed file decided from statistics while deletes applied to it in A: its
 *     interval is replaced with rowsRemoved -1 even if A's deletes had removed every row.
 *
 * Rows whose timestamp cannot be parsed are skipped, as `read` skips them (parse
 * exceptions): Druid never held them. The icebergFilter and transformSpec filter are
 * ignored: every row counts (more intervals, never fewer). All files are read with B's
 * schema, so values compare across files written under older schemas.
 */
#include "druid/phase2/diff.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/datetime.h"
#include "base/hash.h"
#include "base/jsonw.h"
#include "base/parallel.h"
#include "druid/rows/druid_sink.h"
#include "druid/plan/plan.h"
#include "druid/rows/row.h"
#include "iceberg/content_file.h"
#include "iceberg/deletes/eq_key.h"
#include "iceberg/reader.h"
#include "iceberg/scan_plan.h"
#include "iceberg/schema.h"

/* ---- per-bucket counts -------------------------------------------------------------- */

typedef struct bucket {
    int64_t start, end;
    int64_t rem, add; /* physical: rows removed / added (phase 1) */
    int64_t rem_del;  /* of rem: removed by delete files from a data file still live in B */
    int64_t ca, cb;   /* changed files: live rows in A / in B */
    bool rem_unknown; /* a file was counted from statistics with deletes applied in A */
    bool add_unknown;
    bool mixed;         /* removals and additions: phase 2 cancels equal rows */
    int64_t mrem, madd; /* after phase 2 */
} bucket;

typedef struct bucket_set {
    icd_map *index; /* start → position in v */
    bucket *v;
    size_t n, cap;
} bucket_set;

static void bucket_set_free(bucket_set *s)
{
    icd_map_free(s->index);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int bucket_get(bucket_set *s, int64_t start, int64_t end, bucket **out, icd_error *err)
{
    if (!s->index) ICD_TRY(icd_map_new(&s->index, 16, err));
    uint64_t h = icd_hash_u64((uint64_t)start);
    uint64_t *val;
    bool inserted;
    ICD_TRY(icd_map_upsert(s->index, &start, sizeof start, h, &val, &inserted, err));
    if (inserted) {
        if (ICD_ARRAY_RESERVE(s->v, s->cap, s->n + 1, 16)) return icd_fail_nomem(err);
        memset(&s->v[s->n], 0, sizeof s->v[s->n]);
        s->v[s->n].start = start;
        s->v[s->n].end = end;
        *val = s->n++;
    }
    *out = &s->v[*val];
    return 0;
}

static const bucket *bucket_find(const bucket_set *s, int64_t start)
{
    if (!s->index) return NULL;
    uint64_t *val = icd_map_find(s->index, &start, sizeof start, icd_hash_u64((uint64_t)start));
    return val ? &s->v[*val] : NULL;
}

/* ---- position bitmaps (changed files) ----------------------------------------------- */

typedef struct bitmap {
    uint64_t *w;
    size_t nwords;
} bitmap;

static int bitmap_set(bitmap *b, int64_t pos, icd_error *err)
{
    if (pos < 0) return icd_fail(err, ICD_EINTERNAL, NULL, -1, "negative row position");
    size_t word = (size_t)((uint64_t)pos >> 6);
    if (word >= b->nwords) {
        size_t n = b->nwords ? b->nwords : 64;
        while (n <= word)
            n *= 2;
        uint64_t *w = realloc(b->w, n * sizeof *w);
        if (!w) return icd_fail_nomem(err);
        memset(w + b->nwords, 0, (n - b->nwords) * sizeof *w);
        b->w = w;
        b->nwords = n;
    }
    b->w[word] |= 1ull << (pos & 63);
    return 0;
}

static bool bitmap_has(const bitmap *b, int64_t pos)
{
    size_t word = (size_t)((uint64_t)pos >> 6);
    return pos >= 0 && word < b->nwords && (b->w[word] >> (pos & 63) & 1);
}

/* ---- the files to look at ----------------------------------------------------------- */

typedef enum file_kind { FK_REMOVED, FK_ADDED, FK_CHANGED } file_kind;

/* A hashed row of phase 2. */
typedef struct hrow {
    int64_t bucket;
    uint64_t h1, h2;
} hrow;

typedef struct hrows {
    hrow *v;
    size_t n, cap;
} hrows;

static int hrows_push(hrows *r, int64_t b, uint64_t h1, uint64_t h2, icd_error *err)
{
    if (ICD_ARRAY_RESERVE(r->v, r->cap, r->n + 1, 64)) return icd_fail_nomem(err);
    r->v[r->n++] = (hrow){b, h1, h2};
    return 0;
}

typedef struct dfile {
    file_kind kind;
    const ice_scan_task *ta, *tb; /* its task in A / in B (NULL when not live there) */
    bucket_set buckets;           /* phase 1 counts of this file */
    bitmap sa, sb;                /* changed files: positions live in A / in B */
    bool read1, read2;            /* read in phase 1 / phase 2 */
    bool phase2;                  /* touches a mixed bucket */
    hrows rem, add;               /* phase 2 */
    ice_read_stats stats;
} dfile;

static void dfile_clear(dfile *f)
{
    bucket_set_free(&f->buckets);
    free(f->sa.w);
    free(f->sb.w);
    free(f->rem.v);
    free(f->add.v);
}

/* ---- the row sink: timestamp capture and row hashing -------------------------------- */

typedef struct diff_ctx diff_ctx;

/* The timestamp column's value goes through a Druid row writer (row.h) with the dialect
 * of the file's format, so a row's __time here is the one `read` (and Druid reading the
 * file) gives it, rule for rule: Avro timestamps as the raw micros, Parquet micros
 * truncated toward zero, Parquet dates as millis, ORC dates as DateTime text, ... */
typedef struct row_sink {
    const diff_ctx *dc;
    bool hashing; /* phase 2: hash every value */
    int depth;    /* nesting of the current value; 0 = a top-level column */
    bool at_ts;   /* the pending top-level value (and what nests in it) is the timestamp column */
    dr_row_writer *tsw; /* the timestamp column's value, by Druid's rules */
    icd_buf scratch;
    icd_buf row; /* canonical encoding of the row's values (hashing) */
    int64_t pos;
    bool oom;
    /* cache of the last bucket */
    bool have_last;
    int64_t last_start, last_end;
    /* what to do with each row */
    int (*on_row)(struct row_sink *s, int64_t pos, int64_t start, int64_t end, icd_error *err);
    dfile *file;
    int pass; /* 'a' or 'b' */
    int64_t unparseable;
} row_sink;

struct diff_ctx {
    const dr_spec *spec;
    icd_fileio *io;
    const ice_metadata *md;
    const dr_timestamp_spec *ts;
    dr_granularity gran;
    ice_scan_reader *reader_ts;  /* the timestamp column only */
    ice_scan_reader *reader_all; /* the spec's columns (phase 2) */
    const ice_field *ts_field;   /* in B's schema, or NULL */
    dfile *files;
    size_t nfiles;
    bucket_set mixed; /* phase 2: the mixed buckets (read-only while reading) */
    pthread_mutex_t lock;
    int64_t unparseable;
    const dr_diff_opts *opts; /* on_file progress */
};

static void enc(row_sink *s, uint8_t tag, const void *p, size_t n)
{
    if (!s->hashing) return;
    icd_buf_putc(&s->row, (char)tag);
    if (n) icd_buf_append(&s->row, p, n);
}

static void enc_len(row_sink *s, uint8_t tag, const void *p, size_t n)
{
    if (!s->hashing) return;
    uint64_t len = n;
    icd_buf_putc(&s->row, (char)tag);
    icd_buf_append(&s->row, &len, sizeof len);
    if (n) icd_buf_append(&s->row, p, n);
}

static void rs_begin_file(void *ctx, const char *path, ice_file_format format)
{
    row_sink *s = ctx;
    (void)path;
    dr_row_set_dialect(s->tsw, dr_dialect_of_format(format));
}

static void rs_begin_row(void *ctx, const char *file, int64_t pos)
{
    (void)file;
    row_sink *s = ctx;
    s->pos = pos;
    s->depth = 0;
    s->at_ts = false;
    dr_row_begin(s->tsw, pos);
    icd_buf_clear(&s->row);
}

static void rs_field(void *ctx, const char *name, size_t n)
{
    row_sink *s = ctx;
    if (s->depth == 0) {
        const char *col = s->dc->ts->column;
        s->at_ts = col && strlen(col) == n && !memcmp(col, name, n);
    }
    if (s->at_ts) dr_row_field(s->tsw, name, n);
}

static void rs_null(void *ctx)
{
    row_sink *s = ctx;
    enc(s, 0, NULL, 0);
    if (s->at_ts) dr_row_null(s->tsw);
}

static void rs_bool(void *ctx, bool v)
{
    row_sink *s = ctx;
    uint8_t b = v;
    enc(s, 1, &b, 1);
    if (s->at_ts) dr_row_bool(s->tsw, v);
}

static void rs_i64(void *ctx, int64_t v)
{
    row_sink *s = ctx;
    enc(s, 2, &v, sizeof v);
    if (s->at_ts) dr_row_long(s->tsw, v);
}

static void rs_f32(void *ctx, float v)
{
    row_sink *s = ctx;
    uint64_t u = ice_key_double_bits((double)v); /* a float equals the double it promotes to */
    enc(s, 4, &u, sizeof u);
    if (s->at_ts) dr_row_float(s->tsw, v);
}

static void rs_f64(void *ctx, double v)
{
    row_sink *s = ctx;
    uint64_t u = ice_key_double_bits(v);
    enc(s, 4, &u, sizeof u);
    if (s->at_ts) dr_row_double(s->tsw, v);
}

/* Decimals: hashed by their exact text (unscaled digits and scale). */
static void rs_decimal_i64(void *ctx, int64_t unscaled, int scale)
{
    row_sink *s = ctx;
    if (s->hashing) {
        icd_buf_clear(&s->scratch);
        icd_fmt_decimal_i64(&s->scratch, unscaled, scale);
        enc_len(s, 5, s->scratch.data ? s->scratch.data : "0", s->scratch.len);
    }
    if (s->at_ts) dr_row_decimal_i64(s->tsw, unscaled, scale);
}

static void rs_decimal_be(void *ctx, const uint8_t *be, size_t n, int scale)
{
    row_sink *s = ctx;
    if (s->hashing) {
        icd_buf_clear(&s->scratch);
        icd_fmt_decimal_be(&s->scratch, be, n, scale);
        enc_len(s, 5, s->scratch.data ? s->scratch.data : "0", s->scratch.len);
    }
    if (s->at_ts) dr_row_decimal(s->tsw, be, n, scale);
}

static void rs_date(void *ctx, int32_t days)
{
    row_sink *s = ctx;
    enc(s, 6, &days, sizeof days);
    if (s->at_ts) dr_row_date(s->tsw, days);
}

static void rs_time(void *ctx, int64_t us)
{
    row_sink *s = ctx;
    enc(s, 7, &us, sizeof us);
    if (s->at_ts) dr_row_time(s->tsw, us);
}

/* A timestamp's row encoding: the instant in its unit, however the file stored it. */
static void rs_timestamp_enc(row_sink *s, int64_t v, int unit_digits, bool utc)
{
    uint8_t meta[2] = {(uint8_t)unit_digits, utc};
    enc(s, 8, meta, 2);
    enc(s, 9, &v, sizeof v);
}

static void rs_timestamp(void *ctx, int64_t v, int unit_digits, bool utc)
{
    row_sink *s = ctx;
    rs_timestamp_enc(s, v, unit_digits, utc);
    if (s->at_ts) dr_row_timestamp(s->tsw, v, unit_digits, utc);
}

static void rs_timestamp_int96(void *ctx, int64_t v, int unit_digits, bool utc, int32_t julian,
                               int64_t nanos)
{
    row_sink *s = ctx;
    rs_timestamp_enc(s, v, unit_digits, utc);
    if (s->at_ts) dr_row_timestamp_int96(s->tsw, v, unit_digits, utc, julian, nanos);
}

static void rs_string(void *ctx, const char *p, size_t n)
{
    row_sink *s = ctx;
    enc_len(s, 10, p, n);
    if (s->at_ts) dr_row_string(s->tsw, p, n);
}

static void rs_uuid(void *ctx, const uint8_t v[16])
{
    row_sink *s = ctx;
    enc(s, 11, v, 16);
    if (s->at_ts) dr_row_uuid(s->tsw, v);
}

static void rs_binary(void *ctx, const uint8_t *p, size_t n)
{
    row_sink *s = ctx;
    enc_len(s, 12, p, n);
    if (s->at_ts) dr_row_binary(s->tsw, p, n);
}

static void rs_struct_begin(void *ctx)
{
    row_sink *s = ctx;
    enc(s, 13, NULL, 0);
    s->depth++;
    if (s->at_ts) dr_row_struct_begin(s->tsw);
}
static void rs_struct_end(void *ctx)
{
    row_sink *s = ctx;
    enc(s, 14, NULL, 0);
    s->depth--;
    if (s->at_ts) dr_row_struct_end(s->tsw);
}
static void rs_list_begin(void *ctx)
{
    row_sink *s = ctx;
    enc(s, 15, NULL, 0);
    s->depth++;
    if (s->at_ts) dr_row_list_begin(s->tsw);
}
static void rs_list_end(void *ctx)
{
    row_sink *s = ctx;
    enc(s, 16, NULL, 0);
    s->depth--;
    if (s->at_ts) dr_row_list_end(s->tsw);
}
static void rs_map_begin(void *ctx)
{
    row_sink *s = ctx;
    enc(s, 17, NULL, 0);
    s->depth++;
    if (s->at_ts) dr_row_map_begin(s->tsw);
}
static void rs_map_end(void *ctx)
{
    row_sink *s = ctx;
    enc(s, 18, NULL, 0);
    s->depth--;
    if (s->at_ts) dr_row_map_end(s->tsw);
}

/* A nested Parquet column in the timestamp column: Druid parses its JSON text, which no
 * format reads as a time. */
static void rs_raw_json(void *ctx, const char *json, size_t n)
{
    row_sink *s = ctx;
    enc_len(s, 19, json, n);
    if (s->at_ts) dr_row_string(s->tsw, json, n);
}

static int rs_end_row(void *ctx, icd_error *err)
{
    row_sink *s = ctx;
    if (!icd_buf_ok(&s->row) || !icd_buf_ok(&s->scratch)) return icd_fail_nomem(err);
    int64_t ms;
    icd_error perr;
    icd_error_clear(&perr);
    int rc = dr_row_end_time(s->tsw, &ms, NULL, &perr);
    if (rc == ICD_EINVALID) {
        s->unparseable++; /* a parse exception in `read`: the row is not in Druid */
        return 0;
    }
    if (rc) { /* out of memory, or a value `read` refuses too (ICD_EUNSUPPORTED) */
        *err = perr;
        return rc;
    }
    if (!s->have_last || ms < s->last_start || ms >= s->last_end) {
        ICD_TRY(dr_granularity_bucket(&s->dc->gran, ms, &s->last_start, &s->last_end, err));
        s->have_last = s->last_end > s->last_start;
    }
    return s->on_row(s, s->pos, s->last_start, s->last_end, err);
}

static int row_sink_init(row_sink *s, const diff_ctx *dc, bool hashing, icd_error *err)
{
    memset(s, 0, sizeof *s);
    s->dc = dc;
    s->hashing = hashing;
    return dr_row_writer_new(&s->tsw, dc->ts, err);
}

static void row_sink_clear(row_sink *s)
{
    dr_row_writer_free(s->tsw);
    s->tsw = NULL;
    icd_buf_free(&s->scratch);
    icd_buf_free(&s->row);
}

static ice_row_sink as_ice_sink(row_sink *s)
{
    ice_row_sink r = {0};
    r.ctx = s;
    r.begin_file = rs_begin_file;
    r.begin_row = rs_begin_row;
    r.field = rs_field;
    r.null_value = rs_null;
    r.boolean = rs_bool;
    r.i64 = rs_i64;
    r.f32 = rs_f32;
    r.f64 = rs_f64;
    r.decimal_i64 = rs_decimal_i64;
    r.decimal_be = rs_decimal_be;
    r.date = rs_date;
    r.time = rs_time;
    r.timestamp = rs_timestamp;
    r.timestamp_int96 = rs_timestamp_int96;
    r.string = rs_string;
    r.uuid = rs_uuid;
    r.binary = rs_binary;
    r.struct_begin = rs_struct_begin;
    r.struct_end = rs_struct_end;
    r.list_begin = rs_list_begin;
    r.list_end = rs_list_end;
    r.map_begin = rs_map_begin;
    r.map_end = rs_map_end;
    r.raw_json = rs_raw_json;
    r.end_row = rs_end_row;
    return r;
}

static void row_hash(const row_sink *s, uint64_t *h1, uint64_t *h2)
{
    const char *p = s->row.data ? s->row.data : "";
    *h1 = icd_hash_bytes(p, s->row.len);
    /* a second, independent hash: the same bytes behind a different prefix */
    uint64_t salt = 0x9e3779b97f4a7c15ull ^ s->row.len;
    uint64_t acc = icd_hash_u64(salt);
    size_t i = 0;
    for (; i + 8 <= s->row.len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        acc = icd_hash_u64(acc ^ w) * 0xff51afd7ed558ccdull + i;
    }
    uint64_t w = 0;
    memcpy(&w, p + i, s->row.len - i);
    *h2 = icd_hash_u64(acc ^ w ^ ((uint64_t)(s->row.len - i) << 56));
}

/* ---- phase 1 ------------------------------------------------------------------------ */

static int p1_removed_row(row_sink *s, int64_t pos, int64_t start, int64_t end, icd_error *err)
{
    (void)pos;
    bucket *b;
    ICD_TRY(bucket_get(&s->file->buckets, start, end, &b, err));
    b->rem++;
    return 0;
}

static int p1_added_row(row_sink *s, int64_t pos, int64_t start, int64_t end, icd_error *err)
{
    (void)pos;
    bucket *b;
    ICD_TRY(bucket_get(&s->file->buckets, start, end, &b, err));
    b->add++;
    return 0;
}

/* Changed file, pass B first: positions live in B and per-bucket counts. */
static int p1_changed_b(row_sink *s, int64_t pos, int64_t start, int64_t end, icd_error *err)
{
    bucket *b;
    ICD_TRY(bitmap_set(&s->file->sb, pos, err));
    ICD_TRY(bucket_get(&s->file->buckets, start, end, &b, err));
    b->cb++;
    return 0;
}

/* Pass A: a position live in A and not in B is a removed row. */
static int p1_changed_a(row_sink *s, int64_t pos, int64_t start, int64_t end, icd_error *err)
{
    bucket *b;
    ICD_TRY(bitmap_set(&s->file->sa, pos, err));
    ICD_TRY(bucket_get(&s->file->buckets, start, end, &b, err));
    b->ca++;
    if (!bitmap_has(&s->file->sb, pos)) {
        b->rem++;
        b->rem_del++;
    }
    return 0;
}

/* Little-endian integer bound of 4 or 8 bytes. */
static bool bound_int(const uint8_t *p, uint32_t n, int64_t *out)
{
    if (n == 8) {
        uint64_t u = 0;
        for (int i = 7; i >= 0; i--)
            u = u << 8 | p[i];
        *out = (int64_t)u;
        return true;
    }
    if (n == 4) {
        uint32_t u = 0;
        for (int i = 3; i >= 0; i--)
            u = u << 8 | p[i];
        *out = (int32_t)u;
        return true;
    }
    return false;
}

/* The __time of a row whose timestamp column holds the Iceberg value `v` (a column bound)
 * in a file of format `fmt`: the value goes through the same row writer as the rows (the
 * file format's reader rules, then the timestampSpec). False when Druid would not parse it,
 * or when the mapping from the column's values to __time is not known to be
 * non-decreasing (then the file is read). A Parquet microsecond timestamp may be stored as
 * INT96, which Druid floors to millis where TIMESTAMP_MICROS truncates toward zero: a
 * lower bound takes the floor, an upper one the truncation, so [lower, upper] holds the
 * rows' __time either way. */
static bool bound_ms(row_sink *s, ice_file_format fmt, int64_t v, bool lower, int64_t *ms)
{
    const diff_ctx *dc = s->dc;
    ice_type_kind t = dc->ts_field->type->kind;
    dr_row_writer *w = s->tsw;
    dr_row_set_dialect(w, dr_dialect_of_format(fmt));
    dr_row_begin(w, 0);
    dr_row_field(w, dc->ts->column, strlen(dc->ts->column));
    switch (t) {
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
        if (fmt == ICE_FORMAT_PARQUET && lower && v < 0 && v % 1000)
            dr_row_timestamp(w, v / 1000 - 1, 3, t == ICE_T_TIMESTAMPTZ); /* INT96: floor */
        else
            dr_row_timestamp(w, v, 6, t == ICE_T_TIMESTAMPTZ);
        break;
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        dr_row_timestamp(w, v, 9, t == ICE_T_TIMESTAMPTZ_NS);
        break;
    case ICE_T_INT:
    case ICE_T_LONG:
        dr_row_long(w, v);
        break;
    case ICE_T_DATE:
        dr_row_date(w, (int32_t)v); /* a 4-byte bound */
        break;
    default:
        dr_row_null(w);
        break;
    }
    dr_tsv_kind kind;
    icd_error e;
    icd_error_clear(&e);
    if (dr_row_end_time(w, ms, &kind, &e)) return false;
    switch (kind) {
    case DR_TSV_LONG: /* every reader maps these types to longs non-decreasingly, and the
                       * numeric formats are non-decreasing in the long */
        if (t != ICE_T_TIMESTAMP && t != ICE_T_TIMESTAMPTZ && t != ICE_T_TIMESTAMP_NS &&
            t != ICE_T_TIMESTAMPTZ_NS && t != ICE_T_INT && t != ICE_T_LONG && t != ICE_T_DATE)
            return false;
        return dc->ts->format == DR_TS_AUTO || dc->ts->format == DR_TS_MILLIS ||
               dc->ts->format == DR_TS_POSIX || dc->ts->format == DR_TS_MICRO ||
               dc->ts->format == DR_TS_NANO;
    case DR_TSV_STRING: /* a date's text (ORC, generic): ISO dates sort as their days */
        return t == ICE_T_DATE && (dc->ts->format == DR_TS_AUTO || dc->ts->format == DR_TS_ISO);
    default:
        return false;
    }
}

/* True (with the bucket) when the file's statistics prove every row is in one bucket. */
static bool single_bucket(row_sink *s, const ice_content_file *f, int64_t *start, int64_t *end)
{
    const diff_ctx *dc = s->dc;
    if (!dc->ts_field || f->record_count < 0) return false;
    const ice_col_stats *st = ice_content_file_stats(f, dc->ts_field->id);
    if (!st || st->null_count != 0 || !st->has_lower || !st->has_upper) return false;
    int64_t lo, hi, lo_ms, hi_ms, s1, e1, s2, e2;
    if (!bound_int(st->lower, st->lower_len, &lo) || !bound_int(st->upper, st->upper_len, &hi))
        return false;
    /* a date column promoted to a timestamp keeps 4-byte date bounds */
    if ((st->lower_len == 4) !=
        (dc->ts_field->type->kind == ICE_T_INT || dc->ts_field->type->kind == ICE_T_DATE))
        return false;
    if (lo > hi || !bound_ms(s, f->format, lo, true, &lo_ms) ||
        !bound_ms(s, f->format, hi, false, &hi_ms))
        return false;
    icd_error e;
    if (dr_granularity_bucket(&dc->gran, lo_ms, &s1, &e1, &e) ||
        dr_granularity_bucket(&dc->gran, hi_ms, &s2, &e2, &e))
        return false;
    if (s1 != s2) return false;
    *start = s1;
    *end = e1;
    return true;
}

static int read_task(ice_scan_reader *r, const ice_scan_task *t, row_sink *s, dfile *f,
                     icd_error *err)
{
    ice_row_sink rs = as_ice_sink(s);
    return ice_scan_reader_read_task(r, t, &rs, &f->stats, err);
}

static int phase1_file(void *ctx, size_t i, icd_error *err)
{
    diff_ctx *dc = ctx;
    dfile *f = &dc->files[i];
    int64_t start, end;
    row_sink s;
    int rc = row_sink_init(&s, dc, false, err);
    if (rc) {
        row_sink_clear(&s);
        return rc;
    }
    s.file = f;
    /* Whole files from statistics: removed ones always (with deletes the count is
     * unknown, the interval still certain), added ones only without deletes (an append
     * interval must really have rows). */
    const ice_scan_task *t = f->kind == FK_REMOVED ? f->ta : f->tb;
    if (f->kind != FK_CHANGED && (f->kind == FK_REMOVED || t->ndeletes == 0)) {
        if (single_bucket(&s, t->data, &start, &end)) {
            bucket *b;
            rc = bucket_get(&f->buckets, start, end, &b, err);
            if (!rc) {
                bool exact = t->ndeletes == 0;
                if (f->kind == FK_REMOVED) {
                    b->rem += exact ? t->data->record_count : 0;
                    b->rem_unknown = !exact;
                } else {
                    b->add += exact ? t->data->record_count : 0;
                    b->add_unknown = !exact;
                }
            }
            row_sink_clear(&s);
            return rc;
        }
    }
    f->read1 = true;
    if (f->kind == FK_REMOVED) {
        s.on_row = p1_removed_row;
        rc = read_task(dc->reader_ts, f->ta, &s, f, err);
    } else if (f->kind == FK_ADDED) {
        s.on_row = p1_added_row;
        rc = read_task(dc->reader_ts, f->tb, &s, f, err);
    } else {
        s.on_row = p1_changed_b;
        rc = read_task(dc->reader_ts, f->tb, &s, f, err);
        if (!rc) {
            s.on_row = p1_changed_a;
            rc = read_task(dc->reader_ts, f->ta, &s, f, err);
        }
        for (size_t k = 0; !rc && k < f->buckets.n; k++) {
            bucket *b = &f->buckets.v[k];
            b->add = b->cb - (b->ca - b->rem); /* B-live rows that were not live in A */
        }
    }
    pthread_mutex_lock(&dc->lock);
    dc->unparseable += s.unparseable;
    pthread_mutex_unlock(&dc->lock);
    row_sink_clear(&s);
    return rc;
}

/* ---- phase 2 ------------------------------------------------------------------------ */

static bool is_mixed(const row_sink *s, int64_t start)
{
    return bucket_find(&s->dc->mixed, start) != NULL;
}

static int p2_removed_row(row_sink *s, int64_t pos, int64_t start, int64_t end, icd_error *err)
{
    (void)pos;
    (void)end;
    if (!is_mixed(s, start)) return 0;
    uint64_t h1, h2;
    row_hash(s, &h1, &h2);
    return hrows_push(&s->file->rem, start, h1, h2, err);
}

static int p2_added_row(row_sink *s, int64_t pos, int64_t start, int64_t end, icd_error *err)
{
    (void)pos;
    (void)end;
    if (!is_mixed(s, start)) return 0;
    uint64_t h1, h2;
    row_hash(s, &h1, &h2);
    return hrows_push(&s->file->add, start, h1, h2, err);
}

static int p2_changed_b(row_sink *s, int64_t pos, int64_t start, int64_t end, icd_error *err)
{
    if (bitmap_has(&s->file->sa, pos)) return 0;
    return p2_added_row(s, pos, start, end, err);
}

static int p2_changed_a(row_sink *s, int64_t pos, int64_t start, int64_t end, icd_error *err)
{
    if (bitmap_has(&s->file->sb, pos)) return 0;
    return p2_removed_row(s, pos, start, end, err);
}

static int phase2_file(void *ctx, size_t i, icd_error *err);

/* The phases run through these: the file, then the progress callback. */
static void report_file(diff_ctx *dc, int phase, size_t i)
{
    if (!dc->opts || !dc->opts->on_file) return;
    const dfile *f = &dc->files[i];
    const ice_content_file *d = (f->ta ? f->ta : f->tb)->data;
    dc->opts->on_file(dc->opts->on_file_ctx, phase, dc->nfiles, d->file_size);
}

static int phase1_step(void *ctx, size_t i, icd_error *err)
{
    int rc = phase1_file(ctx, i, err);
    if (!rc) report_file(ctx, 1, i);
    return rc;
}

static int phase2_step(void *ctx, size_t i, icd_error *err)
{
    int rc = phase2_file(ctx, i, err);
    if (!rc) report_file(ctx, 2, i);
    return rc;
}

static int phase2_file(void *ctx, size_t i, icd_error *err)
{
    diff_ctx *dc = ctx;
    dfile *f = &dc->files[i];
    if (!f->phase2) return 0;
    row_sink s;
    int rc = row_sink_init(&s, dc, true, err);
    if (rc) {
        row_sink_clear(&s);
        return rc;
    }
    s.file = f;
    f->read2 = true;
    if (f->kind == FK_REMOVED) {
        s.on_row = p2_removed_row;
        rc = read_task(dc->reader_all, f->ta, &s, f, err);
    } else if (f->kind == FK_ADDED) {
        s.on_row = p2_added_row;
        rc = read_task(dc->reader_all, f->tb, &s, f, err);
    } else {
        s.on_row = p2_changed_b;
        rc = read_task(dc->reader_all, f->tb, &s, f, err);
        if (!rc) {
            s.on_row = p2_changed_a;
            rc = read_task(dc->reader_all, f->ta, &s, f, err);
        }
    }
    row_sink_clear(&s);
    return rc;
}

static int cmp_hrow(const void *pa, const void *pb)
{
    const hrow *a = pa, *b = pb;
    if (a->bucket != b->bucket) return a->bucket < b->bucket ? -1 : 1;
    if (a->h1 != b->h1) return a->h1 < b->h1 ? -1 : 1;
    if (a->h2 != b->h2) return a->h2 < b->h2 ? -1 : 1;
    return 0;
}

static int concat_rows(diff_ctx *dc, bool removed, hrows *out, icd_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < dc->nfiles; i++)
        n += removed ? dc->files[i].rem.n : dc->files[i].add.n;
    out->v = malloc((n ? n : 1) * sizeof *out->v);
    if (!out->v) return icd_fail_nomem(err);
    out->cap = n;
    for (size_t i = 0; i < dc->nfiles; i++) {
        hrows *r = removed ? &dc->files[i].rem : &dc->files[i].add;
        if (r->n) memcpy(out->v + out->n, r->v, r->n * sizeof *r->v);
        out->n += r->n;
        free(r->v);
        memset(r, 0, sizeof *r);
    }
    qsort(out->v, out->n, sizeof *out->v, cmp_hrow);
    return 0;
}

/* Cancels equal rows of the mixed buckets; what remains counts into mrem / madd. */
static int cancel_rows(diff_ctx *dc, bucket_set *all, icd_error *err)
{
    hrows rem = {0}, add = {0};
    int rc = concat_rows(dc, true, &rem, err);
    if (!rc) rc = concat_rows(dc, false, &add, err);
    size_t i = 0, k = 0;
    while (!rc && (i < rem.n || k < add.n)) {
        int c = i >= rem.n ? 1 : k >= add.n ? -1 : cmp_hrow(&rem.v[i], &add.v[k]);
        if (c == 0) {
            i++;
            k++;
            continue;
        }
        const hrow *h = c < 0 ? &rem.v[i++] : &add.v[k++];
        bucket *b;
        rc = bucket_get(all, h->bucket, 0, &b, err); /* exists: phase 1 made it */
        if (!rc) *(c < 0 ? &b->mrem : &b->madd) += 1;
    }
    free(rem.v);
    free(add.v);
    return rc;
}

/* ---- planning both snapshots -------------------------------------------------------- */

static int check_ancestry(const ice_metadata *md, const ice_snapshot *a, const ice_snapshot *b,
                          icd_error *err)
{
    const ice_snapshot *s = b;
    size_t steps = 0, limit = ice_metadata_snapshot_count(md) + 1;
    while (s && s->snapshot_id != a->snapshot_id) {
        if (!s->has_parent) break;
        const ice_snapshot *p = ice_metadata_snapshot(md, s->parent_snapshot_id);
        if (!p)
            return icd_fail(err, ICD_EINVALID, ice_metadata_file(md), -1,
                            "cannot tell whether snapshot %lld is an ancestor of %lld: snapshot "
                            "%lld (parent of %lld) is no longer in the table metadata",
                            (long long)a->snapshot_id, (long long)b->snapshot_id,
                            (long long)s->parent_snapshot_id, (long long)s->snapshot_id);
        s = p;
        if (++steps > limit)
            return icd_fail(err, ICD_ECORRUPT, ice_metadata_file(md), -1,
                            "snapshot parents form a cycle");
    }
    if (s && s->snapshot_id == a->snapshot_id) return 0;
    /* is B an ancestor of A? then A is after B */
    for (s = a, steps = 0; s && s->has_parent && steps <= limit; steps++) {
        s = ice_metadata_snapshot(md, s->parent_snapshot_id);
        if (s && s->snapshot_id == b->snapshot_id)
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "--from-snapshot %lld comes after --to-snapshot %lld (the second is "
                            "an ancestor of the first)",
                            (long long)a->snapshot_id, (long long)b->snapshot_id);
    }
    return icd_fail(err, ICD_EINVALID, NULL, -1,
                    "snapshot %lld is not an ancestor of snapshot %lld (another branch, or "
                    "history rewritten by a rollback)",
                    (long long)a->snapshot_id, (long long)b->snapshot_id);
}

/* `current`: B is the table's current state (no --to-snapshot), read like the ingestion
 * that follows reads it, with the table's current schema; otherwise by id (its own). */
static int plan_snapshot(diff_ctx *dc, int64_t id, bool current, int threads, ice_scan_plan **out,
                         icd_error *err)
{
    ice_scan_opts so = {0};
    so.select.kind = current ? ICE_SELECT_CURRENT : ICE_SELECT_ID;
    so.select.snapshot_id = id;
    so.case_sensitive = true;
    so.threads = threads;
    so.keep_stats = true; /* timestamp bounds decide whole files */
    return ice_scan_plan_build(dc->io, dc->md, &so, out, err);
}

static bool same_deletes(const ice_scan_task *a, const ice_scan_task *b)
{
    if (a->ndeletes != b->ndeletes || a->data->data_seq != b->data->data_seq) return false;
    for (size_t i = 0; i < a->ndeletes; i++) {
        bool found = false;
        for (size_t k = 0; k < b->ndeletes && !found; k++)
            found = !strcmp(a->deletes[i]->path, b->deletes[k]->path) &&
                    a->deletes[i]->content_offset == b->deletes[k]->content_offset &&
                    a->deletes[i]->data_seq == b->deletes[k]->data_seq;
        if (!found) return false;
    }
    return true;
}

static void path_key(const char *path, const char **k, size_t *klen)
{
    *k = ice_location_key(path, strlen(path), klen);
}

/* Lists the data files whose live rows may differ between the two plans. */
static int collect_files(diff_ctx *dc, const ice_scan_plan *pa, const ice_scan_plan *pb,
                         icd_error *err)
{
    size_t na = ice_scan_plan_task_count(pa), nb = ice_scan_plan_task_count(pb);
    icd_map *inb = NULL;
    ICD_TRY(icd_map_new(&inb, nb, err));
    int rc = 0;
    for (size_t i = 0; i < nb && !rc; i++) {
        const char *k;
        size_t kl;
        path_key(ice_scan_plan_task(pb, i)->data->path, &k, &kl);
        rc = icd_map_put(inb, k, kl, icd_hash_bytes(k, kl), i + 1, err);
    }
    bool *matched = calloc(nb ? nb : 1, sizeof *matched);
    dc->files = calloc(na + nb ? na + nb : 1, sizeof *dc->files);
    if (!rc && (!matched || !dc->files)) rc = icd_fail_nomem(err);
    for (size_t i = 0; i < na && !rc; i++) {
        const ice_scan_task *ta = ice_scan_plan_task(pa, i);
        const char *k;
        size_t kl;
        path_key(ta->data->path, &k, &kl);
        uint64_t *v = icd_map_find(inb, k, kl, icd_hash_bytes(k, kl));
        const ice_scan_task *tb = v ? ice_scan_plan_task(pb, (size_t)(*v - 1)) : NULL;
        if (v) matched[*v - 1] = true;
        if (tb && same_deletes(ta, tb)) continue;
        dfile *f = &dc->files[dc->nfiles++];
        f->kind = tb ? FK_CHANGED : FK_REMOVED;
        f->ta = ta;
        f->tb = tb;
    }
    for (size_t i = 0; i < nb && !rc; i++) {
        if (matched[i]) continue;
        dfile *f = &dc->files[dc->nfiles++];
        f->kind = FK_ADDED;
        f->tb = ice_scan_plan_task(pb, i);
    }
    free(matched);
    icd_map_free(inb);
    return rc;
}

/* ---- the result --------------------------------------------------------------------- */

static int cmp_interval(const void *pa, const void *pb)
{
    const dr_diff_interval *a = pa, *b = pb;
    return a->start_ms < b->start_ms ? -1 : a->start_ms > b->start_ms;
}

static int classify(diff_ctx *dc, bucket_set *all, dr_diff *out, icd_error *err)
{
    out->replace = calloc(all->n ? all->n : 1, sizeof *out->replace);
    out->append = calloc(all->n ? all->n : 1, sizeof *out->append);
    if (!out->replace || !out->append) return icd_fail_nomem(err);
    (void)dc;
    for (size_t i = 0; i < all->n; i++) {
        const bucket *b = &all->v[i];
        dr_diff_interval iv = {b->start, b->end, 0, 0};
        if (b->mixed) {
            if (b->mrem > 0) {
                iv.rows_removed = b->mrem;
                iv.rows_added = b->madd;
                out->replace[out->n_replace++] = iv;
            } else if (b->madd > 0) { /* new rows among rewritten ones: see the top */
                iv.rows_added = b->madd;
                out->replace[out->n_replace++] = iv;
            }
            continue;
        }
        if (b->rem > 0 || b->rem_unknown) {
            iv.rows_removed = b->rem_unknown ? -1 : b->rem;
            iv.rows_added = b->add_unknown ? -1 : b->add;
            out->replace[out->n_replace++] = iv;
        } else if (b->add > 0 || b->add_unknown) {
            iv.rows_added = b->add_unknown ? -1 : b->add;
            out->append[out->n_append++] = iv;
        }
    }
    qsort(out->replace, out->n_replace, sizeof *out->replace, cmp_interval);
    qsort(out->append, out->n_append, sizeof *out->append, cmp_interval);
    return 0;
}

/* Merges the files' phase-1 counts into one set and marks the mixed buckets. */
static int merge_phase1(diff_ctx *dc, bucket_set *all, icd_error *err)
{
    for (size_t i = 0; i < dc->nfiles; i++) {
        const bucket_set *fb = &dc->files[i].buckets;
        for (size_t k = 0; k < fb->n; k++) {
            const bucket *src = &fb->v[k];
            bucket *b;
            ICD_TRY(bucket_get(all, src->start, src->end, &b, err));
            b->rem += src->rem;
            b->rem_del += src->rem_del;
            b->add += src->add;
            b->rem_unknown |= src->rem_unknown;
            b->add_unknown |= src->add_unknown;
        }
    }
    for (size_t i = 0; i < all->n; i++) {
        bucket *b = &all->v[i];
        /* rows can only have moved when some left with their whole file */
        bool moved_out = b->rem > b->rem_del || b->rem_unknown;
        bool added = b->add > 0 || b->add_unknown;
        if (moved_out && added) {
            b->mixed = true;
            bucket *m;
            ICD_TRY(bucket_get(&dc->mixed, b->start, b->end, &m, err));
        }
    }
    for (size_t i = 0; i < dc->nfiles; i++) {
        dfile *f = &dc->files[i];
        for (size_t k = 0; k < f->buckets.n && !f->phase2; k++) {
            const bucket *src = &f->buckets.v[k];
            f->phase2 = (src->rem > 0 || src->add > 0 || src->rem_unknown || src->add_unknown) &&
                        bucket_find(&dc->mixed, src->start);
        }
        if (!f->phase2) { /* its position sets are no longer needed */
            free(f->sa.w);
            free(f->sb.w);
            memset(&f->sa, 0, sizeof f->sa);
            memset(&f->sb, 0, sizeof f->sb);
        }
    }
    return 0;
}

static int compute(diff_ctx *dc, const dr_diff_opts *opts, dr_diff *out, icd_error *err)
{
    const ice_snapshot *cur = ice_metadata_current_snapshot(dc->md);
    const ice_snapshot *a = ice_metadata_snapshot(dc->md, opts->from_snapshot);
    char ids[512];
    ice_metadata_format_snapshot_ids(dc->md, 10, ids, sizeof ids);
    if (!a)
        return icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(dc->md), -1,
                        "--from-snapshot %lld: no such snapshot in the table (%s)",
                        (long long)opts->from_snapshot, ids);
    const ice_snapshot *b = cur;
    if (opts->has_to) {
        b = ice_metadata_snapshot(dc->md, opts->to_snapshot);
        if (!b)
            return icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(dc->md), -1,
                            "--to-snapshot %lld: no such snapshot in the table (%s)",
                            (long long)opts->to_snapshot, ids);
    }
    if (!b)
        return icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(dc->md), -1,
                        "the table has no current snapshot");
    out->from_snapshot = a->snapshot_id;
    out->to_snapshot = b->snapshot_id;
    if (a != b) ICD_TRY(check_ancestry(dc->md, a, b, err));

    int threads = opts->threads > 1 ? opts->threads : 1;
    ice_scan_plan *pa = NULL, *pb = NULL;
    bucket_set all = {0};
    int rc = plan_snapshot(dc, a->snapshot_id, false, threads, &pa, err);
    if (!rc) rc = plan_snapshot(dc, b->snapshot_id, !opts->has_to, threads, &pb, err);
    const ice_schema *schema = pb ? ice_scan_plan_schema(pb) : NULL;
    if (!rc) rc = collect_files(dc, pa, pb, err);
    if (!rc && dc->nfiles) {
        const char *col = dc->ts->column;
        for (size_t i = 0; i < schema->root.nfields; i++)
            if (col && !strcmp(schema->root.fields[i].name, col))
                dc->ts_field = &schema->root.fields[i];
        /* without the column every row reads null: with a missingValue all rows go to its
         * bucket; without one every row would be unparseable and silently dropped, which
         * would hide every change: refuse */
        if (!dc->ts_field && !dc->ts->has_missing)
            rc = icd_fail(err, ICD_EINVALID, ice_metadata_file(dc->md), -1,
                          "timestampSpec column '%s' is not a top-level column of snapshot "
                          "%lld's schema (and there is no missingValue)",
                          col ? col : "", (long long)b->snapshot_id);
        const char *proj = dc->ts_field ? dc->ts_field->name : schema->root.fields[0].name;
        if (!rc) rc = ice_scan_reader_new(dc->io, dc->md, schema, &proj, 1, &dc->reader_ts, err);
        if (!rc) rc = icd_parallel_for(dc->nfiles, threads, phase1_step, dc, err);
        if (!rc) rc = merge_phase1(dc, &all, err);
        if (!rc && dc->mixed.n) {
            /* only the columns Druid's reader keeps (the spec's ColumnsFilter, as read and
             * serve ship them): rows that differ in a pruned column are the same row to
             * Druid and cancel */
            const char **cols = NULL;
            size_t ncols = 0;
            rc = dr_spec_columns_filter(dc->spec, schema, &cols, &ncols, err);
            if (!rc)
                rc = ice_scan_reader_new(dc->io, dc->md, schema, cols, ncols, &dc->reader_all, err);
            free(cols);
            if (!rc) rc = icd_parallel_for(dc->nfiles, threads, phase2_step, dc, err);
            if (!rc) rc = cancel_rows(dc, &all, err);
        }
    }
    if (!rc) rc = classify(dc, &all, out, err);
    for (size_t i = 0; !rc && i < dc->nfiles; i++) {
        const dfile *f = &dc->files[i];
        const ice_content_file *d = (f->ta ? f->ta : f->tb)->data;
        if (f->read1 || f->read2) {
            out->files_read++;
            out->bytes_read += d->file_size > 0 ? d->file_size : 0;
        } else {
            out->files_from_stats++;
        }
        out->files_read += (int64_t)f->stats.delete_files_loaded;
    }
    out->rows_unparseable = dc->unparseable;
    bucket_set_free(&all);
    ice_scan_plan_free(pa);
    ice_scan_plan_free(pb);
    return rc;
}

int dr_diff_compute(const dr_spec *spec, icd_fileio *io, const dr_diff_opts *opts, dr_diff *out,
                    icd_error *err)
{
    memset(out, 0, sizeof *out);
    diff_ctx dc;
    memset(&dc, 0, sizeof dc);
    dc.spec = spec;
    dc.io = io;
    dc.ts = dr_spec_timestamp_spec(spec);
    dc.gran = opts->granularity ? *opts->granularity : dr_spec_granularity(spec)->segment;
    out->granularity = dc.gran;
    const char *ds = dr_spec_data_source(spec);
    if (ds && !(out->data_source = strdup(ds))) return icd_fail_nomem(err);
    pthread_mutex_init(&dc.lock, NULL);
    ice_metadata *md = NULL;
    int rc = dr_plan_load_metadata(spec, io, &md, err);
    dc.md = md;
    dc.opts = opts;
    if (!rc) rc = compute(&dc, opts, out, err);
    for (size_t i = 0; i < dc.nfiles; i++)
        dfile_clear(&dc.files[i]);
    free(dc.files);
    bucket_set_free(&dc.mixed);
    ice_scan_reader_free(dc.reader_ts);
    ice_scan_reader_free(dc.reader_all);
    ice_metadata_free(md);
    pthread_mutex_destroy(&dc.lock);
    if (rc) dr_diff_free(out);
    return rc;
}

void dr_diff_free(dr_diff *d)
{
    if (!d) return;
    free(d->replace);
    free(d->append);
    free(d->data_source);
    d->replace = d->append = NULL;
    d->data_source = NULL;
    d->n_replace = d->n_append = 0;
}

/* ---- JSON --------------------------------------------------------------------------- */

/* Druid's instant text: 2024-01-01T00:00:00.000Z. */
static void put_instant(icd_buf *b, int64_t ms)
{
    int64_t days, rem, y;
    int mo, d;
    dr_split_ms(ms, &days, &rem);
    icd_civil_from_days(days, &y, &mo, &d);
    /* Joda prints years past 9999 without a sign and negative years with '-' */
    icd_buf_printf(b, y < 0 ? "-%04lld-%02d-%02d" : "%04lld-%02d-%02d", (long long)(y < 0 ? -y : y),
                   mo, d);
    icd_buf_printf(b, "T%02d:%02d:%02d.%03dZ", (int)(rem / 3600000), (int)(rem / 60000 % 60),
                   (int)(rem / 1000 % 60), (int)(rem % 1000));
}

void dr_diff_interval_text(icd_buf *b, const dr_diff_interval *iv)
{
    if (iv->start_ms == INT64_MIN && iv->end_ms == INT64_MAX) {
        /* granularity ALL: Druid's ETERNITY (JodaUtils.MIN_INSTANT / MAX_INSTANT) */
        icd_buf_puts(b, "-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z");
        return;
    }
    put_instant(b, iv->start_ms);
    icd_buf_putc(b, '/');
    put_instant(b, iv->end_ms);
}

static void put_interval_string(icd_buf *b, const dr_diff_interval *iv)
{
    icd_buf t = ICD_BUF_INIT;
    dr_diff_interval_text(&t, iv);
    if (!icd_buf_ok(&t))
        b->oom = true;
    else
        icd_json_str(b, t.data ? t.data : "", t.len);
    icd_buf_free(&t);
}

static void put_list(icd_buf *b, const dr_diff_interval *v, size_t n)
{
    icd_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) icd_buf_putc(b, ',');
        put_interval_string(b, &v[i]);
    }
    icd_buf_putc(b, ']');
}

static void put_counts(icd_buf *b, const dr_diff_interval *v, size_t n, bool removed,
                       bool skip_zero)
{
    icd_buf_putc(b, '{');
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        int64_t c = removed ? v[i].rows_removed : v[i].rows_added;
        if (skip_zero && c == 0) continue;
        if (!first) icd_buf_putc(b, ',');
        first = false;
        put_interval_string(b, &v[i]);
        icd_buf_putc(b, ':');
        icd_json_i64(b, c);
    }
    icd_buf_putc(b, '}');
}

static void put_granularity(icd_buf *b, const dr_granularity *g)
{
    if (g->name[0]) {
        icd_json_cstr(b, g->name);
        return;
    }
    switch (g->kind) {
    case DR_GRAN_ALL:
        icd_json_cstr(b, "ALL");
        return;
    case DR_GRAN_NONE:
        icd_json_cstr(b, "NONE");
        return;
    case DR_GRAN_DURATION:
        icd_buf_puts(b, "{\"type\":\"duration\",\"duration\":");
        icd_json_i64(b, g->duration_ms);
        break;
    case DR_GRAN_PERIOD: {
        const dr_period *p = &g->period;
        icd_buf_puts(b, "{\"type\":\"period\",\"period\":\"P");
        if (p->years) icd_buf_printf(b, "%dY", (int)p->years);
        if (p->months) icd_buf_printf(b, "%dM", (int)p->months);
        if (p->weeks) icd_buf_printf(b, "%dW", (int)p->weeks);
        if (p->days) icd_buf_printf(b, "%dD", (int)p->days);
        if (p->hours || p->minutes || p->seconds || p->millis) icd_buf_putc(b, 'T');
        if (p->hours) icd_buf_printf(b, "%dH", (int)p->hours);
        if (p->minutes) icd_buf_printf(b, "%dM", (int)p->minutes);
        if (p->seconds || p->millis) {
            icd_buf_printf(b, "%d", (int)p->seconds);
            if (p->millis) icd_buf_printf(b, ".%03d", (int)p->millis);
            icd_buf_putc(b, 'S');
        }
        icd_buf_putc(b, '"');
        if (g->time_zone[0]) {
            icd_buf_puts(b, ",\"timeZone\":");
            icd_json_cstr(b, g->time_zone);
        }
        break;
    }
    }
    if (g->has_origin) {
        icd_buf_puts(b, ",\"origin\":\"");
        put_instant(b, g->origin_ms);
        icd_buf_putc(b, '"');
    }
    icd_buf_putc(b, '}');
}

int dr_diff_write_json(const dr_diff *d, icd_buf *b, icd_error *err)
{
    icd_buf_puts(b, "{\"dataSource\":");
    if (d->data_source)
        icd_json_cstr(b, d->data_source);
    else
        icd_buf_puts(b, "null");
    icd_buf_puts(b, ",\"fromSnapshot\":");
    icd_json_i64(b, d->from_snapshot);
    icd_buf_puts(b, ",\"toSnapshot\":");
    icd_json_i64(b, d->to_snapshot);
    /* the ids as strings too: jq 1.6 and JavaScript read JSON numbers as doubles */
    icd_buf_printf(b, ",\"fromSnapshotStr\":\"%lld\",\"toSnapshotStr\":\"%lld\"",
                   (long long)d->from_snapshot, (long long)d->to_snapshot);
    icd_buf_puts(b, ",\"granularity\":");
    put_granularity(b, &d->granularity);
    icd_buf_puts(b, ",\"replaceIntervals\":");
    put_list(b, d->replace, d->n_replace);
    icd_buf_puts(b, ",\"appendIntervals\":");
    put_list(b, d->append, d->n_append);
    icd_buf_puts(b, ",\"rowsRemoved\":");
    put_counts(b, d->replace, d->n_replace, true, false);
    icd_buf_puts(b, ",\"rowsAdded\":");
    /* every interval that received rows: the append list, and replace intervals that also
     * received some */
    icd_buf_putc(b, '{');
    size_t i = 0, k = 0;
    bool first = true;
    while (i < d->n_replace || k < d->n_append) {
        const dr_diff_interval *iv;
        if (k >= d->n_append ||
            (i < d->n_replace && d->replace[i].start_ms < d->append[k].start_ms))
            iv = &d->replace[i++];
        else
            iv = &d->append[k++];
        if (iv->rows_added == 0) continue;
        if (!first) icd_buf_putc(b, ',');
        first = false;
        put_interval_string(b, iv);
        icd_buf_putc(b, ':');
        icd_json_i64(b, iv->rows_added);
    }
    icd_buf_putc(b, '}');
    icd_buf_puts(b, ",\"filesRead\":");
    icd_json_i64(b, d->files_read);
    icd_buf_puts(b, ",\"bytesRead\":");
    icd_json_i64(b, d->bytes_read);
    icd_buf_puts(b, ",\"filesDecidedByStatistics\":");
    icd_json_i64(b, d->files_from_stats);
    icd_buf_puts(b, ",\"rowsUnparseable\":");
    icd_json_i64(b, d->rows_unparseable);
    icd_buf_puts(b, "}\n");
    return icd_buf_ok(b) ? 0 : icd_fail_nomem(err);
}
