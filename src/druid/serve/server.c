/*
 * The HTTP split server behind `icedruid serve` (see server.h for the routes).
 *
 * Data flow: Druid's `http` input source GETs /splits/N. The access handler admits the
 * request (a stream slot, or a place in the wait queue), hands the split to the producer
 * pool and suspends the connection. A pool thread opens the provider's stream and pulls
 * chunks into the request's queue (at most stream_buffer_bytes ahead of the client, and
 * buffer_bytes over all streams), resuming the connection whenever it delivers. Once the
 * first chunk (or the end, or a failure) is there, the handler answers: 200 with a
 * chunked body whose content reader copies out of the queue (suspending when it runs
 * dry), or a clean 500. libmicrohttpd's threads never call the provider and never block.
 *
 * A stream's slot is released by its producer as soon as the provider reports the end
 * (before the last bytes reach the client), so a client that asks for its next split
 * right after the previous one ended is never refused within max_streams; requests over
 * the limit wait in FIFO order and get the next free slot.
 *
 * Lifetime of a request (dr_http_req), reference-counted: the connection holds one from
 * the URI callback to the completion notification, a streamed response one until MHD
 * frees it, and the producer side one from the first job until the pool closed the
 * provider's stream. The stream is closed on a pool thread (at the end, on failure, or
 * after the client went away), never on an HTTP thread.
 *
 * Connections: each is tracked from MHD's connect notification (with a dup of its
 * socket, so the watchdog can shutdown() it without racing MHD's close and a reuse of
 * the descriptor number). The watchdog thread closes connections whose header is not
 * complete header_timeout_s after they started (MHD's own timeout restarts at every
 * byte), expires queued requests, and the accept policy closes a header-incomplete
 * connection when max_connections is reached (pick_victim_locked), so a slowloris flood
 * cannot lock out a real client or /health.
 *
 * The listening socket is bound here rather than by MHD, so a failure to bind reports
 * the system's reason ("Address already in use"), and port 0 works.
 *
 * libmicrohttpd is loaded when a server starts (base/dynlib.h), not at process start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/dynlib.h"
#include "base/hash.h"
#include "base/jsonw.h"
#include "base/redact.h"
#include "druid/serve/server.h"
#include "icedruid/icedruid.h"

/* libmicrohttpd, loaded on first use: every MHD call goes through these pointers. */
static struct {
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_create_response_from_callback) *create_response_from_callback;
    __typeof__(MHD_create_response_from_fd_at_offset64) *create_response_from_fd_at_offset64;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_get_connection_info) *get_connection_info;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(MHD_queue_basic_auth_fail_response) *queue_basic_auth_fail_response;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_quiesce_daemon) *quiesce_daemon;
    __typeof__(MHD_resume_connection) *resume_connection;
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_suspend_connection) *suspend_connection;
} mhd;

static const icd_dynsym MHD_SYMS[] = {
    ICD_DYNSYM(mhd, add_response_header, MHD_add_response_header),
    ICD_DYNSYM(mhd, create_response_from_buffer, MHD_create_response_from_buffer),
    ICD_DYNSYM(mhd, create_response_from_callback, MHD_create_response_from_callback),
    ICD_DYNSYM(mhd, create_response_from_fd_at_offset64, MHD_create_response_from_fd_at_offset64),
    ICD_DYNSYM(mhd, destroy_response, MHD_destroy_response),
    ICD_DYNSYM(mhd, get_connection_info, MHD_get_connection_info),
    ICD_DYNSYM(mhd, lookup_connection_value, MHD_lookup_connection_value),
    ICD_DYNSYM(mhd, queue_basic_auth_fail_response, MHD_queue_basic_auth_fail_response),
    ICD_DYNSYM(mhd, queue_response, MHD_queue_response),
    ICD_DYNSYM(mhd, quiesce_daemon, MHD_quiesce_daemon),
    ICD_DYNSYM(mhd, resume_connection, MHD_resume_connection),
    ICD_DYNSYM(mhd, start_daemon, MHD_start_daemon),
    ICD_DYNSYM(mhd, stop_daemon, MHD_stop_daemon),
    ICD_DYNSYM(mhd, suspend_connection, MHD_suspend_connection),
};

static icd_dynlib LIBMHD =
    ICD_DYNLIB("libmicrohttpd.so.12", "libmicrohttpd12", "icedruid serve", MHD_SYMS);

#define DR_HTTP_REALM "icedruid"
#define DR_HTTP_BLOCK (64 * 1024)     /* MHD's read size per content-reader call */
#define DR_HTTP_CONN_MEM (128 * 1024) /* MHD's per-connection memory pool */
#define DR_WATCHDOG_MS 100
#define DR_EVICT_GRACE_S 0.02 /* see pick_victim_locked */

enum { RT_HEALTH, RT_METRICS, RT_SPLITS, RT_SPLIT, RT_SPEC, RT_FILE, RT_OTHER, RT_COUNT };
static const char *const route_names[RT_COUNT] = {"health", "metrics", "splits", "split",
                                                  "spec",   "file",    "other"};
static const int status_codes[] = {200, 206, 304, 400, 401, 404, 405, 410, 416, 500, 503, 505};
#define NSTATUS (sizeof status_codes / sizeof status_codes[0])

/* One TCP connection (MHD's socket context). Guarded by the server's mu. */
typedef struct conn_info {
    struct conn_info *prev, *next;
    int fd;          /* our dup of the socket: shutdown() on it ends the connection */
    double t0;       /* start of the current header wait */
    bool in_header;  /* waiting for (the rest of) a request header */
    bool shut;       /* already shut down by us */
    uint64_t src;    /* hash of the client's address (not its port) */
    char client[64]; /* "ADDR:PORT" */
} conn_info;

/* One client address in the eviction count (see pick_victim_locked). */
typedef struct src_count {
    uint64_t src;
    unsigned gen;
    double wait; /* seconds its header-incomplete connections have waited, added up */
    conn_info *oldest;
} src_count;

typedef struct chunk {
    struct chunk *next;
    size_t len;
    char data[];
} chunk;

enum { SLOT_NONE, SLOT_QUEUED, SLOT_ACTIVE };
enum { JOB_IDLE, JOB_QUEUED, JOB_RUNNING };
enum { PH_ADMIT, PH_FIRST, PH_STREAM };

typedef struct dr_http_req {
    dr_server *srv;
    atomic_int refs;
    struct MHD_Connection *conn;
    char method[16];
    char *target; /* the raw request target (path + query), as sent */
    char *logpath;
    char client[64];
    int route, status;
    uint64_t bytes;
    struct timespec t0;
    bool routed, failed, counted;
    bool deferred; /* the first call of a request without a body returned (see access_handler) */
    /* /splits/N only; everything below is guarded by mu unless noted */
    pthread_mutex_t mu;
    size_t split;
    int phase;     /* HTTP side only */
    int slot;      /* guarded by srv->mu */
    bool granted;  /* srv->mu: a freed slot was handed to this queued request */
    bool admitted; /* srv->mu: holds admit_token of provider.split_admit */
    size_t admit_token;
    bool queue_expired;                      /* srv->mu */
    double deadline;                         /* srv->mu: end of the wait in the queue */
    struct dr_http_req *wq_next, *wq_prev;   /* srv->mu: wait queue */
    struct dr_http_req *all_next, *all_prev; /* srv->mu: live split requests */
    bool in_all, inflight;
    bool suspended, pending_wake;
    int job;
    struct dr_http_req *jq_next; /* srv->pmu */
    bool producing;              /* the producer side holds its reference */
    bool parked_global;          /* waiting for room in the global buffer */
    void *stream;
    bool opened, eof, prod_failed, closed, cancel;
    icd_error perr;
    chunk *qhead, *qtail, *cur;
    size_t qbytes, cur_off;
    /* /files/... only (guarded by mu until file_ready) */
    bool file_ready;
    dr_server_file file;
} dr_http_req;

struct dr_server {
    struct MHD_Daemon *daemon;
    dr_server_provider p;
    size_t nsplits;
    uint16_t port;
    char *base_url;
    char *auth_user; /* NULL: no authentication */
    char *auth_password;
    size_t auth_user_len, auth_password_len;
    unsigned max_streams, max_queued, queue_timeout_s, header_timeout_s, max_conns;
    size_t stream_budget, global_budget;
    void (*on_error)(void *log_ctx, const char *line);
    void (*on_access)(void *log_ctx, const dr_server_access *rec);
    void *log_ctx;
    /* state guarded by mu */
    pthread_mutex_t mu;
    unsigned slots_used, queued, inflight, nconns, nshut;
    dr_http_req *wq_head, *wq_tail, *all;
    conn_info *conns, *conns_tail; /* oldest header wait first */
    src_count *srcs;               /* scratch of the eviction pick, a power of two */
    unsigned srcs_mask, srcs_gen;
    /* producer pool */
    pthread_mutex_t pmu;
    pthread_cond_t pcv;
    dr_http_req *jq_head, *jq_tail;
    bool pool_stop;
    pthread_t *workers;
    unsigned nworkers;
    /* watchdog */
    pthread_t watchdog;
    bool have_watchdog;
    atomic_bool wd_stop, draining, stopping;
    int quiesced_fd;
    atomic_size_t buffered;
    atomic_uint nparked;
    /* metrics */
    atomic_uint_fast64_t requests[RT_COUNT][NSTATUS + 1];
    atomic_uint_fast64_t bytes_sent, stream_failures, streams_aborted, streams_completed,
        header_timeouts, evictions, refused_conns, queue_timeouts, queued_total;
};

