/*
 * The `icedruid` command: shared helpers of the subcommands. Only cli/ prints to the
 * terminal and chooses exit codes; everything below returns icd_error.
 */
#ifndef ICD_CLI_H
#define ICD_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/error.h"
#include "io/fileio.h"

/* Exit codes: 0 ok, 1 the work failed (bad file, delete file unreadable, ...), 2 usage. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* Prints "icedruid: <the error as one line>" on stderr; returns CLI_FAILED. */
int cli_report(const icd_error *err);
/* Prints "icedruid <cmd>: <message>" plus a hint to --help on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) ICD_PRINTF(2, 3);
/* Parses BYTES with an optional K/M/G suffix (powers of 1024), from `min` to 1 TiB. */
bool cli_parse_bytes(const char *s, size_t min, size_t *out);
/* --stream-memory of `read` and `serve` unless given: the decode memory of one stream
 * (thread); an eighth of it bounds the compressed column bytes it reads ahead
 * (CLI_READ_BUDGET: ice_scan_reader_set_read_budget), the rest is for the decoded pages,
 * which are decoded whole (one per projected column). */
#define CLI_STREAM_MEMORY_DEFAULT ((size_t)16 << 20)
#define CLI_READ_BUDGET(stream_memory) ((stream_memory) / 8)

/* A FileIO given the process environment (the AWS credential chain, S3 and HTTP settings)
 * with the global options applied (--retries, --*-timeout and their environment variables;
 * every retry reported on stderr). Every command creates its FileIO with it. */
int cli_fileio_new(icd_fileio **io, icd_error *err);
/* Opens -o FILE ("-" or NULL: stdout) for writing; CLI_OK, or CLI_FAILED after printing
 * the error with the system's reason. */
int cli_open_output(const char *path, FILE **out);
/* Closes what cli_open_output opened (not stdout); CLI_OK or CLI_FAILED after printing. */
int cli_close_output(FILE *fp, const char *path);
/* The progress line on stderr (only when cli_progress_wanted()): percentage of the bytes
 * of the data files done, files, rows, throughput and ETA, redrawn at most 5 times a
 * second. The caller serializes the calls (its own lock). */
typedef struct cli_progress {
    bool on, shown;
    const char *cmd;
    size_t files_total, files_done;
    uint64_t bytes_total, bytes_done, rows;
    double t0, last;
} cli_progress;
void cli_progress_init(cli_progress *p, const char *cmd, size_t files, uint64_t bytes);
void cli_progress_show(cli_progress *p, bool force);
/* Erases the line before something else is printed on stderr. */
void cli_progress_clear(cli_progress *p);
/* The final state, then a newline. */
void cli_progress_end(cli_progress *p);
double cli_now_s(void);

/* Row accounting of a run that read rows: with `json` the --stats JSON line (with `extra`,
 * more "key":value pairs, appended before the closing brace), else the one summary line
 * shown at the end on a terminal. */
struct ice_read_stats;
void cli_print_row_stats(const struct ice_read_stats *s, bool json, const char *extra);
/* The same from the public API's counters (icd_scan_get_stats). */
struct icd_scan_stats;
void cli_print_scan_stats(const struct icd_scan_stats *s, bool json, const char *extra);

/* True when progress may be shown on stderr: a terminal, and no --no-progress. */
bool cli_progress_wanted(void);

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
/* An icd_write_fn (icedruid/druid.h) writing to the FILE `ctx`; cli_write_done flushes it
 * and says whether every write went through. */
int cli_write_file(void *ctx, const char *data, size_t len, icd_error *err);
int cli_write_done(FILE *fp, icd_error *err);

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

/* Keeps freed memory in the heap (glibc mallopt) so that the buffers of the next data file
 * reuse it instead of faulting fresh pages in; main() calls it for every command. */
void cli_keep_freed_memory(void);

/* `cat` of several files, in order, to stdout; up to `threads` files are decoded at once
 * (cat_files.c). */
int cli_cat_files(icd_fileio *io, char *const *paths, size_t n, int threads, icd_error *err);

/* Subcommands: argc/argv start at the subcommand name. */
int cmd_cat(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_read(int argc, char **argv);
int cmd_rewrite_spec(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_stage(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_sync(int argc, char **argv);
/* Table inspection (cmd_table_info.c). */
int cmd_snapshots(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_refs(int argc, char **argv);
int cmd_schema(int argc, char **argv);
int cmd_partitions(int argc, char **argv);
int cmd_files(int argc, char **argv);

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
