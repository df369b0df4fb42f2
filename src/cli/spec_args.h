/*
 * Options shared by the commands that start from a Druid ingestion spec (plan, read,
 * rewrite-spec, serve): --spec, --remap, --threads, and each command's own few.
 */
#ifndef ICD_CLI_SPEC_ARGS_H
#define ICD_CLI_SPEC_ARGS_H

#include <stdbool.h>

#include "cli/serve_common.h"
#include "icedruid/icedruid.h"

typedef struct cli_spec_args {
    const char *cmd;
    const char *spec_path;
    const char *split_path;        /* read --split FILE */
    const char *output;            /* read -o FILE */
    const char *serve_url;         /* rewrite-spec --serve-url URL */
    const char *auth_user;         /* rewrite-spec --auth-user NAME */
    const char *auth_password_env; /* rewrite-spec --auth-password-env VAR */
    const char *to;                /* stage --to LOCATION */
    const char *gc;                /* stage --gc SNAPSHOT_ID */
    const char *part_size;         /* stage --part-size BYTES */
    size_t stream_memory;          /* read --stream-memory BYTES */
    int threads;
    unsigned long long limit;    /* read --limit N (0: all rows) */
    bool stats;                  /* --stats */
    bool prune_row_groups;       /* read --prune-row-groups */
    bool check;                  /* plan --check */
    bool rows;                   /* rewrite-spec/diff --rows: NDJSON splits, not files */
    bool project;                /* --project: materialized files hold Druid's columns only */
    const char *druid_locations; /* --druid-locations remapped|original */
    bool stream_plan;            /* cli_druid_plan: a streamed plan (icd_druid_plan_options) */
    /* The command's storage (cli_storage_new: its remaps and retry settings) and the
     * loaded spec. */
    icd_storage *storage;
    icd_druid_spec *dspec;
} cli_spec_args;

/* Parses argv (argv[0] = the command). `allowed` lists the long options the command
 * takes besides --spec and --remap ("threads,split,output"); `serve` (may be NULL) takes
 * the serve options first. Returns CLI_OK, or CLI_USAGE / CLI_FAILED after printing. */
int cli_spec_args_parse(cli_spec_args *a, int argc, char **argv, const char *allowed,
                        cli_serve_opts *serve);
/* Loads and validates --spec; CLI_OK or CLI_FAILED after printing the error. */
int cli_spec_load(cli_spec_args *a);
/* The plan options from the arguments (threads, --druid-locations, --project,
 * stream_plan). */
void cli_druid_plan_options(const cli_spec_args *a, icd_druid_plan_options *po);
/* Plans the spec's table; prints a residual-filter warning (warn mode) on stderr.
 * CLI_OK or CLI_FAILED after printing the error. */
int cli_druid_plan(cli_spec_args *a, icd_druid_plan **out);
void cli_spec_args_free(cli_spec_args *a);

#endif
