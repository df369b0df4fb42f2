/*
 * Parsing of the table options shared by scan and tasks (see table_args.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/local.h"
#include "cli/cli.h"
#include "cli/table_args.h"
#include "iceberg/literal.h"

static bool allowed_opt(const char *allowed, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = allowed; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return true;
        p = comma ? comma + 1 : p + len;
    }
    return false;
}

static bool parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return false;
    *out = v;
    return true;
}

int cli_table_args_parse(cli_table_args *a, int argc, char **argv, const char *allowed)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    a->select.kind = ICE_SELECT_CURRENT;
    a->threads = 1;
    icd_error err;
    if (icd_fileio_new(&a->io, &err))
        return cli_report(&err);
    int selections = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (o[0] != '-' || !o[1]) {
            if (a->table)
                return cli_usage_error(cmd, "expects one TABLE, got '%s' too", o);
            a->table = o;
            continue;
        }
        if (!strncmp(o, "--", 2) && !allowed_opt(allowed, o + 2) && strcmp(o, "--remap"))
            return cli_usage_error(cmd, "unknown option '%s'", o);
        if (!strcmp(o, "--stats")) {
            a->stats = true;
            continue;
        }
        if (i + 1 >= argc)
            return cli_usage_error(cmd, "option '%s' needs a value", o);
        const char *v = argv[++i];
        if (!strcmp(o, "--remap")) {
            if (icd_fileio_add_remap_arg(a->io, v, &err))
                return cli_usage_error(cmd, "%s", err.message);
        } else if (!strcmp(o, "--snapshot-id")) {
            if (!parse_i64(v, &a->select.snapshot_id))
                return cli_usage_error(cmd, "--snapshot-id expects a number, got '%s'", v);
            a->select.kind = ICE_SELECT_ID;
            selections++;
        } else if (!strcmp(o, "--ref")) {
            a->select.kind = ICE_SELECT_REF;
            a->select.ref = v;
            selections++;
        } else if (!strcmp(o, "--as-of")) {
            int64_t ms;
            bool zone;
            if (!parse_i64(v, &ms) && !ice_parse_timestamp(v, strlen(v), 3, &zone, &ms))
                return cli_usage_error(cmd,
                                       "--as-of expects epoch milliseconds or an ISO-8601 "
                                       "timestamp (UTC unless it has an offset), got '%s'",
                                       v);
            a->select.kind = ICE_SELECT_AS_OF;
            a->select.timestamp_ms = ms;
            selections++;
        } else if (!strcmp(o, "--columns")) {
            a->columns = v;
        } else if (!strcmp(o, "--filter")) {
            a->filter_file = v;
        } else if (!strcmp(o, "-o") || !strcmp(o, "--output")) {
            a->output = v;
        } else if (!strcmp(o, "--threads")) {
            int64_t t;
            if (!parse_i64(v, &t) || t < 1 || t > 256)
                return cli_usage_error(cmd, "--threads expects 1..256, got '%s'", v);
            a->threads = (int)t;
        } else {
            return cli_usage_error(cmd, "unknown option '%s'", o);
        }
    }
    if (!a->table)
        return cli_usage_error(cmd, "expects a TABLE (a table directory or a metadata file)");
    if (selections > 1)
        return cli_usage_error(cmd, "--snapshot-id, --as-of and --ref exclude each other");
    return CLI_OK;
}

void cli_table_args_free(cli_table_args *a)
{
    icd_fileio_free(a->io);
    a->io = NULL;
}

int cli_table_load(cli_table_args *a, ice_metadata **md, icd_error *err)
{
    return cat_local_load(a->io, a->table, md, err);
}
