/*
 * Parquet FileMetaData: the footer of a Parquet file, decoded from Thrift into plain C
 * structs. Everything (strings, arrays) lives in an arena owned by the caller (the
 * pq_file), so the whole footer is freed at once. Optional Thrift fields carry a has_*
 * flag; strings are NUL-terminated copies that also keep their length (key/value metadata
 * may hold arbitrary bytes).
 */
#ifndef ICD_PQ_METADATA_H
#define ICD_PQ_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"
#include "io/fileio.h"

/* Thrift enum Type (physical types). */
typedef enum pq_type {
    PQ_BOOLEAN = 0,
    PQ_INT32 = 1,
    PQ_INT64 = 2,
    PQ_INT96 = 3,
    PQ_FLOAT = 4,
    PQ_DOUBLE = 5,
    PQ_BYTE_ARRAY = 6,
    PQ_FIXED_LEN_BYTE_ARRAY = 7
} pq_type;

typedef enum pq_repetition { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 } pq_repetition;

/* Thrift enum ConvertedType; PQ_CONV_NONE when absent. */
typedef enum pq_converted {
    PQ_CONV_NONE = -1,
    PQ_CONV_UTF8 = 0,
    PQ_CONV_MAP = 1,
    PQ_CONV_MAP_KEY_VALUE = 2,
    PQ_CONV_LIST = 3,
    PQ_CONV_ENUM = 4,
    PQ_CONV_DECIMAL = 5,
    PQ_CONV_DATE = 6,
    PQ_CONV_TIME_MILLIS = 7,
    PQ_CONV_TIME_MICROS = 8,
    PQ_CONV_TIMESTAMP_MILLIS = 9,
    PQ_CONV_TIMESTAMP_MICROS = 10,
    PQ_CONV_UINT_8 = 11,
    PQ_CONV_UINT_16 = 12,
    PQ_CONV_UINT_32 = 13,
    PQ_CONV_UINT_64 = 14,
    PQ_CONV_INT_8 = 15,
    PQ_CONV_INT_16 = 16,
    PQ_CONV_INT_32 = 17,
    PQ_CONV_INT_64 = 18,
    PQ_CONV_JSON = 19,
    PQ_CONV_BSON = 20,
    PQ_CONV_INTERVAL = 21
} pq_converted;

/* The LogicalType union member (its Thrift field id); PQ_LT_NONE when absent,
 * PQ_LT_UNRECOGNISED for a member this reader does not know. */
typedef enum pq_logical_kind {
    PQ_LT_NONE = 0,
    PQ_LT_STRING = 1,
    PQ_LT_MAP = 2,
    PQ_LT_LIST = 3,
    PQ_LT_ENUM = 4,
    PQ_LT_DECIMAL = 5,
    PQ_LT_DATE = 6,
    PQ_LT_TIME = 7,
    PQ_LT_TIMESTAMP = 8,
    PQ_LT_INTEGER = 10,
    PQ_LT_UNKNOWN = 11, /* the "always null" type (NullType) */
    PQ_LT_JSON = 12,
    PQ_LT_BSON = 13,
    PQ_LT_UUID = 14,
    PQ_LT_FLOAT16 = 15,
    PQ_LT_VARIANT = 16,
    PQ_LT_GEOMETRY = 17,
    PQ_LT_GEOGRAPHY = 18,
    PQ_LT_VECTOR = 19,
    PQ_LT_UNRECOGNISED = 1000
} pq_logical_kind;

typedef enum pq_time_unit {
    PQ_UNIT_NONE = 0,
    PQ_UNIT_MILLIS = 1,
    PQ_UNIT_MICROS = 2,
    PQ_UNIT_NANOS = 3
} pq_time_unit;

typedef struct pq_str {
    const char *ptr; /* NUL-terminated; NULL when absent */
    uint32_t len;
} pq_str;

typedef struct pq_logical_type {
    int kind;                 /* pq_logical_kind */
    int unrecognised_id;      /* the union field id when kind == PQ_LT_UNRECOGNISED */
    int32_t scale, precision; /* DECIMAL */
    int unit;                 /* TIME/TIMESTAMP: pq_time_unit */
    bool utc;                 /* TIME/TIMESTAMP: isAdjustedToUTC */
    int bit_width;            /* INTEGER */
    bool is_signed;           /* INTEGER */
} pq_logical_type;

