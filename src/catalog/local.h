/*
 * The local catalog: tables in the Hadoop layout (what Druid's `local` iceberg catalog
 * uses, backed by Iceberg's HadoopCatalog). A table is a directory whose metadata/ folder
 * holds v<N>.metadata.json files and, usually, a version-hint.text naming the current N.
 * This module turns a table location (or a metadata file path) into the location of the
 * table's current metadata file; all I/O goes through FileIO so --remap applies.
 */
#ifndef ICD_CATALOG_LOCAL_H
#define ICD_CATALOG_LOCAL_H

#include <stdbool.h>

#include "base/error.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

/* True when the name is a metadata file name this catalog reads: "*.metadata.json",
 * "*.gz.metadata.json" or "*.metadata.json.gz". */
bool cat_local_is_metadata_file_name(const char *path);

/* Resolves the current metadata file of a table (malloc'd location in *out).
 * `table` is a table directory, or a path to a metadata file (returned as is).
 * For a directory (metadata dir = TABLE/metadata), like Iceberg's HadoopTableOperations:
 *   - version-hint.text holds a version N (up to 18 digits; Java stops at 2^31-1) or a
 *     "vN.metadata.json" name: vN.metadata.json (or vN.gz.metadata.json,
 *     vN.metadata.json.gz) must exist — else ICD_ENOTFOUND "metadata file for version N
 *     is missing", never an older version — and N+1, N+2, ... are taken while they exist;
 *   - it names another metadata file ("00003-<uuid>.metadata.json", a location, or
 *     pyiceberg's "00003-<uuid>"): that file, which must exist;
 *   - no hint, an empty one, or (with a warning) an unusable one: the highest vN listed;
 *     without vN files, a guess among "NNNNN-<uuid>.metadata.json" files (the highest
 *     NNNNN, ties and unnumbered names by last-updated-ms), with a warning (icd_warn);
 *     no metadata file at all is ICD_ENOTFOUND.
 * Existence checks that fail (permission, I/O, HTTP 403/5xx) are errors naming the
 * location: only a definite "not found" counts as absent. */
int cat_local_resolve(icd_fileio *io, const char *table, char **out, icd_error *err);

/* cat_local_resolve + ice_metadata_load. */
int cat_local_load(icd_fileio *io, const char *table, ice_metadata **out, icd_error *err);

/* Druid's local catalog: the location of `namespace`.`table` under the warehouse,
 * WAREHOUSE/NAMESPACE/TABLE. The namespace is one directory level even when it contains
 * dots. Empty parts are ICD_EINVALID. */
int cat_local_table_location(const char *warehouse, const char *ns, const char *table, char **out,
                             icd_error *err);

#endif
