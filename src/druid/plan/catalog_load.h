/*
 * Loading a table through a Druid icebergCatalog: the one place that maps the four catalog
 * types onto the catalog clients (src/catalog/), used by planning (plan.c) and by the
 * scan/tasks `--catalog` option.
 *
 *   local  WAREHOUSE/NAMESPACE/TABLE in the Hadoop layout (a relative warehousePath is
 *          taken relative to the current directory)
 *   rest   Iceberg REST catalog at catalogUri with catalogProperties (vended credentials
 *          go to the FileIO)
 *   hive   Hive Metastore at catalogUri: get_table(namespace, table) -> metadata_location
 *   glue   AWS Glue GetTable(namespace, table) -> metadata_location
 *
 * Errors are wrapped like Druid's: "Failed to load iceberg table with identifier
 * [NAMESPACE.TABLE]: <the catalog's error>".
 */
#ifndef ICD_DRUID_CATALOG_LOAD_H
#define ICD_DRUID_CATALOG_LOAD_H

#include "base/error.h"
#include "druid/spec/spec.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

/* Loads the current metadata of NAMESPACE.TABLE. `io` (borrowed) carries --remap rules and
 * receives the catalog's storage settings. */
int dr_catalog_load(const dr_catalog *c, const char *ns, const char *table, icd_fileio *io,
                    ice_metadata **out, icd_error *err);

/* A --catalog file (its bytes; `path` names it in errors) as a spec: a bare icebergCatalog
 * object is wrapped into an iceberg input source naming TABLE (NAMESPACE.TABLE); an input
 * source or a spec is taken as it is (TABLE must then be NULL). */
int dr_catalog_file_parse(const char *text, size_t len, const char *path, const char *table,
                          dr_spec **out, icd_error *err);

/* A relative local path made absolute against the current directory; paths with a scheme
 * and absolute paths are copied as they are (malloc'd; NULL on OOM). */
char *dr_absolute_path(const char *path);

#endif
