/*
 * Parsing of the table options shared by scan, tasks and the table information commands
 * (see table_args.h), and opening the table they name through the public API: directly
 * (icd_table_open) or through a catalog (--catalog: icd_druid_spec_parse_catalog and
 * icd_druid_spec_open_table, the same catalog loading as `plan` and `read`).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/table_args.h"

/* A catalog file is a small JSON document. */
#define CATALOG_FILE_MAX (1u << 20)

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

static bool parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

int cli_table_args_parse(cli_table_args *a, int argc, char **argv, const char *allowed)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    a->snapshot = ICD_SNAPSHOT_CURRENT;
    a->threads = 1;
    a->case_sensitive = true;
    icd_error err;
    if (cli_storage_new(&a->storage, &err)) return cli_report(&err);
    int selections = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (o[0] != '-' || !o[1]) {
            if (a->table) return cli_usage_error(cmd, "expects one TABLE, got '%s' too", o);
            a->table = o;
            continue;
        }
        if (!strncmp(o, "--", 2) && !allowed_opt(allowed, o + 2) && strcmp(o, "--remap") &&
            strcmp(o, "--catalog"))
            return cli_usage_error(cmd, "unknown option '%s'", o);
        if (!strcmp(o, "--stats")) {
            a->stats = true;
            continue;
        }
        if (i + 1 >= argc) return cli_usage_error(cmd, "option '%s' needs a value", o);
        const char *v = argv[++i];
        if (!strcmp(o, "--remap")) {
            if (cli_storage_add_remap_arg(a->storage, v, &err))
                return cli_usage_error(cmd, "%s", err.message);
        } else if (!strcmp(o, "--catalog")) {
            a->catalog_file = v;
        } else if (!strcmp(o, "--snapshot-id")) {
            if (!parse_i64(v, &a->snapshot_id))
                return cli_usage_error(cmd, "--snapshot-id expects a number, got '%s'", v);
            a->snapshot = ICD_SNAPSHOT_ID;
            selections++;
        } else if (!strcmp(o, "--ref")) {
            a->snapshot = ICD_SNAPSHOT_REF;
            a->ref = v;
            selections++;
        } else if (!strcmp(o, "--as-of")) {
            int64_t ms;
            char day[32];
            const char *t = v;
            /* a plain date means its midnight UTC */
            if (strlen(v) == 10 && v[4] == '-' && v[7] == '-') {
                snprintf(day, sizeof day, "%sT00:00:00Z", v);
                t = day;
            }
            if (!parse_i64(v, &ms) && icd_timestamp_parse(t, &ms, &err))
                return cli_usage_error(cmd,
                                       "--as-of expects epoch milliseconds, an ISO-8601 "
                                       "timestamp (UTC unless it has an offset) or a date "
                                       "(YYYY-MM-DD), got '%s'",
                                       v);
            a->snapshot = ICD_SNAPSHOT_AS_OF;
            a->as_of_ms = ms;
            selections++;
        } else if (!strcmp(o, "--columns")) {
            a->columns = v;
        } else if (!strcmp(o, "--format")) {
            a->format = v;
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
    if (!a->table && !a->catalog_file)
        return cli_usage_error(cmd, "expects a TABLE (a table directory or a metadata file)");
    if (selections > 1)
        return cli_usage_error(cmd, "--snapshot-id, --as-of and --ref exclude each other");
    return CLI_OK;
}

void cli_table_args_free(cli_table_args *a)
{
    icd_storage_free(a->storage);
    a->storage = NULL;
}

/* Reads the --catalog file (a small JSON document) into a malloc'd buffer. */
static int read_catalog_file(const char *path, char **text, size_t *len, icd_error *err)
{
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return cli_fail(err, ICD_ENOTFOUND, path, "cannot open the catalog file: %s",
                        strerror(errno));
    char *buf = malloc(CATALOG_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, CATALOG_FILE_MAX + 1, f) : 0;
    bool rerr = ferror(f);
    fclose(f);
    int rc = 0;
    if (!buf)
        rc = cli_fail(err, ICD_ENOMEM, NULL, "out of memory");
    else if (rerr)
        rc = cli_fail(err, ICD_EIO, path, "cannot read the catalog file");
    else if (n > CATALOG_FILE_MAX)
        rc = cli_fail(err, ICD_EINVALID, path, "the catalog file is larger than %u bytes",
                      CATALOG_FILE_MAX);
    if (rc) {
        free(buf);
        return rc;
    }
    *text = buf;
    *len = n;
    return 0;
}

static int open_through_catalog(cli_table_args *a, icd_table **out, icd_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_catalog_file(a->catalog_file, &text, &len, err);
    if (rc) return rc;
    icd_druid_spec *spec = NULL;
    rc = icd_druid_spec_parse_catalog(&spec, text, len, a->catalog_file, a->table, err);
    free(text);
    if (rc == 0) rc = icd_druid_spec_open_table(out, spec, a->storage, err);
    if (rc == 0) a->case_sensitive = icd_druid_spec_case_sensitive(spec) != 0;
    icd_druid_spec_free(spec);
    return rc;
}

int cli_table_open(cli_table_args *a, icd_table **out, icd_error *err)
{
    *out = NULL;
    if (a->catalog_file) return open_through_catalog(a, out, err);
    return icd_table_open(out, a->storage, a->table, err);
}