typedef struct pq_schema_element {
    bool has_type;
    int type; /* pq_type */
    bool has_type_length;
    int32_t type_length;
    bool has_repetition;
    int repetition; /* pq_repetition (3 = VECTOR, unsupported) */
    pq_str name;
    bool has_num_children;
    int32_t num_children;
    int converted; /* pq_converted */
    bool has_scale, has_precision;
    int32_t scale, precision;
    bool has_field_id;
    int32_t field_id;
    pq_logical_type logical;
} pq_schema_element;

typedef struct pq_kv {
    pq_str key;
    pq_str value; /* ptr NULL when the value is absent */
} pq_kv;

typedef struct pq_statistics {
    bool present;
    pq_str max, min;             /* deprecated signed-order fields; ptr NULL when absent */
    pq_str max_value, min_value; /* column-order fields */
    bool has_null_count, has_distinct_count, has_nan_count;
    int64_t null_count, distinct_count, nan_count;
    bool has_is_max_value_exact, has_is_min_value_exact;
    bool is_max_value_exact, is_min_value_exact;
} pq_statistics;

typedef struct pq_encoding_stats {
    int page_type;
    int encoding;
    int32_t count;
} pq_encoding_stats;

typedef struct pq_column_meta {
    int type; /* pq_type */
    int *encodings;
    uint32_t num_encodings;
    pq_str *path;
    uint32_t path_len;
    int codec;
    int64_t num_values;
    int64_t total_uncompressed_size;
    int64_t total_compressed_size;
    pq_kv *kv;
    uint32_t num_kv;
    int64_t data_page_offset;
    bool has_index_page_offset, has_dictionary_page_offset;
    int64_t index_page_offset, dictionary_page_offset;
    pq_statistics stats;
    pq_encoding_stats *encoding_stats;
    uint32_t num_encoding_stats;
    bool has_bloom_filter_offset, has_bloom_filter_length;
    int64_t bloom_filter_offset;
    int32_t bloom_filter_length;
} pq_column_meta;

typedef struct pq_column_chunk {
    pq_str file_path;
    int64_t file_offset;
    bool has_meta_data;
    pq_column_meta meta;
    bool has_offset_index, has_column_index;
    int64_t offset_index_offset, column_index_offset;
    int32_t offset_index_length, column_index_length;
    bool encrypted; /* crypto_metadata or encrypted_column_metadata present */
} pq_column_chunk;

typedef struct pq_row_group {
    pq_column_chunk *columns;
    uint32_t num_columns;
    int64_t total_byte_size;
    int64_t num_rows;
    bool has_file_offset, has_total_compressed_size, has_ordinal;
    int64_t file_offset;
    int64_t total_compressed_size;
    int16_t ordinal;
} pq_row_group;

/* ColumnOrder union member; 0 when the list is absent or the member unknown. */
enum { PQ_ORDER_UNKNOWN = 0, PQ_ORDER_TYPE_DEFINED = 1, PQ_ORDER_IEEE754 = 2, PQ_ORDER_INT96 = 3 };

typedef struct pq_file_meta {
    int32_t version;
    pq_schema_element *schema;
    uint32_t num_schema;
    int64_t num_rows;
    pq_row_group *row_groups;
    uint32_t num_row_groups;
    pq_kv *kv;
    uint32_t num_kv;
    pq_str created_by;
    int *column_orders;
    uint32_t num_column_orders;
    bool encrypted; /* encryption_algorithm set (plaintext footer of an encrypted file) */
} pq_file_meta;

/* Decodes a serialized FileMetaData. `base_offset` is the file offset of `buf` (for error
 * offsets). Encrypted files (encryption_algorithm set, or a column chunk with crypto
 * metadata and no plaintext ColumnMetaData) fail with ICD_EUNSUPPORTED. */
int pq_meta_decode(const uint8_t *buf, size_t n, icd_arena *arena, pq_file_meta *out,
                   const char *location, int64_t base_offset, icd_error *err);

/* Reads and decodes the footer of an open file: checks the "PAR1" magic at both ends and
 * the footer length; "PARE" (encrypted footer) is ICD_EUNSUPPORTED. */
int pq_meta_read(icd_file *f, icd_arena *arena, pq_file_meta *out, icd_error *err);

const char *pq_type_name(int type);
const char *pq_converted_name(int converted);
const char *pq_logical_name(int kind);
const char *pq_page_type_name(int type);

#endif