/* ---- small helpers ---------------------------------------------------------------- */

static void srv_log(dr_server *s, const char *fmt, ...) ICD_PRINTF(2, 3);
static void srv_log(dr_server *s, const char *fmt, ...)
{
    if (!s->on_error) return;
    char line[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    icd_redact_userinfo(line, sizeof line);
    s->on_error(s->log_ctx, line);
}

/* libmicrohttpd's own messages go to the error sink too (one line each). */
static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
    dr_server *s = cls;
    if (!s->on_error) return;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    srv_log(s, "libmicrohttpd: %s", line);
}

/* Compares `got` (len bytes, any content) with the secret `want` (wlen bytes) in time
 * that depends only on wlen: no early exit on the first difference, and the lengths are
 * part of the comparison ("pass\0junk" is not "pass"). */
static bool secret_equal(const char *got, size_t len, const char *want, size_t wlen)
{
    unsigned char diff = (unsigned char)(len != wlen);
    for (size_t i = 0; i < wlen; i++) {
        unsigned char g = i < len ? (unsigned char)got[i] : 0;
        diff |= (unsigned char)(g ^ (unsigned char)want[i]);
    }
    return diff == 0;
}

static double mono_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

void dr_server_split_url(icd_buf *out, const char *base_url, size_t n)
{
    icd_buf_printf(out, "%s/splits/%zu", base_url, n);
}

/* The request target for the access log: bytes outside printable ASCII, '"' and '\\'
 * become \xHH, so a decoded or raw CR/LF cannot start a forged line. */
static char *escape_for_log(const char *t)
{
    icd_buf b = ICD_BUF_INIT;
    for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
        if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
            icd_buf_printf(&b, "\\x%02X", *p);
        else
            icd_buf_putc(&b, (char)*p);
    }
    if (!b.data) icd_buf_puts(&b, "");
    return icd_buf_detach(&b);
}

static void format_addr(const struct sockaddr *sa, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa && sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
        snprintf(out, cap, "%s:%u", host, port);
    } else if (sa && sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
        snprintf(out, cap, "[%s]:%u", host, port);
    } else {
        snprintf(out, cap, "?");
    }
}

/* The client's address without its port (an IPv4-mapped IPv6 address as IPv4), hashed:
 * the connections of one source, for the eviction pick. */
static uint64_t addr_hash(const struct sockaddr *sa)
{
    if (sa && sa->sa_family == AF_INET)
        return icd_hash_bytes(&((const struct sockaddr_in *)sa)->sin_addr, 4);
    if (sa && sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) return icd_hash_bytes(a->s6_addr + 12, 4);
        return icd_hash_bytes(a->s6_addr, 16);
    }
    return 0;
}

static void count_request(dr_server *s, int route, int status)
{
    size_t k = NSTATUS;
    for (size_t i = 0; i < NSTATUS; i++)
        if (status_codes[i] == status) k = i;
    atomic_fetch_add(&s->requests[route][k], 1);
}

/* ---- request lifetime ----------------------------------------------------------- */

static void chunk_list_free(dr_server *s, chunk *c)
{
    while (c) {
        chunk *n = c->next;
        atomic_fetch_sub(&s->buffered, c->len);
        free(c);
        c = n;
    }
}

static void kick_parked(dr_server *s);

static void req_release(dr_http_req *r)
{
    if (atomic_fetch_sub(&r->refs, 1) != 1) return;
    dr_server *s = r->srv;
    if (r->in_all) {
        pthread_mutex_lock(&s->mu);
        if (r->all_prev)
            r->all_prev->all_next = r->all_next;
        else
            s->all = r->all_next;
        if (r->all_next) r->all_next->all_prev = r->all_prev;
        if (r->inflight) s->inflight--;
        pthread_mutex_unlock(&s->mu);
    }
    bool had_data = r->qhead || r->cur;
    chunk_list_free(s, r->qhead);
    if (r->cur) {
        atomic_fetch_sub(&s->buffered, r->cur->len);
        free(r->cur);
    }
    if (had_data && atomic_load(&s->nparked)) kick_parked(s);
    if (r->file_ready && r->file.fd >= 0) close(r->file.fd);
    pthread_mutex_destroy(&r->mu);
    free(r->target);
    free(r->logpath);
    free(r);
}

static void response_free_cb(void *cls)
{
    req_release(cls);
}

/* Resumes the request's connection if it is suspended, else remembers the wake-up so
 * the next attempt to suspend checks again. Under r->mu. */
static void wake_locked(dr_http_req *r)
{
    if (r->suspended) {
        r->suspended = false;
        mhd.resume_connection(r->conn);
    } else {
        r->pending_wake = true;
    }
}

/* Suspends the connection unless a wake-up came in meanwhile (then returns false: look
 * again). Under r->mu; never while stopping (a suspended connection would block
 * MHD_stop_daemon). */
static bool suspend_locked(dr_http_req *r)
{
    if (r->pending_wake || atomic_load(&r->srv->stopping)) {
        r->pending_wake = false;
        return false;
    }
    r->suspended = true;
    mhd.suspend_connection(r->conn);
    return true;
}

/* ---- the producer pool ---------------------------------------------------------- */

/* Under r->mu. A producer parked for room in the global buffer is unparked: whatever
 * queues it (room again, or a cancel) ends the parking, so a later kick_parked cannot
 * queue it a second time, after its stream has finished. */
static void enqueue_job(dr_http_req *r)
{
    dr_server *s = r->srv;
    if (r->parked_global) {
        r->parked_global = false;
        atomic_fetch_sub(&s->nparked, 1);
    }
    if (r->job != JOB_IDLE) return;
    r->job = JOB_QUEUED;
    pthread_mutex_lock(&s->pmu);
    r->jq_next = NULL;
    if (s->jq_tail)
        s->jq_tail->jq_next = r;
    else
        s->jq_head = r;
    s->jq_tail = r;
    pthread_cond_signal(&s->pcv);
    pthread_mutex_unlock(&s->pmu);
}

/* May the producer pull another chunk? Under r->mu. */
static bool room_for_more(dr_http_req *r, bool *global_full)
{
    dr_server *s = r->srv;
    *global_full = false;
    if (r->qbytes == 0) return true; /* one chunk is always allowed: progress */
    if (r->qbytes >= s->stream_budget) return false;
    if (atomic_load(&s->buffered) >= s->global_budget) {
        *global_full = true;
        return false;
    }
    return true;
}

/* Re-queues producers parked for lack of room in the global buffer. */
static void kick_parked(dr_server *s)
{
    if (atomic_load(&s->buffered) >= s->global_budget) return; /* still full */
    pthread_mutex_lock(&s->mu);
    for (dr_http_req *r = s->all; r; r = r->all_next) {
        pthread_mutex_lock(&r->mu);
        if (r->parked_global && r->job == JOB_IDLE) enqueue_job(r);
        pthread_mutex_unlock(&r->mu);
    }
    pthread_mutex_unlock(&s->mu);
}

/* The provider's budget admits r (always, without one; files are not counted). srv->mu. */
static bool admit_locked(dr_server *s, dr_http_req *r)
{
    if (!s->p.split_admit || r->route == RT_FILE) return true;
    if (!s->p.split_admit(s->p.ctx, &r->admit_token)) return false;
    r->admitted = true;
    return true;
}

/* r's stream slot is free again (and its budget given back): hand slots to the oldest
 * waiting requests the budget admits, in order, or give the slot back. */
static void release_slot(dr_server *s, dr_http_req *r)
{
    pthread_mutex_lock(&s->mu);
    if (r->slot != SLOT_ACTIVE) { /* given back already (or never held) */
        pthread_mutex_unlock(&s->mu);
        return;
    }
    r->slot = SLOT_NONE;
    if (r->admitted) {
        s->p.split_unadmit(s->p.ctx, r->admit_token);
        r->admitted = false;
    }
    bool freed = true; /* r's slot, not handed on yet */
    dr_http_req *w;
    while ((w = s->wq_head) != NULL) {
        if (!freed && s->slots_used >= s->max_streams) break;
        if (!admit_locked(s, w)) break;
        if (!freed) s->slots_used++;
        freed = false;
        s->wq_head = w->wq_next;
        if (s->wq_head)
            s->wq_head->wq_prev = NULL;
        else
            s->wq_tail = NULL;
        w->wq_next = w->wq_prev = NULL;
        s->queued--;
        w->slot = SLOT_ACTIVE;
        w->granted = true;
        pthread_mutex_lock(&w->mu);
        wake_locked(w);
        pthread_mutex_unlock(&w->mu);
    }
    if (freed) s->slots_used--;
    pthread_mutex_unlock(&s->mu);
}

