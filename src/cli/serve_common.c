/*
 * `icedruid serve` options and run loop (serve_common.h): turns the command line into
 * icd_druid_server_options (icedruid/druid.h), reads the basic-auth password from a file or the
 * environment (a command-line value would be visible to every local user through ps and /proc),
 * starts the split server and waits for SIGINT/SIGTERM/SIGHUP with sigwait, so no code runs in a
 * signal handler and shutdown happens on the main thread: SIGTERM/SIGINT drain the server (streams
 * in flight finish, bounded by --drain-timeout), SIGHUP is ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/serve_common.h"

#define PASSWORD_MAX 4096

void cli_serve_opts_init(cli_serve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->stream_memory = CLI_STREAM_MEMORY_DEFAULT;
    o->decode_memory = CLI_DECODE_MEMORY_DEFAULT;
}

static void wipe(char *s)
{
    if (!s) return;
    volatile char *p = s;
    while (*p)
        *p++ = '\0';
}

void cli_serve_opts_free(cli_serve_opts *o)
{
    wipe(o->auth_password);
    free(o->auth_password);
    o->auth_password = NULL;
}

/* Parses BYTES with an optional K/M/G suffix (powers of 1024), at least 4 KiB. */
static bool parse_bytes(const char *s, size_t *out)
{
    return cli_parse_bytes(s, 4096, out);
}

/* Parses a count in 1..max. */
/* Parses a count in 1..max. */
static bool parse_count(const char *s, unsigned max, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < 1 || v > max) return false;
    *out = (unsigned)v;
    return true;
}

