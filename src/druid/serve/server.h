/*
 * The HTTP split server behind `icedruid serve` (libmicrohttpd): each planned split of a
 * table at its own URL, so a Druid `index_parallel` task with the `http` input source and
 * `"inputFormat": {"type": "json"}` fans the splits out over its workers.
 *
 *   GET /health     200 {"status":"ok"|"draining","version":V,"splits":N,
 *                   "streamsInFlight":K,"streamsQueued":Q, ...provider fields (table,
 *                   snapshotId)}
 *   GET /metrics    200 Prometheus text format (requests by route and status, bytes,
 *                   streams in flight and queued, connections, timeouts, errors, and the
 *                   provider's counters: rows by kind)
 *   GET /splits     200 {"splits":["BASE/splits/0", ...]}
 *   GET /splits/N   200 the split's rows as NDJSON, chunked, streamed from the provider
 *   GET /spec       200 the provider's rewritten ingestion spec (pointing at BASE)
 *   GET /files/...  a static file of the provider (file_open; content-addressed, e.g.
 *                   /files/TABLE/SNAPSHOT/NAME): 200 with Content-Length, ETag (quoted
 *                   content hash), Accept-Ranges and Cache-Control immutable; one range
 *                   `Range: bytes=N-`, `bytes=N-M` or `bytes=-K` gives 206 with
 *                   Content-Range, an unsatisfiable one 416 (`Content-Range: bytes
 *                   * /SIZE`), several ranges or a malformed header the whole file (RFC
 *                   9110 allows ignoring Range); If-Range with another tag the whole
 *                   file; If-None-Match naming the tag (or `*`) 304; HEAD the headers
 *                   only; 404 / 410 as the provider says (410: the snapshot named in the
 *                   URL no longer exists). Admitted like a split: at most max_streams
 *                   files are opened or regenerated at once, the rest wait in the queue.
 *   Paths must be exactly these (N canonical decimal: no leading zeros, no escapes); a
 *   query string is refused with 400 on every route (no route takes parameters, and a
 *   silently ignored parameter could make two different URLs serve the same split).
 *   Other paths 404, other methods 405, bad or missing basic auth (when set) 401 (the
 *   scheme name is case-insensitive, RFC 7617; user and password compared in constant
 *   time, with their lengths), provider failure before the first byte 500 (JSON body),
 *   /splits/N over HTTP/1.0 505 (without chunking a cut stream would look complete);
 *   a provider failure after the first byte aborts the connection without the final
 *   chunk, so Druid sees an IOException (and retries) instead of a truncated success.
 *   More than max_streams splits at once wait in a queue (Druid does not retry a 503)
 *   for at most queue_timeout_s, then 503; 503 also while draining.
 *
 * Threads: libmicrohttpd's threads only parse requests and copy bytes; they never call
 * the provider. Every provider call (open, next, close) runs on the server's producer
 * pool, which fills a bounded per-stream queue of chunks; a connection whose queue is
 * empty is suspended and resumed when its producer delivers, so a slow object delays
 * only its own split, never /health or other splits.
 *
 * Rows come from a provider (callbacks + ctx), so the server does not know how splits
 * are planned or read. The server owns nothing of the provider; the provider must
 * outlive the server. Provider callbacks are called from the producer pool, several at
 * a time for different streams: they must be thread-safe (each stream is used by one
 * thread at a time). split_next may block (slow storage): it holds one pool thread.
 *
 * Druid re-requests a split after a failure with `Range: bytes=OFFSET-`; for a split the
 * server ignores Range and answers 200, and Druid then skips OFFSET bytes. That is correct
 * only if a split's bytes are the same on every request: providers must be deterministic.
 * Files answer Range themselves (206).
 */
#ifndef ICD_DRUID_SERVER_H
#define ICD_DRUID_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

/* A static file answer of dr_server_provider.file_open. */
typedef struct dr_server_file {
    int fd;           /* read from offset 0; closed by the server */
    uint64_t size;    /* bytes */
    char etag[80];    /* the entity tag without quotes (a content hash) */
    const char *type; /* Content-Type, a static string; NULL: application/octet-stream */
    int status;       /* on failure: 404 or 410 (0: 500) */
} dr_server_file;

