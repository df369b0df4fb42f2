/*
 * Druid ingestion specs that read the `iceberg` input source.
 *
 * Accepted documents (detected from their shape):
 *   - a native batch task:  {"type": "index_parallel" | "index", "spec": {...}}
 *   - a bare spec:          {"dataSchema": ..., "ioConfig": ..., "tuningConfig": ...}
 *   - an inputSource alone: {"type": "iceberg", "tableName": ..., ...}
 * Every field of the iceberg input source is parsed with Druid's defaults and messages;
 * dataSchema / ioConfig / tuningConfig fields icedruid needs are parsed too, and the whole
 * original document is kept so a rewrite step can swap the input source and keep the rest.
 *
 * Errors are ICD_EINVALID one-liners "JSON.PATH: Druid's message", e.g.
 * "spec.ioConfig.inputSource.tableName: tableName cannot be null". All four catalog types
 * (local, rest, hive, glue) parse; their catalogProperties are judged when the table is
 * loaded (druid/plan/catalog_load.h).
 */
#ifndef ICD_DRUID_SPEC_H
#define ICD_DRUID_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "druid/spec/filter.h"
#include "druid/spec/period.h"
#include "druid/rows/timestamp.h"
#include "iceberg/schema.h"

typedef struct dr_spec dr_spec;

typedef struct dr_spec_opts {
    bool has_now;   /* use now_ms instead of the clock (tests) */
    int64_t now_ms; /* default timeWindow baseTime, two-digit-year pivot */
} dr_spec_opts;

typedef enum dr_doc_shape { DR_DOC_TASK, DR_DOC_SPEC, DR_DOC_INPUT_SOURCE } dr_doc_shape;

typedef enum dr_catalog_type {
    DR_CAT_LOCAL,
    DR_CAT_REST,
    DR_CAT_HIVE,
    DR_CAT_GLUE
} dr_catalog_type;

typedef struct dr_catalog {
    dr_catalog_type type;
    const char *type_name; /* "local", "rest", ... */
    char *warehouse_path;  /* local, hive (NULL otherwise) */
    char *catalog_uri;     /* rest, hive (NULL otherwise) */
    json_t *properties;    /* catalogProperties: an object, {} when absent (owned) */
    bool case_sensitive;   /* caseSensitive, default true */
} dr_catalog;

typedef enum dr_residual_mode {
    DR_RESIDUAL_IGNORE,
    DR_RESIDUAL_WARN, /* like ignore, plus a warning */
    DR_RESIDUAL_FAIL
} dr_residual_mode;

typedef struct dr_dimension {
    char *name;
    char *type;         /* "string" when given as a plain name */
    const json_t *json; /* the element of "dimensions" (borrowed from the document) */
} dr_dimension;

typedef struct dr_dimensions_spec {
    dr_dimension *dims;
    size_t n_dims;
    char **exclusions;
    size_t n_exclusions;
    const json_t *spatial; /* spatialDimensions array or NULL (borrowed) */
    bool use_schema_discovery;
    bool include_all_dimensions;
} dr_dimensions_spec;

typedef struct dr_granularity_spec {
    char type[16];          /* "uniform" (default) or "arbitrary" */
    dr_granularity segment; /* default DAY */
    dr_granularity query;   /* default NONE */
    bool rollup;            /* default true */
    dr_interval *intervals; /* may be NULL / 0 */
    size_t n_intervals;
} dr_granularity_spec;

/* Parses JSON text. `origin` (file name, may be NULL) goes into error messages. */
int dr_spec_parse(dr_spec **out, const char *text, size_t len, const char *origin,
                  const dr_spec_opts *opts, icd_error *err);
/* Parses a document already in memory; takes a new reference to `doc`. */
int dr_spec_parse_json(dr_spec **out, json_t *doc, const char *origin, const dr_spec_opts *opts,
                       icd_error *err);
/* Reads a spec file (at most 16 MiB). */
int dr_spec_load(dr_spec **out, const char *path, const dr_spec_opts *opts, icd_error *err);
void dr_spec_free(dr_spec *s);

dr_doc_shape dr_spec_shape(const dr_spec *s);
/* The whole original document and the inputSource object inside it (borrowed; edit the
 * latter in place or replace it with json_object_set in its parent to rewrite). */
json_t *dr_spec_document(const dr_spec *s);
json_t *dr_spec_input_source(const dr_spec *s);
/* The JSON path of the inputSource ("spec.ioConfig.inputSource", "ioConfig.inputSource"
 * or "" for a bare input source). */
const char *dr_spec_input_source_path(const dr_spec *s);

/* The iceberg input source. */
const char *dr_spec_table_name(const dr_spec *s);
const char *dr_spec_namespace(const dr_spec *s);
const dr_catalog *dr_spec_catalog(const dr_spec *s);
bool dr_spec_case_sensitive(const dr_spec *s);
const dr_filter *dr_spec_filter(const dr_spec *s); /* NULL without icebergFilter */
/* The icebergFilter as predicates (TRUE without a filter); free with dr_pred_free. */
int dr_spec_filter_pred(const dr_spec *s, dr_pred **out, icd_error *err);
const json_t *dr_spec_warehouse_source(const dr_spec *s); /* NULL when absent */
const char *dr_spec_warehouse_source_type(const dr_spec *s);
bool dr_spec_has_snapshot_time(const dr_spec *s);
int64_t dr_spec_snapshot_time_ms(const dr_spec *s);
dr_residual_mode dr_spec_residual_mode(const dr_spec *s);
const char *dr_residual_mode_name(dr_residual_mode m);
bool dr_spec_use_arrow_reader(const dr_spec *s);
int64_t dr_spec_arrow_batch_size(const dr_spec *s);

