/*
 * The inspection commands' helpers (cat, inspect, tasks and the table information
 * commands): they read formats, metadata and plans below the public API, so this header
 * brings in internal layers (base/, io/, iceberg/). The commands built on the public API
 * include cli/cli.h only (tests/lib/test_cli_includes.sh).
 */
#ifndef ICD_CLI_INSPECT_H
#define ICD_CLI_INSPECT_H

#include <stdbool.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/error.h"
#include "cli/cli.h"
#include "cli/table_args.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

/* The FileIO of a storage made by cli_storage_new (the same environment and global
 * options): the inspection commands read files through it directly. */
int cli_fileio_new(icd_fileio **io, icd_error *err);
/* The FileIO behind a storage (owned by the storage). */
icd_fileio *cli_storage_fileio(icd_storage *s);
/* The metadata behind a table opened by cli_table_open (owned by the table). */
const ice_metadata *cli_table_metadata(const icd_table *t);
/* The snapshot selection of the table arguments, as the internal planner takes it. */
ice_snapshot_selector cli_table_selector(const cli_table_args *a);

/* Buffered writing of command output to a FILE (stdout or -o FILE): append rows to
 * `buf`, call cli_out_maybe_flush after each row. When `write` is set, full buffers go to
 * it instead of `fp` (it consumes and clears `buf`, or sets `failed`): `cat --threads`
 * uses it to keep the output of files decoded in parallel in order. */
typedef struct cli_out {
    FILE *fp;
    icd_buf buf;
    bool failed;
    void (*write)(struct cli_out *o);
    void *ctx;
} cli_out;
void cli_out_init(cli_out *o, FILE *fp);
void cli_out_maybe_flush(cli_out *o);
/* Flushes and frees the buffer; returns 0 or an error (e.g. disk full). */
int cli_out_finish(cli_out *o, icd_error *err);

/* The file's format, from its first/last bytes (and name as a fallback). */
typedef enum cli_format {
    CLI_FMT_UNKNOWN,
    CLI_FMT_PARQUET,
    CLI_FMT_AVRO,
    CLI_FMT_PUFFIN,
    CLI_FMT_ORC,
    CLI_FMT_JSON
} cli_format;
int cli_detect_format(icd_fileio *io, const char *path, cli_format *fmt, icd_error *err);

/* `cat` of several files, in order, to stdout; up to `threads` files are decoded at once
 * (cat_files.c). */
int cli_cat_files(icd_fileio *io, char *const *paths, size_t n, int threads, icd_error *err);

/* Per-format workers behind `cat` and `inspect`. */
int cli_cat_parquet(icd_fileio *io, const char *path, cli_out *out, icd_error *err);
int cli_cat_avro(icd_fileio *io, const char *path, cli_out *out, icd_error *err);
int cli_inspect_parquet(icd_fileio *io, const char *path, cli_out *out, icd_error *err);
int cli_inspect_avro(icd_fileio *io, const char *path, cli_out *out, icd_error *err);
int cli_cat_orc(icd_fileio *io, const char *path, cli_out *out, icd_error *err);
int cli_inspect_orc(icd_fileio *io, const char *path, cli_out *out, icd_error *err);
/* Table metadata JSON (or a table directory, resolved by the local catalog). */
int cli_inspect_metadata(icd_fileio *io, const char *path, cli_out *out, icd_error *err);
/* True for a directory or a *.metadata.json[.gz] name: inspect it as table metadata. */
bool cli_inspect_is_metadata(icd_fileio *io, const char *path);
int cli_inspect_puffin(icd_fileio *io, const char *path, cli_out *out, icd_error *err);

#endif
