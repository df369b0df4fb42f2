/*
 * icedruid: command-line entry point. Dispatches to one subcommand (cmd_*.c); each
 * parses its own options and turns library errors into one line on stderr and an exit
 * code (0 ok, 1 failed, 2 usage).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "icedruid/icedruid.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} command;

static const command COMMANDS[] = {
    {"cat", cmd_cat,
     "cat FILE... [--threads N] rows of .parquet, .avro or .orc files as NDJSON, in order"},
    {"inspect", cmd_inspect,
     "inspect FILE             structure of a .parquet, .orc, .avro, .puffin or metadata file\n"
     "                           as JSON"},
    {"scan", cmd_scan,
     "scan TABLE [--snapshot-id ID|--as-of TIME|--ref NAME] [--columns a,b] [--threads N]\n"
     "                           [--stats] [--catalog CATALOG.json]  the table's rows, every\n"
     "                           delete applied, as NDJSON"},
    {"tasks", cmd_tasks,
     "tasks TABLE [--snapshot-id ID|--as-of TIME|--ref NAME] [--catalog CATALOG.json]\n"
     "                           the scan plan: data files and the delete files that apply"},
    {"plan", cmd_plan,
     "plan --spec SPEC.json      Druid's v1/v2 decision: the warehouse input source (no\n"
     "                           deletes) or one split per data file (deletes), as JSON"},
    {"read", cmd_read,
     "read --spec SPEC.json [--split SPLIT.json] [--threads N] [-o FILE]\n"
     "                           the rows as Druid input rows (NDJSON), every delete applied"},
    {"rewrite-spec", cmd_rewrite_spec,
     "rewrite-spec --spec SPEC.json [--serve-url URL] [--auth-user U --auth-password-env VAR]\n"
     "                           the ingestion spec to submit to Druid"},
    {"stage", cmd_stage,
     "stage --spec SPEC.json --to DIR|s3://B/P [--threads N] [--part-size BYTES]\n"
     "                           [--gc SNAPSHOT_ID]  write the delete-applied (materialized)\n"
     "                           files and print the spec listing raw + staged files"},
    {"serve", cmd_serve,
     "serve --spec SPEC.json [--listen 127.0.0.1:PORT] [--auth-user U] ...\n"
     "                           serve the splits' rows over HTTP for Druid's http source"},
    {"diff", cmd_diff,
     "diff --spec SPEC.json --from-snapshot A [--to-snapshot B] [--granularity G]\n"
     "                           Druid intervals to replace / append between two snapshots"},
    {"sync", cmd_sync,
     "sync --spec SPEC.json --state STATE.json [--druid URL] [--emit msq|native]\n"
     "                           re-ingest the intervals deletes and updates touched"},
};

static void usage(FILE *fp)
{
    fprintf(fp, "icedruid %s: read Apache Iceberg tables correctly, for Apache Druid\n\n",
            icd_version());
    fprintf(fp, "usage: icedruid COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(fp, "  %s\n", COMMANDS[i].usage);
    fprintf(fp, "\ncommon options:\n"
                "  --remap FROM=TO          read locations starting with FROM under TO instead\n"
                "                           (repeatable)\n");
}

static void print_warning(void *ctx, const char *file, const char *message)
{
    (void)ctx;
    if (*file)
        fprintf(stderr, "icedruid: warning: %s: %s\n", file, message);
    else
        fprintf(stderr, "icedruid: warning: %s\n", message);
}

int main(int argc, char **argv)
{
    icd_set_warn_handler(print_warning, NULL);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("icedruid %s\n", icd_version());
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (!strcmp(argv[1], COMMANDS[i].name)) return COMMANDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "icedruid: unknown command '%s' (see 'icedruid --help')\n", argv[1]);
    return CLI_USAGE;
}
