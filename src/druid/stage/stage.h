/*
 * `icedruid stage`: the materialized files of a plan (stage_decide.h), written where
 * Druid can read them, and the ingestion spec that reads raw + staged files through the
 * user's own warehouseSource and inputFormat.
 *
 *   content    a materialized file is the Iceberg read of one data file: every delete
 *              applied, current column names, identity-partition and initial-default
 *              values filled, the read schema's column order; written in the data file's
 *              format (Parquet: iceberg/pq_write.h, mirroring the original's physical and
 *              logical types; Avro: formats/avro/writer_ice.h). ORC files are not staged
 *              (no ORC writer yet): a plan that needs one fails with a message pointing at
 *              `serve`.
 *   name       LOCATION/icd-<table>-<content>.<ext>: <table> is 8 hex digits of the
 *              table uuid's hash, <content> 32 hex digits of a hash of everything the
 *              bytes depend on — table uuid, data file path, the sorted delete file paths
 *              (with DV offsets), the written schema's JSON (the read schema, or its
 *              projection: dr_stage_cols), the name mapping, the codec and
 *              the icedruid version. The snapshot id is deliberately not part of it: a
 *              later snapshot whose deletes for that file did not change reuses the file.
 *   bytes      deterministic: the same inputs give the same bytes (no time, no random;
 *              the Avro sync marker comes from the content hash).
 *   writing    a file already at its name is skipped. Local: a temporary file in the
 *              same directory, fsync, rename, fsync of the directory. s3://: spooled to a
 *              local temporary file, then one PUT (up to part_bytes) or a multipart
 *              upload, aborted on any failure (the object only appears at
 *              CompleteMultipartUpload).
 *   gc         dr_stage_gc deletes this table's staged files (by the <table> prefix)
 *              that no snapshot after a given one needs.
 */
#ifndef ICD_DRUID_STAGE_H
#define ICD_DRUID_STAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "druid/plan/plan.h"
#include "iceberg/metadata.h"
#include "iceberg/reader.h"
#include "iceberg/scan_plan.h"
#include "io/fileio.h"

typedef struct dr_stage_opts {
    const char *to;    /* LOCATION: a local directory or s3://bucket/prefix */
    int threads;       /* files written at once */
    size_t part_bytes; /* S3 multipart part size; 0 = 8 MiB */
    /* Called once per materialized file, written or found already staged (from the writing
     * threads, one call at a time is NOT guaranteed: the callee serializes): the source data
     * file's size and the rows written (0 when skipped). May be NULL. */
    void (*on_file)(void *ctx, int64_t source_bytes, uint64_t rows);
    void *on_file_ctx;
    /* NULL: every materialized file. Else one flag per task of the plan: only the
     * materialized files of tasks with only[i] are written (`diff --stage-to` stages the
     * files its statements list; all false: just check the destination and the files
     * that cannot be staged, i.e. ORC ones, listed or not); the other materialized files
     * are neither staged nor counted, have no location, and dr_stage_spec refuses the run. */
    const bool *only;
    /* Where files bound for S3 are spooled before the upload; NULL or "": /tmp (the
     * icedruid command passes TMPDIR). */
    const char *tmp_dir;
} dr_stage_opts;

typedef struct dr_stage_stats {
    size_t raw_files;
    size_t staged_files;  /* materialized files in the spec */
    size_t written_files; /* written by this run */
    size_t skipped_files; /* already at their name */
    int64_t bytes_written;
    int64_t rows_written;
    int64_t raw_bytes;    /* sizes of the raw data files (from the manifests) */
    int64_t table_bytes;  /* sizes of all planned data files */
    int64_t staged_bytes; /* sizes of all staged files (written or found) */
    int64_t source_bytes; /* sizes of the data files that were materialized */
    ice_read_stats read;  /* row accounting of the files written by this run */
} dr_stage_stats;

typedef struct dr_stage dr_stage;

/* Writes the plan's materialized files to o->to (skipping those already there). */
int dr_stage_run(dr_plan *p, icd_fileio *io, const dr_stage_opts *o, dr_stage **out,
                 icd_error *err);
void dr_stage_free(dr_stage *s);
/* mkdir -p PATH (mode 0755); 0 or -1 with errno. The stage and serve cache directories. */
int dr_make_dirs(const char *path);
const dr_stage_stats *dr_stage_get_stats(const dr_stage *s);
/* The location of task i's file as Druid reads it (raw: the data file; else staged). */
const char *dr_stage_file_location(const dr_stage *s, size_t i);
/* LOCATION as the spec names it (absolute for a local directory, no trailing '/'). */
const char *dr_stage_location(const dr_stage *s);

/* The spec to submit: the user's spec with the iceberg input source replaced by its
 * warehouseSource listing raw + staged files (rewrite.h). */
int dr_stage_spec(const dr_stage *s, json_t **out, icd_error *err);

/* Writes the materialized file of task `t` (the Iceberg read through `reader`, written
 * with `schema`: a dr_stage_cols' schema, the reader made for md + the read schema with
 * that dr_stage_cols' names) to DIR/NAME,
 * atomically: a temporary file in DIR (unique per process and call), fsync, rename,
 * fsync of DIR. Used by `stage` for local locations and by `serve`'s file cache. */
int dr_stage_write_local(icd_fileio *io, const ice_metadata *md, const ice_schema *schema,
                         ice_scan_reader *reader, const ice_scan_task *t, const char *dir,
                         const char *name, int64_t *bytes, ice_read_stats *rs, icd_error *err);

/* The staged file name (without LOCATION/) of a task written with `schema` (a
 * dr_stage_cols' schema: a projection is part of the name). */
int dr_stage_name(const ice_metadata *md, const ice_schema *schema, const ice_scan_task *t,
                  icd_buf *out, icd_error *err);

/* Deletes this table's staged files under `to` that no snapshot with a sequence number
 * above that of `after_snapshot` needs (the current snapshot always counts). *removed
 * and *kept count the files. */
int dr_stage_gc(const dr_plan *p, icd_fileio *io, const char *to, int64_t after_snapshot,
                size_t *removed, size_t *kept, icd_error *err);

#endif
