/*
 * Options shared by the commands that read a table (scan, tasks): TABLE, snapshot
 * selection, --columns, --remap, --threads, --stats, --catalog.
 *
 * --catalog FILE names the table through a catalog, FILE being either
 *   - a Druid icebergCatalog object ({"type":"local"|"rest"|"hive"|"glue", ...}), with
 *     TABLE given as NAMESPACE.TABLE (split at the last dot), or
 *   - a Druid iceberg input source, ingestion spec or task (anything `plan --spec` takes):
 *     its namespace, tableName and icebergCatalog are used, and TABLE is left out.
 * Without --catalog, TABLE is a table directory or a metadata file.
 */
#ifndef ICD_CLI_TABLE_ARGS_H
#define ICD_CLI_TABLE_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "icedruid/icedruid.h"

typedef struct cli_table_args {
    const char *table;
    const char *catalog_file;   /* --catalog */
    icd_snapshot_kind snapshot; /* --snapshot-id, --as-of, --ref, else the current one */
    int64_t snapshot_id;
    int64_t as_of_ms;
    const char *ref;
    const char *columns; /* comma-separated, or NULL = all */
    const char *filter_file;
    const char *output; /* -o FILE */
    const char *format; /* --format table|json, or NULL = by the terminal */
    int threads;
    bool stats;
    bool case_sensitive;  /* column names (--columns); a --catalog's caseSensitive, else true */
    icd_storage *storage; /* cli_storage_new, with the --remap rules */
} cli_table_args;

/* Parses argv (argv[0] = the command name). Options a command does not take are refused
 * through `allowed` (a string of the long option names it accepts, e.g. "columns,threads").
 * Returns CLI_OK, or CLI_USAGE after printing the problem. */
int cli_table_args_parse(cli_table_args *a, int argc, char **argv, const char *allowed);
void cli_table_args_free(cli_table_args *a);

/* Opens TABLE (a table directory or a metadata file, or with --catalog a table of the
 * catalog: icd_druid_spec_parse_catalog, icd_druid_spec_open_table; case_sensitive is then
 * the catalog's) through the public API. Every command that takes a TABLE opens it here. */
int cli_table_open(cli_table_args *a, icd_table **out, icd_error *err);

#endif
