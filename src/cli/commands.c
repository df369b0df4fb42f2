/*
 * The command table (commands.h) and everything generated from it: the usage and
 * per-command help, the man page (roff, `icedruid --help-man`, run by CMake at build time),
 * bash and zsh completion (`icedruid --help-completion bash|zsh`), and the checking of a
 * command line before the command's own parser sees it (--opt=value split, unknown options
 * refused with a suggestion, --help, global options taken out and applied).
 *
 * Exit codes, for every command: 0 ok, 1 the work failed (runtime: a file, the network, the
 * data), 2 usage (the command line), 3 `sync` only: another sync holds the state lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/serve_common.h"
#include "icedruid/icedruid.h"

cli_globals cli_global = {false, -1, -1, -1, -1};

/* ---- options shared by several commands ------------------------------------------------ */

#define O_REMAP                                                                                    \
    {                                                                                              \
        "remap", 0, "FROM=TO",                                                                     \
            "read locations that start with FROM under TO instead (repeatable): a table written "  \
            "elsewhere, or a local copy of it. Druid is handed the remapped locations too unless " \
            "--druid-locations original (man icedruid: LOCATIONS).",                               \
            NULL, 0                                                                                \
    }
#define O_THREADS                                                                                  \
    {                                                                                              \
        "threads", 0, "N",                                                                         \
            "work on up to N files (scan: or row-group ranges of them) at once (1..256; default "  \
            "1)",                                                                                  \
            NULL, 0                                                                                \
    }
#define O_CATALOG                                                                                  \
    {                                                                                              \
        "catalog", 0, "CATALOG.json",                                                              \
            "find TABLE through a catalog: a Druid icebergCatalog object (TABLE is "               \
            "NAMESPACE.TABLE) "                                                                    \
            "or a Druid iceberg input source / spec (TABLE left out)",                             \
            NULL, 0                                                                                \
    }
#define O_SNAPSHOT                                                                                 \
    {"snapshot-id", 0, "ID", "read this snapshot instead of the current one", NULL, 0},            \
        {"as-of",                                                                                  \
         0,                                                                                        \
         "TIME",                                                                                   \
         "the snapshot current at TIME: epoch milliseconds, an ISO-8601 timestamp (UTC "           \
         "unless it has an offset) or a date (YYYY-MM-DD, its midnight UTC)",                      \
         NULL,                                                                                     \
         0},                                                                                       \
    {                                                                                              \
        "ref", 0, "NAME", "the snapshot a branch or tag points to", NULL, 0                        \
    }
#define O_OUTPUT                                                                                   \
    {                                                                                              \
        "output", 'o', "FILE", "write the output to FILE instead of stdout", NULL, 0               \
    }
#define O_STATS                                                                                    \
    {                                                                                              \
        "stats", 0, NULL,                                                                          \
            "print the row accounting on stderr as one JSON line: rows read, removed by position " \
            "deletes, by equality deletes, by deletion vectors, emitted, unparseable",             \
            NULL, 0                                                                                \
    }
#define O_SPEC                                                                                     \
    {                                                                                              \
        "spec", 0, "SPEC.json",                                                                    \
            "the Druid ingestion spec (or its iceberg inputSource, or a task) naming the table",   \
            NULL, 0                                                                                \
    }
#define O_FORMAT                                                                                   \
    {                                                                                              \
        "format", 0, "FORMAT",                                                                     \
            "table (aligned columns) or json (one JSON array; ids also as strings); default "      \
            "table "                                                                               \
            "on a terminal, json otherwise",                                                       \
            "table json", 0                                                                        \
    }
#define O_DRUID_LOCATIONS                                                                          \
    {                                                                                              \
        "druid-locations", 0, "WHICH",                                                             \
            "which locations the spec handed to Druid names: remapped (default: what --remap "     \
            "makes "                                                                               \
            "of them) or original (the table's own, while icedruid reads the --remap copy)",       \
            "remapped original", 0                                                                 \
    }
#define O_SERVE_AUTH                                                                               \
    {"auth-user", 0, "NAME", "basic-auth user of the served splits", NULL, 0},                     \
    {                                                                                              \
        "auth-password-env", 0, "VAR",                                                             \
            "the environment variable Druid reads the served splits' password from", NULL, 0       \
    }
#define O_PROJECT                                                                                  \
    {                                                                                              \
        "project", 0, NULL,                                                                        \
            "materialized files hold only the columns Druid's reader keeps for the spec (the "     \
            "timestamp column, dimensions, metric inputs; a projection is part of the file "       \
            "name: give it to every command that stages, serves or lists them)",                   \
            NULL, 0                                                                                \
    }
#define O_ROWS                                                                                     \
    {                                                                                              \
        "rows", 0, NULL,                                                                           \
            "NDJSON splits (`serve --rows`, /splits/N) instead of the materialized files served "  \
            "by content address (the default; ORC tables always use splits)",                      \
            NULL, 0                                                                                \
    }
#define O_SERVE_URL                                                                                \
    {                                                                                              \
        "serve-url", 0, "URL",                                                                     \
            "base URL of `icedruid serve` (http:// or https://): Druid reads the splits there",    \
            NULL, 0                                                                                \
    }