/* One step of a stream on a pool thread: open, pull one chunk, or close. */
static void run_job(dr_server *s, dr_http_req *r)
{
    pthread_mutex_lock(&r->mu);
    r->job = JOB_RUNNING;
    bool cancel = r->cancel || atomic_load(&s->stopping);
    bool opened = r->opened;
    pthread_mutex_unlock(&r->mu);

    bool finished = false; /* the producer side is done with this request */
    bool got_eof = false;
    if (cancel) {
        finished = true;
    } else if (r->route == RT_FILE) {
        /* a file: opened (maybe regenerated) here, then sent by MHD from the descriptor */
        icd_error err;
        icd_error_clear(&err);
        dr_server_file f = {.fd = -1};
        const char *rel = r->target + strlen("/files/");
        int rc = s->p.file_open(s->p.ctx, rel, &f, &err);
        pthread_mutex_lock(&r->mu);
        if (rc) {
            if (f.fd >= 0) close(f.fd);
            f.fd = -1;
            r->prod_failed = true;
            r->perr = err;
        }
        r->file = f;
        r->file_ready = true;
        pthread_mutex_unlock(&r->mu);
        finished = true;
    } else if (!opened) {
        icd_error err;
        icd_error_clear(&err);
        void *st = NULL;
        int rc = s->p.split_open(s->p.ctx, r->split, &st, &err);
        pthread_mutex_lock(&r->mu);
        if (rc) {
            r->prod_failed = true;
            r->perr = err;
            finished = true;
        } else {
            r->opened = true;
            r->stream = st;
        }
        pthread_mutex_unlock(&r->mu);
    } else {
        icd_error err;
        icd_error_clear(&err);
        icd_buf b = ICD_BUF_INIT;
        bool eof = false;
        int rc = s->p.split_next(r->stream, &b, &eof, &err);
        if (!rc && !icd_buf_ok(&b)) rc = icd_fail_nomem(&err);
        chunk *c = NULL;
        if (!rc && b.len) {
            c = malloc(sizeof *c + b.len);
            if (!c) {
                rc = icd_fail_nomem(&err);
            } else {
                c->next = NULL;
                c->len = b.len;
                memcpy(c->data, b.data, b.len);
                atomic_fetch_add(&s->buffered, b.len);
            }
        }
        icd_buf_free(&b);
        pthread_mutex_lock(&r->mu);
        if (c) {
            if (r->qtail)
                r->qtail->next = c;
            else
                r->qhead = c;
            r->qtail = c;
            r->qbytes += c->len;
        }
        if (rc) {
            r->prod_failed = true;
            r->perr = err;
            finished = true;
        } else if (eof) {
            got_eof = true; /* r->eof is set after the slot is free (below) */
            finished = true;
        }
        pthread_mutex_unlock(&r->mu);
    }

    if (finished) {
        void *st = NULL;
        pthread_mutex_lock(&r->mu);
        if (r->opened && !r->closed) {
            st = r->stream;
            r->closed = true;
        }
        pthread_mutex_unlock(&r->mu);
        /* closed before the client can see the end of the body, so the slot is free
         * when the next request of the same client comes */
        if (st) s->p.split_close(st);
        release_slot(s, r);
        pthread_mutex_lock(&r->mu);
        /* only now may the client see the end and ask for its next split */
        if (got_eof) r->eof = true;
        r->job = JOB_IDLE;
        r->producing = false;
        wake_locked(r);
        pthread_mutex_unlock(&r->mu);
        req_release(r); /* the producer side's reference */
        return;
    }
    pthread_mutex_lock(&r->mu);
    r->job = JOB_IDLE;
    bool global_full;
    if (r->cancel || room_for_more(r, &global_full)) {
        enqueue_job(r);
    } else if (global_full) {
        r->parked_global = true;
        atomic_fetch_add(&s->nparked, 1);
    }
    wake_locked(r);
    pthread_mutex_unlock(&r->mu);
    /* the buffer may have drained between the check and the parking */
    if (atomic_load(&s->nparked) && atomic_load(&s->buffered) < s->global_budget) kick_parked(s);
}

static void *pool_main(void *arg)
{
    dr_server *s = arg;
    /* Producing rows (decoding, applying deletes) yields the CPU to the HTTP threads:
     * on a loaded machine /health and the byte copying stay responsive. Linux applies
     * a thread's nice value per thread. */
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    if (errno == 0) setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice_now + 5);
    for (;;) {
        pthread_mutex_lock(&s->pmu);
        while (!s->jq_head && !s->pool_stop)
            pthread_cond_wait(&s->pcv, &s->pmu);
        dr_http_req *r = s->jq_head;
        if (!r) {
            pthread_mutex_unlock(&s->pmu);
            return NULL;
        }
        s->jq_head = r->jq_next;
        if (!s->jq_head) s->jq_tail = NULL;
        pthread_mutex_unlock(&s->pmu);
        run_job(s, r);
    }
}

/* ---- responses ------------------------------------------------------------------ */

static enum MHD_Result queue_bytes(struct MHD_Connection *c, dr_http_req *r, int status,
                                   const char *type, const char *body, size_t len)
{
    struct MHD_Response *resp =
        mhd.create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp) return MHD_NO;
    mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ok;
    if (status == MHD_HTTP_UNAUTHORIZED) {
        ok = mhd.queue_basic_auth_fail_response(c, DR_HTTP_REALM, resp);
    } else {
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
            mhd.add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
            mhd.add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
        if (atomic_load(&r->srv->draining))
            mhd.add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        ok = mhd.queue_response(c, (unsigned)status, resp);
    }
    mhd.destroy_response(resp);
    r->status = status;
    r->bytes = len;
    return ok;
}

static enum MHD_Result queue_text(struct MHD_Connection *c, dr_http_req *r, int status,
                                  const char *type, icd_buf *body)
{
    if (!icd_buf_ok(body)) {
        icd_buf_free(body);
        return MHD_NO;
    }
    enum MHD_Result ok = queue_bytes(c, r, status, type, body->data ? body->data : "", body->len);
    icd_buf_free(body);
    return ok;
}

static enum MHD_Result queue_json(struct MHD_Connection *c, dr_http_req *r, int status,
                                  icd_buf *body)
{
    icd_buf_putc(body, '\n');
    return queue_text(c, r, status, "application/json", body);
}

/* {"error":"MESSAGE"} with the given status. */
static enum MHD_Result queue_error(struct MHD_Connection *c, dr_http_req *r, int status,
                                   const char *msg)
{
    icd_buf b = ICD_BUF_INIT;
    icd_buf_puts(&b, "{\"error\":");
    icd_json_cstr(&b, msg);
    icd_buf_putc(&b, '}');
    return queue_json(c, r, status, &b);
}

/* ---- routes --------------------------------------------------------------------- */

unsigned dr_server_streams_in_flight(dr_server *s)
{
    pthread_mutex_lock(&s->mu);
    unsigned n = s->inflight;
    pthread_mutex_unlock(&s->mu);
    return n;
}

