/*
 * `icedruid cat FILE... [--threads N] [--remap FROM=TO]...`: the rows of Parquet, Avro or
 * ORC files as NDJSON (design.md §3), without any Iceberg metadata, file after file
 * (cat_files.c; --threads decodes up to N files at once, output still in file order).
 * `icedruid inspect FILE`: the file's metadata as JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/inspect.h"

static int run_file(int (*fn)(icd_fileio *, const char *, cli_out *, icd_error *), const char *name,
                    int argc, char **argv)
{
    const char *path = NULL;
    icd_error err;
    icd_error_clear(&err);
    icd_fileio *io = NULL;
    if (cli_fileio_new(&io, &err)) return cli_report(&err);
    int rc = CLI_OK;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--remap") && i + 1 < argc) {
            if (icd_fileio_add_remap_arg(io, argv[++i], &err)) {
                rc = cli_report(&err);
                goto done;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            rc = cli_usage_error(name, "unknown option '%s'", argv[i]);
            goto done;
        } else if (!path) {
            path = argv[i];
        } else {
            rc = cli_usage_error(name, "expects one FILE");
            goto done;
        }
    }
    if (!path) {
        rc = cli_usage_error(name, "expects a FILE");
        goto done;
    }
    rc = fn ? fn(io, path, NULL, &err) : 0;
    if (rc) rc = cli_report(&err);
done:
    icd_fileio_free(io);
    return rc;
}

static int inspect_any(icd_fileio *io, const char *path, cli_out *unused, icd_error *err)
{
    (void)unused;
    cli_format fmt = CLI_FMT_JSON;
    if (!cli_inspect_is_metadata(io, path)) /* directories and *.metadata.json[.gz] */
        ICD_TRY(cli_detect_format(io, path, &fmt, err));
    cli_out out;
    cli_out_init(&out, stdout);
    int rc;
    switch (fmt) {
    case CLI_FMT_PARQUET:
        rc = cli_inspect_parquet(io, path, &out, err);
        break;
    case CLI_FMT_AVRO:
        rc = cli_inspect_avro(io, path, &out, err);
        break;
    case CLI_FMT_ORC:
        rc = cli_inspect_orc(io, path, &out, err);
        break;
    case CLI_FMT_JSON:
        rc = cli_inspect_metadata(io, path, &out, err);
        break;
    case CLI_FMT_PUFFIN:
        rc = cli_inspect_puffin(io, path, &out, err);
        break;
    default:
        rc = icd_fail(err, ICD_EUNSUPPORTED, path, -1,
                      "inspect does not know this kind of file yet");
    }
    icd_error tmp;
    icd_error_clear(&tmp);
    int frc = cli_out_finish(&out, rc ? &tmp : err);
    return rc ? rc : frc;
}

int cmd_cat(int argc, char **argv)
{
    icd_error err;
    icd_error_clear(&err);
    icd_fileio *io = NULL;
    if (cli_fileio_new(&io, &err)) return cli_report(&err);
    char **paths = calloc(argc > 1 ? (size_t)argc : 1, sizeof *paths);
    size_t n = 0;
    int threads = 1, rc = CLI_OK;
    if (!paths) {
        icd_fail_nomem(&err);
        rc = cli_report(&err);
        goto done;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--remap") && i + 1 < argc) {
            if (icd_fileio_add_remap_arg(io, argv[++i], &err)) {
                rc = cli_report(&err);
                goto done;
            }
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            char *end;
            long t = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || t < 1 || t > 256) {
                rc = cli_usage_error("cat", "--threads expects 1..256, got '%s'", argv[i]);
                goto done;
            }
            threads = (int)t;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            rc = cli_usage_error("cat", "unknown option '%s'", argv[i]);
            goto done;
        } else {
            paths[n++] = argv[i];
        }
    }
    if (!n) {
        rc = cli_usage_error("cat", "expects a FILE");
        goto done;
    }
    if (cli_cat_files(io, paths, n, threads, &err)) rc = cli_report(&err);
done:
    free(paths);
    icd_fileio_free(io);
    return rc;
}
int cmd_inspect(int argc, char **argv)
{
    return run_file(inspect_any, "inspect", argc, argv);
}