/* Global options: every command takes them; the command never sees them. */
static const cli_opt GLOBAL_OPTS[] = {
    {"no-progress", 0, NULL, "never show the progress line (it is only shown on a terminal)", NULL,
     CLI_OPT_GLOBAL},
    {"connect-timeout", 0, "SECONDS",
     "give up connecting to a remote endpoint after SECONDS (default 10; env "
     "ICEDRUID_CONNECT_TIMEOUT)",
     NULL, CLI_OPT_GLOBAL},
    {"request-timeout", 0, "SECONDS",
     "give up on one attempt of a remote request after at most SECONDS, 0 for no cap (default "
     "0: the per-attempt deadline of ICEDRUID_HTTP_TIMEOUT plus the bytes asked for at "
     "ICEDRUID_HTTP_MIN_RATE; env ICEDRUID_REQUEST_TIMEOUT)",
     NULL, CLI_OPT_GLOBAL},
    {"stall-timeout", 0, "SECONDS",
     "abort a transfer that received nothing for SECONDS (default 30; env "
     "ICEDRUID_STALL_TIMEOUT)",
     NULL, CLI_OPT_GLOBAL},
    {"retries", 0, "N",
     "retry a failed remote request (connection error, timeout, 429, 5xx) up to N times "
     "(default 3; env ICEDRUID_RETRIES); each retry is reported on stderr",
     NULL, CLI_OPT_GLOBAL},
    {NULL, 0, NULL, NULL, NULL, 0}};

