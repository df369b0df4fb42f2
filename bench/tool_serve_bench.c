/*
 * tool_serve_bench: the HTTP split server (druid/serve/server.h) over a synthetic row provider,
 * for bench/bench_serve.sh. It measures the server alone (HTTP, chunking, copying), so
 * the figures are an upper bound of what `icedruid serve` can hand to Druid; the real
 * provider (planner + merge-on-read reader) will add its own cost on top.
 *
 * usage: tool_serve_bench [--rows N] [--splits K] [--batch R] [--threads T]
 *                         [--listen HOST:PORT] [--max-streams M] [--prebuilt]
 * Prints the base URL on stdout (one line) once listening, like `icedruid serve`, then
 * serves until SIGINT/SIGTERM. Each split has N rows of ~150 bytes of Druid-style NDJSON,
 * produced R rows per chunk. --prebuilt formats one chunk once and repeats it (the
 * rows then all say split 0 and repeat ids), leaving only the server's own cost.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "druid/serve/server.h"

typedef struct bench_ctx {
    size_t splits, rows, batch;
    icd_buf prebuilt; /* --prebuilt: one batch made once, repeated (transport cost only) */
} bench_ctx;

typedef struct bench_stream {
    const bench_ctx *c;
    size_t split, row;
} bench_stream;

static size_t b_count(void *ctx)
{
    return ((bench_ctx *)ctx)->splits;
}

static int b_spec(void *ctx, const char *base, icd_buf *out, icd_error *err)
{
    const bench_ctx *c = ctx;
    icd_buf_puts(out, "{\"type\":\"index_parallel\",\"spec\":{\"ioConfig\":{\"type\":"
                      "\"index_parallel\",\"inputSource\":{\"type\":\"http\",\"uris\":[");
    for (size_t i = 0; i < c->splits; i++) {
        icd_buf_puts(out, i ? ",\"" : "\"");
        dr_server_split_url(out, base, i);
        icd_buf_putc(out, '"');
    }
    icd_buf_puts(out, "]},\"inputFormat\":{\"type\":\"json\"}}}}");
    return 0;
}

static int b_open(void *ctx, size_t n, void **stream, icd_error *err)
{
    bench_stream *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    s->c = ctx;
    s->split = n;
    *stream = s;
    return 0;
}

static void make_rows(icd_buf *out, size_t split, size_t *row, size_t end, size_t batch);

static int b_next(void *stream, icd_buf *out, bool *eof, icd_error *err)
{
    bench_stream *s = stream;
    const bench_ctx *c = s->c;
    if (c->prebuilt.len && c->rows - s->row >= c->batch) {
        icd_buf_append(out, c->prebuilt.data, c->prebuilt.len);
        s->row += c->batch;
    } else {
        make_rows(out, s->split, &s->row, c->rows, c->batch);
    }
    *eof = s->row >= c->rows;
    return 0;
}

static void make_rows(icd_buf *out, size_t split, size_t *row, size_t end, size_t batch)
{
    for (size_t i = 0; i < batch && *row < end; i++, (*row)++) {
        uint64_t r = *row, h = (r + 1) * 0x9E3779B97F4A7C15ull;
        icd_buf_printf(out,
                       "{\"__time\":%" PRIu64 ",\"split\":%zu,\"id\":%" PRIu64
                       ",\"customer\":\"customer-%05" PRIu64 "\",\"country\":\"C%02u\","
                       "\"amount\":%" PRIu64 ".%02u,\"quantity\":%u,\"deleted\":false}\n",
                       (uint64_t)1717200000000ull + r * 1000, split, r, h % 100000,
                       (unsigned)(h >> 40) % 50, (h >> 20) % 100000, (unsigned)(h % 100),
                       (unsigned)(h >> 50) % 20);
    }
}

static void b_close(void *stream)
{
    free(stream);
}

static void print_error(void *ctx, const char *line)
{
    fprintf(stderr, "server: %s\n", line);
}

static bool num_arg(const char *v, size_t *out)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (end == v || *end) return false;
    *out = (size_t)x;
    return true;
}

int main(int argc, char **argv)
{
    bench_ctx c = {.splits = 16, .rows = 100000, .batch = 1024};
    size_t threads = 4, max_streams = 0;
    dr_server_config cfg = {.listen = "127.0.0.1:0", .on_error = print_error};
    bool prebuilt = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = v != NULL;
        if (!strcmp(a, "--prebuilt")) {
            prebuilt = true;
            continue;
        }
        if (!strcmp(a, "--rows") && v)
            ok = num_arg(v, &c.rows);
        else if (!strcmp(a, "--splits") && v)
            ok = num_arg(v, &c.splits);
        else if (!strcmp(a, "--batch") && v)
            ok = num_arg(v, &c.batch) && c.batch > 0;
        else if (!strcmp(a, "--threads") && v)
            ok = num_arg(v, &threads);
        else if (!strcmp(a, "--max-streams") && v)
            ok = num_arg(v, &max_streams);
        else if (!strcmp(a, "--listen") && v)
            cfg.listen = v;
        else
            ok = false;
        if (!ok) {
            fprintf(stderr, "usage: tool_serve_bench [--rows N] [--splits K] [--batch R] "
                            "[--threads T] [--listen HOST:PORT] [--max-streams M] "
                            "[--prebuilt]\n");
            return 2;
        }
        i++;
    }
    if (prebuilt) {
        size_t r = 0;
        make_rows(&c.prebuilt, 0, &r, c.batch, c.batch);
    }
    cfg.threads = (unsigned)threads;
    cfg.max_streams = (unsigned)max_streams;
    dr_server_provider p = {&c,   b_count, b_spec, b_open, b_next, b_close,
                            NULL, NULL,    NULL,   NULL,   NULL};

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    dr_server *s = NULL;
    icd_error err;
    icd_error_clear(&err);
    if (dr_server_start(&cfg, &p, &s, &err) < 0) {
        fprintf(stderr, "tool_serve_bench: %s\n", err.message);
        return 1;
    }
    printf("%s\n", dr_server_base_url(s));
    fflush(stdout);
    int sig;
    while (sigwait(&set, &sig) != 0) {
    }
    dr_server_stop(s);
    icd_buf_free(&c.prebuilt);
    return 0;
}