/* dataSchema. */
const char *dr_spec_data_source(const dr_spec *s); /* NULL for a bare input source */
const dr_timestamp_spec *dr_spec_timestamp_spec(const dr_spec *s);
const dr_dimensions_spec *dr_spec_dimensions(const dr_spec *s);
const dr_granularity_spec *dr_spec_granularity(const dr_spec *s);
const json_t *dr_spec_metrics(const dr_spec *s); /* metricsSpec array or NULL */
/* The input fields the metrics read (fieldName / fieldNames), in order, no duplicates. */
size_t dr_spec_metric_fields(const dr_spec *s, const char *const **names);
const json_t *dr_spec_transform_spec(const dr_spec *s); /* NULL when absent */
const json_t *dr_spec_transform_filter(const dr_spec *s);
const json_t *dr_spec_transforms(const dr_spec *s);

/* ioConfig / tuningConfig. */
const json_t *dr_spec_input_format(const dr_spec *s); /* NULL when absent */
/* The inputFormat's "type" ("parquet", "orc", "json", ...), or NULL. */
const char *dr_spec_input_format_type(const dr_spec *s);
/* Druid's column projection (InputRowSchemas.createColumnsFilter) over the top-level
 * columns of `schema`: with fixed dimensions and no includeAllDimensions, inclusion-based
 * (the timestamp column, the dimensions, the metrics' input fields); otherwise
 * exclusion-based (every column but the dimensionExclusions, the timestamp column and
 * metric inputs always kept). What cannot be known without evaluating Druid expressions
 * keeps every column (a superset is safe): transforms, a transform filter, spatial
 * dimensions, a flattenSpec, aggregators with expressions or nested aggregators.
 * *names (NULL when every column is kept) lists the kept columns in schema order; the
 * strings are the schema's, the array is the caller's to free. */
int dr_spec_columns_filter(const dr_spec *s, const ice_schema *schema, const char ***names,
                           size_t *n, icd_error *err);

/* Whether the served rows must carry the original timestamp column: the rewritten spec
 * takes __time, so only when the column is also a dimension or a metric input, or when
 * the projection cannot be computed (dr_spec_columns_filter keeps everything) or the spec
 * discovers its dimensions (schemaless: Druid's exclusions decide). */
bool dr_spec_timestamp_column_shipped(const dr_spec *s, const ice_schema *schema);

/* The list columns of `schema` that Druid's Parquet reader leaves undiscovered and the
 * spec does not name: classic schemaless discovery (no dimensions or includeAllDimensions,
 * no useSchemaDiscovery, no flattenSpec, no transforms), not the timestamp column, a
 * dimension or a metric input (ParquetGroupFlattenerMaker discovers primitive columns;
 * Druid's json reader would also discover lists of primitives). *names is NULL when there
 * are none; the array is the caller's to free. */
int dr_spec_parquet_undiscovered(const dr_spec *s, const ice_schema *schema, const char ***names,
                                 size_t *n, icd_error *err);
/* The same for the other readers Druid reads data files with, by their own discovery
 * (discoverRootFields): ORC (OrcStructFlattenerMaker) discovers primitives and lists of
 * primitives, so structs, maps and other lists are undiscovered; Avro (AvroFlattenerMaker)
 * discovers string, bytes, int, long, float, double, enum and fixed fields, arrays of them
 * and their nullable unions - so also booleans, and lists whose element is optional (an
 * Iceberg list's element is a ["null", T] union unless required). */
typedef enum dr_reader_kind { DR_READER_PARQUET, DR_READER_ORC, DR_READER_AVRO } dr_reader_kind;
int dr_spec_undiscovered(const dr_spec *s, const ice_schema *schema, dr_reader_kind reader,
                         const char ***names, size_t *n, icd_error *err);

/* inputFormat.binaryAsString (Parquet/ORC/Avro readers; Jackson's boolean coercions). */
bool dr_spec_binary_as_string(const dr_spec *s);
bool dr_spec_append_to_existing(const dr_spec *s);
bool dr_spec_drop_existing(const dr_spec *s);
/* maxParseExceptions: INT64_MAX when unlimited (Druid's default), 0 with
 * reportParseExceptions=true. */
int64_t dr_spec_max_parse_exceptions(const dr_spec *s);
int64_t dr_spec_max_num_concurrent_subtasks(const dr_spec *s);
const json_t *dr_spec_tuning_config(const dr_spec *s);

/* For a rewritten spec whose timestampSpec reads "__time": the dimensionExclusions that
 * keep the original timestamp column from turning into an extra dimension (the original
 * exclusions plus the timestamp column, unless it is listed as a dimension or is
 * "__time"). Returns a new JSON array. */
int dr_spec_rewrite_exclusions(const dr_spec *s, json_t **out, icd_error *err);

#endif