typedef struct dr_server_provider {
    void *ctx;
    /* The number of splits (fixed for the server's life). */
    size_t (*split_count)(void *ctx);
    /* Appends the rewritten ingestion spec (JSON) whose split URIs start with `base_url`
     * (no trailing slash; split n is dr_server_split_url(base_url, n)). */
    int (*write_spec)(void *ctx, const char *base_url, icd_buf *out, icd_error *err);
    /* Opens split n (< split_count) for streaming. */
    int (*split_open)(void *ctx, size_t n, void **stream, icd_error *err);
    /* Appends the next chunk of NDJSON rows (whole lines, e.g. one batch, of bounded
     * size) to `out`; sets *eof when no more rows follow (the chunk may be non-empty). */
    int (*split_next)(void *stream, icd_buf *out, bool *eof, icd_error *err);
    /* Releases a stream; called exactly once per successful split_open, also when the
     * client went away mid-stream. */
    void (*split_close)(void *stream);
    /* Optional (may be NULL). Appends JSON object members, each preceded by a comma, to
     * /health (e.g. `,"table":"ns.t","snapshotId":"123"`). */
    void (*write_health)(void *ctx, icd_buf *out);
    /* Optional. Appends Prometheus text-format lines (HELP/TYPE + samples) to /metrics. */
    void (*write_metrics)(void *ctx, icd_buf *out);
    /* Optional: static files under /files/. `rel` is the request path after "/files/"
     * (raw, never unescaped). Returns 0 and fills *out (an open descriptor the server
     * takes over, the size, the entity tag), or an error with out->status set to the
     * HTTP status to answer (404, 410; 0 means 500). Runs on the producer pool (it may
     * regenerate the file) within a stream slot, like a split. */
    int (*file_open)(void *ctx, const char *rel, struct dr_server_file *out, icd_error *err);
    /* Optional (both or neither): a budget shared by the split streams (e.g. decode
     * memory). A split request that would take a stream slot asks split_admit first
     * (under the server's slot lock: it must not block); false keeps it waiting in the
     * queue, in order, like a request over max_streams, until a stream ends and the budget
     * admits it (or queue_timeout_s passes: 503). *token is handed back to split_unadmit
     * when the admitted request gives its slot back (after split_close). */
    bool (*split_admit)(void *ctx, size_t *token);
    void (*split_unadmit)(void *ctx, size_t token);
} dr_server_provider;

/* One finished request, for the access log. */
typedef struct dr_server_access {
    const char *method;
    const char *path;   /* the request target as sent, control and non-ASCII bytes, '"'
                         * and '\\' escaped as \\xHH (a log line cannot be forged) */
    const char *client; /* "ADDR:PORT" / "[V6]:PORT" of the peer */
    int64_t time_ms;    /* wall-clock time of the request's end, Unix milliseconds */
    int status;         /* the status sent (200 also for a stream that was cut later) */
    uint64_t bytes;     /* body bytes handed to the connection */
    double seconds;     /* from the request's arrival to its end */
    bool completed;     /* false: the client went away, the stream failed, or shutdown */
} dr_server_access;