int cli_serve_parse_arg(cli_serve_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--auth-password") || !strncmp(a, "--auth-password=", 16))
        return cli_usage_error(
            "serve",
            "--auth-password is not accepted: a password on the command line is visible to "
            "every local user (ps, /proc) and stays in the shell history; use "
            "--auth-password-file FILE or the environment variable " CLI_SERVE_PASSWORD_ENV);
    if (!strcmp(a, "--allow-remote")) {
        o->allow_remote = true;
        return 1;
    }
    if (!strcmp(a, "--access-log")) {
        o->access_log = true;
        return 1;
    }
    if (!strcmp(a, "--rows")) {
        o->rows = true;
        return 1;
    }
    if (!strcmp(a, "--cache-dir") || !strcmp(a, "--cache-max-bytes") ||
        !strcmp(a, "--metadata-max-age")) {
        if (*i + 1 >= argc) return cli_usage_error("serve", "%s needs a value", a);
        const char *v = argv[++*i];
        if (!strcmp(a, "--cache-dir")) {
            if (!v[0]) return cli_usage_error("serve", "--cache-dir needs a directory");
            o->cache_dir = v;
        } else if (!strcmp(a, "--cache-max-bytes")) {
            if (!parse_bytes(v, &o->cache_max_bytes))
                return cli_usage_error("serve",
                                       "--cache-max-bytes expects a size of at least 4096 bytes "
                                       "(K, M, G suffixes allowed), not '%s'",
                                       v);
        } else {
            char *end;
            errno = 0;
            unsigned long ms = strtoul(v, &end, 10);
            if (errno || end == v || *end || v[0] == '-' || ms > 86400000UL)
                return cli_usage_error("serve",
                                       "--metadata-max-age expects milliseconds from 0 to "
                                       "86400000, not '%s'",
                                       v);
            o->has_metadata_max_age = true;
            o->metadata_max_age_ms = (unsigned)ms;
        }
        return 1;
    }
    static const char *const with_value[] = {"--listen",
                                             "--threads",
                                             "--max-streams",
                                             "--auth-user",
                                             "--auth-password-file",
                                             "--public-url",
                                             "--max-connections",
                                             "--max-connections-per-ip",
                                             "--header-timeout",
                                             "--idle-timeout",
                                             "--queue-timeout",
                                             "--drain-timeout",
                                             "--stream-buffer",
                                             "--buffer-memory",
                                             "--decode-threads",
                                             "--stream-memory",
                                             "--decode-memory"};
    size_t k = 0;
    while (k < sizeof with_value / sizeof with_value[0] && strcmp(a, with_value[k]) != 0)
        k++;
    if (k == sizeof with_value / sizeof with_value[0]) return 0;
    if (*i + 1 >= argc) return cli_usage_error("serve", "%s needs a value", a);
    const char *v = argv[++*i];
    switch (k) {
    case 0:
        o->listen = v;
        break;
    case 1:
        if (!parse_count(v, 1024, &o->threads))
            return cli_usage_error("serve", "--threads expects a number from 1 to 1024, not '%s'",
                                   v);
        break;
    case 2:
        if (!parse_count(v, 100000, &o->max_streams))
            return cli_usage_error("serve",
                                   "--max-streams expects a number from 1 to 100000, not '%s'", v);
        break;
    case 3:
        if (!v[0] || strchr(v, ':'))
            return cli_usage_error("serve", "--auth-user must be non-empty and without ':'");
        o->auth_user = v;
        break;
    case 4:
        o->auth_password_file = v;
        break;
    case 5:
        o->public_url = v;
        break;
    case 6:
    case 7:
        if (!parse_count(v, 1000000, k == 6 ? &o->max_connections : &o->max_connections_per_ip))
            return cli_usage_error("serve", "%s expects a number from 1 to 1000000, not '%s'", a,
                                   v);
        break;
    case 8:
    case 9:
    case 10:
    case 11: {
        unsigned *dst = k == 8    ? &o->header_timeout_s
                        : k == 9  ? &o->idle_timeout_s
                        : k == 10 ? &o->queue_timeout_s
                                  : &o->drain_timeout_s;
        if (!parse_count(v, 86400, dst))
            return cli_usage_error("serve", "%s expects seconds from 1 to 86400, not '%s'", a, v);
        break;
    }
    case 15:
        if (!cli_parse_bytes(v, 0, &o->stream_memory))
            return cli_usage_error("serve",
                                   "--stream-memory expects a size (K, M, G suffixes allowed; 0: "
                                   "whole column chunks), not '%s'",
                                   v);
        break;
    case 16:
        if (!cli_parse_bytes(v, 0, &o->decode_memory))
            return cli_usage_error("serve",
                                   "--decode-memory expects a size (K, M, G suffixes allowed; "
                                   "0: no bound), not '%s'",
                                   v);
        break;
    case 14:
        if (!parse_count(v, 4096, &o->decode_threads))
            return cli_usage_error("serve",
                                   "--decode-threads expects a number from 1 to 4096, not '%s'", v);
        break;
    default:
        if (!parse_bytes(v, k == 12 ? &o->stream_buffer_bytes : &o->buffer_bytes))
            return cli_usage_error("serve",
                                   "%s expects a size of at least 4096 bytes (K, M, G "
                                   "suffixes allowed), not '%s'",
                                   a, v);
        break;
    }
    return 1;
}

/* Reads the password file: at most PASSWORD_MAX bytes, one trailing newline dropped. */
static int read_password_file(const char *path, char **out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "icedruid serve: cannot read the password file %s: %s\n", path,
                strerror(errno));
        return CLI_FAILED;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077))
        fprintf(stderr,
                "icedruid serve: warning: the password file %s is readable by other users "
                "(chmod 600 it)\n",
                path);
    char *buf = calloc(1, PASSWORD_MAX + 2);
    if (!buf) {
        close(fd);
        fprintf(stderr, "icedruid serve: out of memory\n");
        return CLI_FAILED;
    }
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, PASSWORD_MAX + 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            free(buf);
            fprintf(stderr, "icedruid serve: cannot read the password file %s: %s\n", path,
                    strerror(e));
            return CLI_FAILED;
        }
        if (n == 0 || (len += (size_t)n) > PASSWORD_MAX) break;
    }
    close(fd);
    if (len > PASSWORD_MAX) {
        wipe(buf);
        free(buf);
        fprintf(stderr, "icedruid serve: the password file %s is longer than %d bytes\n", path,
                PASSWORD_MAX);
        return CLI_FAILED;
    }
    if (len && buf[len - 1] == '\n') buf[--len] = '\0';
    if (len && buf[len - 1] == '\r') buf[--len] = '\0';
    if (len == 0 || memchr(buf, '\0', len)) {
        wipe(buf);
        free(buf);
        fprintf(stderr, "icedruid serve: the password file %s is empty or not text\n", path);
        return CLI_FAILED;
    }
    *out = buf;
    return 0;
}

