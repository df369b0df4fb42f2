/*
 * ORC reader: the file tail (postscript, footer, stripe statistics), the schema tree with
 * Iceberg field ids, and columnar batches read stripe by stripe.
 *
 *   orc_file_open()        reads and checks the tail only (never the whole file)
 *   orc_file_root() ...    schema tree: names, ORC kinds, iceberg.id / iceberg.required
 *   orc_file_*_stats()     file and stripe column statistics (min/max/hasNull) for pruning
 *   orc_reader_open()      selects top-level columns (by orc_type, found by id or name)
 *   orc_reader_next()      batches of up to `batch_rows` rows: per column a null flag and
 *                          typed values per row, plus the file row position of row 0
 *
 * Memory is bounded by one stripe of the selected columns (their decompressed streams)
 * plus one batch. Values in a batch (strings included) stay valid until the next call to
 * orc_reader_next() or orc_reader_free().
 */
#ifndef ICD_ORC_H
#define ICD_ORC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "io/fileio.h"

/* Type.Kind of the ORC specification. */
typedef enum orc_kind {
    ORC_BOOLEAN = 0,
    ORC_BYTE = 1,
    ORC_SHORT = 2,
    ORC_INT = 3,
    ORC_LONG = 4,
    ORC_FLOAT = 5,
    ORC_DOUBLE = 6,
    ORC_STRING = 7,
    ORC_BINARY = 8,
    ORC_TIMESTAMP = 9,
    ORC_LIST = 10,
    ORC_MAP = 11,
    ORC_STRUCT = 12,
    ORC_UNION = 13,
    ORC_DECIMAL = 14,
    ORC_DATE = 15,
    ORC_VARCHAR = 16,
    ORC_CHAR = 17,
    ORC_TIMESTAMP_INSTANT = 18
} orc_kind;

/* "boolean", "tinyint", ... "timestamp with local time zone" (Hive type names). */
const char *orc_kind_name(orc_kind kind);

typedef struct orc_attr {
    const char *key; /* NUL-terminated */
    const char *value;
} orc_attr;

/* One node of the schema tree; its id is the ORC column id (pre-order position). */
typedef struct orc_type {
    uint32_t id;
    orc_kind kind;
    const char *name;    /* field name in the parent struct; "" for the root, list items,
                            map keys/values and union variants */
    int64_t field_id;    /* iceberg.id attribute, or -1 when absent */
    bool required;       /* iceberg.required = "true" */
    uint32_t precision;  /* DECIMAL (0 when the file gives none: then 38) */
    uint32_t scale;      /* DECIMAL */
    uint32_t max_length; /* VARCHAR, CHAR */
    uint32_t nchildren;
    struct orc_type **children;
    struct orc_type *parent;
    uint32_t nattrs;
    orc_attr *attrs;
} orc_type;

typedef struct orc_stripe_info {
    uint64_t offset;
    uint64_t index_length;
    uint64_t data_length;
    uint64_t footer_length;
    uint64_t rows;
    uint64_t first_row; /* file row position of the stripe's first row */
} orc_stripe_info;

typedef enum orc_stats_kind {
    ORC_STATS_NONE,
    ORC_STATS_INT,       /* BYTE..LONG: min/max/sum in i */
    ORC_STATS_DOUBLE,    /* FLOAT, DOUBLE: d */
    ORC_STATS_STRING,    /* STRING, VARCHAR, CHAR: s (exact min/max only, not bounds) */
    ORC_STATS_BOOLEAN,   /* true_count */
    ORC_STATS_DECIMAL,   /* s: decimal text as written */
    ORC_STATS_DATE,      /* i: days since 1970-01-01 */
    ORC_STATS_TIMESTAMP, /* i: milliseconds since the epoch (UTC), ns: nanos below the ms */
    ORC_STATS_BINARY,
    ORC_STATS_COLLECTION
} orc_stats_kind;

typedef struct orc_stats {
    bool present; /* false: the file has no statistics for this column */
    bool has_count;
    uint64_t count; /* numberOfValues: non-null values */
    bool has_null_known;
    bool has_null;
    orc_stats_kind kind;
    bool has_min, has_max, has_sum;
    int64_t min_i, max_i, sum_i;
    int32_t min_ns, max_ns;
    double min_d, max_d, sum_d;
    const uint8_t *min_s, *max_s; /* point into the file's tail; valid while the file is open */
    size_t min_len, max_len;
    uint64_t true_count;
} orc_stats;

typedef struct orc_file orc_file;

typedef struct orc_open_opts {
    size_t max_tail_bytes;   /* 0 = default (256 MiB): footer + metadata, compressed */
    size_t max_stream_bytes; /* 0 = default (1 GiB): one decompressed stream or footer */
} orc_open_opts;

/* Opens a location through FileIO and reads its tail. */
int orc_file_open(orc_file **out, icd_fileio *io, const char *location, const orc_open_opts *opts,
                  icd_error *err);
