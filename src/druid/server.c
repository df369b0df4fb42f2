/*
 * The HTTP split server behind `icedruid serve` (see server.h for the routes).
 *
 * Data flow: Druid's `http` input source GETs /splits/N; the access handler opens the
 * provider's stream for split N and pulls its first chunk (so a failure to start is a
 * clean 500), then hands libmicrohttpd a chunked response whose content reader copies
 * out of a per-request chunk buffer and pulls the next chunk from the provider when it
 * runs dry. Memory per request is one provider chunk plus MHD's connection buffer.
 *
 * Lifetime of a request (dr_http_req): it is referenced by the connection (released by
 * MHD's request-completed notification) and, for streams, by the response (released by
 * the response's free callback). Which of the two comes first depends on how the
 * request ended, so the request is reference-counted and the provider's stream is closed
 * when the last reference goes: at the end of the body, when the client disconnects
 * (MHD notices the failed send and closes the connection), on the idle timeout, or when
 * the server stops. After that no provider call is made for it.
 *
 * The listening socket is bound here rather than by MHD, so a failure to bind reports
 * the system's reason ("Address already in use"), and port 0 works.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/jsonw.h"
#include "druid/server.h"

#define DR_HTTP_REALM "icedruid"
#define DR_HTTP_BLOCK (64 * 1024)     /* MHD's read size per content-reader call */
#define DR_HTTP_CONN_MEM (128 * 1024) /* MHD's per-connection memory pool */

struct dr_server {
    struct MHD_Daemon *daemon;
    dr_server_provider p;
    size_t nsplits;
    uint16_t port;
    char *base_url;
    char *auth_user; /* NULL: no authentication */
    char *auth_password;
    unsigned max_streams;
    atomic_uint streams; /* responses of /splits/N currently alive */
    void (*on_error)(void *log_ctx, const char *line);
    void (*on_access)(void *log_ctx, const dr_server_access *rec);
    void *log_ctx;
};

typedef struct dr_http_req {
    dr_server *srv;
    atomic_int refs;
    char method[16];
    char *path;
    int status;
    uint64_t bytes;
    struct timespec t0;
    bool failed; /* the stream failed after the response started */
    /* /splits/N only */
    size_t split;
    void *stream;
    bool holds_slot;
    bool eof;
    icd_buf chunk;
    size_t off;
} dr_http_req;

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

/* Compares without an early exit, so timing does not reveal how much of a secret matched. */
static bool secret_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < la; i++)
        diff |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
    return diff == 0 && lb == la;
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

/* ---- request lifetime ----------------------------------------------------------- */

static void req_release(dr_http_req *r)
{
    if (atomic_fetch_sub(&r->refs, 1) != 1) return;
    if (r->stream) r->srv->p.split_close(r->stream);
    if (r->holds_slot) atomic_fetch_sub(&r->srv->streams, 1);
    icd_buf_free(&r->chunk);
    free(r->path);
    free(r);
}

static void response_free_cb(void *cls)
{
    req_release(cls);
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    dr_server *s = cls;
    dr_http_req *r = *con_cls;
    if (!r) return;
    *con_cls = NULL;
    if (s->on_access) {
        dr_server_access rec = {
            .method = r->method,
            .path = r->path ? r->path : "",
            .status = r->status,
            .bytes = r->bytes,
            .seconds = seconds_since(&r->t0),
            .completed = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && !r->failed,
        };
        s->on_access(s->log_ctx, &rec);
    }
    req_release(r);
}

/* ---- responses ------------------------------------------------------------------ */

static enum MHD_Result queue_bytes(struct MHD_Connection *c, dr_http_req *r, int status,
                                   const char *type, const char *body, size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ok;
    if (status == MHD_HTTP_UNAUTHORIZED) {
        ok = MHD_queue_basic_auth_fail_response(c, DR_HTTP_REALM, resp);
    } else {
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
        ok = MHD_queue_response(c, (unsigned)status, resp);
    }
    MHD_destroy_response(resp);
    r->status = status;
    r->bytes = len;
    return ok;
}