unsigned dr_server_streams_queued(dr_server *s)
{
    pthread_mutex_lock(&s->mu);
    unsigned n = s->queued;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static enum MHD_Result route_health(struct MHD_Connection *c, dr_http_req *r)
{
    dr_server *s = r->srv;
    icd_buf b = ICD_BUF_INIT;
    pthread_mutex_lock(&s->mu);
    unsigned inflight = s->inflight, queued = s->queued;
    pthread_mutex_unlock(&s->mu);
    icd_buf_printf(
        &b, "{\"status\":\"%s\",\"version\":", atomic_load(&s->draining) ? "draining" : "ok");
    icd_json_cstr(&b, icd_version());
    icd_buf_printf(&b, ",\"splits\":%zu,\"streamsInFlight\":%u,\"streamsQueued\":%u", s->nsplits,
                   inflight, queued);
    if (s->p.write_health) s->p.write_health(s->p.ctx, &b);
    icd_buf_putc(&b, '}');
    return queue_json(c, r, MHD_HTTP_OK, &b);
}

static void metric_head(icd_buf *b, const char *name, const char *type, const char *help)
{
    icd_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metric_u64(icd_buf *b, const char *name, const char *type, const char *help, uint64_t v)
{
    metric_head(b, name, type, help);
    icd_buf_printf(b, "%s %" PRIu64 "\n", name, v);
}

static enum MHD_Result route_metrics(struct MHD_Connection *c, dr_http_req *r)
{
    dr_server *s = r->srv;
    icd_buf b = ICD_BUF_INIT;
    /* this request is answered now: count it before rendering, so a scrape sees itself */
    count_request(s, RT_METRICS, 200);
    r->counted = true;
    metric_head(&b, "icedruid_serve_requests_total", "counter",
                "HTTP requests answered, by route and status code.");
    for (int rt = 0; rt < RT_COUNT; rt++)
        for (size_t k = 0; k <= NSTATUS; k++) {
            uint64_t v = atomic_load(&s->requests[rt][k]);
            if (!v) continue;
            char code[8];
            if (k < NSTATUS)
                snprintf(code, sizeof code, "%d", status_codes[k]);
            else
                snprintf(code, sizeof code, "other");
            icd_buf_printf(&b,
                           "icedruid_serve_requests_total{route=\"%s\",code=\"%s\"} %" PRIu64 "\n",
                           route_names[rt], code, v);
        }
    pthread_mutex_lock(&s->mu);
    unsigned inflight = s->inflight, queued = s->queued, slots = s->slots_used, conns = s->nconns;
    pthread_mutex_unlock(&s->mu);
    metric_u64(&b, "icedruid_serve_response_bytes_total", "counter",
               "Body bytes handed to connections.", atomic_load(&s->bytes_sent));
    metric_u64(&b, "icedruid_serve_streams_in_flight", "gauge",
               "Split responses being produced or sent.", inflight);
    metric_u64(&b, "icedruid_serve_streams_producing", "gauge",
               "Stream slots in use (splits being read from storage).", slots);
    metric_u64(&b, "icedruid_serve_streams_queued", "gauge",
               "Split requests waiting for a stream slot.", queued);
    metric_u64(&b, "icedruid_serve_streams_completed_total", "counter",
               "Split responses sent to the end.", atomic_load(&s->streams_completed));
    metric_u64(&b, "icedruid_serve_stream_errors_total", "counter",
               "Split streams that failed in the provider (500 or an aborted response).",
               atomic_load(&s->stream_failures));
    metric_u64(&b, "icedruid_serve_streams_aborted_total", "counter",
               "Split responses cut because the client went away, stopped reading or the "
               "server stopped.",
               atomic_load(&s->streams_aborted));
    metric_u64(&b, "icedruid_serve_queued_total", "counter",
               "Split requests that had to wait for a stream slot.", atomic_load(&s->queued_total));
    metric_u64(&b, "icedruid_serve_queue_timeouts_total", "counter",
               "Split requests answered 503 after waiting queue_timeout for a slot.",
               atomic_load(&s->queue_timeouts));
    metric_u64(&b, "icedruid_serve_buffered_bytes", "gauge",
               "Row bytes buffered ahead of clients, over all streams.", atomic_load(&s->buffered));
    metric_u64(&b, "icedruid_serve_streams_parked", "gauge",
               "Split streams whose producer waits for room in the global buffer.",
               atomic_load(&s->nparked));
    metric_u64(&b, "icedruid_serve_connections", "gauge", "Open TCP connections.", conns);
    metric_u64(&b, "icedruid_serve_header_timeouts_total", "counter",
               "Connections closed because the request header was not complete in time.",
               atomic_load(&s->header_timeouts));
    metric_u64(&b, "icedruid_serve_connections_evicted_total", "counter",
               "Header-incomplete connections closed to admit a new one at max_connections.",
               atomic_load(&s->evictions));
    metric_u64(&b, "icedruid_serve_connections_refused_total", "counter",
               "Connections refused (max_connections with no header-incomplete one to close).",
               atomic_load(&s->refused_conns));
    if (s->p.write_metrics) s->p.write_metrics(s->p.ctx, &b);
    enum MHD_Result rc =
        queue_text(c, r, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", &b);
    return rc;
}

static enum MHD_Result route_splits(struct MHD_Connection *c, dr_http_req *r)
{
    icd_buf b = ICD_BUF_INIT, url = ICD_BUF_INIT;
    icd_buf_puts(&b, "{\"splits\":[");
    for (size_t i = 0; i < r->srv->nsplits; i++) {
        icd_buf_clear(&url);
        dr_server_split_url(&url, r->srv->base_url, i);
        if (i) icd_buf_putc(&b, ',');
        icd_json_str(&b, url.data ? url.data : "", url.len);
    }
    icd_buf_puts(&b, "]}");
    if (!icd_buf_ok(&url)) b.oom = true;
    icd_buf_free(&url);
    return queue_json(c, r, MHD_HTTP_OK, &b);
}

static enum MHD_Result route_spec(struct MHD_Connection *c, dr_http_req *r)
{
    icd_buf b = ICD_BUF_INIT;
    icd_error err;
    icd_error_clear(&err);
    int rc = r->srv->p.write_spec(r->srv->p.ctx, r->srv->base_url, &b, &err);
    if (rc == 0 && !icd_buf_ok(&b)) rc = icd_fail_nomem(&err);
    if (rc < 0) {
        icd_buf_free(&b);
        char msg[2200];
        icd_error_format(&err, msg, sizeof msg);
        srv_log(r->srv, "GET /spec failed: %s", msg);
        return queue_error(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
    }
    return queue_json(c, r, MHD_HTTP_OK, &b);
}

/* "/splits/N" with N canonical decimal (no sign, no leading zero, no escapes). */
static bool parse_split_path(const char *path, size_t *n)
{
    static const char prefix[] = "/splits/";
    if (strncmp(path, prefix, sizeof prefix - 1) != 0) return false;
    const char *p = path + sizeof prefix - 1;
    if (!*p || (p[0] == '0' && p[1])) return false;
    size_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        unsigned d = (unsigned)(*p - '0');
        if (v > (SIZE_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *n = v;
    return true;
}

/* The content reader of a split: copies from the request's chunk queue; suspends the
 * connection when the queue is empty and the producer has not finished. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    dr_http_req *r = cls;
    dr_server *s = r->srv;
    ssize_t ret;
    bool drained = false;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        if (r->cur && r->cur_off < r->cur->len) {
            size_t n = r->cur->len - r->cur_off;
            if (n > max) n = max;
            memcpy(buf, r->cur->data + r->cur_off, n);
            r->cur_off += n;
            r->bytes += n;
            atomic_fetch_add(&s->bytes_sent, n);
            ret = (ssize_t)n;
            break;
        }
        if (r->cur) {
            atomic_fetch_sub(&s->buffered, r->cur->len);
            free(r->cur);
            r->cur = NULL;
            drained = true;
        }
        if (r->qhead) {
            r->cur = r->qhead;
            r->qhead = r->cur->next;
            if (!r->qhead) r->qtail = NULL;
            r->qbytes -= r->cur->len;
            r->cur_off = 0;
            bool global_full;
            if (r->producing && r->job == JOB_IDLE && !r->parked_global &&
                room_for_more(r, &global_full))
                enqueue_job(r);
            continue;
        }
        if (r->eof) {
            ret = MHD_CONTENT_READER_END_OF_STREAM;
            break;
        }
        if (r->prod_failed) {
            char msg[2200];
            icd_error_format(&r->perr, msg, sizeof msg);
            srv_log(s, "GET %s failed after %" PRIu64 " bytes, response aborted: %s", r->logpath,
                    r->bytes, msg);
            r->failed = true;
            atomic_fetch_add(&s->stream_failures, 1);
            ret = MHD_CONTENT_READER_END_WITH_ERROR;
            break;
        }
        if (r->cancel || atomic_load(&s->stopping)) {
            ret = MHD_CONTENT_READER_END_WITH_ERROR;
            break;
        }
        if (suspend_locked(r)) {
            ret = 0;
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
    if (drained && atomic_load(&s->nparked)) kick_parked(s);
    return ret;
}

/* HEAD /splits/N: the headers of the stream, no body, the split is not opened. */
static ssize_t empty_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls, (void)pos, (void)buf, (void)max;
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result queue_stream_headers(struct MHD_Connection *c, dr_http_req *r,
                                            struct MHD_Response *resp)
{
    mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-ndjson");
    mhd.add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (atomic_load(&r->srv->draining))
        mhd.add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ok = mhd.queue_response(c, MHD_HTTP_OK, resp);
    mhd.destroy_response(resp);
    r->status = MHD_HTTP_OK;
    return ok;
}

static void waitq_remove_locked(dr_server *s, dr_http_req *r)
{
    if (r->slot != SLOT_QUEUED) return;
    if (r->wq_prev)
        r->wq_prev->wq_next = r->wq_next;
    else
        s->wq_head = r->wq_next;
    if (r->wq_next)
        r->wq_next->wq_prev = r->wq_prev;
    else
        s->wq_tail = r->wq_prev;
    r->wq_next = r->wq_prev = NULL;
    r->slot = SLOT_NONE;
    s->queued--;
}

/* ---- static files ---------------------------------------------------------------- */

bool dr_http_etag_listed(const char *h, const char *tag, bool allow_star)
{
    size_t tl = strlen(tag);
    for (const char *p = h; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p) break;
        if (allow_star && *p == '*') return true;
        if (p[0] == 'W' && p[1] == '/') p += 2;
        if (*p == '"') {
            const char *q = strchr(p + 1, '"');
            if (!q) return false;
            if ((size_t)(q - p - 1) == tl && !memcmp(p + 1, tag, tl)) return true;
            p = q + 1;
        } else {
            while (*p && *p != ',')
                p++;
        }
    }
    return false;
}

int dr_http_parse_range(const char *h, uint64_t size, uint64_t *from, uint64_t *to)
{
    while (*h == ' ')
        h++;
    if (strncasecmp(h, "bytes=", 6) != 0) return 0;
    const char *p = h + 6;
    while (*p == ' ')
        p++;
    if (strchr(p, ',')) return 0;
    bool suffix = *p == '-';
    if (suffix) p++;
    uint64_t a = 0, b = 0;
    bool have_a = false, have_b = false;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (a > (UINT64_MAX - d) / 10) return 0;
        a = a * 10 + d;
        have_a = true;
    }
    if (!have_a) return 0;
    if (suffix) {
        while (*p == ' ')
            p++;
        if (*p) return 0;
        if (a == 0 || size == 0) return -1;
        *from = a >= size ? 0 : size - a;
        *to = size - 1;
        return 1;
    }
    if (*p++ != '-') return 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (b > (UINT64_MAX - d) / 10) return 0;
        b = b * 10 + d;
        have_b = true;
    }
    while (*p == ' ')
        p++;
    if (*p) return 0;
    if (have_b && b < a) return 0; /* invalid: ignored (RFC 9110 14.1.1) */
    if (a >= size) return -1;
    *from = a;
    *to = have_b && b < size ? b : size - 1;
    return 1;
}

static void file_headers(struct MHD_Response *resp, dr_http_req *r, const char *tag)
{
    mhd.add_response_header(resp, MHD_HTTP_HEADER_ETAG, tag);
    mhd.add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
    /* content-addressed: the bytes of a URL never change */
    mhd.add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                            "public, max-age=31536000, immutable");
    if (atomic_load(&r->srv->draining))
        mhd.add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
}

/* The answer to GET/HEAD of an opened file (r->file): 200, 206, 304 or 416. */
static enum MHD_Result queue_file(struct MHD_Connection *c, dr_http_req *r)
{
    dr_server *s = r->srv;
    dr_server_file *f = &r->file;
    char tag[96];
    snprintf(tag, sizeof tag, "\"%s\"", f->etag);
    bool head = !strcmp(r->method, MHD_HTTP_METHOD_HEAD);
    const char *inm =
        mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    struct MHD_Response *resp;
    int status;
    if (inm && dr_http_etag_listed(inm, f->etag, true)) {
        resp = mhd.create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!resp) return MHD_NO;
        status = MHD_HTTP_NOT_MODIFIED;
        file_headers(resp, r, tag);
    } else {
        const char *rh = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
        const char *ifr = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_RANGE);
        if (rh && ifr && !dr_http_etag_listed(ifr, f->etag, false)) rh = NULL; /* changed: whole */
        uint64_t from = 0, to = f->size ? f->size - 1 : 0;
        int rk = rh ? dr_http_parse_range(rh, f->size, &from, &to) : 0;
        char cr[96];
        if (rk < 0) {
            icd_buf b = ICD_BUF_INIT;
            icd_buf_printf(
                &b, "{\"error\":\"range not satisfiable: the file has %" PRIu64 " bytes\"}\n",
                f->size);
            if (!icd_buf_ok(&b)) return MHD_NO;
            resp = mhd.create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_COPY);
            icd_buf_free(&b);
            if (!resp) return MHD_NO;
            snprintf(cr, sizeof cr, "bytes */%" PRIu64, f->size);
            mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
            mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
            status = MHD_HTTP_RANGE_NOT_SATISFIABLE;
            file_headers(resp, r, tag);
        } else {
            uint64_t len = rk ? to - from + 1 : f->size;
            /* MHD closes the descriptor when it frees the response */
            resp = mhd.create_response_from_fd_at_offset64(len, f->fd, rk ? from : 0);
            if (!resp) return MHD_NO;
            f->fd = -1;
            mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                    f->type ? f->type : "application/octet-stream");
            if (rk) {
                snprintf(cr, sizeof cr, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, from, to,
                         f->size);
                mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
            }
            status = rk ? MHD_HTTP_PARTIAL_CONTENT : MHD_HTTP_OK;
            file_headers(resp, r, tag);
            if (!head) {
                r->bytes = len;
                atomic_fetch_add(&s->bytes_sent, len);
            }
        }
    }
    enum MHD_Result ok = mhd.queue_response(c, (unsigned)status, resp);
    mhd.destroy_response(resp);
    r->status = status;
    return ok;
}

