/*
 * A v2 split read back from its JSON ({"type":"icebergFileTask", ...}, written by
 * dr_plan_split_json): the file scan task (data file + its delete files, sequence
 * numbers, partition tuple, deletion-vector offsets) and a minimal table metadata built
 * from the split alone (the selected schema, the data file's partition spec, the name
 * mapping and the schemas that define equality-delete keys), so `icedruid read --split`
 * and a Druid worker read the split correctly without the catalog and without planning.
 */
#ifndef ICD_DRUID_SPLIT_H
#define ICD_DRUID_SPLIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "iceberg/metadata.h"
#include "iceberg/scan_plan.h"

typedef struct dr_split dr_split;

/* Parses split JSON text; `origin` (a file name or NULL) goes into error messages.
 * Missing or mistyped fields are ICD_EINVALID "ORIGIN: split: FIELD ...". */
int dr_split_parse(const char *json, size_t len, const char *origin, dr_split **out,
                   icd_error *err);
int dr_split_from_json(const json_t *j, const char *origin, dr_split **out, icd_error *err);
/* Reads a split file (at most 16 MiB). */
int dr_split_load(const char *path, dr_split **out, icd_error *err);
void dr_split_free(dr_split *s);

const ice_scan_task *dr_split_task(const dr_split *s);
const ice_metadata *dr_split_metadata(const dr_split *s);
const ice_schema *dr_split_schema(const dr_split *s);
bool dr_split_has_residual(const dr_split *s);

#endif
