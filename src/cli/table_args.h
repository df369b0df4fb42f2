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

#include "iceberg/metadata.h"
#include "io/fileio.h"

typedef struct cli_table_args {
    const char *table;
    const char *catalog_file; /* --catalog */
    ice_snapshot_selector select;
    const char *columns; /* comma-separated, or NULL = all */
    const char *filter_file;
    const char *output; /* -o FILE */
    const char *format; /* --format table|json, or NULL = by the terminal */
    int threads;
    bool stats;
    bool case_sensitive; /* column names (--columns); a --catalog's caseSensitive, else true */
    icd_fileio *io;
} cli_table_args;

/* Parses argv (argv[0] = the command name). Options a command does not take are refused
 * through `allowed` (a string of the long option names it accepts, e.g. "columns,threads").
 * Returns CLI_OK, or CLI_USAGE after printing the problem. */
int cli_table_args_parse(cli_table_args *a, int argc, char **argv, const char *allowed);
void cli_table_args_free(cli_table_args *a);

/* Resolves TABLE (a table directory or a metadata file, or with --catalog a table of the
 * catalog) and loads its metadata. */
int cli_table_load(cli_table_args *a, ice_metadata **md, icd_error *err);

#endif
