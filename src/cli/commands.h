/*
 * The one description of icedruid's commands and options (commands.c). Everything the
 * user sees about the command line comes from it: `icedruid --help`, `icedruid COMMAND
 * --help`, the man page (`icedruid --help-man`, run at build time), the bash and zsh
 * completion (`icedruid --help-completion bash|zsh`), the "did you mean" suggestions, and
 * the checking of the options before a command runs (cli_args_normalize). Adding a command
 * is one entry in COMMANDS with its option list.
 */
#ifndef ICD_CLI_COMMANDS_H
#define ICD_CLI_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum {
    CLI_OPT_HIDDEN = 1, /* accepted (the command refuses it with its own reason), not shown */
    CLI_OPT_GLOBAL = 2, /* handled by cli_args_normalize, never seen by the command */
};

typedef struct cli_opt {
    const char *name;    /* long name without "--" */
    char short_name;     /* 'o' for -o, or 0 */
    const char *arg;     /* metavariable of the value, or NULL for a flag */
    const char *help;    /* one paragraph */
    const char *choices; /* space-separated values (completion), or NULL */
    unsigned flags;
} cli_opt;

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *args;    /* the synopsis after the command name, e.g. "TABLE" */
    const char *summary; /* one line */
    const char *details; /* more paragraphs separated by "\n\n", or NULL */
    const cli_opt *opts; /* terminated by an entry with name NULL */
} cli_command;

/* The table (NULL-terminated by count). */
const cli_command *cli_commands(size_t *n);
const cli_command *cli_command_find(const char *name);

/* Settings taken from global options (every command) and their environment variables. */
typedef struct cli_globals {
    bool no_progress;
    long connect_timeout_s; /* -1: library default */
    long request_timeout_s;
    long stall_timeout_s;
    int retries; /* -1: library default */
} cli_globals;
extern cli_globals cli_global;

/* Checks argv (argv[0] = the command) against the command's options before it runs:
 * splits --opt=value, refuses unknown options with a "did you mean", handles --help and
 * the global options. On success *out_argv and *out_argc hold the argv the command gets
 * (to be released with free()) and CLI_OK is returned; -1 means "help printed, exit 0";
 * otherwise an exit code after printing the problem. */
int cli_args_normalize(const cli_command *c, int argc, char **argv, int *out_argc,
                       char ***out_argv);

/* Help texts and generated files. */
void cli_print_usage(FILE *fp);
void cli_print_command_help(const cli_command *c, FILE *fp);
void cli_print_man(FILE *fp);
int cli_print_completion(const char *shell, FILE *fp);

/* The closest of `candidates` (NULL-terminated) to `word`, or NULL when none is close. */
const char *cli_did_you_mean(const char *word, const char *const *candidates);

#endif
