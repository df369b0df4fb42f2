/*
 * icedruid: command-line entry point. Looks the subcommand up in the command table
 * (commands.c), checks its options against the table and hands it the checked argv; each
 * command turns library errors into one line on stderr and an exit code (0 ok, 1 failed,
 * 2 usage).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "icedruid/icedruid.h"

static int unknown_command(const char *name)
{
    size_t n;
    const cli_command *cmds = cli_commands(&n);
    const char *names[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 63; i++)
        names[k++] = cmds[i].name;
    names[k] = NULL;
    const char *best = cli_did_you_mean(name, names);
    if (best)
        fprintf(stderr, "icedruid: unknown command '%s' (did you mean '%s'?)\n", name, best);
    else
        fprintf(stderr, "icedruid: unknown command '%s' (see 'icedruid --help')\n", name);
    return CLI_USAGE;
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
    icd_druid_set_tz_dir(getenv("TZDIR")); /* the library reads no environment variable */
    cli_keep_freed_memory(); /* every command that reads or writes files reuses buffers */
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        if (argc >= 3) {
            const cli_command *c = cli_command_find(argv[2]);
            if (!c) return unknown_command(argv[2]);
            cli_print_command_help(c, stdout);
            return CLI_OK;
        }
        cli_print_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("icedruid %s\n", icd_version());
        return CLI_OK;
    }
    if (!strcmp(argv[1], "--help-man")) {
        cli_print_man(stdout);
        return fflush(stdout) ? CLI_FAILED : CLI_OK;
    }
    if (!strcmp(argv[1], "--help-completion")) {
        int rc = cli_print_completion(argc > 2 ? argv[2] : NULL, stdout);
        return rc ? rc : fflush(stdout) ? CLI_FAILED : CLI_OK;
    }
    const cli_command *c = cli_command_find(argv[1]);
    if (!c) {
        if (argv[1][0] == '-') {
            fprintf(stderr, "icedruid: unknown option '%s' (see 'icedruid --help')\n", argv[1]);
            return CLI_USAGE;
        }
        return unknown_command(argv[1]);
    }
    int nargc;
    char **nargv;
    int rc = cli_args_normalize(c, argc - 1, argv + 1, &nargc, &nargv);
    if (rc == -1) return CLI_OK;
    if (rc) return rc;
    rc = c->run(nargc, nargv);
    free(nargv);
    return rc;
}
