/*
 * ice_content_file: one live entry of a manifest — a data file, a position delete file,
 * an equality delete file or a deletion vector — with everything scan planning and the
 * merge-on-read reader need. The manifest reader fills these (sequence numbers already
 * inherited), the delete-file index matches them, tasks carry them to the reader.
 */
#ifndef ICD_ICE_CONTENT_FILE_H
#define ICD_ICE_CONTENT_FILE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum ice_content {
    ICE_CONTENT_DATA = 0,
    ICE_CONTENT_POSITION_DELETES = 1,
    ICE_CONTENT_EQUALITY_DELETES = 2
} ice_content;

typedef enum ice_file_format {
    ICE_FORMAT_UNKNOWN = 0,
    ICE_FORMAT_PARQUET,
    ICE_FORMAT_AVRO,
    ICE_FORMAT_ORC,
    ICE_FORMAT_PUFFIN
} ice_file_format;

/* Reserved field ids of position delete files (spec: "Position Delete Files"). */
#define ICE_FIELD_DELETE_FILE_PATH 2147483546
#define ICE_FIELD_DELETE_POS 2147483545
#define ICE_FIELD_DELETE_ROW 2147483544

/* Column statistics of one field, bounds in Iceberg's single-value binary serialization. */
typedef struct ice_col_stats {
    int32_t field_id;
    int64_t value_count; /* -1 = unknown */
    int64_t null_count;  /* -1 = unknown */
    int64_t nan_count;   /* -1 = unknown */
    const uint8_t *lower;
    const uint8_t *upper;
    uint32_t lower_len;
    uint32_t upper_len;
    bool has_lower;
    bool has_upper;
} ice_col_stats;

struct ice_literal;

typedef struct ice_content_file {
    /* (fields grouped by width: planning holds one of these per data file, a million for
     * big tables, and padding was an eighth of it) */
    ice_content content;
    ice_file_format format;
    const char *path;
    const char *manifest_path; /* the manifest it came from (error messages) */
    /* The partition tuple: typed values (for output and pruning) and a canonical byte
     * key (for equality: two tuples are equal iff their keys are byte-equal). Files of one
     * partition may share them. */
    const struct ice_literal *partition;
    const uint8_t *partition_key;
    int32_t spec_id;
    int32_t npartition;
    uint32_t partition_key_len;
    int32_t nequality_ids;
    int64_t record_count;
    int64_t file_size;
    int64_t data_seq; /* data sequence number (inherited when the entry had null) */
    int64_t file_seq; /* file sequence number; never used to match deletes */
    int64_t snapshot_id;
    const int32_t *equality_ids;
    const char *referenced_data_file; /* NULL when absent */
    int64_t content_offset;           /* deletion vectors: blob offset, else -1 */
    int64_t content_size;             /* deletion vectors: blob length, else -1 */
    int64_t first_row_id;             /* v3 row lineage, -1 when absent */
    const ice_col_stats *stats;       /* sorted by field_id */
    int32_t sort_order_id;            /* -1 when absent */
    int32_t nstats;
} ice_content_file;

/* A deletion vector is a position-delete entry stored in a Puffin file. */
static inline bool ice_is_dv(const ice_content_file *f)
{
    return f->content == ICE_CONTENT_POSITION_DELETES && f->format == ICE_FORMAT_PUFFIN;
}

const ice_col_stats *ice_content_file_stats(const ice_content_file *f, int32_t field_id);

/* The part of a location that identifies a file for position deletes: "file:" schemes
 * and the authority of hdfs:// and viewfs:// locations are dropped ("hdfs://nn:8020/a"
 * and "/a" name the same file on the default file system). Returns a pointer into `loc`
 * and its length. Writers differ in which form they store in file_path columns. */
const char *ice_location_key(const char *loc, size_t len, size_t *out_len);

const char *ice_file_format_name(ice_file_format fmt);
const char *ice_content_name(ice_content c);

#endif
