/*
 * The `icedruid` command: shared helpers of the subcommands. Only cli/ prints to the
 * terminal and chooses exit codes; everything below returns icd_error.
 *
 * This header, and every command built on the public API (plan, rewrite-spec, read, stage,
 * serve, diff, sync, scan), use only the public headers (include/icedruid/): the CLI is the
 * first client of libicedruid. The inspection commands (cat, inspect, tasks, the table
 * information commands) read formats and metadata below the API and take their internal
 * helpers from cli/inspect.h. tests/lib/test_cli_includes.sh checks the split.
 */
#ifndef ICD_CLI_H
#define ICD_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "icedruid/icedruid.h"

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* Exit codes: 0 ok, 1 the work failed (bad file, delete file unreadable, ...), 2 usage. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* Prints "icedruid: <the error as one line>" on stderr; returns CLI_FAILED. */
int cli_report(const icd_error *err);
/* Prints "icedruid <cmd>: <message>" plus a hint to --help on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Records an error of the command itself (a write that failed, a file it reads) in `err`:
 * `code`, `file` (may be NULL), the message; returns `code`. Printed with cli_report. */
int cli_fail(icd_error *err, int code, const char *file, const char *fmt, ...) CLI_PRINTF(4, 5);
/* Parses BYTES with an optional K/M/G suffix (powers of 1024), from `min` to 1 TiB. */
bool cli_parse_bytes(const char *s, size_t min, size_t *out);
/* --stream-memory of `read` and `serve` unless given: the decode memory of one stream
 * (thread); an eighth of it bounds the compressed column bytes it reads ahead
 * (CLI_READ_BUDGET: ice_scan_reader_set_read_budget), the rest is for the decoded pages,
 * which are decoded whole (one per projected column). */
#define CLI_STREAM_MEMORY_DEFAULT ((size_t)16 << 20)
#define CLI_READ_BUDGET(stream_memory) ((stream_memory) / 8)

/* The storage every command reads through (the public icd_storage), given the process
 * environment (the AWS credential chain, S3 settings; ICEDRUID_SIZE_MISMATCH) and the
 * global options (--retries, --*-timeout and their environment variables,
 * ICEDRUID_HTTP_TIMEOUT, ICEDRUID_HTTP_MIN_RATE; every retry reported on stderr). The
 * library reads no environment variable itself: they are read here, in one place. */
int cli_storage_new(icd_storage **out, icd_error *err);
/* Adds a --remap FROM=TO rule; ICD_EINVALID with the message a usage error shows. */
int cli_storage_add_remap_arg(icd_storage *s, const char *arg, icd_error *err);
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

/* Row accounting of a run that read rows (the public API's counters, icd_scan_get_stats):
 * with `json` the --stats JSON line (with `extra`, more "key":value pairs, appended before
 * the closing brace), else the one summary line shown at the end on a terminal. */
void cli_print_scan_stats(const icd_scan_stats *s, bool json, const char *extra);

/* True when progress may be shown on stderr: a terminal, and no --no-progress. */
bool cli_progress_wanted(void);

/* An icd_write_fn (icedruid/druid.h) writing to the FILE `ctx`; cli_write_done flushes it
 * and says whether every write went through. */
int cli_write_file(void *ctx, const char *data, size_t len, icd_error *err);
int cli_write_done(FILE *fp, icd_error *err);

/* Keeps freed memory in the heap (glibc mallopt) so that the buffers of the next data file
 * reuse it instead of faulting fresh pages in; main() calls it for every command. */
void cli_keep_freed_memory(void);

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

#endif
