/*
 * Parsing of the spec-driven commands' options (see spec_args.h) and the two steps they
 * all start with: load the spec, plan the table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/spec_args.h"

static bool allowed_opt(const char *allowed, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = allowed; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return true;
        p = comma ? comma + 1 : p + len;
    }
    return false;
}

int cli_spec_args_parse(cli_spec_args *a, int argc, char **argv, const char *allowed,
                        cli_serve_opts *serve)
{
    memset(a, 0, sizeof *a);
    a->cmd = argv[0];
    a->threads = 1;
    a->stream_memory = CLI_STREAM_MEMORY_DEFAULT;
    icd_error err;
    if (cli_storage_new(&a->storage, &err)) return cli_report(&err);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (serve) {
            int r = cli_serve_parse_arg(serve, argc, argv, &i);
            if (r == 1) continue;
            if (r) return r;
        }
        if (!strcmp(o, "--stats") && allowed_opt(allowed, "stats")) {
            a->stats = true;
            continue;
        }
        if (!strcmp(o, "--rows") && allowed_opt(allowed, "rows")) {
            a->rows = true;
            continue;
        }
        if (!strcmp(o, "--project") && allowed_opt(allowed, "project")) {
            a->project = true;
            continue;
        }
        if (!strcmp(o, "--prune-row-groups") && allowed_opt(allowed, "prune-row-groups")) {
            a->prune_row_groups = true;
            continue;
        }
        if (!strcmp(o, "--check") && allowed_opt(allowed, "check")) {
            a->check = true;
            continue;
        }
        const char *name = !strcmp(o, "-o") ? "output" : (!strncmp(o, "--", 2) ? o + 2 : NULL);
        if (!name || (strcmp(name, "spec") && strcmp(name, "remap") && !allowed_opt(allowed, name)))
            return cli_usage_error(a->cmd, "unknown option or argument '%s'", o);
        if (i + 1 >= argc) return cli_usage_error(a->cmd, "option '%s' needs a value", o);
        const char *v = argv[++i];
        if (!strcmp(name, "spec")) {
            a->spec_path = v;
        } else if (!strcmp(name, "remap")) {
            if (cli_storage_add_remap_arg(a->storage, v, &err))
                return cli_usage_error(a->cmd, "%s", err.message);
        } else if (!strcmp(name, "threads")) {
            char *end;
            errno = 0;
            long t = strtol(v, &end, 10);
            if (errno || end == v || *end || t < 1 || t > 256)
                return cli_usage_error(a->cmd, "--threads expects 1..256, got '%s'", v);
            a->threads = (int)t;
        } else if (!strcmp(name, "limit")) {
            char *end;
            errno = 0;
            unsigned long long l = strtoull(v, &end, 10);
            if (errno || end == v || *end || v[0] == '-' || l < 1)
                return cli_usage_error(a->cmd, "--limit expects a number of rows >= 1, got '%s'",
                                       v);
            a->limit = l;
        } else if (!strcmp(name, "druid-locations")) {
            a->druid_locations = v;
        } else if (!strcmp(name, "serve-url")) {
            if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8))
                return cli_usage_error(a->cmd,
                                       "--serve-url expects an http:// or https:// URL, got '%s' "
                                       "(Druid's http input source needs the scheme)",
                                       v);
            a->serve_url = v;
        } else if (!strcmp(name, "split")) {
            a->split_path = v;
        } else if (!strcmp(name, "output")) {
            a->output = v;
        } else if (!strcmp(name, "auth-user")) {
            a->auth_user = v;
        } else if (!strcmp(name, "auth-password-env")) {
            a->auth_password_env = v;
        } else if (!strcmp(name, "to")) {
            a->to = v;
        } else if (!strcmp(name, "gc")) {
            a->gc = v;
        } else if (!strcmp(name, "part-size")) {
            a->part_size = v;
        } else if (!strcmp(name, "stream-memory")) {
            if (!cli_parse_bytes(v, 0, &a->stream_memory))
                return cli_usage_error(a->cmd,
                                       "--stream-memory expects a size (K, M, G suffixes "
                                       "allowed; 0: whole column chunks), got '%s'",
                                       v);
        } else {
            return cli_usage_error(a->cmd, "unknown option '%s'", o);
        }
    }
    if (!a->spec_path)
        return cli_usage_error(a->cmd, "expects --spec SPEC.json (a Druid ingestion spec)");
    return CLI_OK;
}

int cli_spec_load(cli_spec_args *a)
{
    icd_error err;
    icd_error_clear(&err);
    if (icd_druid_spec_load(&a->dspec, a->spec_path, &err)) return cli_report(&err);
    return CLI_OK;
}

static void warn_residual(const char *text)
{
    fprintf(stderr,
            "icedruid: warning: the icebergFilter leaves a residual that needs row-level "
            "filtering (%s); rows that do not match it are read too: filter them with a "
            "transformSpec\n",
            text);
}

void cli_druid_plan_options(const cli_spec_args *a, icd_druid_plan_options *po)
{
    icd_druid_plan_options_init(po);
    po->threads = a->threads;
    po->original_locations = a->druid_locations && !strcmp(a->druid_locations, "original");
    po->project = a->project;
    po->stream = a->stream_plan;
}

int cli_druid_plan(cli_spec_args *a, icd_druid_plan **out)
{
    icd_error err;
    icd_error_clear(&err);
    icd_druid_plan_options po;
    cli_druid_plan_options(a, &po);
    if (icd_druid_plan_open(out, a->dspec, a->storage, &po, &err)) return cli_report(&err);
    const char *text;
    if (icd_druid_plan_residual(*out, &text) && icd_druid_plan_warns_residual(*out))
        warn_residual(text);
    return CLI_OK;
}

void cli_spec_args_free(cli_spec_args *a)
{
    icd_druid_spec_free(a->dspec);
    a->dspec = NULL;
    icd_storage_free(a->storage);
    a->storage = NULL;
}