/* GET /splits/N, called again after every resume until a response is queued. */
static enum MHD_Result route_split(struct MHD_Connection *c, dr_http_req *r)
{
    dr_server *s = r->srv;
    if (r->phase == PH_ADMIT) {
        pthread_mutex_lock(&s->mu);
        if (!r->in_all) {
            r->in_all = true;
            r->all_next = s->all;
            if (s->all) s->all->all_prev = r;
            s->all = r;
        }
        if (atomic_load(&s->draining) || atomic_load(&s->stopping)) {
            waitq_remove_locked(s, r);
            pthread_mutex_unlock(&s->mu);
            return queue_error(c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
                               "the server is shutting down; retry on another server");
        }
        if (r->slot == SLOT_NONE && r->queue_expired) {
            pthread_mutex_unlock(&s->mu);
            atomic_fetch_add(&s->queue_timeouts, 1);
            return queue_error(c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
                               "too many splits are being streamed and the wait for a free "
                               "stream timed out; retry later");
        }
        if (r->slot == SLOT_NONE) {
            if (s->slots_used < s->max_streams && !s->wq_head && admit_locked(s, r)) {
                s->slots_used++;
                r->slot = SLOT_ACTIVE;
            } else if (s->queue_timeout_s && s->queued < s->max_queued) {
                r->slot = SLOT_QUEUED;
                r->deadline = mono_now() + s->queue_timeout_s;
                r->wq_prev = s->wq_tail;
                r->wq_next = NULL;
                if (s->wq_tail)
                    s->wq_tail->wq_next = r;
                else
                    s->wq_head = r;
                s->wq_tail = r;
                s->queued++;
                atomic_fetch_add(&s->queued_total, 1);
            } else {
                pthread_mutex_unlock(&s->mu);
                return queue_error(c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
                                   "too many splits are being streamed and queued; retry later");
            }
        }
        if (r->slot == SLOT_QUEUED) {
            pthread_mutex_lock(&r->mu);
            bool suspended = suspend_locked(r);
            pthread_mutex_unlock(&r->mu);
            pthread_mutex_unlock(&s->mu);
            if (suspended) return MHD_YES;
            return route_split(c, r); /* a wake-up came in: look again */
        }
        /* SLOT_ACTIVE: hand the split to the producer pool */
        r->phase = PH_FIRST;
        r->inflight = true;
        s->inflight++;
        atomic_fetch_add(&r->refs, 1); /* the producer side's reference */
        pthread_mutex_lock(&r->mu);
        r->producing = true;
        enqueue_job(r);
        pthread_mutex_unlock(&r->mu);
        pthread_mutex_unlock(&s->mu);
    }
    if (r->phase == PH_FIRST) {
        for (;;) {
            pthread_mutex_lock(&r->mu);
            bool ready =
                r->route == RT_FILE ? r->file_ready && !r->prod_failed : r->qhead || r->eof;
            bool failed = !ready && r->prod_failed;
            icd_error err = r->perr;
            if (ready || failed || atomic_load(&s->stopping)) {
                pthread_mutex_unlock(&r->mu);
                if (failed && r->route == RT_FILE) {
                    int st = r->file.status ? r->file.status : MHD_HTTP_INTERNAL_SERVER_ERROR;
                    char msg[2200];
                    icd_error_format(&err, msg, sizeof msg);
                    if (st >= 500) {
                        srv_log(s, "GET %s failed: %s", r->logpath, msg);
                        atomic_fetch_add(&s->stream_failures, 1);
                    }
                    return queue_error(c, r, st, msg);
                }
                if (failed) {
                    /* a failure to start is a clean 500 (logged once, here) */
                    char msg[2200];
                    icd_error_format(&err, msg, sizeof msg);
                    srv_log(s, "GET %s failed: %s", r->logpath, msg);
                    atomic_fetch_add(&s->stream_failures, 1);
                    return queue_error(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
                }
                if (!ready)
                    return queue_error(c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
                                       "the server is shutting down");
                break;
            }
            bool suspended = suspend_locked(r);
            pthread_mutex_unlock(&r->mu);
            if (suspended) return MHD_YES;
        }
        r->phase = PH_STREAM;
        if (r->route == RT_FILE) return queue_file(c, r);
        /* The response now holds a reference too (released by response_free_cb). */
        atomic_fetch_add(&r->refs, 1);
        struct MHD_Response *resp = mhd.create_response_from_callback(
            MHD_SIZE_UNKNOWN, DR_HTTP_BLOCK, stream_read, r, response_free_cb);
        if (!resp) {
            req_release(r);
            return MHD_NO;
        }
        return queue_stream_headers(c, r, resp);
    }
    return MHD_YES; /* PH_STREAM: the response is queued already */
}

/* Basic auth (RFC 7617): scheme name case-insensitive, base64 credentials "user:pass"
 * compared with their lengths (a NUL inside the password does not cut it short). */
static int b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
}

static bool authorized(dr_server *s, struct MHD_Connection *c)
{
    if (!s->auth_user) return true;
    const char *h = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "basic", 5) != 0 || (h[5] != ' ' && h[5] != '\t')) return false;
    const char *p = h + 5;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strlen(p);
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (n == 0 || n % 4 != 0 || n > 16384) return false;
    unsigned char *dec = malloc(n / 4 * 3 + 1);
    if (!dec) return false;
    size_t len = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            unsigned char ch = (unsigned char)p[i + (size_t)k];
            if (ch == '=' && i + 4 == n && k >= 2) {
                v[k] = 0;
                pad++;
            } else if (pad || (v[k] = b64_value(ch)) < 0) {
                ok = false;
            }
        }
        if (!ok) break;
        uint32_t w =
            (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        dec[len++] = (unsigned char)(w >> 16);
        if (pad < 2) dec[len++] = (unsigned char)(w >> 8);
        if (pad < 1) dec[len++] = (unsigned char)w;
    }
    const unsigned char *colon = ok ? memchr(dec, ':', len) : NULL;
    bool match = false;
    if (colon) {
        size_t ul = (size_t)(colon - dec);
        bool u = secret_equal((const char *)dec, ul, s->auth_user, s->auth_user_len);
        bool pw = secret_equal((const char *)colon + 1, len - ul - 1, s->auth_password,
                               s->auth_password_len);
        match = u & pw;
    }
    volatile unsigned char *z = dec;
    for (size_t i = 0; i < len; i++)
        z[i] = 0;
    free(dec);
    return match;
}