/* Reads the tail of an already open file; with `own` the ORC file closes it when freed. */
int orc_file_open_file(orc_file **out, icd_file *f, bool own, const orc_open_opts *opts,
                       icd_error *err);
void orc_file_free(orc_file *f);

const char *orc_file_location(const orc_file *f);
uint64_t orc_file_rows(const orc_file *f);
int orc_file_compression(const orc_file *f);
uint64_t orc_file_block_size(const orc_file *f);
/* Postscript version [major, minor] (0.11 or 0.12 in practice), writer version, writer
 * code (0 ORC Java, 1 ORC C++, ...; -1 absent), software version ("" absent). */
void orc_file_version(const orc_file *f, uint32_t *major, uint32_t *minor);
uint32_t orc_file_writer_version(const orc_file *f);
int64_t orc_file_writer(const orc_file *f);
const char *orc_file_software_version(const orc_file *f);
uint32_t orc_file_row_index_stride(const orc_file *f);

/* Schema: the root (normally a STRUCT whose children are the table columns), and every
 * column by id (0..ncolumns-1). */
const orc_type *orc_file_root(const orc_file *f);
size_t orc_file_ncolumns(const orc_file *f);
const orc_type *orc_file_column(const orc_file *f, uint32_t id);
/* Searches the whole tree for an iceberg.id; NULL when absent. */
const orc_type *orc_file_find_field_id(const orc_file *f, int64_t field_id);
/* A top-level column by exact name; NULL when absent. */
const orc_type *orc_file_find_name(const orc_file *f, const char *name);

size_t orc_file_nstripes(const orc_file *f);
const orc_stripe_info *orc_file_stripe(const orc_file *f, size_t i);

/* User metadata key/value pairs of the footer. */
size_t orc_file_nmetadata(const orc_file *f);
void orc_file_metadata(const orc_file *f, size_t i, const uint8_t **key, size_t *key_len,
                       const uint8_t **value, size_t *value_len);

/* Column statistics of the whole file / of one stripe (out->present = false when the file
 * has none). Timestamps are decoded as UTC (ORC-135 minimumUtc/maximumUtc); statistics
 * written before ORC-135 only carry local-time values and are reported absent. */
void orc_file_column_stats(const orc_file *f, uint32_t column, orc_stats *out);
void orc_file_stripe_stats(const orc_file *f, size_t stripe, uint32_t column, orc_stats *out);

/* ---- batches ---- */

typedef struct orc_str {
    const char *ptr;
    size_t len;
} orc_str;

/* The values of one column (a schema node) in a batch: n entries, entry i is null when
 * nulls && nulls[i]. Which array holds the values depends on the kind:
 *   BOOLEAN (0/1), BYTE, SHORT, INT, LONG, DATE (days since 1970-01-01): i64
 *   DECIMAL: i64 (unscaled, at the type's scale) when precision <= 18, else dec16: 16 bytes
 *            per value, big-endian two's complement, at the type's scale
 *   TIMESTAMP, TIMESTAMP_INSTANT: i64 = seconds since 1970-01-01 (floor), nanos = 0..999999999
 *   FLOAT, DOUBLE: f64
 *   STRING, VARCHAR, CHAR, BINARY: str
 *   STRUCT: children[k] has the same n entries (null where the struct is null)
 *   LIST: offsets[0..n], entry i's items are children[0] entries offsets[i]..offsets[i+1)
 *   MAP: the same with children[0] = keys, children[1] = values */
typedef struct orc_vec {
    const orc_type *type;
    size_t n;
    uint8_t *nulls;
    int64_t *i64;
    int32_t *nanos;
    double *f64;
    orc_str *str;
    uint8_t *dec16;
    uint64_t *offsets;
    struct orc_vec *children;
} orc_vec;

typedef struct orc_batch {
    uint64_t row_start; /* file row position (0-based) of row 0: for position deletes */
    size_t n;           /* rows */
    size_t stripe;
    size_t ncols;
    orc_vec *cols; /* in the order the columns were selected */
} orc_batch;

typedef struct orc_reader orc_reader;

typedef struct orc_read_opts {
    size_t batch_rows;        /* 0 = default 1024 */
    const orc_type **columns; /* top-level columns to read; NULL = every column */
    size_t ncolumns;
    /* Stripe pruning: called before a stripe is read; returning false skips it (row
     * positions of later batches stay right). NULL keeps every stripe. */
    bool (*keep_stripe)(void *ctx, const orc_file *f, size_t stripe);
    void *keep_ctx;
    size_t max_batch_values; /* 0 = default (64 Mi): nested entries in one batch */
} orc_read_opts;

/* Prepares to read the selected columns. A column whose type is (or contains) a UNION is
 * ICD_EUNSUPPORTED naming the column. The reader borrows `f`. */
int orc_reader_open(orc_reader **out, orc_file *f, const orc_read_opts *opts, icd_error *err);
/* Returns 1 with *out set to the next batch, 0 at the end, or a negative error. */
int orc_reader_next(orc_reader *r, orc_batch **out, icd_error *err);
void orc_reader_free(orc_reader *r);

#endif