static const cli_opt CAT_OPTS[] = {O_THREADS, O_REMAP, {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt INSPECT_OPTS[] = {O_REMAP, {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt SCAN_OPTS[] = {
    O_SNAPSHOT, {"columns", 0, "a,b,c", "only these top-level columns", NULL, 0},
    O_THREADS,  O_STATS,
    O_OUTPUT,   O_CATALOG,
    O_REMAP,    {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt TASKS_OPTS[] = {
    O_SNAPSHOT,
    {"filter", 0, "FILTER.json",
     "a Druid icebergFilter: prune data files by partition values and column metrics", NULL, 0},
    O_THREADS,
    O_OUTPUT,
    O_CATALOG,
    O_REMAP,
    {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt META_OPTS[] = {O_FORMAT, O_CATALOG, O_REMAP, {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt FILES_OPTS[] = {O_SNAPSHOT, O_FORMAT,  O_CATALOG,
                                     O_REMAP,    O_THREADS, {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt PLAN_OPTS[] = {
    O_SPEC,
    {"check", 0, NULL,
     "pre-flight only: the spec's columns against the schema, the catalog, storage access "
     "(the first data file and every delete file) and the URL schemes Druid gets; one line "
     "per check, exit 1 when one fails",
     NULL, 0},
    O_DRUID_LOCATIONS,
    O_THREADS,
    O_REMAP,
    {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt READ_OPTS[] = {
    O_SPEC,
    {"split", 0, "SPLIT.json", "read only this split (one of `plan`'s)", NULL, 0},
    {"limit", 0, "N", "stop after N rows (a preview, as Druid's data loader shows)", NULL, 0},
    {"prune-row-groups", 0, NULL,
     "skip the Parquet row groups and ORC stripes whose statistics exclude the icebergFilter "
     "(their rows fail the filter; Druid itself reads whole files and keeps such rows unless "
     "its transformSpec drops them)",
     NULL, 0},
    {"stream-memory", 0, "BYTES",
     "decode memory of one thread (default 16M; K, M, G suffixes): an eighth of it bounds the "
     "compressed column bytes held of a Parquet data file (larger row groups are read a few "
     "pages at a time; 0: whole column chunks), the rest is for the decoded pages (one per "
     "column, decoded whole)",
     NULL, 0},
    O_THREADS,
    O_STATS,
    O_OUTPUT,
    O_REMAP,
    {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt REWRITE_OPTS[] = {O_SPEC,    O_SERVE_URL,  O_ROWS,
                                       O_PROJECT, O_SERVE_AUTH, O_DRUID_LOCATIONS,
                                       O_THREADS, O_REMAP,      {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt STAGE_OPTS[] = {
    O_SPEC,
    {"to", 0, "LOCATION",
     "where the delete-applied (materialized) files go: a local/shared directory or "
     "s3://bucket/prefix",
     NULL, 0},
    {"part-size", 0, "BYTES", "size of the parts of an S3 multipart upload", NULL, 0},
    {"gc", 0, "SNAPSHOT_ID",
     "afterwards remove this table's staged files under LOCATION that no snapshot after "
     "SNAPSHOT_ID needs",
     NULL, 0},
    O_PROJECT,
    O_THREADS,
    O_REMAP,
    {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt SERVE_OPTS[] = {
    O_SPEC,
    {"listen", 0, "HOST:PORT",
     "address to listen on (default 127.0.0.1:0, a free port; [::1]:PORT for IPv6); loopback "
     "only unless --allow-remote",
     NULL, 0},
    {"threads", 0, "N", "worker threads (default 4)", NULL, 0},
    {"max-streams", 0, "N", "splits read at once (default 64; more wait in a queue)", NULL, 0},
    {"decode-threads", 0, "N",
     "threads that read, decode and delete-apply the streams' rows (default 4 per CPU, at "
     "least 8, at most --max-streams)",
     NULL, 0},
    {"auth-user", 0, "NAME",
     "require HTTP basic auth with this user; the password is read from --auth-password-file "
     "or the environment variable " CLI_SERVE_PASSWORD_ENV,
     NULL, 0},
    {"auth-password-file", 0, "FILE", "the basic-auth password (first line of FILE)", NULL, 0},
    {"auth-password", 0, "PASSWORD", "refused: use --auth-password-file", NULL, CLI_OPT_HIDDEN},
    {"public-url", 0, "URL",
     "base of the split URIs (behind a proxy, or when listening on 0.0.0.0)", NULL, 0},
    {"allow-remote", 0, NULL, "allow a non-loopback listen address", NULL, 0},
    {"access-log", 0, NULL,
     "print one line per request on stderr (UTC time, client address, method, escaped path, "
     "status, bytes, seconds)",
     NULL, 0},
    {"max-connections", 0, "N",
     "open connections (default 1000; at the limit a connection waiting for the rest of its "
     "header is closed: the longest-waiting of the address whose such connections waited longest "
     "in all)",
     NULL, 0},
    {"max-connections-per-ip", 0, "N", "connections per client address (default 64)", NULL, 0},
    {"header-timeout", 0, "S",
     "a request header must be complete within S seconds of the connection (or the previous "
     "response) (default 10)",
     NULL, 0},
    {"idle-timeout", 0, "S",
     "drop a client that reads nothing for S seconds, closing its stream (default 60)", NULL, 0},
    {"queue-timeout", 0, "S",
     "a split request over --max-streams waits up to S seconds for a free stream, then 503 "
     "(default 60)",
     NULL, 0},
    {"stream-buffer", 0, "BYTES",
     "rows buffered per stream ahead of the client (default 1M; K, M, G suffixes)", NULL, 0},
    {"buffer-memory", 0, "BYTES", "rows buffered over all streams (default 64M)", NULL, 0},
    {"stream-memory", 0, "BYTES",
     "decode memory of one stream or regenerated file (default 16M; 0: whole column chunks): "
     "an eighth of it bounds the compressed column bytes held of a Parquet data file (larger "
     "row groups are read a few pages at a time; a page larger than its share is read whole), "
     "the rest is for the decoded pages (one per column, decoded whole)",
     NULL, 0},
    {"decode-memory", 0, "BYTES",
     "decode memory of all --rows split streams (default 512M; 0: no bound): a stream starts "
     "reading when its charge fits (the larger of --stream-memory and the most one stream has "
     "held; then what its reader holds), else it waits; one stream always reads",
     NULL, 0},
    {"drain-timeout", 0, "S",
     "on SIGTERM/SIGINT, let streams in flight finish for up to S seconds (default 30); SIGHUP "
     "is ignored",
     NULL, 0},
    O_ROWS,
    O_PROJECT,
    {"cache-dir", 0, "DIR",
     "where served materialized files are kept and regenerated into (default "
     "$XDG_CACHE_HOME/icedruid/serve or ~/.cache/icedruid/serve)",
     NULL, 0},
    {"cache-max-bytes", 0, "BYTES",
     "bound of the cache directory; the least recently served files go first (default 10G)", NULL,
     0},
    {"metadata-max-age", 0, "MS",
     "how old the table's snapshot list may be when a file URL is checked for an expired "
     "snapshot (410) (default 5000; 0: reload on every request)",
     NULL, 0},
    O_REMAP,
    {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt DIFF_OPTS[] = {
    O_SPEC,
    {"from-snapshot", 0, "ID", "the snapshot Druid holds (the older one)", NULL, 0},
    {"to-snapshot", 0, "ID", "the newer snapshot (default: the current one)", NULL, 0},
    {"granularity", 0, "G",
     "segment granularity of the Druid datasource (default: the spec's granularitySpec)", NULL, 0},
    {"emit", 0, "WHAT",
     "json (the intervals, default), msq (REPLACE statements) or native (an index_parallel "
     "task)",
     "json msq native", 0},
    {"replace-only", 0, NULL, "leave intervals that only received new rows out", NULL, 0},
    O_SERVE_URL,
    {"stage-to", 0, "LOCATION",
     "stage the materialized files there first (as `icedruid stage --to`) and list them with the "
     "raw files in the warehouseSource instead of reading them from --serve-url",
     NULL, 0},
    O_ROWS,
    O_PROJECT,
    O_SERVE_AUTH,
    O_THREADS,
    O_REMAP,
    {NULL, 0, NULL, NULL, NULL, 0}};
static const cli_opt SYNC_OPTS[] = {
    O_SPEC,
    {"state", 0, "STATE.json", "the snapshot last ingested (created by the first run)", NULL, 0},
    {"druid", 0, "URL",
     "submit to Druid (Router/Overlord base URL) and record the new snapshot once every "
     "submission was accepted; without it the re-ingestion is only printed",
     NULL, 0},
    {"druid-user", 0, "NAME", "basic auth for Druid; password from $ICEDRUID_DRUID_PASSWORD", NULL,
     0},
    {"emit", 0, "WHAT",
     "native (an index_parallel task; the default for a native spec) or msq (MSQ REPLACE "
     "statements)",
     "msq native", 0},
    O_SERVE_URL,
    O_ROWS,
    O_PROJECT,
    {"serve-listen", 0, "HOST:PORT",
     "serve the materialized files (or, with --rows, the splits) from this process while Druid "
     "reads them (implies --wait)",
     NULL, 0},
    {"serve-public-url", 0, "URL", "base of the split URIs with --serve-listen", NULL, 0},
    {"serve-allow-remote", 0, NULL, "allow a non-loopback --serve-listen address", NULL, 0},
    O_SERVE_AUTH,
    {"wait", 0, NULL,
     "poll the tasks' status and record the snapshot only once every task SUCCEEDED", NULL, 0},
    {"wait-timeout", 0, "SECONDS", "how long --wait waits (default 21600)", NULL, 0},
    {"poll-ms", 0, "N", "how often --wait polls (default 5000)", NULL, 0},
    {"context", 0, "JSON",
     "extra MSQ query context / native task context, e.g. "
     "'{\"maxNumTasks\":4}'",
     NULL, 0},
    {"replace-only", 0, NULL, "leave intervals that only received new rows out", NULL, 0},
    {"full", 0, NULL, "ignore the recorded snapshot: re-ingest the whole table", NULL, 0},
    {"baseline", 0, "SNAPSHOT_ID", "record SNAPSHOT_ID as already ingested, submit nothing", NULL,
     0},
    O_THREADS,
    O_REMAP,
    {NULL, 0, NULL, NULL, NULL, 0}};

static const cli_command COMMANDS[] = {
    {"scan", cmd_scan, "TABLE", "the table's rows, every delete applied, as NDJSON",
     "TABLE is a table directory (Hadoop layout) or a *.metadata.json file, local, s3://, "
     "s3a:// or http(s)://.",
     SCAN_OPTS},
    {"tasks", cmd_tasks, "TABLE", "the scan plan: data files and the delete files that apply",
     "One JSON object: the snapshot and schema ids, \"tasks\" (one line per data file, with "
     "the delete files that apply to it), then \"counts\" and \"residual\", which follow the "
     "tasks because the plan is written as the data manifests are read, in one pass.",
     TASKS_OPTS},
    {"snapshots", cmd_snapshots, "TABLE",
     "the table's snapshots: id, parent, time, operation, sequence number, schema, manifest "
     "list",
     NULL, META_OPTS},
    {"history", cmd_history, "TABLE",
     "the snapshot log: when each snapshot became current, and whether it is an ancestor of "
     "the current one",
     NULL, META_OPTS},
    {"refs", cmd_refs, "TABLE", "the table's branches and tags", NULL, META_OPTS},
    {"schema", cmd_schema, "TABLE", "the current schema: field id, name, type, required", NULL,
     META_OPTS},
    {"partitions", cmd_partitions, "TABLE",
     "the partition specs: spec id, field, source column, transform", NULL, META_OPTS},
    {"files", cmd_files, "TABLE",
     "the data and delete files of a snapshot with their record counts and sizes", NULL,
     FILES_OPTS},
    {"cat", cmd_cat, "FILE...", "rows of .parquet, .avro or .orc files as NDJSON, in order", NULL,
     CAT_OPTS},
    {"inspect", cmd_inspect, "FILE",
     "structure of a .parquet, .orc, .avro, .puffin or metadata file as JSON", NULL, INSPECT_OPTS},
    {"plan", cmd_plan, "--spec SPEC.json",
     "Druid's v1/v2 decision: the warehouse input source (no deletes) or one split per data "
     "file (deletes), as JSON",
     NULL, PLAN_OPTS},
    {"read", cmd_read, "--spec SPEC.json",
     "the rows as Druid input rows (NDJSON), every delete applied",
     "Unparseable timestamps are Druid parse exceptions: each is reported on stderr and its "
     "row skipped; more than tuningConfig.maxParseExceptions fails the run.",
     READ_OPTS},
    {"rewrite-spec", cmd_rewrite_spec, "--spec SPEC.json", "the ingestion spec to submit to Druid",
     NULL, REWRITE_OPTS},
    {"stage", cmd_stage, "--spec SPEC.json --to LOCATION",
     "write the delete-applied (materialized) files and print the spec listing raw + staged "
     "files",
     "Files already staged are skipped. A summary line (JSON) goes to stderr.", STAGE_OPTS},
    {"serve", cmd_serve, "--spec SPEC.json",
     "serve the materialized files by content address (Range, ETag) for Druid's http input "
     "source; --rows: the splits' rows as NDJSON",
     "Materialized files are written on first request into --cache-dir and answered at "
     "/files/TABLE/SNAPSHOT/NAME by any instance serving the table (410 once the snapshot "
     "expired). Tables whose materialized files would be ORC are served as NDJSON splits.",
     SERVE_OPTS},
    {"diff", cmd_diff, "--spec SPEC.json --from-snapshot ID",
     "Druid intervals to replace / append between two snapshots", NULL, DIFF_OPTS},
    {"sync", cmd_sync, "--spec SPEC.json --state STATE.json",
     "re-ingest the intervals deletes and updates touched",
     "Re-ingests into Druid the time intervals that changed in the spec's Iceberg table since "
     "the snapshot recorded in STATE.json (deleted or updated rows: REPLACE). Exit code 3: "
     "another sync holds the state lock.",
     SYNC_OPTS},
};

const cli_command *cli_commands(size_t *n)
{
    *n = sizeof COMMANDS / sizeof COMMANDS[0];
    return COMMANDS;
}

const cli_command *cli_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (!strcmp(COMMANDS[i].name, name)) return &COMMANDS[i];
    return NULL;
}

/* ---- did you mean ----------------------------------------------------------------------- */

/* Optimal string alignment distance (an adjacent transposition costs 1), for words up to 63
 * characters; longer ones are "far". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63) return 1000;
    size_t d[64][64];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

const char *cli_did_you_mean(const char *word, const char *const *candidates)
{
    const char *best = NULL;
    size_t best_d = 0, len = strlen(word);
    size_t limit = len < 4 ? 1 : len < 9 ? 2 : 3;
    for (size_t i = 0; candidates[i]; i++) {
        size_t d = edit_distance(word, candidates[i]);
        /* a prefix of an option ("--snap") is a good guess too */
        if (len >= 3 && !strncmp(candidates[i], word, len)) d = 1;
        if (d <= limit && (!best || d < best_d)) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}

/* ---- argv checking ---------------------------------------------------------------------- */

static const cli_opt *find_opt(const cli_opt *opts, const char *name, size_t len, char short_name)
{
    for (const cli_opt *o = opts; o->name; o++) {
        if (short_name ? o->short_name == short_name
                       : (strlen(o->name) == len && !strncmp(o->name, name, len)))
            return o;
    }
    return NULL;
}

static int suggest_option(const cli_command *c, const char *given, size_t len)
{
    const char *names[160];
    char spelled[160][48];
    size_t n = 0;
    for (int g = 0; g < 2; g++)
        for (const cli_opt *o = g ? GLOBAL_OPTS : c->opts; o->name && n < 159; o++) {
            if (o->flags & CLI_OPT_HIDDEN) continue;
            snprintf(spelled[n], sizeof spelled[n], "--%s", o->name);
            names[n] = spelled[n];
            n++;
        }
    names[n] = NULL;
    char word[64];
    snprintf(word, sizeof word, "%.*s", (int)(len < 63 ? len : 63), given);
    const char *best = cli_did_you_mean(word, names);
    if (best)
        return cli_usage_error(c->name, "unknown option '%s' (did you mean '%s'?)", word, best);
    return cli_usage_error(c->name, "unknown option '%s'", word);
}

static bool parse_seconds(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* A global option's value (from the command line or the environment). */
static int set_global(const char *cmd, const char *name, const char *v, const char *source)
{
    long x;
    if (!strcmp(name, "retries")) {
        if (!parse_seconds(v, 0, 100, &x))
            return cli_usage_error(cmd, "%s expects 0..100, got '%s'", source, v);
        cli_global.retries = (int)x;
        return CLI_OK;
    }
    long lo = !strcmp(name, "request-timeout") ? 0 : 1;
    if (!parse_seconds(v, lo, 86400, &x))
        return cli_usage_error(cmd, "%s expects %ld..86400 seconds, got '%s'", source, lo, v);
    if (!strcmp(name, "connect-timeout"))
        cli_global.connect_timeout_s = x;
    else if (!strcmp(name, "request-timeout"))
        cli_global.request_timeout_s = x;
    else
        cli_global.stall_timeout_s = x;
    return CLI_OK;
}

static int globals_from_env(const char *cmd)
{
    static const char *const MAP[][2] = {{"ICEDRUID_CONNECT_TIMEOUT", "connect-timeout"},
                                         {"ICEDRUID_REQUEST_TIMEOUT", "request-timeout"},
                                         {"ICEDRUID_STALL_TIMEOUT", "stall-timeout"},
                                         {"ICEDRUID_RETRIES", "retries"}};
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++) {
        const char *v = getenv(MAP[i][0]);
        if (v && v[0] && set_global(cmd, MAP[i][1], v, MAP[i][0])) return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_args_normalize(const cli_command *c, int argc, char **argv, int *out_argc, char ***out_argv)
{
    *out_argv = NULL;
    if (globals_from_env(c->name)) return CLI_USAGE;
    /* One block: the new argv, then the "--name" spellings it points to. */
    size_t strings = 0;
    for (int i = 1; i < argc; i++)
        strings += strlen(argv[i]) + 3;
    size_t nptr = (size_t)argc * 2 + 1;
    char **v = calloc(1, nptr * sizeof *v + strings + 1);
    if (!v) return cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    char *pool = (char *)(v + nptr);
    int n = 0;
    v[n++] = argv[0];
    bool rest = false;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (rest || a[0] != '-' || !a[1]) {
            v[n++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            rest = true;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            cli_print_command_help(c, stdout);
            free(v);
            return -1;
        }
        const cli_opt *o;
        const char *eq = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_opt(c->opts, name, len, 0);
            if (!o) o = find_opt(GLOBAL_OPTS, name, len, 0);
            if (!o) {
                free(v);
                return suggest_option(c, a, eq ? (size_t)(eq - a) : strlen(a));
            }
        } else {
            o = a[2] ? NULL : find_opt(c->opts, "", 0, a[1]);
            if (!o) {
                free(v);
                return suggest_option(c, a, strlen(a));
            }
        }
        if (!o->arg && eq) {
            free(v);
            return cli_usage_error(c->name, "option '--%s' takes no value", o->name);
        }
        const char *value = NULL;
        if (o->arg) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else {
                free(v);
                return cli_usage_error(c->name, "option '%s' needs a value (%s)", a, o->arg);
            }
        }
        if (o->flags & CLI_OPT_GLOBAL) {
            int rc = CLI_OK;
            if (!strcmp(o->name, "no-progress"))
                cli_global.no_progress = true;
            else {
                char src[64];
                snprintf(src, sizeof src, "--%s", o->name);
                rc = set_global(c->name, o->name, value, src);
            }
            if (rc) {
                free(v);
                return rc;
            }
            continue;
        }
        if (o->arg && o->choices && !o->flags) {
            /* an enumerated value: refuse a value that is not one of them, listing them */
            size_t vl = strlen(value);
            bool ok = false;
            for (const char *p = o->choices; *p;) {
                const char *sp = strchr(p, ' ');
                size_t l = sp ? (size_t)(sp - p) : strlen(p);
                if (l == vl && !strncmp(p, value, l)) ok = true;
                p += l + (sp != NULL);
            }
            if (!ok) {
                free(v);
                return cli_usage_error(c->name, "--%s expects one of: %s; got '%s'", o->name,
                                       o->choices, value);
            }
        }
        /* The command's own parser gets "--name" [value], whatever the spelling was. */
        if (eq || a[1] != '-') {
            size_t need = strlen(o->name) + 3; /* never more than the argument it came from */
            snprintf(pool, need, "--%s", o->name);
            v[n++] = pool;
            pool += need;
        } else {
            v[n++] = a;
        }
        if (value) v[n++] = (char *)value;
    }
    v[n] = NULL;
    *out_argc = n;
    *out_argv = v;
    return CLI_OK;
}

/* ---- help ------------------------------------------------------------------------------- */

/* Prints `text` wrapped to 80 columns, every line indented by `indent`; the cursor is at
 * column `col` of a line that holds no word of the text yet. */
static void wrap(FILE *fp, const char *text, int indent, int col)
{
    const char *p = text;
    bool fresh = true; /* no word on this line yet */
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        int len = (int)(p - w);
        if (!len) break;
        if (!fresh && col + 1 + len > 80) {
            fprintf(fp, "\n%*s", indent, "");
            col = indent;
        } else if (!fresh) {
            fputc(' ', fp);
            col++;
        }
        fwrite(w, 1, (size_t)len, fp);
        col += len;
        fresh = false;
    }
    fputc('\n', fp);
}

static void print_opts(FILE *fp, const cli_opt *opts)
{
    for (const cli_opt *o = opts; o->name; o++) {
        if (o->flags & CLI_OPT_HIDDEN) continue;
        char head[80];
        if (o->short_name)
            snprintf(head, sizeof head, "  -%c, --%s%s%s", o->short_name, o->name,
                     o->arg ? " " : "", o->arg ? o->arg : "");
        else
            snprintf(head, sizeof head, "  --%s%s%s", o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
        int col = (int)strlen(head);
        fputs(head, fp);
        if (col < 28) {
            fprintf(fp, "%*s", 28 - col, "");
            col = 28;
        } else {
            fprintf(fp, "\n%28s", "");
            col = 28;
        }
        wrap(fp, o->help, 28, col);
    }
}

void cli_print_usage(FILE *fp)
{
    fprintf(fp, "icedruid %s: read Apache Iceberg tables correctly, for Apache Druid\n\n",
            icd_version());
    fprintf(fp, "usage: icedruid COMMAND [OPTIONS]   (icedruid COMMAND --help for its options)\n\n"
                "commands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        fprintf(fp, "  %-13s", COMMANDS[i].name);
        wrap(fp, COMMANDS[i].summary, 15, 15);
    }
    fprintf(fp, "\noptions of every command:\n");
    print_opts(fp, GLOBAL_OPTS);
    fprintf(fp, "\n  --help, -h                after a command: its options\n"
                "  --version                 the version\n"
                "\nexit codes: 0 ok, 1 the work failed, 2 usage error (3: sync is locked)\n");
}

void cli_print_command_help(const cli_command *c, FILE *fp)
{
    fprintf(fp, "usage: icedruid %s %s [options]\n\n", c->name, c->args);
    wrap(fp, c->summary, 0, 0);
    if (c->details) {
        fputc('\n', fp);
        wrap(fp, c->details, 0, 0);
    }
    fprintf(fp, "\noptions:\n");
    print_opts(fp, c->opts);
    fprintf(fp, "\noptions of every command:\n");
    print_opts(fp, GLOBAL_OPTS);
    fprintf(fp, "\nexit codes: 0 ok, 1 the work failed, 2 usage error%s\n",
            !strcmp(c->name, "sync") ? ", 3 another sync is running" : "");
}

/* ---- man page --------------------------------------------------------------------------- */

static void roff(FILE *fp, const char *s)
{
    bool bol = true;
    for (; *s; s++) {
        if (bol && (*s == '.' || *s == '\'')) fputs("\\&", fp);
        bol = false;
        if (*s == '\\')
            fputs("\\e", fp);
        else if (*s == '-')
            fputs("\\-", fp);
        else if (*s == '\n') {
            fputc('\n', fp);
            bol = true;
        } else
            fputc(*s, fp);
    }
}

static void man_opts(FILE *fp, const cli_opt *opts)
{
    for (const cli_opt *o = opts; o->name; o++) {
        if (o->flags & CLI_OPT_HIDDEN) continue;
        fputs(".TP\n", fp);
        if (o->short_name) fprintf(fp, "\\fB\\-%c\\fR, ", o->short_name);
        fputs("\\fB\\-\\-", fp);
        roff(fp, o->name);
        fputs("\\fR", fp);
        if (o->arg) {
            fputs(" \\fI", fp);
            roff(fp, o->arg);
            fputs("\\fR", fp);
        }
        fputc('\n', fp);
        roff(fp, o->help);
        fputc('\n', fp);
    }
}

void cli_print_man(FILE *fp)
{
    fprintf(fp, ".TH ICEDRUID 1 \"\" \"icedruid %s\" \"User Commands\"\n", icd_version());
    fputs(".SH NAME\nicedruid \\- read Apache Iceberg tables correctly, for Apache Druid\n"
          ".SH SYNOPSIS\n.B icedruid\n.I COMMAND\n[\\fIOPTIONS\\fR]\n.br\n"
          ".B icedruid\n\\fICOMMAND\\fR \\fB\\-\\-help\\fR\n.br\n"
          ".B icedruid \\-\\-version\n"
          ".SH DESCRIPTION\nicedruid reads Apache Iceberg tables the way the Iceberg "
          "specification says \\(em every position delete, equality delete and deletion "
          "vector applied \\(em and hands the surviving rows to Apache Druid, while tables "
          "without deletes keep Druid's own iceberg input source.\n"
          ".PP\nAn option's value follows it (\\fB\\-\\-threads 4\\fR) or is joined with "
          "\\fB=\\fR (\\fB\\-\\-threads=4\\fR).\n"
          ".SH COMMANDS\n",
          fp);
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        const cli_command *c = &COMMANDS[i];
        fputs(".SS \"", fp);
        roff(fp, c->name);
        fputs(" ", fp);
        roff(fp, c->args);
        fputs("\"\n", fp);
        roff(fp, c->summary);
        fputs(".\n", fp);
        if (c->details) {
            fputs(".PP\n", fp);
            roff(fp, c->details);
            fputc('\n', fp);
        }
        man_opts(fp, c->opts);
    }
    fputs(".SH OPTIONS OF EVERY COMMAND\n", fp);
    man_opts(fp, GLOBAL_OPTS);
    fputs(".SH LOCATIONS\n"
          "With \\fB\\-\\-remap\\fR FROM=TO, icedruid itself reads every location of the "
          "table (metadata, manifests, data and delete files) that starts with FROM under TO. "
          "The locations icedruid hands to Druid (the v1 warehouse input source of "
          "\\fBplan\\fR and \\fBrewrite\\-spec\\fR) are the remapped ones by default: right "
          "when Druid reads the same copy. With \\fB\\-\\-druid\\-locations original\\fR "
          "Druid gets the table's own locations while icedruid reads the local copy. Either "
          "way each location handed to Druid must fit the spec's warehouseSource (local: a "
          "file path; s3: s3:// or s3a://; hdfs: hdfs://; google: gs://; azure: azure://, "
          "wasb(s):// or abfs(s)://); a location that does not is refused with one line "
          "naming it. Splits served by \\fBicedruid serve\\fR are read by icedruid and use "
          "the remapped locations.\n",
          fp);
    fputs(".SH ENVIRONMENT\n"
          ".TP\n\\fBICEDRUID_CONNECT_TIMEOUT\\fR, \\fBICEDRUID_REQUEST_TIMEOUT\\fR, "
          "\\fBICEDRUID_STALL_TIMEOUT\\fR, \\fBICEDRUID_RETRIES\\fR\n"
          "defaults of the options of the same name (a command-line option wins).\n"
          ".TP\n\\fBAWS_ACCESS_KEY_ID\\fR, \\fBAWS_SECRET_ACCESS_KEY\\fR, "
          "\\fBAWS_SESSION_TOKEN\\fR, \\fBAWS_REGION\\fR, \\fBAWS_ENDPOINT_URL\\fR\n"
          "S3 credentials, region and endpoint.\n"
          ".TP\n\\fB" CLI_SERVE_PASSWORD_ENV "\\fR\n"
          "the basic-auth password of \\fBserve\\fR.\n"
          ".TP\n\\fBICEDRUID_DRUID_PASSWORD\\fR\nthe basic-auth password of "
          "\\fBsync \\-\\-druid\\-user\\fR.\n"
          ".SH EXIT STATUS\n"
          ".TP\n0\nsuccess\n.TP\n1\nthe work failed (a file, the network, the data)\n"
          ".TP\n2\nusage error (the command line)\n"
          ".TP\n3\n\\fBsync\\fR: another sync holds the state lock\n"
          ".SH SEE ALSO\nThe README of the icedruid sources.\n",
          fp);
}

/* ---- completion ------------------------------------------------------------------------- */

static void opt_words(FILE *fp, const cli_opt *opts, bool with_value)
{
    for (const cli_opt *o = opts; o->name; o++) {
        if (o->flags & CLI_OPT_HIDDEN) continue;
        if (with_value && !o->arg) continue;
        fprintf(fp, " --%s", o->name);
        if (o->short_name && with_value) fprintf(fp, " -%c", o->short_name);
    }
}

static void bash_completion(FILE *fp)
{
    fputs("# bash completion for icedruid (generated by icedruid --help-completion bash)\n"
          "_icedruid() {\n"
          "    local cur prev cmd opts valued\n"
          "    cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
          "    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
          "    if [[ $COMP_CWORD -eq 1 ]]; then\n"
          "        COMPREPLY=($(compgen -W \"",
          fp);
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(fp, "%s%s", i ? " " : "", COMMANDS[i].name);
    fputs(" --help --version\" -- \"$cur\"))\n        return\n    fi\n"
          "    cmd=\"${COMP_WORDS[1]}\"\n    case \"$cmd\" in\n",
          fp);
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        const cli_command *c = &COMMANDS[i];
        fprintf(fp, "    %s)\n        opts=\"--help", c->name);
        opt_words(fp, c->opts, false);
        opt_words(fp, GLOBAL_OPTS, false);
        fputs("\"\n        valued=\"", fp);
        opt_words(fp, c->opts, true);
        opt_words(fp, GLOBAL_OPTS, true);
        fputs(" \"\n        case \"$prev\" in\n", fp);
        for (const cli_opt *o = c->opts; o->name; o++)
            if (o->choices)
                fprintf(fp,
                        "        --%s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n",
                        o->name, o->choices);
        fputs("        esac\n        ;;\n", fp);
    }
    fputs("    *) return ;;\n    esac\n"
          "    if [[ \" $valued \" == *\" $prev \"* ]]; then\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n        return\n    fi\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    else\n        COMPREPLY=($(compgen -f -- \"$cur\"))\n    fi\n"
          "}\ncomplete -o filenames -F _icedruid icedruid\n",
          fp);
}

/* Text inside a zsh _arguments/_describe spec: ':' '[' ']' '\'' and '\\' escaped. */
static void zsh_text(FILE *fp, const char *s, size_t max)
{
    for (size_t i = 0; i < max && s[i]; i++) {
        char ch = s[i];
        if (ch == '\'')
            fputs("'\\''", fp);
        else if (ch == ':' || ch == '[' || ch == ']' || ch == '\\')
            fprintf(fp, "\\%c", ch);
        else
            fputc(ch, fp);
    }
}

static void zsh_opts(FILE *fp, const cli_opt *opts)
{
    for (const cli_opt *o = opts; o->name; o++) {
        if (o->flags & CLI_OPT_HIDDEN) continue;
        fprintf(fp, " \\\n        '--%s[", o->name);
        /* the first clause, at most 72 characters, cut at a word */
        const char *cut = strchr(o->help, ';');
        size_t len = cut ? (size_t)(cut - o->help) : strlen(o->help);
        if (len > 72) {
            len = 72;
            while (len > 20 && o->help[len] != ' ')
                len--;
        }
        zsh_text(fp, o->help, len);
        fputc(']', fp);
        if (o->arg) {
            fputc(':', fp);
            zsh_text(fp, o->arg, 64);
            fputc(':', fp);
            if (o->choices)
                fprintf(fp, "(%s)", o->choices);
            else
                fputs("_files", fp);
        }
        fputc('\'', fp);
    }
}

static void zsh_completion(FILE *fp)
{
    fputs("#compdef icedruid\n# zsh completion for icedruid (generated by icedruid "
          "--help-completion zsh)\n_icedruid() {\n    local -a cmds\n    cmds=(\n",
          fp);
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        fprintf(fp, "        '%s:", COMMANDS[i].name);
        zsh_text(fp, COMMANDS[i].summary, 200);
        fputs("'\n", fp);
    }
    fputs("    )\n    if (( CURRENT == 2 )); then\n        _describe 'command' cmds\n"
          "        return\n    fi\n    local cmd=$words[2]\n    shift words\n"
          "    (( CURRENT-- ))\n    case $cmd in\n",
          fp);
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        fprintf(fp, "    %s)\n        _arguments '--help[this command'\\''s options]'",
                COMMANDS[i].name);
        zsh_opts(fp, COMMANDS[i].opts);
        zsh_opts(fp, GLOBAL_OPTS);
        fputs(" \\\n        '*:file:_files'\n        ;;\n", fp);
    }
    fputs("    esac\n}\n_icedruid \"$@\"\n", fp);
}

int cli_print_completion(const char *shell, FILE *fp)
{
    if (shell && !strcmp(shell, "bash"))
        bash_completion(fp);
    else if (shell && !strcmp(shell, "zsh"))
        zsh_completion(fp);
    else
        return cli_usage_error("--help-completion", "expects bash or zsh, got '%s'",
                               shell ? shell : "");
    return CLI_OK;
}
