/*
 * Option parsing and the run loop of `icedruid serve`, kept apart from the command so
 * the command only has to build a row provider (druid/serve/server.h) from --spec.
 *
 * Options:
 *   --listen HOST:PORT         (default 127.0.0.1:0, a free port; [::1]:PORT for IPv6)
 *   --threads N                worker threads (default 4)
 *   --max-streams N            splits read at once (default 64; more wait, see --queue-timeout)
 *   --decode-threads N         threads producing the streams' rows (default: see server.h)
 *   --auth-user NAME           basic auth; the password comes from
 *   --auth-password-file FILE  or the environment variable ICEDRUID_SERVE_PASSWORD,
 *                              never from the command line (--auth-password is refused)
 *   --public-url URL           base of the split URIs (behind a proxy, or with a
 *                              wildcard listen address)
 *   --allow-remote             allow a non-loopback listen address
 *   --access-log               one stderr line per request
 *   --max-connections N, --max-connections-per-ip N, --header-timeout S,
 *   --idle-timeout S, --queue-timeout S, --stream-buffer BYTES, --buffer-memory BYTES,
 *   --drain-timeout S          limits (see the "serve" entry of src/cli/commands.c)
 *   --stream-memory BYTES      decode memory of one stream (or one file being
 *                              regenerated) (default 16M; an eighth bounds the compressed
 *                              column bytes read ahead; 0: whole column chunks)
 *   --decode-memory BYTES      decode memory of all split streams (default 512M, 0: no
 *                              bound): a stream starts reading when its charge fits, else
 *                              waits (druid/serve/plan_provider.h)
 *   --rows                     serve NDJSON splits (/splits/N) instead of files
 *   --cache-dir DIR, --cache-max-bytes BYTES, --metadata-max-age MS
 *                              the materialized-file cache (druid/serve/serve_files.h)
 *
 * Signals: SIGTERM and SIGINT drain (stop accepting, let streams in flight finish for at
 * most --drain-timeout seconds, then stop); SIGHUP is logged and ignored.
 */
#ifndef ICD_CLI_SERVE_COMMON_H
#define ICD_CLI_SERVE_COMMON_H

#include <stdbool.h>

#include "icedruid/icedruid.h"

#define CLI_SERVE_PASSWORD_ENV "ICEDRUID_SERVE_PASSWORD"
#define CLI_DECODE_MEMORY_DEFAULT ((size_t)512 << 20)

typedef struct cli_serve_opts {
    const char *listen;
    unsigned threads;
    unsigned max_streams;
    unsigned decode_threads; /* 0: the server's default */
    const char *auth_user;
    const char *auth_password_file;
    const char *public_url;
    bool allow_remote;
    bool access_log;
    unsigned max_connections, max_connections_per_ip, header_timeout_s, idle_timeout_s,
        queue_timeout_s, drain_timeout_s; /* 0: the server's default */
    size_t stream_buffer_bytes, buffer_bytes;
    size_t stream_memory; /* --stream-memory: decode memory of one stream (CLI_READ_BUDGET;
                           * 0: whole chunks); CLI_STREAM_MEMORY_DEFAULT unless given */
    size_t decode_memory; /* --decode-memory: over all split streams (0: no bound) */
    /* files mode (the default): the cache of materialized files */
    bool rows;                    /* --rows: NDJSON splits at /splits/N instead of files */
    const char *cache_dir;        /* --cache-dir (default: see cli_serve_cache_dir) */
    size_t cache_max_bytes;       /* --cache-max-bytes (0: 10 GiB) */
    bool has_metadata_max_age;    /* --metadata-max-age MS given */
    unsigned metadata_max_age_ms; /* how old the snapshot list may be (default 5000) */
    char *auth_password;          /* owned; set by cli_serve_finish_opts */
} cli_serve_opts;

void cli_serve_opts_init(cli_serve_opts *o);
/* Looks at argv[*i]: returns 1 when it was a serve option (consuming its value too, *i is
 * left on the last argument used), 0 when it is not one of them, and CLI_USAGE after
 * printing a usage error ("icedruid serve: ..."). */
int cli_serve_parse_arg(cli_serve_opts *o, int argc, char **argv, int *i);
/* After the arguments: reads the password (file, else environment) and checks the
 * combination. Returns 0 or CLI_USAGE / CLI_FAILED after printing the reason. */
int cli_serve_finish_opts(cli_serve_opts *o);
/* The cache directory: --cache-dir, else $XDG_CACHE_HOME/icedruid/serve, else
 * $HOME/.cache/icedruid/serve, else /tmp/icedruid-serve-UID (malloc'd). */
char *cli_serve_cache_dir(const cli_serve_opts *o);
/* Clears and frees the password. */
void cli_serve_opts_free(cli_serve_opts *o);

/* The server configuration from the options (log sinks on stderr; raises the
 * descriptor limit for many connections). */
/* The server options from the command's (cache_dir is malloc'd: free it); CLI_FAILED when
 * out of memory. */
int cli_serve_fill_options(const cli_serve_opts *o, icd_druid_server_options *so);
void cli_serve_log_line(void *ctx, const char *line);

/* Serves the plan until SIGINT/SIGTERM, then drains. */
int cli_serve_run(const cli_serve_opts *o, icd_druid_plan *plan, icd_storage *storage);

#endif