typedef struct dr_server_config {
    /* "HOST:PORT", "[V6]:PORT" or "localhost:PORT"; PORT 0 picks a free port. NULL means
     * "127.0.0.1:0". Only loopback addresses unless allow_remote. */
    const char *listen;
    bool allow_remote;
    unsigned threads;      /* thread pool size; 0 → 4 */
    const char *auth_user; /* basic auth, both NULL/"" for none */
    const char *auth_password;
    /* The base of the split URIs ("http://host:port/prefix", no trailing slash needed),
     * for a server behind a proxy or listening on a wildcard address; NULL → derived
     * from the listening address. */
    const char *public_url;
    unsigned max_streams;     /* splits produced at once; 0 → 64 (more wait in a queue) */
    unsigned max_queued;      /* requests waiting for a stream slot; 0 → 4 * max_streams */
    unsigned queue_timeout_s; /* longest wait in that queue before a 503; 0 → 60 */
    /* Producer pool threads (reading, decoding, applying deletes). Each works on one
     * stream's next chunk at a time, so a stream does not hold a thread; 0 → 4 per online
     * CPU, at least 8, at most max_streams (a thread per stream let 64 streams starting at
     * once starve the HTTP threads: /health took 1.2 s on 2 CPUs, 0.34 s with 8). */
    unsigned producers;
    /* A client that reads nothing for this long is dropped, its stream closed (MHD's
     * inactivity timeout; a connection waiting for its producer is not counted); 0 → 60 */
    unsigned idle_timeout_s;
    /* The request header (and, on a kept-alive connection, the next one) must be complete
     * within this many seconds of the connection's start (or of the previous response's
     * end): a total, not restarted by each byte (slowloris); 0 → 10 */
    unsigned header_timeout_s;
    unsigned max_connections;        /* 0 → 1000; beyond it the oldest connection still sending
                                      * its header is closed to admit the new one */
    unsigned max_connections_per_ip; /* 0 → 64 */
    size_t stream_buffer_bytes;      /* rows buffered per stream ahead of the client; 0 → 1 MiB
                                      * (a stream may always hold one chunk) */
    size_t buffer_bytes;             /* rows buffered over all streams; 0 → 64 MiB */
    /* Optional sinks; the server itself never prints. `line` has no newline. */
    void (*on_error)(void *log_ctx, const char *line);
    void (*on_access)(void *log_ctx, const dr_server_access *rec);
    void *log_ctx;
} dr_server_config;

typedef struct dr_server dr_server;

/* Binds, starts the worker threads and returns a running server. */
int dr_server_start(const dr_server_config *cfg, const dr_server_provider *p, dr_server **out,
                    icd_error *err);
/* The port actually bound (useful with port 0). */
uint16_t dr_server_port(const dr_server *s);
/* The base URL of the split URIs ("http://127.0.0.1:PORT", no trailing slash). */
const char *dr_server_base_url(const dr_server *s);
/* Graceful shutdown, first half: stops accepting connections, answers new and queued
 * split requests 503 (other routes still answer), and waits until every stream in flight
 * has finished or `timeout_s` passed. Returns the number of streams still in flight. */
unsigned dr_server_drain(dr_server *s, unsigned timeout_s);
/* Closes every connection (closing open streams), joins the threads and frees the
 * server. NULL is a no-op. */
void dr_server_stop(dr_server *s);
/* Split responses being produced or sent, and requests waiting for a slot. */
unsigned dr_server_streams_in_flight(dr_server *s);
unsigned dr_server_streams_queued(dr_server *s);

/* Request headers of the file route (exposed for tests and the fuzz target):
 * One "bytes=" range of a file of `size` bytes: 1 and [*from, *to] (inclusive) when
 * satisfiable, 0 when the header is to be ignored (not bytes, malformed, several ranges,
 * last < first), -1 when unsatisfiable (416: first >= size, or a zero / empty suffix). */
int dr_http_parse_range(const char *h, uint64_t size, uint64_t *from, uint64_t *to);
/* Does an If-None-Match / If-Range list name `tag` ("*" names every tag when allow_star)?
 * Weak tags (W/"...") match too (the weak comparison of RFC 9110 13.1.2). */
bool dr_http_etag_listed(const char *h, const char *tag, bool allow_star);

/* Appends "BASE/splits/N" (the URI of split n under a base URL) to `out`. */
void dr_server_split_url(icd_buf *out, const char *base_url, size_t n);

/* Parses a listen address "HOST:PORT" / "[V6]:PORT" into a socket address (numeric
 * hosts and "localhost"; other names through the resolver). `*loopback` tells whether
 * it is a loopback address. */
struct sockaddr_storage;
int dr_server_parse_listen(const char *listen, struct sockaddr_storage *ss, unsigned *sslen,
                           bool *loopback, icd_error *err);

#endif
