/*
 * Helpers shared by the subcommands: error reporting, the storage every command reads
 * through, output files, the progress line. Public API only (cli.h); the inspection
 * commands' own helpers are in inspect_common.c.
 */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "icedruid/icedruid.h"

extern char **environ;

int cli_report(const icd_error *err)
{
    char line[2400];
    icd_error_format(err, line, sizeof line);
    /* one line whatever a (damaged or hostile) file name holds: control bytes as '?' */
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    fprintf(stderr, "icedruid: %s\n", line);
    return CLI_FAILED;
}

bool cli_parse_bytes(const char *s, size_t min, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-') return false;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    if (*end == 'M' || *end == 'm') shift = 20;
    if (*end == 'G' || *end == 'g') shift = 30;
    if (shift) end++;
    if (*end || v > (1ull << 40) >> shift) return false;
    v <<= shift;
    if (v < min) return false;
    *out = (size_t)v;
    return true;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "icedruid %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    if (strchr(cmd, '-') == cmd || strchr(cmd, ' '))
        fprintf(stderr, " (see 'icedruid --help')\n");
    else
        fprintf(stderr, " (see 'icedruid %s --help')\n", cmd);
    va_end(ap);
    return CLI_USAGE;
}

int cli_fail(icd_error *err, int code, const char *file, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    err->offset = -1;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

static void report_retry(void *ctx, const char *location, int attempt, int max_attempts,
                         long delay_ms, const char *reason)
{
    (void)ctx;
    char line[2400];
    snprintf(line, sizeof line, "icedruid: %s: %s; retrying in %ld ms (attempt %d of %d)", location,
             reason, delay_ms, attempt + 1, max_attempts);
    icd_redact_userinfo(line, sizeof line); /* a URL's password never reaches the terminal */
    fprintf(stderr, "%s\n", line);
}

/* The retry/timeout settings from the global options and ICEDRUID_HTTP_*. */
static int set_remote_options(icd_storage *s, icd_error *err)
{
    icd_storage_remote_options o;
    icd_storage_get_remote_options(s, &o);
    const char *v = getenv("ICEDRUID_HTTP_TIMEOUT"); /* SECONDS, may be fractional */
    if (v && *v) o.deadline_seconds = strtod(v, NULL);
    if ((v = getenv("ICEDRUID_HTTP_MIN_RATE")) && *v) { /* BYTES_PER_SECOND */
        long rate = strtol(v, NULL, 10);
        if (rate > 0) o.deadline_min_rate = rate;
    }
    if (cli_global.retries >= 0) o.max_attempts = cli_global.retries + 1;
    if (cli_global.connect_timeout_s > 0)
        o.connect_timeout_ms = cli_global.connect_timeout_s * 1000;
    if (cli_global.request_timeout_s >= 0) o.total_timeout_s = cli_global.request_timeout_s;
    if (cli_global.stall_timeout_s > 0) o.stall_timeout_s = cli_global.stall_timeout_s;
    o.on_retry = report_retry;
    o.on_retry_ctx = NULL;
    return icd_storage_set_remote_options(s, &o, err);
}

int cli_storage_new(icd_storage **out, icd_error *err)
{
    int rc = icd_storage_new(out, err);
    if (rc) return rc;
    const char *sm = getenv("ICEDRUID_SIZE_MISMATCH");
    icd_storage_set_size_mismatch_warn(*out, sm && !strcmp(sm, "warn"));
    rc = icd_storage_set_environment(*out, (const char *const *)environ, err);
    if (rc == 0) rc = set_remote_options(*out, err);
    if (rc) {
        icd_storage_free(*out);
        *out = NULL;
    }
    return rc;
}

int cli_storage_add_remap_arg(icd_storage *s, const char *arg, icd_error *err)
{
    const char *eq = strchr(arg, '=');
    if (!eq) return cli_fail(err, ICD_EINVALID, NULL, "--remap expects FROM=TO, got '%s'", arg);
    if (eq == arg) return cli_fail(err, ICD_EINVALID, NULL, "--remap: the FROM prefix is empty");
    char *from = strndup(arg, (size_t)(eq - arg));
    if (!from) return cli_fail(err, ICD_ENOMEM, NULL, "out of memory");
    int rc = icd_storage_add_remap(s, from, eq + 1, err);
    free(from);
    return rc;
}

int cli_open_output(const char *path, FILE **out)
{
    *out = stdout;
    if (!path || !strcmp(path, "-")) return CLI_OK;
    *out = fopen(path, "wb");
    if (*out) return CLI_OK;
    *out = stdout;
    icd_error err;
    cli_fail(&err, ICD_EIO, path, "cannot create the output file: %s", strerror(errno));
    return cli_report(&err);
}

int cli_close_output(FILE *fp, const char *path)
{
    if (fp == stdout) return CLI_OK;
    if (fclose(fp) == 0) return CLI_OK;
    icd_error err;
    cli_fail(&err, ICD_EIO, path, "cannot write the output file: %s", strerror(errno));
    return cli_report(&err);
}

bool cli_progress_wanted(void)
{
    return !cli_global.no_progress && isatty(STDERR_FILENO);
}

int cli_write_file(void *ctx, const char *data, size_t len, icd_error *err)
{
    if (fwrite(data, 1, len, ctx) == len) return 0;
    return cli_fail(err, ICD_EIO, NULL, "cannot write the output: %s", strerror(errno));
}

int cli_write_done(FILE *fp, icd_error *err)
{
    if (fflush(fp) == 0 && !ferror(fp)) return 0;
    return cli_fail(err, ICD_EIO, NULL, "cannot write the output: %s", strerror(errno));
}

/* Every data file allocates its column-chunk, page and batch buffers (a few MiB) and frees
 * them when it is done. With glibc's defaults that memory goes back to the kernel (munmap,
 * heap trimming) and the next file faults it in again, 4 KiB at a time: a third of the CPU
 * time of a bench2m scan. Keeping freed memory in the heap lets the next file reuse it;
 * peak RSS is unchanged (it is set by the largest file). */
void cli_keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

double cli_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_init(cli_progress *p, const char *cmd, size_t files, uint64_t bytes)
{
    memset(p, 0, sizeof *p);
    p->on = cli_progress_wanted();
    p->cmd = cmd;
    p->files_total = files;
    p->bytes_total = bytes;
    p->t0 = p->last = cli_now_s();
}

static void human_bytes(char *out, size_t n, double b)
{
    static const char *const U[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(out, n, u ? "%.1f %s" : "%.0f %s", b, U[u]);
}

void cli_progress_show(cli_progress *p, bool force)
{
    if (!p->on) return;
    double t = cli_now_s();
    if (!force && t - p->last < 0.2) return;
    p->last = t;
    p->shown = true;
    double el = t - p->t0;
    double frac = p->bytes_total   ? (double)p->bytes_done / (double)p->bytes_total
                  : p->files_total ? (double)p->files_done / (double)p->files_total
                                   : 1.0;
    if (frac > 1) frac = 1;
    char done[24], total[24], eta[24] = "--:--";
    human_bytes(done, sizeof done, (double)p->bytes_done);
    human_bytes(total, sizeof total, (double)p->bytes_total);
    if (frac > 0 && frac < 1 && el > 0) {
        long s = (long)(el * (1 - frac) / frac + 0.5);
        snprintf(eta, sizeof eta, "%ld:%02ld", s / 60, s % 60);
    } else if (frac >= 1) {
        snprintf(eta, sizeof eta, "0:00");
    }
    char sizes[64] = "";
    if (p->bytes_total) snprintf(sizes, sizeof sizes, ", %s/%s", done, total);
    char rows[64] = "";
    if (p->rows || strcmp(p->cmd, "diff"))
        snprintf(rows, sizeof rows, ", %llu rows, %.0f rows/s", (unsigned long long)p->rows,
                 el > 0 ? (double)p->rows / el : 0.0);
    fprintf(stderr, "\r\033[Kicedruid %s: %3.0f%% (%zu/%zu files%s)%s, ETA %s", p->cmd, frac * 100,
            p->files_done, p->files_total, sizes, rows, eta);
    fflush(stderr);
}

void cli_progress_clear(cli_progress *p)
{
    if (p->shown) fputs("\r\033[K", stderr);
    p->shown = false;
}

void cli_progress_end(cli_progress *p)
{
    if (!p->on) return;
    cli_progress_show(p, true);
    fputc('\n', stderr);
    p->shown = false;
}

void cli_print_scan_stats(const icd_scan_stats *s, bool json, const char *extra)
{
    unsigned long long pos = s->rows_deleted_position - s->rows_deleted_dv;
    if (json) {
        fprintf(
            stderr,
            "{\"rows_read\":%llu,\"rows_removed_by_position_deletes\":%llu,"
            "\"rows_removed_by_equality_deletes\":%llu,"
            "\"rows_removed_by_deletion_vectors\":%llu,\"rows_emitted\":%llu,"
            "\"rows_unparseable\":%llu,\"row_groups_read\":%llu,\"row_groups_skipped\":%llu%s%s}"
            "\n",
            (unsigned long long)s->rows_read, pos, (unsigned long long)s->rows_deleted_equality,
            (unsigned long long)s->rows_deleted_dv, (unsigned long long)s->rows_emitted,
            (unsigned long long)s->rows_unparseable, (unsigned long long)s->row_groups_read,
            (unsigned long long)s->row_groups_skipped, extra && *extra ? "," : "",
            extra ? extra : "");
        return;
    }
    fprintf(stderr,
            "icedruid: %llu rows read, %llu removed by position deletes, %llu by equality "
            "deletes, %llu by deletion vectors, %llu unparseable, %llu emitted\n",
            (unsigned long long)s->rows_read, pos, (unsigned long long)s->rows_deleted_equality,
            (unsigned long long)s->rows_deleted_dv, (unsigned long long)s->rows_unparseable,
            (unsigned long long)s->rows_emitted);
}