static conn_info *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* MHD_OPTION_URI_LOG_CALLBACK: the first thing MHD reports of a request, with the target
 * exactly as sent (before unescaping and the split of the query string). */
static void *uri_logger(void *cls, const char *uri, struct MHD_Connection *c)
{
    dr_server *s = cls;
    dr_http_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->srv = s;
    r->conn = c;
    atomic_init(&r->refs, 1);
    pthread_mutex_init(&r->mu, NULL);
    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    r->target = strdup(uri ? uri : "");
    r->logpath = escape_for_log(uri ? uri : "");
    r->route = RT_OTHER;
    conn_info *ci = conn_of(c);
    snprintf(r->client, sizeof r->client, "%s", ci ? ci->client : "?");
    return r;
}

/* A request body announced by its header (a length above 0, or chunked). */
static bool request_has_body(struct MHD_Connection *c)
{
    const char *te =
        mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    const char *cl =
        mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (te) return true;
    if (!cl) return false;
    while (*cl == ' ' || *cl == '\t' || *cl == '0')
        cl++;
    return *cl != '\0' && *cl != ' ' && *cl != '\t';
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
    (void)url, (void)upload_data;
    dr_server *s = cls;
    dr_http_req *r = *con_cls;
    if (!r) return MHD_NO; /* out of memory in uri_logger */
    if (r->routed) {
        *upload_data_size = 0; /* a request body: ignored */
        if (r->route == RT_SPLIT || r->route == RT_FILE) return route_split(c, r);
        return MHD_YES;
    }
    /* libmicrohttpd closes the connection after any response queued in the first call
     * of a request (it has not looked at a body yet), so a request without a body is
     * answered from the second call, which comes right away: keep-alive for files, specs
     * and errors alike (Druid's http source and the JDK reuse connections). A request with
     * a body is answered at once and its connection closed, the body never read. */
    if (!r->deferred) { /* the first call: the header is complete */
        conn_info *ci = conn_of(c);
        if (ci) {
            pthread_mutex_lock(&s->mu);
            ci->in_header = false;
            pthread_mutex_unlock(&s->mu);
        }
        if (!request_has_body(c)) {
            r->deferred = true;
            return MHD_YES;
        }
    }
    r->routed = true;
    snprintf(r->method, sizeof r->method, "%s", method);
    if (!r->target || !r->logpath) return MHD_NO;
    *upload_data_size = 0;

    if (!authorized(s, c))
        return queue_error(c, r, MHD_HTTP_UNAUTHORIZED, "authentication required");
    bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
    if (!head && strcmp(method, MHD_HTTP_METHOD_GET) != 0)
        return queue_error(c, r, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are allowed");
    /* routes by the raw target, so escapes (%00, %2F) and queries cannot alias a route */
    const char *t = r->target;
    if (strchr(t, '?'))
        return queue_error(c, r, MHD_HTTP_BAD_REQUEST,
                           "query strings are not accepted (no route takes parameters)");
    size_t n;
    if (!strcmp(t, "/health")) {
        r->route = RT_HEALTH;
        return route_health(c, r);
    }
    if (!strcmp(t, "/metrics")) {
        r->route = RT_METRICS;
        return route_metrics(c, r);
    }
    if (!strcmp(t, "/splits")) {
        r->route = RT_SPLITS;
        return route_splits(c, r);
    }
    if (!strcmp(t, "/spec")) {
        r->route = RT_SPEC;
        return route_spec(c, r);
    }
    if (s->p.file_open && !strncmp(t, "/files/", 7) && t[7]) {
        r->route = RT_FILE;
        return route_split(c, r);
    }
    if (parse_split_path(t, &n) && n < s->nsplits) {
        r->route = RT_SPLIT;
        r->split = n;
        /* An HTTP/1.0 body without a length ends by closing the connection, which also
         * is how a failed stream ends: the client could take a cut split for a whole
         * one. Chunked encoding (HTTP/1.1) tells the two apart. */
        if (!strcmp(version, MHD_HTTP_VERSION_1_0))
            return queue_error(c, r, MHD_HTTP_HTTP_VERSION_NOT_SUPPORTED,
                               "splits are served over HTTP/1.1 only (chunked encoding "
                               "lets a client tell a failed stream from a complete one)");
        if (head) {
            r->phase = PH_STREAM;
            struct MHD_Response *resp = mhd.create_response_from_callback(
                MHD_SIZE_UNKNOWN, DR_HTTP_BLOCK, empty_read, NULL, NULL);
            if (!resp) return MHD_NO;
            return queue_stream_headers(c, r, resp);
        }
        return route_split(c, r);
    }
    return queue_error(c, r, MHD_HTTP_NOT_FOUND, "no such resource");
}

static void conn_unlink_locked(dr_server *s, conn_info *ci)
{
    if (ci->prev)
        ci->prev->next = ci->next;
    else
        s->conns = ci->next;
    if (ci->next)
        ci->next->prev = ci->prev;
    else
        s->conns_tail = ci->prev;
    ci->prev = ci->next = NULL;
}

static void conn_append_locked(dr_server *s, conn_info *ci)
{
    ci->prev = s->conns_tail;
    ci->next = NULL;
    if (s->conns_tail)
        s->conns_tail->next = ci;
    else
        s->conns = ci;
    s->conns_tail = ci;
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    dr_server *s = cls;
    dr_http_req *r = *con_cls;
    conn_info *ci = conn_of(c);
    if (ci) { /* a kept-alive connection waits for its next header from now on */
        pthread_mutex_lock(&s->mu);
        ci->in_header = true;
        ci->t0 = mono_now();
        conn_unlink_locked(s, ci); /* the list stays in order of t0 */
        conn_append_locked(s, ci);
        pthread_mutex_unlock(&s->mu);
    }
    if (!r) return;
    *con_cls = NULL;
    if (r->route == RT_SPLIT || r->route == RT_FILE) {
        pthread_mutex_lock(&s->mu);
        waitq_remove_locked(s, r);
        /* a slot handed to this request in the queue whose producer never started (it
         * was answered 503 because the server drains or stops): nobody else gives it
         * back */
        bool unstarted = !r->inflight;
        pthread_mutex_unlock(&s->mu);
        if (unstarted) release_slot(s, r); /* (no-op without a slot) */
        pthread_mutex_lock(&r->mu);
        r->cancel = true;
        if (r->producing) enqueue_job(r); /* the pool closes the stream */
        pthread_mutex_unlock(&r->mu);
    }
    bool completed = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && !r->failed;
    if (r->route == RT_SPLIT && r->phase == PH_STREAM && r->status == 200 &&
        strcmp(r->method, "HEAD") != 0) {
        if (completed)
            atomic_fetch_add(&s->streams_completed, 1);
        else if (!r->failed)
            atomic_fetch_add(&s->streams_aborted, 1);
    }
    if (!r->counted && r->status) count_request(s, r->route, r->status);
    if (s->on_access && r->routed) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        dr_server_access rec = {
            .method = r->method,
            .path = r->logpath ? r->logpath : "",
            .client = r->client,
            .time_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
            .status = r->status,
            .bytes = r->bytes,
            .seconds = seconds_since(&r->t0),
            .completed = completed,
        };
        s->on_access(s->log_ctx, &rec);
    }
    req_release(r);
}

/* ---- connections ---------------------------------------------------------------- */

static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
    dr_server *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_info *ci = calloc(1, sizeof *ci);
        if (!ci) return;
        const union MHD_ConnectionInfo *fdi =
            mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ai =
            mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        ci->fd = fdi ? fcntl(fdi->connect_fd, F_DUPFD_CLOEXEC, 0) : -1;
        format_addr(ai ? ai->client_addr : NULL, ci->client, sizeof ci->client);
        ci->src = addr_hash(ai ? ai->client_addr : NULL);
        ci->t0 = mono_now();
        ci->in_header = true;
        pthread_mutex_lock(&s->mu);
        conn_append_locked(s, ci);
        s->nconns++;
        pthread_mutex_unlock(&s->mu);
        *socket_context = ci;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn_info *ci = *socket_context;
        if (!ci) return;
        pthread_mutex_lock(&s->mu);
        conn_unlink_locked(s, ci);
        if (ci->shut) s->nshut--;
        s->nconns--;
        pthread_mutex_unlock(&s->mu);
        if (ci->fd >= 0) close(ci->fd);
        free(ci);
        *socket_context = NULL;
    }
}

/* Ends a connection from outside MHD's thread: its socket reads EOF, MHD closes it. */
static void shut_conn_locked(dr_server *s, conn_info *ci)
{
    if (ci->shut || ci->fd < 0) return;
    shutdown(ci->fd, SHUT_RDWR);
    ci->shut = true;
    s->nshut++;
}

/* Bytes the client sent that the server has not read yet: a connection with some is
 * waiting on the server (a loaded one reads late), not on its client. */