static enum MHD_Result queue_json(struct MHD_Connection *c, dr_http_req *r, int status,
                                  icd_buf *body)
{
    icd_buf_putc(body, '\n');
    if (!icd_buf_ok(body)) {
        icd_buf_free(body);
        return MHD_NO;
    }
    enum MHD_Result ok =
        queue_bytes(c, r, status, "application/json", body->data ? body->data : "", body->len);
    icd_buf_free(body);
    return ok;
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

static enum MHD_Result queue_icd_error(struct MHD_Connection *c, dr_http_req *r, int status,
                                       const icd_error *err)
{
    char msg[2200];
    icd_error_format(err, msg, sizeof msg);
    return queue_error(c, r, status, msg);
}

/* ---- routes --------------------------------------------------------------------- */

static enum MHD_Result route_health(struct MHD_Connection *c, dr_http_req *r)
{
    icd_buf b = ICD_BUF_INIT;
    icd_buf_printf(&b, "{\"status\":\"ok\",\"splits\":%zu}", r->srv->nsplits);
    return queue_json(c, r, MHD_HTTP_OK, &b);
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
        srv_log(r->srv, "GET /spec failed: %s", err.message);
        return queue_icd_error(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, &err);
    }
    return queue_json(c, r, MHD_HTTP_OK, &b);
}