int cli_serve_finish_opts(cli_serve_opts *o)
{
    if (o->auth_password_file && !o->auth_user)
        return cli_usage_error("serve", "--auth-password-file needs --auth-user");
    if (!o->auth_user) return 0;
    if (o->auth_password_file) {
        int rc = read_password_file(o->auth_password_file, &o->auth_password);
        if (rc) return rc;
        return 0;
    }
    const char *env = getenv(CLI_SERVE_PASSWORD_ENV);
    if (!env || !env[0])
        return cli_usage_error("serve",
                               "--auth-user needs a password: --auth-password-file FILE or the "
                               "environment variable " CLI_SERVE_PASSWORD_ENV);
    o->auth_password = strdup(env);
    if (!o->auth_password) {
        fprintf(stderr, "icedruid serve: out of memory\n");
        return CLI_FAILED;
    }
    return 0;
}

/* A malloc'd "<a><b>" (b NULL: a alone), or NULL out of memory. */
static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    char *s = malloc(la + lb + 1);
    if (!s) return NULL;
    memcpy(s, a, la);
    if (lb) memcpy(s + la, b, lb);
    s[la + lb] = '\0';
    return s;
}

char *cli_serve_cache_dir(const cli_serve_opts *o)
{
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (o->cache_dir) return join(o->cache_dir, NULL);
    if (x && x[0] == '/') return join(x, "/icedruid/serve");
    if (h && h[0] == '/') return join(h, "/.cache/icedruid/serve");
    char tmp[64];
    snprintf(tmp, sizeof tmp, "/tmp/icedruid-serve-%ld", (long)getuid());
    return join(tmp, NULL);
}

void cli_serve_log_line(void *ctx, const char *line)
{
    (void)ctx;
    char buf[2400];
    snprintf(buf, sizeof buf, "%s", line);
    icd_redact_userinfo(buf, sizeof buf);
    fprintf(stderr, "icedruid serve: %s\n", buf);
}

/* One access-log line: ISO UTC time, client, method, "path" (escaped by the server),
 * status, body bytes, seconds, and "incomplete" for a cut response. */
static void print_access_line(void *ctx, const icd_druid_access *r)
{
    (void)ctx;
    time_t secs = (time_t)(r->time_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char when[40];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "icedruid serve: %s.%03dZ %s %s \"%s\" %d %llu bytes %.3f s%s\n", when,
            (int)(r->time_ms % 1000), r->client ? r->client : "-", r->method, r->path, r->status,
            (unsigned long long)r->bytes, r->seconds, r->completed ? "" : " (incomplete)");
}