static bool has_unread(const conn_info *ci)
{
    int n = 0;
    return ci->fd >= 0 && ioctl(ci->fd, FIONREAD, &n) == 0 && n > 0;
}

/* The connection to close for a new one at max_connections: one waiting on its client
 * for the rest of a header (a real client sends its header at once, a slowloris never
 * finishes it), and of those, the one that has waited longest of the client address
 * whose header-incomplete connections have waited longest in all (their waits added
 * up). So a flood from a few addresses, reconnecting as fast as it is closed, churns
 * through its own connections: not through a real client's whose header came a moment
 * before the loaded server read it, nor through a burst of a client's fresh connections
 * (many, but young); against many addresses of one connection each, it is the oldest.
 * A connection younger than DR_EVICT_GRACE_S is not taken for waiting on its client (it
 * may have been accepted before its bytes came). When no connection is found waiting on
 * its client, the heaviest address's oldest. NULL: none is header-incomplete. */
static conn_info *pick_victim_locked(dr_server *s)
{
    if (++s->srcs_gen == 0) { /* stamps wrapped: clear them */
        memset(s->srcs, 0, ((size_t)s->srcs_mask + 1) * sizeof *s->srcs);
        s->srcs_gen = 1;
    }
    src_count *best = NULL;
    unsigned used = 0;
    double now = mono_now();
    for (conn_info *ci = s->conns; ci; ci = ci->next) { /* in order of t0 */
        if (ci->shut || !ci->in_header) continue;
        size_t i = (size_t)ci->src & s->srcs_mask;
        while (s->srcs[i].gen == s->srcs_gen && s->srcs[i].src != ci->src)
            i = (i + 1) & s->srcs_mask;
        src_count *c = &s->srcs[i];
        if (c->gen != s->srcs_gen) {
            if (++used > s->srcs_mask / 2) break; /* more sources than sized for: enough */
            *c = (src_count){.src = ci->src, .gen = s->srcs_gen, .oldest = ci};
        }
        c->wait += now > ci->t0 ? now - ci->t0 : 0;
        /* each sum only grows, so the best of all steps is the best of the final sums */
        if (!best || c->wait > best->wait ||
            (c->wait == best->wait && c->oldest->t0 < best->oldest->t0))
            best = c;
    }
    if (!best) return NULL;
    /* the heaviest address's oldest waiting on its client, else anyone's oldest such */
    for (int any = 0; any < 2; any++)
        for (conn_info *ci = any ? s->conns : best->oldest; ci; ci = ci->next) {
            if (now - ci->t0 < DR_EVICT_GRACE_S) break; /* (the rest are younger) */
            if (!ci->shut && ci->in_header && (ci->src == best->src) != any && !has_unread(ci))
                return ci;
        }
    return best->oldest;
}

/* MHD_OPTION_ACCEPT_POLICY_CALLBACK: at max_connections a header-incomplete connection is
 * closed to make room (pick_victim_locked); without one the new connection is refused. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addr, (void)addrlen;
    dr_server *s = cls;
    enum MHD_Result ok = MHD_YES;
    pthread_mutex_lock(&s->mu);
    unsigned live = s->nconns - s->nshut;
    if (live >= s->max_conns) {
        conn_info *victim = pick_victim_locked(s);
        if (victim) {
            shut_conn_locked(s, victim);
            atomic_fetch_add(&s->evictions, 1);
        } else {
            ok = MHD_NO;
            atomic_fetch_add(&s->refused_conns, 1);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return ok;
}

static void *watchdog_main(void *arg)
{
    dr_server *s = arg;
    while (!atomic_load(&s->wd_stop)) {
        struct timespec ts = {0, DR_WATCHDOG_MS * 1000000L};
        nanosleep(&ts, NULL);
        double now = mono_now();
        pthread_mutex_lock(&s->mu);
        for (conn_info *ci = s->conns; ci; ci = ci->next)
            if (ci->in_header && !ci->shut && now - ci->t0 > (double)s->header_timeout_s) {
                shut_conn_locked(s, ci);
                atomic_fetch_add(&s->header_timeouts, 1);
            }
        bool drain = atomic_load(&s->draining);
        for (dr_http_req *w = s->wq_head, *next; w; w = next) {
            next = w->wq_next;
            if (drain || now >= w->deadline) {
                waitq_remove_locked(s, w);
                w->queue_expired = true;
                pthread_mutex_lock(&w->mu);
                wake_locked(w);
                pthread_mutex_unlock(&w->mu);
            }
        }
        pthread_mutex_unlock(&s->mu);
    }
    return NULL;
}

/* ---- listening ------------------------------------------------------------------ */

static bool sockaddr_is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr)) return true;
        return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127;
    }
    return false;
}

static bool sockaddr_is_wildcard(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
    return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* Splits "HOST:PORT" / "[V6]:PORT"; `host` receives HOST without brackets. */
static int split_host_port(const char *addr_text, char *host, size_t hostcap, unsigned *port,
                           icd_error *err)
{
    const char *colon;
    const char *h = addr_text;
    size_t hlen;
    if (addr_text[0] == '[') {
        const char *close = strchr(addr_text, ']');
        if (!close || close[1] != ':')
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "listen address '%s': expected [IPV6]:PORT", addr_text);
        h = addr_text + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(addr_text, ':');
        if (!colon)
            return icd_fail(err, ICD_EINVALID, NULL, -1, "listen address '%s': expected HOST:PORT",
                            addr_text);
        hlen = (size_t)(colon - addr_text);
        if (memchr(addr_text, ':', hlen))
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "listen address '%s': write an IPv6 address in brackets, "
                            "e.g. [::1]:8080",
                            addr_text);
    }
    if (hlen == 0 || hlen >= hostcap)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "listen address '%s': bad host", addr_text);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    const char *p = colon + 1;
    unsigned v = 0;
    if (!*p)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "listen address '%s': missing port",
                        addr_text);
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || (v = v * 10 + (unsigned)(*p - '0')) > 65535)
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "listen address '%s': port must be 0..65535", addr_text);
    }
    *port = v;
    return 0;
}

int dr_server_parse_listen(const char *addr_text, struct sockaddr_storage *ss, unsigned *sslen,
                           bool *loopback, icd_error *err)
{
    char host[256];
    unsigned port;
    ICD_TRY(split_host_port(addr_text, host, sizeof host, &port, err));
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (!strcmp(host, "localhost")) snprintf(host, sizeof host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *sslen = sizeof *a4;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *sslen = sizeof *a6;
    } else {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
        struct addrinfo *ai = NULL;
        int rc = getaddrinfo(host, NULL, &hints, &ai);
        if (rc != 0 || !ai)
            return icd_fail(err, ICD_EINVALID, NULL, -1, "listen address '%s': %s", addr_text,
                            rc ? gai_strerror(rc) : "no address");
        memcpy(ss, ai->ai_addr, ai->ai_addrlen);
        *sslen = (unsigned)ai->ai_addrlen;
        freeaddrinfo(ai);
        if (ss->ss_family == AF_INET)
            a4->sin_port = htons((uint16_t)port);
        else if (ss->ss_family == AF_INET6)
            a6->sin6_port = htons((uint16_t)port);
        else
            return icd_fail(err, ICD_EINVALID, NULL, -1, "listen address '%s': not an IP address",
                            addr_text);
    }
    *loopback = sockaddr_is_loopback(ss);
    return 0;
}

static int bind_listen(const char *addr_text, const struct sockaddr_storage *ss, unsigned sslen,
                       int *fd_out, uint16_t *port, icd_error *err)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return icd_fail(err, ICD_EIO, NULL, -1, "cannot listen on %s: socket: %s", addr_text,
                        strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss->ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)ss, sslen) != 0 || listen(fd, SOMAXCONN) != 0) {
        int e = errno;
        close(fd);
        return icd_fail(err, ICD_EIO, NULL, -1, "cannot listen on %s: %s", addr_text, strerror(e));
    }
    struct sockaddr_storage got;
    socklen_t gotlen = sizeof got;
    if (getsockname(fd, (struct sockaddr *)&got, &gotlen) != 0) {
        int e = errno;
        close(fd);
        return icd_fail(err, ICD_EIO, NULL, -1, "cannot listen on %s: %s", addr_text, strerror(e));
    }
    *port = ntohs(got.ss_family == AF_INET ? ((struct sockaddr_in *)&got)->sin_port
                                           : ((struct sockaddr_in6 *)&got)->sin6_port);
    *fd_out = fd;
    return 0;
}

/* "http://HOST:PORT" from the listen address (names are kept: they are what the user chose). */
static char *derive_base_url(const char *addr_text, uint16_t port)
{
    char host[256];
    unsigned ignored;
    if (split_host_port(addr_text, host, sizeof host, &ignored, NULL) < 0) return NULL;
    icd_buf b = ICD_BUF_INIT;
    if (strchr(host, ':'))
        icd_buf_printf(&b, "http://[%s]:%u", host, (unsigned)port);
    else
        icd_buf_printf(&b, "http://%s:%u", host, (unsigned)port);
    return icd_buf_detach(&b);
}

static char *trimmed_url(const char *url)
{
    size_t n = strlen(url);
    while (n && url[n - 1] == '/')
        n--;
    return strndup(url, n);
}