/* "/splits/N" with N a decimal split number; false for anything else. */
static bool parse_split_path(const char *path, size_t *n)
{
    static const char prefix[] = "/splits/";
    if (strncmp(path, prefix, sizeof prefix - 1) != 0) return false;
    const char *p = path + sizeof prefix - 1;
    if (!*p) return false;
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

/* Pulls provider chunks until one is non-empty or the split ends. */
static int stream_fill(dr_http_req *r, icd_error *err)
{
    while (r->off == r->chunk.len && !r->eof) {
        icd_buf_clear(&r->chunk);
        r->off = 0;
        int rc = r->srv->p.split_next(r->stream, &r->chunk, &r->eof, err);
        if (rc == 0 && !icd_buf_ok(&r->chunk)) rc = icd_fail_nomem(err);
        if (rc < 0) return rc;
    }
    return 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    dr_http_req *r = cls;
    icd_error err;
    icd_error_clear(&err);
    if (stream_fill(r, &err) < 0) {
        char msg[2200];
        icd_error_format(&err, msg, sizeof msg);
        srv_log(r->srv, "GET %s failed after %" PRIu64 " bytes, response aborted: %s", r->path,
                r->bytes, msg);
        r->failed = true;
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t avail = r->chunk.len - r->off;
    if (avail == 0) return MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = avail < max ? avail : max;
    memcpy(buf, r->chunk.data + r->off, n);
    r->off += n;
    r->bytes += n;
    return (ssize_t)n;
}

/* HEAD /splits/N: the headers of the stream, no body, the split is not opened. */
static ssize_t empty_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result route_split(struct MHD_Connection *c, dr_http_req *r, size_t n, bool head)
{
    dr_server *s = r->srv;
    struct MHD_Response *resp;
    if (head) {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, DR_HTTP_BLOCK, empty_read, NULL,
                                                 NULL);
        if (!resp) return MHD_NO;
    } else {
        unsigned busy = atomic_fetch_add(&s->streams, 1);
        r->holds_slot = true;
        if (busy >= s->max_streams)
            return queue_error(c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
                               "too many splits are being streamed; retry later");
        icd_error err;
        icd_error_clear(&err);
        r->split = n;
        int rc = s->p.split_open(s->p.ctx, n, &r->stream, &err);
        if (rc == 0) rc = stream_fill(r, &err); /* a failure to start is still a clean 500 */
        if (rc < 0) {
            char msg[2200];
            icd_error_format(&err, msg, sizeof msg);
            srv_log(s, "GET %s failed: %s", r->path, msg);
            return queue_icd_error(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, &err);
        }
        /* The response now holds a reference too (released by response_free_cb). */
        atomic_fetch_add(&r->refs, 1);
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, DR_HTTP_BLOCK, stream_read, r,
                                                 response_free_cb);
        if (!resp) {
            req_release(r);
            return MHD_NO;
        }
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-ndjson");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    r->status = MHD_HTTP_OK;
    return ok;
}

static bool authorized(dr_server *s, struct MHD_Connection *c)
{
    if (!s->auth_user) return true;
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(c, &pass);
    bool ok =
        user && pass && secret_equal(user, s->auth_user) && secret_equal(pass, s->auth_password);
    if (user) MHD_free(user);
    if (pass) MHD_free(pass);
    return ok;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
    dr_server *s = cls;
    if (*con_cls) {
        /* A request body arriving after the response was chosen: ignore it. */
        *upload_data_size = 0;
        return MHD_YES;
    }
    dr_http_req *r = calloc(1, sizeof *r);
    if (!r) return MHD_NO;
    r->srv = s;
    atomic_init(&r->refs, 1);
    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    snprintf(r->method, sizeof r->method, "%s", method);
    r->path = strdup(url);
    *con_cls = r;
    if (!r->path) return MHD_NO;

    if (!authorized(s, c))
        return queue_error(c, r, MHD_HTTP_UNAUTHORIZED, "authentication required");
    bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
    if (!head && strcmp(method, MHD_HTTP_METHOD_GET) != 0)
        return queue_error(c, r, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are allowed");

    size_t n;
    if (!strcmp(url, "/health")) return route_health(c, r);
    if (!strcmp(url, "/splits")) return route_splits(c, r);
    if (!strcmp(url, "/spec")) return route_spec(c, r);
    if (parse_split_path(url, &n) && n < s->nsplits) {
        /* An HTTP/1.0 body without a length ends by closing the connection, which also
         * is how a failed stream ends: the client could take a cut split for a whole
         * one. Chunked encoding (HTTP/1.1) tells the two apart. */
        if (!strcmp(version, MHD_HTTP_VERSION_1_0))
            return queue_error(c, r, MHD_HTTP_HTTP_VERSION_NOT_SUPPORTED,
                               "splits are served over HTTP/1.1 only (chunked encoding "
                               "lets a client tell a failed stream from a complete one)");
        return route_split(c, r, n, head);
    }
    return queue_error(c, r, MHD_HTTP_NOT_FOUND, "no such resource");
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
    if (bind(fd, (const struct sockaddr *)ss, sslen) != 0 || listen(fd, 256) != 0) {
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
    free(s);
}

static int check_config(const dr_server_config *cfg, const dr_server_provider *p, icd_error *err)
{
    if (!p || !p->split_count || !p->write_spec || !p->split_open || !p->split_next ||
        !p->split_close)
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
    return 0;
}

int dr_server_start(const dr_server_config *cfg, const dr_server_provider *p, dr_server **out,
                    icd_error *err)
{
    *out = NULL;
    ICD_TRY(check_config(cfg, p, err));
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
    s->p = *p;
    s->nsplits = p->split_count(p->ctx);
    s->max_streams = cfg->max_streams ? cfg->max_streams : 64;
    atomic_init(&s->streams, 0);
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
    unsigned threads = cfg->threads ? cfg->threads : 4;
    unsigned timeout = cfg->idle_timeout_s ? cfg->idle_timeout_s : 300;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
    s->daemon =
        MHD_start_daemon(flags, 0, NULL, NULL, access_handler, s, MHD_OPTION_EXTERNAL_LOGGER,
                         mhd_logger, s, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                         MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_TIMEOUT,
                         timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)DR_HTTP_CONN_MEM,
                         MHD_OPTION_NOTIFY_COMPLETED, request_completed, s, MHD_OPTION_END);
    if (!s->daemon) {
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

void dr_server_stop(dr_server *s)
{
    if (!s) return;
    /* Closes the listening socket and every connection; each open stream's response is
     * destroyed, which closes the provider's stream. */
    MHD_stop_daemon(s->daemon);
    server_free(s);
}
