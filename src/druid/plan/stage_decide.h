/*
 * The per-file decision of the "Druid reads, icedruid corrects" flow (issue 13): a data
 * file goes to Druid RAW (through the user's warehouseSource, read by the user's
 * inputFormat) only when reading it raw gives what the Iceberg read gives; every other
 * file is MATERIALIZED (its Iceberg read written as a new file, druid/stage/stage.h).
 *
 * Raw requires: no delete file applies, and every column of the read schema is, in the
 * file, under its current name and in a type Druid reads the same way:
 *
 *   rename       the field id is in the file under another name (Druid reads by name)
 *   name reuse   the file has a column with the current name but another id (a column
 *                dropped and re-added: Druid would read the old column's values)
 *   absent       the field is not in the file and the Iceberg read fills it: an
 *                identity-partition source (Impala / Hive-migrated files keep those out
 *                of the data) or an initial-default; absent without either reads as
 *                null both ways and stays raw
 *   promotion    float -> double and date -> timestamp change what Druid's reader
 *                produces; int -> long and decimal widening do not (Druid reads both as
 *                long / as the same BigDecimal) and stay raw
 *   stored unit  a timestamp stored as a plain long (Parquet INT64 or ORC long without
 *                timestamp annotation) or as Avro timestamp-millis, a time as Avro
 *                time-millis or Parquet TIME(MILLIS) / TIME(NANOS): Druid gives the
 *                stored number, not what it gives for Iceberg's microseconds (INT96 and
 *                Parquet TIMESTAMP_MILLIS stay raw: the materialized file mirrors INT96,
 *                and millis read alike; a materialized time is INT64 TIME(MICROS))
 *   no ids       a file without field ids (name mapping) whose columns are not found
 *                by their current names
 *
 *   variant      a variant column (Druid's readers see its binary encoding)
 *
 * From metadata: the delete files of the task and the read schema's types. Everything
 * else needs the file: the metadata cannot prove which names a writer put in a file
 * (Impala writes lower-case names for upper-case columns; a dropped-and-re-added column
 * or a rename since the file was written shows only there), so every other file has its
 * footer (Parquet) or header (Avro) read. ORC files are not inspected: they are
 * materialized (and served, not staged: there is no ORC writer yet).
 */
#ifndef ICD_DRUID_STAGE_DECIDE_H
#define ICD_DRUID_STAGE_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "iceberg/metadata.h"
#include "iceberg/scan_plan.h"
#include "iceberg/schema.h"
#include "io/fileio.h"

typedef struct dr_decide_ctx dr_decide_ctx;

typedef struct dr_file_decision {
    bool raw;
    bool from_footer; /* the file's footer/header was read to decide */
    char reason[240]; /* why not raw ("" when raw) */
    /* nonzero: the reason is a function of this value alone (the counts of a task's delete
     * files), so a caller keeping the distinct reasons can look the text up by it */
    uint64_t reason_key;
} dr_file_decision;

/* A decider for tasks read with `schema` (the read schema). Borrows io, md and schema;
 * dr_decide_task may be called from several threads at once. */
int dr_decide_new(icd_fileio *io, const ice_metadata *md, const ice_schema *schema,
                  dr_decide_ctx **out, icd_error *err);
void dr_decide_free(dr_decide_ctx *c);

/* Decides one task. Errors only for a footer that cannot be read. */
int dr_decide_task(dr_decide_ctx *c, const ice_scan_task *t, dr_file_decision *out, icd_error *err);

/* The reason key dr_decide_task gives a task its delete files decide (materialized, from
 * the metadata), without making the reason's text; 0 when they do not decide it (none) or
 * the key is not kept. A caller holding the text of a key can skip dr_decide_task. */
uint64_t dr_decide_deletes_key(const ice_scan_task *t);

#endif