uint16_t dr_server_port(const dr_server *s)
{
    return s->port;
}
const char *dr_server_base_url(const dr_server *s)
{
    return s->base_url;
}

static void server_free(dr_server *s)
{
    if (!s) return;
    free(s->base_url);
    free(s->auth_user);
    if (s->auth_password) {
        /* Do not leave the secret in freed memory. */
        volatile char *p = s->auth_password;
        while (*p)
            *p++ = '\0';
        free(s->auth_password);
    }
    free(s->workers);
    free(s->srcs);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->pmu);
    pthread_cond_destroy(&s->pcv);
    free(s);
}

static int check_config(const dr_server_config *cfg, const dr_server_provider *p, icd_error *err)
{
    if (!p || !p->split_count || !p->write_spec || !p->split_open || !p->split_next ||
        !p->split_admit != !p->split_unadmit || !p->split_close)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "split server: incomplete provider");
    bool user = cfg->auth_user && cfg->auth_user[0];
    bool pass = cfg->auth_password && cfg->auth_password[0];
    if (user != pass)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "split server: basic auth needs both a user and a password");
    if (user && strchr(cfg->auth_user, ':'))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "split server: a basic auth user name cannot contain ':'");
    if (cfg->public_url && strncmp(cfg->public_url, "http://", 7) != 0 &&
        strncmp(cfg->public_url, "https://", 8) != 0)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "public URL '%s' must start with http:// or https://", cfg->public_url);
    if (cfg->public_url && icd_url_has_userinfo(cfg->public_url))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "public URL '%s' must not carry credentials (they would be served in "
                        "/spec and /splits); use basic auth",
                        cfg->public_url);
    return 0;
}

static void stop_threads(dr_server *s)
{
    if (s->have_watchdog) {
        atomic_store(&s->wd_stop, true);
        pthread_join(s->watchdog, NULL);
        s->have_watchdog = false;
    }
    pthread_mutex_lock(&s->pmu);
    s->pool_stop = true;
    pthread_cond_broadcast(&s->pcv);
    pthread_mutex_unlock(&s->pmu);
    for (unsigned i = 0; i < s->nworkers; i++)
        pthread_join(s->workers[i], NULL);
    s->nworkers = 0;
}

int dr_server_start(const dr_server_config *cfg, const dr_server_provider *p, dr_server **out,
                    icd_error *err)
{
    *out = NULL;
    ICD_TRY(check_config(cfg, p, err));
    ICD_TRY(icd_dynlib_load(&LIBMHD, err));
    const char *listen_text = cfg->listen ? cfg->listen : "127.0.0.1:0";
    struct sockaddr_storage ss;
    unsigned sslen;
    bool loopback;
    ICD_TRY(dr_server_parse_listen(listen_text, &ss, &sslen, &loopback, err));
    if (!loopback && !cfg->allow_remote)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "refusing to listen on %s: not a loopback address; the splits would "
                        "be readable from the network (allow it with --allow-remote, and "
                        "consider basic auth)",
                        listen_text);
    if (sockaddr_is_wildcard(&ss) && !cfg->public_url)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "listening on the wildcard address %s needs a public URL for the "
                        "split URIs (--public-url http://HOST:PORT)",
                        listen_text);

    dr_server *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->pmu, NULL);
    pthread_cond_init(&s->pcv, NULL);
    s->quiesced_fd = -1;
    s->p = *p;
    s->nsplits = p->split_count(p->ctx);
    s->max_streams = cfg->max_streams ? cfg->max_streams : 64;
    s->max_queued = cfg->max_queued ? cfg->max_queued : 4 * s->max_streams;
    s->queue_timeout_s = cfg->queue_timeout_s ? cfg->queue_timeout_s : 60;
    s->header_timeout_s = cfg->header_timeout_s ? cfg->header_timeout_s : 10;
    s->max_conns = cfg->max_connections ? cfg->max_connections : 1000;
    s->stream_budget = cfg->stream_buffer_bytes ? cfg->stream_buffer_bytes : (size_t)1 << 20;
    s->global_budget = cfg->buffer_bytes ? cfg->buffer_bytes : (size_t)64 << 20;
    s->on_error = cfg->on_error;
    s->on_access = cfg->on_access;
    s->log_ctx = cfg->log_ctx;
    if (cfg->auth_user && cfg->auth_user[0]) {
        s->auth_user = strdup(cfg->auth_user);
        s->auth_password = strdup(cfg->auth_password);
        if (!s->auth_user || !s->auth_password) {
            server_free(s);
            return icd_fail_nomem(err);
        }
        s->auth_user_len = strlen(s->auth_user);
        s->auth_password_len = strlen(s->auth_password);
    }
    int fd = -1;
    int rc = bind_listen(listen_text, &ss, sslen, &fd, &s->port, err);
    if (rc < 0) {
        server_free(s);
        return rc;
    }
    s->base_url =
        cfg->public_url ? trimmed_url(cfg->public_url) : derive_base_url(listen_text, s->port);
    if (!s->base_url) {
        close(fd);
        server_free(s);
        return icd_fail_nomem(err);
    }
    unsigned producers = cfg->producers;
    if (!producers) { /* 4 per CPU, at least 8 */
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        producers = cpus > 0 ? (unsigned)(cpus < 1024 ? cpus : 1024) * 4 : 8;
        if (producers < 8) producers = 8;
    }
    if (producers > s->max_streams) producers = s->max_streams;
    s->workers = calloc(producers, sizeof *s->workers);
    if (!s->workers) {
        close(fd);
        server_free(s);
        return icd_fail_nomem(err);
    }
    for (unsigned i = 0; i < producers; i++) {
        if (pthread_create(&s->workers[i], NULL, pool_main, s)) break;
        s->nworkers++;
    }
    if (!s->nworkers || pthread_create(&s->watchdog, NULL, watchdog_main, s) != 0) {
        stop_threads(s);
        close(fd);
        server_free(s);
        return icd_fail(err, ICD_EIO, NULL, -1, "cannot start the split server's threads");
    }
    s->have_watchdog = true;
    unsigned threads = cfg->threads ? cfg->threads : 4;
    unsigned timeout = cfg->idle_timeout_s ? cfg->idle_timeout_s : 60;
    unsigned per_ip = cfg->max_connections_per_ip ? cfg->max_connections_per_ip : 64;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG |
                     MHD_ALLOW_SUSPEND_RESUME;
    /* MHD's own cap sits above ours: an evicted connection closes a moment later */
    unsigned hard_cap = s->max_conns + s->max_conns / 8 + 16 * threads;
    size_t nsrcs = 64; /* at most half full: one entry per address of hard_cap connections */
    while (nsrcs < 2 * (size_t)hard_cap)
        nsrcs *= 2;
    s->srcs = calloc(nsrcs, sizeof *s->srcs);
    if (!s->srcs) {
        stop_threads(s);
        close(fd);
        server_free(s);
        return icd_fail_nomem(err);
    }
    s->srcs_mask = (unsigned)(nsrcs - 1);
    s->daemon = mhd.start_daemon(
        flags, 0, accept_policy, s, access_handler, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, s,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)DR_HTTP_CONN_MEM, MHD_OPTION_CONNECTION_LIMIT, hard_cap,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip, MHD_OPTION_URI_LOG_CALLBACK, uri_logger, s,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s, MHD_OPTION_NOTIFY_COMPLETED,
        request_completed, s, MHD_OPTION_END);
    if (!s->daemon) {
        stop_threads(s);
        close(fd);
        server_free(s);
        return icd_fail(err, ICD_EIO, NULL, -1,
                        "cannot start the HTTP server on %s (libmicrohttpd refused; "
                        "threads=%u)",
                        listen_text, threads);
    }
    *out = s;
    return 0;
}

unsigned dr_server_drain(dr_server *s, unsigned timeout_s)
{
    atomic_store(&s->draining, true);
    if (s->quiesced_fd < 0) {
        MHD_socket lfd = mhd.quiesce_daemon(s->daemon);
        s->quiesced_fd = lfd == MHD_INVALID_SOCKET ? -1 : (int)lfd;
    }
    double end = mono_now() + timeout_s;
    unsigned left;
    while ((left = dr_server_streams_in_flight(s)) > 0 && mono_now() < end) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return left;
}

void dr_server_stop(dr_server *s)
{
    if (!s) return;
    /* No connection may stay suspended into MHD_stop_daemon: mark the stop (nothing
     * suspends from now on), then resume every suspended request; each then ends (503
     * or an aborted body). */
    atomic_store(&s->stopping, true);
    pthread_mutex_lock(&s->mu);
    for (dr_http_req *r = s->all; r; r = r->all_next) {
        pthread_mutex_lock(&r->mu);
        r->cancel = true;
        if (r->suspended) {
            r->suspended = false;
            mhd.resume_connection(r->conn);
        }
        pthread_mutex_unlock(&r->mu);
    }
    pthread_mutex_unlock(&s->mu);
    /* Closes the listening socket and every connection; each request's completion
     * queues the close of its stream on the pool. */
    mhd.stop_daemon(s->daemon);
    if (s->quiesced_fd >= 0) close(s->quiesced_fd);
    stop_threads(s); /* the pool runs the queued closes before it exits */
    server_free(s);
}