/* 1,000+ connections need more descriptors than the usual soft limit of 1024 (each
 * connection also has a dup for the header watchdog): raise it to the hard limit. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int cli_serve_fill_options(const cli_serve_opts *o, icd_druid_server_options *so)
{
    icd_druid_server_options_init(so);
    so->listen = o->listen;
    so->allow_remote = o->allow_remote;
    so->threads = o->threads;
    so->auth_user = o->auth_user;
    so->auth_password = o->auth_password;
    /* the spec Druid gets reads the password from the same variable on its side */
    so->auth_password_env = o->auth_user ? CLI_SERVE_PASSWORD_ENV : NULL;
    so->public_url = o->public_url;
    so->max_streams = o->max_streams;
    so->producers = o->decode_threads;
    so->queue_timeout_s = o->queue_timeout_s;
    so->idle_timeout_s = o->idle_timeout_s;
    so->header_timeout_s = o->header_timeout_s;
    so->max_connections = o->max_connections;
    so->max_connections_per_ip = o->max_connections_per_ip;
    so->stream_buffer_bytes = o->stream_buffer_bytes;
    so->buffer_bytes = o->buffer_bytes;
    so->rows = o->rows;
    so->cache_max_bytes = o->cache_max_bytes;
    so->metadata_max_age_ms = o->has_metadata_max_age ? (int)o->metadata_max_age_ms : -1;
    so->stream_memory = o->stream_memory;
    so->decode_memory = o->decode_memory;
    so->on_log = cli_serve_log_line;
    so->on_access = o->access_log ? print_access_line : NULL;
    raise_fd_limit();
    return (so->cache_dir = cli_serve_cache_dir(o)) ? CLI_OK : CLI_FAILED;
}

int cli_serve_run(const cli_serve_opts *o, icd_druid_plan *plan, icd_storage *storage)
{
    icd_druid_server_options so;
    char *cache = NULL;
    if (cli_serve_fill_options(o, &so))
        return cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    cache = (char *)so.cache_dir;
    /* Block the signals before the worker threads exist, so they inherit the mask and
     * only sigwait below receives them. */
    sigset_t stop_set, old_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    sigaddset(&stop_set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_set, &old_set);

    icd_error err;
    icd_error_clear(&err);
    icd_druid_server *s = NULL;
    if (icd_druid_server_start(&s, plan, storage, &so, &err)) {
        pthread_sigmask(SIG_SETMASK, &old_set, NULL);
        free(cache);
        return cli_report(&err);
    }
    size_t norc = icd_druid_server_orc_files(s);
    if (norc)
        fprintf(stderr,
                "icedruid serve: %zu ORC data file%s must be materialized and icedruid "
                "has no ORC writer yet: serving this table's rows as NDJSON splits "
                "(/splits/N) instead of files\n",
                norc, norc == 1 ? "" : "s");
    const char *url = icd_druid_server_url(s);
    printf("%s\n", url);
    fflush(stdout);
    size_t n = icd_druid_server_count(s);
    if (icd_druid_server_serves_files(s))
        fprintf(stderr,
                "icedruid serve: materialized files at %s/files/..., the Druid spec at %s/spec%s "
                "(Ctrl-C stops)\n",
                url, url, o->auth_user ? ", basic auth on" : "");
    else
        fprintf(stderr,
                "icedruid serve: %zu split%s at %s/splits, the Druid spec at %s/spec%s "
                "(Ctrl-C stops)\n",
                n, n == 1 ? "" : "s", url, url, o->auth_user ? ", basic auth on" : "");
    int sig = 0;
    for (;;) {
        if (sigwait(&stop_set, &sig) != 0) continue;
        if (sig != SIGHUP) break;
        fprintf(stderr, "icedruid serve: SIGHUP ignored (nothing to reload; SIGTERM stops)\n");
    }
    unsigned drain = o->drain_timeout_s ? o->drain_timeout_s : 30;
    unsigned inflight = icd_druid_server_streams_in_flight(s);
    fprintf(stderr,
            "icedruid serve: %s, no longer accepting; %u stream%s in flight (waiting up to %u "
            "s)\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM", inflight, inflight == 1 ? "" : "s", drain);
    unsigned left = icd_druid_server_drain(s, drain);
    if (left)
        fprintf(stderr, "icedruid serve: drain timeout, cutting %u stream%s\n", left,
                left == 1 ? "" : "s");
    fprintf(stderr, "icedruid serve: stopped\n");
    icd_druid_server_stop(s);
    pthread_sigmask(SIG_SETMASK, &old_set, NULL);
    free(cache);
    return CLI_OK;
}
