/*
 * `icedruid diff --spec SPEC.json --from-snapshot A [--to-snapshot B] [--granularity G]
 *  [--emit json] [--remap FROM=TO]... [--threads N]`: the Druid segment intervals that
 * changed between two snapshots of the spec's table (druid/diff.h), as one JSON object on
 * stdout. B defaults to the table's current snapshot, G to the spec's
 * granularitySpec.segmentGranularity (a name such as DAY, or a granularity JSON object).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/spec_args.h"
#include "druid/diff.h"

typedef struct diff_args {
    const char *from, *to, *granularity, *emit;
} diff_args;

static bool parse_id(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

/* Takes this command's own options out of argv (the rest goes to cli_spec_args_parse). */
static int take_own_args(int argc, char **argv, diff_args *d, int *out_argc)
{
    int n = 1;
    for (int i = 1; i < argc; i++) {
        const char **slot = !strcmp(argv[i], "--from-snapshot") ? &d->from
                            : !strcmp(argv[i], "--to-snapshot") ? &d->to
                            : !strcmp(argv[i], "--granularity") ? &d->granularity
                            : !strcmp(argv[i], "--emit")        ? &d->emit
                                                                : NULL;
        if (!slot) {
            argv[n++] = argv[i];
            if (!strcmp(argv[i], "--spec") || !strcmp(argv[i], "--remap") ||
                !strcmp(argv[i], "--threads")) {
                if (i + 1 < argc) argv[n++] = argv[++i];
            }
            continue;
        }
        if (i + 1 >= argc) return cli_usage_error("diff", "option '%s' needs a value", argv[i]);
        *slot = argv[++i];
    }
    *out_argc = n;
    return CLI_OK;
}

static int parse_granularity(const char *text, dr_granularity *g)
{
    icd_error err;
    icd_error_clear(&err);
    int rc;
    if (text[0] == '{' || text[0] == '"') {
        json_error_t je;
        json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
        if (!j) return cli_usage_error("diff", "--granularity: invalid JSON (%s)", je.text);
        rc = dr_granularity_parse(g, j, &err);
        json_decref(j);
    } else {
        rc = dr_granularity_named(g, text, &err);
    }
    if (rc) return cli_usage_error("diff", "--granularity: %s", err.message);
    return CLI_OK;
}

int cmd_diff(int argc, char **argv)
{
    diff_args d = {0};
    int nargc = 0;
    int rc = take_own_args(argc, argv, &d, &nargc);
    if (rc) return rc;
    dr_diff_opts opts = {0};
    dr_granularity g;
    if (!d.from) return cli_usage_error("diff", "expects --from-snapshot ID");
    if (!parse_id(d.from, &opts.from_snapshot))
        return cli_usage_error("diff", "--from-snapshot expects a snapshot id, got '%s'", d.from);
    if (d.to) {
        opts.has_to = true;
        if (!parse_id(d.to, &opts.to_snapshot))
            return cli_usage_error("diff", "--to-snapshot expects a snapshot id, got '%s'", d.to);
    }
    if (d.emit && strcmp(d.emit, "json"))
        return cli_usage_error("diff", "--emit '%s' is not supported (json)", d.emit);
    if (d.granularity) {
        rc = parse_granularity(d.granularity, &g);
        if (rc) return rc;
        opts.granularity = &g;
    }
    cli_spec_args a;
    rc = cli_spec_args_parse(&a, nargc, argv, "threads", NULL);
    if (!rc) rc = cli_spec_load(&a);
    opts.threads = a.threads;
    dr_diff diff;
    memset(&diff, 0, sizeof diff);
    icd_error err;
    icd_error_clear(&err);
    if (!rc && dr_diff_compute(a.spec, a.io, &opts, &diff, &err)) rc = cli_report(&err);
    if (!rc && diff.rows_unparseable > 0)
        fprintf(stderr,
                "icedruid: warning: %lld rows read have a timestamp the timestampSpec cannot "
                "parse; like `read`, diff leaves them out (they are not in Druid)\n",
                (long long)diff.rows_unparseable);
    if (!rc) {
        cli_out out;
        cli_out_init(&out, stdout);
        if (dr_diff_write_json(&diff, &out.buf, &err)) {
            icd_buf_free(&out.buf);
            rc = cli_report(&err);
        } else if (cli_out_finish(&out, &err)) {
            rc = cli_report(&err);
        }
    }
    dr_diff_free(&diff);
    cli_spec_args_free(&a);
    return rc;
}
