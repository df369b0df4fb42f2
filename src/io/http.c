/*
 * HTTP(S) for FileIO and the REST catalog (see http.h), over libcurl.
 *
 * Every request goes through icd_http_perform: it borrows a curl easy handle from the
 * FileIO's pool (a handle keeps its connections alive, so reusing handles reuses
 * connections), sets timeouts, optional SigV4 signing (curl's CURLOPT_AWS_SIGV4) and a
 * Range header, and retries connection failures, 429 and 5xx with exponential backoff.
 * Response bodies stream into the caller's buffer: a range read writes straight into the
 * read-ahead window, so no data file is ever held whole.
 *
 * Remote files (http://, https://, s3://) are icd_file objects whose read_at serves a
 * read-ahead window. Opening a file fetches its tail ("Range: bytes=-N"): that one request
 * tells the size (Content-Range) and already holds a Parquet footer, or all of a small
 * metadata file or manifest; those bytes are kept while the file is open. Other reads get
 * a window of the full read-ahead when they continue the previous one (sequential
 * readers) and only about what they ask for when they jump (column projection), so a
 * scan of a few columns of a wide file fetches little more than those columns.
 *
 * libcurl is loaded on the first request (base/dynlib.h): a process that reads only local
 * files never loads it and its dependencies.
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/dynlib.h"
#include "icedruid/icedruid.h"
#include "io/aws_creds.h"
#include "io/http.h"
#include "io/s3.h"

#define POOL_MAX 16
#define ERROR_BODY_MAX (64 * 1024)
#define OPEN_TAIL (256 * 1024)
/* Smallest window fetched for a read that jumps away from the current window. */
#define RANDOM_MIN (64 * 1024)
/* SHA-256 of the empty string: the payload hash of a request without a body. */
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

struct icd_remote {
    pthread_mutex_t mu;
    CURL *idle[POOL_MAX];
    size_t nidle;
    icd_http_policy policy;
    icd_s3_config *s3;
    char *ca_file; /* NULL: libcurl's default CA bundle */
    atomic_uint_fast64_t requests;
    atomic_uint_fast64_t bytes; /* response body bytes received, all requests */
};

/* libcurl, loaded on first use: every curl call goes through these pointers. */
static struct {
    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_reset) *easy_reset;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
} curl;

static const icd_dynsym CURL_SYMS[] = {
    ICD_DYNSYM(curl, global_init, curl_global_init),
    ICD_DYNSYM(curl, easy_init, curl_easy_init),
    ICD_DYNSYM(curl, easy_setopt, curl_easy_setopt),
    ICD_DYNSYM(curl, easy_perform, curl_easy_perform),
    ICD_DYNSYM(curl, easy_getinfo, curl_easy_getinfo),
    ICD_DYNSYM(curl, easy_cleanup, curl_easy_cleanup),
    ICD_DYNSYM(curl, easy_reset, curl_easy_reset),
    ICD_DYNSYM(curl, easy_strerror, curl_easy_strerror),
    ICD_DYNSYM(curl, slist_append, curl_slist_append),
    ICD_DYNSYM(curl, slist_free_all, curl_slist_free_all),
};

static icd_dynlib LIBCURL =
    ICD_DYNLIB("libcurl.so.4", "libcurl4", "http(s):// and s3:// locations", CURL_SYMS);

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_init_rc;

static void init_curl(void)
{
    curl_init_rc = (int)curl.global_init(CURL_GLOBAL_DEFAULT);
}

/* Loads libcurl (once) and runs its global initialisation (once). */
static int load_curl(const char *loc, icd_error *err)
{
    int rc = icd_dynlib_load(&LIBCURL, err);
    if (rc) {
        icd_error_set_file(err, loc);
        return rc;
    }
    pthread_once(&curl_once, init_curl);
    if (curl_init_rc != 0)
        return icd_fail(err, ICD_EIO, loc, -1, "cannot initialise libcurl (curl_global_init: %d)",
                        curl_init_rc);
    return 0;
}

icd_remote *icd_remote_new(void)
{
    icd_remote *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    if (pthread_mutex_init(&r->mu, NULL) != 0) {
        free(r);
        return NULL;
    }
    r->policy.max_attempts = 4;
    r->policy.base_delay_ms = 200;
    r->policy.max_delay_ms = 5000;
    r->policy.connect_timeout_ms = 10000;
    r->policy.low_speed_time_s = 30;
    r->policy.total_timeout_s = 0;
    r->policy.readahead = 1024 * 1024;
    r->policy.deadline_base_ms = 30000;
    r->policy.deadline_min_rate = 64 * 1024;
    atomic_init(&r->requests, 0);
    atomic_init(&r->bytes, 0);
    r->s3 = icd_s3_config_new();
    if (!r->s3) {
        pthread_mutex_destroy(&r->mu);
        free(r);
        return NULL;
    }
    return r;
}

void icd_remote_free(icd_remote *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nidle; i++)
        curl.easy_cleanup(r->idle[i]);
    icd_s3_config_free(r->s3);
    free(r->ca_file);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

int icd_remote_set_ca_file(icd_remote *r, const char *path)
{
    char *copy = path && path[0] ? strdup(path) : NULL;
    if (path && path[0] && !copy) return -1;
    free(r->ca_file);
    r->ca_file = copy;
    return 0;
}

icd_s3_config *icd_remote_s3(icd_remote *r)
{
    return r->s3;
}

void icd_http_get_policy(icd_remote *r, icd_http_policy *out)
{
    pthread_mutex_lock(&r->mu);
    *out = r->policy;
    pthread_mutex_unlock(&r->mu);
}

void icd_http_set_policy(icd_remote *r, const icd_http_policy *p)
{
    pthread_mutex_lock(&r->mu);
    r->policy = *p;
    if (r->policy.max_attempts < 1) r->policy.max_attempts = 1;
    if (r->policy.readahead < 4096) r->policy.readahead = 4096;
    pthread_mutex_unlock(&r->mu);
}

uint64_t icd_remote_requests(icd_remote *r)
{
    return (uint64_t)atomic_load(&r->requests);
}

uint64_t icd_remote_bytes(icd_remote *r)
{
    return (uint64_t)atomic_load(&r->bytes);
}

/* libcurl is loaded (load_curl). */
static CURL *take_handle(icd_remote *r)
{
    CURL *h = NULL;
    pthread_mutex_lock(&r->mu);
    if (r->nidle) h = r->idle[--r->nidle];
    pthread_mutex_unlock(&r->mu);
    return h ? h : curl.easy_init();
}

/* Returns a handle to the pool; reset drops options and credentials but keeps the
 * connection cache, which is the point of pooling. */
static void give_handle(icd_remote *r, CURL *h)
{
    curl.easy_reset(h);
    pthread_mutex_lock(&r->mu);
    if (r->nidle < POOL_MAX) {
        r->idle[r->nidle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&r->mu);
    if (h) curl.easy_cleanup(h);
}

void icd_http_resp_free(icd_http_resp *resp)
{
    icd_buf_free(&resp->body);
    memset(resp, 0, sizeof *resp);
}

/* ---- one transfer ---------------------------------------------------------------- */

typedef icd_http_xfer xfer;

static bool prefix_ci(const char *s, size_t n, const char *p)
{
    size_t m = strlen(p);
    return n >= m && strncasecmp(s, p, m) == 0;
}

/* Parses "bytes A-B/N" or "bytes *\/N" (value part of Content-Range). */
static void parse_content_range(const char *v, size_t n, icd_http_resp *resp)
{
    char tmp[128];
    if (n >= sizeof tmp) return;
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    unsigned long long a, b, total;
    if (sscanf(tmp, " bytes %llu-%llu/%llu", &a, &b, &total) == 3) {
        resp->body_start = a;
        resp->total_size = total > INT64_MAX ? -1 : (int64_t)total;
    } else if (sscanf(tmp, " bytes */%llu", &total) == 1) {
        resp->total_size = total > INT64_MAX ? -1 : (int64_t)total;
    }
}

size_t icd_http_on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    if (prefix_ci(data, n, "HTTP/")) { /* a new response (after 100 Continue or a redirect) */
        /* curl's header data is not NUL-terminated: the status digits within the n bytes */
        const char *sp = memchr(data, ' ', n), *end = data + n;
        long status = 0;
        for (const char *c = sp ? sp + 1 : end; c < end && *c >= '0' && *c <= '9' && status < 1000;
             c++)
            status = status * 10 + (*c - '0');
        x->resp->status = status;
        x->resp->content_length = -1;
        x->resp->total_size = -1;
        x->resp->body_start = 0;
        x->resp->etag[0] = '\0';
    } else if (prefix_ci(data, n, "Content-Range:")) {
        parse_content_range(data + 14, n - 14, x->resp);
    } else if (prefix_ci(data, n, "ETag:")) {
        const char *v = data + 5;
        size_t m = n - 5;
        while (m && (*v == ' ' || *v == '\t')) {
            v++;
            m--;
        }
        while (m && (v[m - 1] == '\r' || v[m - 1] == '\n' || v[m - 1] == ' '))
            m--;
        if (m >= sizeof x->resp->etag) m = sizeof x->resp->etag - 1;
        memcpy(x->resp->etag, v, m);
        x->resp->etag[m] = '\0';
    } else if (prefix_ci(data, n, "Content-Length:")) {
        char tmp[32];
        size_t m = n - 15 < sizeof tmp - 1 ? n - 15 : sizeof tmp - 1;
        memcpy(tmp, data + 15, m);
        tmp[m] = '\0';
        char *end;
        long long v = strtoll(tmp, &end, 10);
        if (end != tmp && v >= 0) x->resp->content_length = v;
    }
    return n;
}

static void start_body(xfer *x)
{
    x->started = true;
    long st = x->resp->status;
    x->is_error = st < 200 || st > 299;
    x->pos = st == 206 ? x->resp->body_start : 0;
    const icd_http_req *q = x->req;
    if (q->range_len > 0)
        x->want_off = q->range_off;
    else
        x->want_off = x->pos; /* a suffix or whole-body request takes what comes first */
    x->want_end = x->want_off + q->dest_cap;
}

size_t icd_http_on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    if (!x->started) start_body(x);
    icd_http_resp *resp = x->resp;
    if (x->is_error) { /* keep the start of an error body for the message */
        if (resp->body.len < ERROR_BODY_MAX) {
            size_t room = ERROR_BODY_MAX - resp->body.len;
            icd_buf_append(&resp->body, data, n < room ? n : room);
        }
        return n;
    }
    if (!x->req->dest) {
        if (resp->body.len + n > x->req->max_body) {
            x->overflow = true;
            return 0;
        }
        icd_buf_append(&resp->body, data, n);
        return icd_buf_ok(&resp->body) ? n : 0;
    }
    /* Copy the part of [pos, pos+n) that falls inside [want_off, want_end). A server that
     * ignores Range sends the whole body from offset 0: the bytes before want_off are
     * skipped. */
    uint64_t lo = x->pos > x->want_off ? x->pos : x->want_off;
    uint64_t hi = x->pos + n < x->want_end ? x->pos + n : x->want_end;
    if (lo < hi && lo == x->want_off + resp->dest_len) {
        memcpy((char *)x->req->dest + (lo - x->want_off), data + (lo - x->pos), hi - lo);
        resp->dest_len += (size_t)(hi - lo);
    }
    x->pos += n;
    if (x->pos >= x->want_end) {
        x->done = true;
        if (x->pos > x->want_end) return 0; /* more than wanted: stop the transfer here */
    }
    return n;
}

static bool transient_curl_error(CURLcode c)
{
    switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
        return true;
    default:
        return false;
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Builds the header list of one attempt; NULL on OOM (with *oom set). */
static struct curl_slist *build_headers(const icd_http_req *req, bool *oom)
{
    struct curl_slist *list = NULL, *t;
    char line[160];
#define ADD(s)                                                                                     \
    do {                                                                                           \
        if (!(t = curl.slist_append(list, (s)))) goto fail;                                        \
        list = t;                                                                                  \
    } while (0)
    for (size_t i = 0; req->headers && req->headers[i]; i++)
        ADD(req->headers[i]);
    if (req->range_len > 0) {
        snprintf(line, sizeof line, "Range: bytes=%" PRIu64 "-%" PRIu64, req->range_off,
                 req->range_off + req->range_len - 1);
        ADD(line);
    } else if (req->range_suffix > 0) {
        snprintf(line, sizeof line, "Range: bytes=-%" PRIu64, req->range_suffix);
        ADD(line);
    }
    if (req->sign) {
        /* S3 wants the payload hash in a header, and curl 7.88 signs the value it finds
         * there; our S3 requests never have a body. Other services (Glue's JSON POSTs)
         * need no such header: curl hashes the body itself. */
        if (!req->body) ADD("x-amz-content-sha256: " EMPTY_SHA256);
        if (req->sign->session_token && req->sign->session_token[0]) {
            size_t n = strlen(req->sign->session_token) + 32;
            char *h = malloc(n);
            if (!h) goto fail;
            snprintf(h, n, "x-amz-security-token: %s", req->sign->session_token);
            t = curl.slist_append(list, h);
            free(h);
            if (!t) goto fail;
            list = t;
        }
    }
    /* No "Expect: 100-continue" round trip for our small bodies. Signed requests leave
     * this out: curl 7.88 would sign an "expect" header that it then does not send. */
    if (req->body && !req->sign) ADD("Expect:");
    return list;
#undef ADD
fail:
    curl.slist_free_all(list);
    *oom = true;
    return NULL;
}

/* The deadline of one attempt (ms, 0 = none): a base plus the bytes asked for at the
 * minimum rate, capped by total_timeout_s. */
static long request_deadline_ms(const icd_http_req *req, const icd_http_policy *pol)
{
    long ms = 0;
    if (pol->deadline_base_ms > 0) {
        uint64_t bytes = req->range_len ? req->range_len
                         : req->dest    ? req->dest_cap
                                        : req->max_body;
        uint64_t extra =
            pol->deadline_min_rate > 0 ? bytes * 1000 / (uint64_t)pol->deadline_min_rate : 0;
        if (extra > 24ull * 3600 * 1000) extra = 24ull * 3600 * 1000;
        ms = pol->deadline_base_ms + (long)extra;
    }
    if (pol->total_timeout_s > 0 && (ms == 0 || ms > pol->total_timeout_s * 1000))
        ms = pol->total_timeout_s * 1000;
    return ms;
}

/* A ranged response that stopped before the range and the object ended: a Content-Length
 * shorter than the body (the rest of it stays in the connection and would be read as the
 * next response) or a cut transfer. Retried on a new connection. */
bool icd_http_short_range(const icd_http_req *req, const icd_http_resp *resp)
{
    return req->range_len > 0 && req->dest && resp->status == 206 &&
           resp->dest_len < req->range_len && resp->dest_len < req->dest_cap &&
           resp->total_size >= 0 && (uint64_t)resp->total_size > req->range_off + resp->dest_len;
}

static void set_options(CURL *h, const icd_http_req *req, const icd_http_policy *pol,
                        const char *ca_file, struct curl_slist *headers, xfer *x, char *errbuf,
                        char *sigv4)
{
    curl.easy_setopt(h, CURLOPT_URL, req->url);
    curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(h, CURLOPT_USERAGENT, "icedruid/" ICEDRUID_VERSION);
    curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, pol->connect_timeout_ms);
    curl.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, pol->low_speed_time_s);
    long deadline = request_deadline_ms(req, pol);
    if (deadline > 0) curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, deadline);
    curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(h, CURLOPT_PATH_AS_IS, 1L); /* object keys may hold "./" or "../" */
    curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, icd_http_on_header);
    curl.easy_setopt(h, CURLOPT_HEADERDATA, x);
    curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, icd_http_on_body);
    curl.easy_setopt(h, CURLOPT_WRITEDATA, x);
    if (headers) curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    if (ca_file) curl.easy_setopt(h, CURLOPT_CAINFO, ca_file);
    if (!strcmp(req->method, "HEAD")) {
        curl.easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (!strcmp(req->method, "POST")) {
        curl.easy_setopt(h, CURLOPT_POST, 1L);
        curl.easy_setopt(h, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    } else if (strcmp(req->method, "GET") != 0) {
        if (req->body) { /* PUT with a body: sent like a POST body under the other verb */
            curl.easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
            curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        }
        curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
    }
    if (req->sign) {
        curl.easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4);
        curl.easy_setopt(h, CURLOPT_USERNAME, req->sign->access_key);
        curl.easy_setopt(h, CURLOPT_PASSWORD, req->sign->secret_key);
    } else if (!req->headers) {
        /* Plain file downloads may be redirected (e.g. to a CDN). Authenticated requests
         * are not: their headers must not travel to another host. */
        curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
        curl.easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    }
}

static void reset_resp(icd_http_resp *resp)
{
    icd_buf_clear(&resp->body);
    resp->status = 0;
    resp->dest_len = 0;
    resp->body_start = 0;
    resp->content_length = -1;
    resp->total_size = -1;
}

static int perform(icd_remote *r, const icd_http_req *req, icd_http_resp *resp, icd_error *err);

int icd_http_perform(icd_remote *r, const icd_http_req *req, icd_http_resp *resp, icd_error *err)
{
    if (!req->sign || !req->sign->creds) return perform(r, req, resp, err);
    /* The provider's current keys for this request (refreshed when due). */
    icd_aws_key key;
    int g = icd_aws_creds_get(req->sign->creds, &key, err);
    if (g < 0) {
        memset(resp, 0, sizeof *resp);
        return g;
    }
    icd_sigv4 live = *req->sign;
    live.creds = NULL;
    live.access_key = key.access_key;
    live.secret_key = key.secret_key;
    live.session_token = key.session_token;
    icd_http_req lreq = *req;
    lreq.sign = g ? &live : NULL;
    int rc = perform(r, &lreq, resp, err);
    icd_aws_key_clear(&key);
    return rc;
}

static int perform(icd_remote *r, const icd_http_req *req, icd_http_resp *resp, icd_error *err)
{
    const char *loc = req->location ? req->location : req->url;
    memset(resp, 0, sizeof *resp);
    reset_resp(resp);
    if (req->sign && (!req->sign->access_key || !req->sign->secret_key))
        return icd_fail(err, ICD_EINTERNAL, loc, -1, "signed request without credentials");
    icd_http_policy pol;
    icd_http_get_policy(r, &pol);
    char sigv4[160] = "";
    if (req->sign)
        snprintf(sigv4, sizeof sigv4, "aws:amz:%s:%s", req->sign->region,
                 req->sign->service ? req->sign->service : "s3");
    ICD_TRY(load_curl(loc, err));
    bool oom = false;
    struct curl_slist *headers = build_headers(req, &oom);
    if (oom) return icd_fail_nomem(err);
    CURL *h = take_handle(r);
    if (!h) {
        curl.slist_free_all(headers);
        return icd_fail(err, ICD_EIO, loc, -1, "cannot initialise libcurl");
    }
    int rc = 0;
    long delay = pol.base_delay_ms;
    for (int attempt = 1;; attempt++) {
        char errbuf[CURL_ERROR_SIZE] = "";
        xfer x = {.req = req, .resp = resp};
        reset_resp(resp);
        resp->attempts = attempt;
        set_options(h, req, &pol, r->ca_file, headers, &x, errbuf, sigv4);
        atomic_fetch_add(&r->requests, 1);
        CURLcode c = curl.easy_perform(h);
        curl_off_t got = 0;
        if (curl.easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &got) == CURLE_OK && got > 0)
            atomic_fetch_add(&r->bytes, (uint_fast64_t)got);
        if (c == CURLE_WRITE_ERROR && x.done) c = CURLE_OK; /* we stopped a body we had enough of */
        if (c == CURLE_PARTIAL_FILE && resp->status == 206 && resp->total_size == 0)
            c = CURLE_OK; /* "bytes 0-0/0" with a phantom byte: some servers' empty objects */
        bool last = attempt >= pol.max_attempts;
        if (c == CURLE_OK && icd_http_short_range(req, resp)) {
            /* the connection may hold the rest of the body: never reuse it */
            curl.easy_cleanup(h);
            h = curl.easy_init();
            if (!h) {
                rc = icd_fail(err, ICD_EIO, loc, -1, "cannot initialise libcurl");
                break;
            }
            if (!last) {
                sleep_ms(delay);
                delay = delay * 2 > pol.max_delay_ms ? pol.max_delay_ms : delay * 2;
                continue;
            }
            rc = icd_fail(err, ICD_EIO, loc, (int64_t)(req->range_off + resp->dest_len),
                          "%s request failed after %d attempt%s: the server sent %zu of the %llu "
                          "bytes asked for (Content-Length %lld)",
                          req->method, attempt, attempt == 1 ? "" : "s", resp->dest_len,
                          (unsigned long long)req->range_len, (long long)resp->content_length);
            break;
        }
        if (c == CURLE_OK) {
            if (!icd_buf_ok(&resp->body)) {
                rc = icd_fail_nomem(err);
                break;
            }
            if ((resp->status == 429 || resp->status >= 500) && !last) {
                if (pol.on_retry) {
                    char why[32];
                    snprintf(why, sizeof why, "HTTP %ld", (long)resp->status);
                    pol.on_retry(pol.on_retry_ctx, loc, attempt, pol.max_attempts, delay, why);
                }
                sleep_ms(delay);
                delay = delay * 2 > pol.max_delay_ms ? pol.max_delay_ms : delay * 2;
                curl.easy_reset(h);
                continue;
            }
            rc = 0;
            break;
        }
        if (x.overflow) {
            rc = icd_fail(err, ICD_EUNSUPPORTED, loc, -1,
                          "response is larger than the %zu bytes accepted", req->max_body);
            break;
        }
        /* a failed transfer may leave the connection in any state: a new one next time */
        curl.easy_cleanup(h);
        h = curl.easy_init();
        if (!h) {
            rc = icd_fail(err, ICD_EIO, loc, -1, "cannot initialise libcurl");
            break;
        }
        if ((transient_curl_error(c) || c == CURLE_WEIRD_SERVER_REPLY ||
             c == CURLE_UNSUPPORTED_PROTOCOL) &&
            !last) {
            if (pol.on_retry)
                pol.on_retry(pol.on_retry_ctx, loc, attempt, pol.max_attempts, delay,
                             errbuf[0] ? errbuf : curl.easy_strerror(c));
            sleep_ms(delay);
            delay = delay * 2 > pol.max_delay_ms ? pol.max_delay_ms : delay * 2;
            continue;
        }
        if (c == CURLE_OPERATION_TIMEDOUT)
            rc = icd_fail(err, ICD_EIO, loc, -1,
                          "%s request failed after %d attempt%s: no complete response within "
                          "%.1f s (ICEDRUID_HTTP_TIMEOUT / ICEDRUID_HTTP_MIN_RATE)",
                          req->method, attempt, attempt == 1 ? "" : "s",
                          (double)request_deadline_ms(req, &pol) / 1000.0);
        else
            rc = icd_fail(err, ICD_EIO, loc, -1, "%s request failed after %d attempt%s: %s",
                          req->method, attempt, attempt == 1 ? "" : "s",
                          errbuf[0] ? errbuf : curl.easy_strerror(c));
        break;
    }
    if (h) give_handle(r, h);
    curl.slist_free_all(headers);
    return rc;
}

/* ---- errors ---------------------------------------------------------------------- */

static int decode_entity(const char *p, const char *end, icd_buf *out)
{
    static const struct {
        const char *name;
        char c;
    } ENT[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    for (size_t i = 0; i < sizeof ENT / sizeof ENT[0]; i++) {
        size_t m = strlen(ENT[i].name);
        if ((size_t)(end - p) >= m && !memcmp(p, ENT[i].name, m)) {
            icd_buf_putc(out, ENT[i].c);
            return (int)m;
        }
    }
    if (end - p >= 4 && p[1] == '#') { /* &#NN; or &#xHH; (ASCII only; others kept raw) */
        const char *q = p + 2;
        int base = 10;
        if (*q == 'x') {
            base = 16;
            q++;
        }
        long v = 0;
        const char *s = q;
        while (q < end && q - s < 8 &&
               ((base == 10 && *q >= '0' && *q <= '9') ||
                (base == 16 && strchr("0123456789abcdefABCDEF", *q)))) {
            v = v * base + (*q <= '9' ? *q - '0' : (*q | 0x20) - 'a' + 10);
            q++;
        }
        if (q < end && *q == ';' && q > s && v > 0 && v < 128) {
            icd_buf_putc(out, (char)v);
            return (int)(q + 1 - p);
        }
    }
    icd_buf_putc(out, '&');
    return 1;
}

char *icd_xml_text(const char *xml, size_t len, const char *tag, size_t *from)
{
    char open[80], close[80];
    int no = snprintf(open, sizeof open, "<%s>", tag);
    int nc = snprintf(close, sizeof close, "</%s>", tag);
    if (no <= 0 || nc <= 0 || (size_t)no >= sizeof open || (size_t)nc >= sizeof close) return NULL;
    size_t start = from ? *from : 0;
    if (start > len) return NULL;
    const char *p = memmem(xml + start, len - start, open, (size_t)no);
    if (!p) return NULL;
    p += no;
    const char *end = memmem(p, len - (size_t)(p - xml), close, (size_t)nc);
    if (!end) return NULL;
    icd_buf out = ICD_BUF_INIT;
    icd_buf_puts(&out, "");
    for (const char *q = p; q < end;) {
        if (*q == '&')
            q += decode_entity(q, end, &out);
        else
            icd_buf_putc(&out, *q++);
    }
    if (from) *from = (size_t)(end - xml) + (size_t)nc;
    return icd_buf_detach(&out);
}

/* Copies `s` into `dst` as one line: control characters become spaces, long text is cut. */
static void one_line(char *dst, size_t cap, const char *s)
{
    size_t j = 0;
    for (size_t i = 0; s && s[i] && j + 1 < cap; i++)
        dst[j++] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
    dst[j] = '\0';
}

int icd_http_status_error(const icd_http_req *req, const icd_http_resp *resp, icd_error *err)
{
    const char *loc = req->location ? req->location : req->url;
    int code = resp->status == 404 ? ICD_ENOTFOUND : resp->status == 400 ? ICD_EINVALID : ICD_EIO;
    const char *body = resp->body.data ? resp->body.data : "";
    size_t blen = resp->body.len;
    char *ecode = icd_xml_text(body, blen, "Code", NULL);
    char *emsg = ecode ? icd_xml_text(body, blen, "Message", NULL) : NULL;
    char line[400] = "";
    if (ecode) {
        char c[96], m[300];
        one_line(c, sizeof c, ecode);
        one_line(m, sizeof m, emsg);
        snprintf(line, sizeof line, " %s%s%s", c, m[0] ? ": " : "", m);
    } else if (!strcmp(req->method, "HEAD") && resp->status == 403) {
        snprintf(line, sizeof line, " AccessDenied (check the credentials and region)");
    }
    free(ecode);
    free(emsg);
    const char *what = resp->status == 404 ? " (not found)" : "";
    if (line[0]) what = "";
    return icd_fail(err, code, loc, -1, "HTTP %ld%s%s", resp->status, line, what);
}

void icd_url_encode(icd_buf *b, const char *s, size_t n, bool keep_slash)
{
    static const char HEX[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
            icd_buf_putc(b, (char)c);
        } else {
            icd_buf_putc(b, '%');
            icd_buf_putc(b, HEX[c >> 4]);
            icd_buf_putc(b, HEX[c & 15]);
        }
    }
}

/* ---- remote files ---------------------------------------------------------------- */

typedef struct remote_file {
    icd_file base; /* first: icd_file_close frees the remote_file through it */
    icd_remote *r;
    char *url;
    bool signed_;
    icd_sigv4 sign;
    char *sign_strings[5];
    pthread_mutex_t mu;
    icd_readahead ra;
} remote_file;

static void wipe_free(char *s)
{
    if (s) {
        volatile char *p = s;
        while (*p)
            *p++ = 0;
        free(s);
    }
}

static void remote_free_parts(remote_file *rf)
{
    free(rf->url);
    for (size_t i = 0; i < 5; i++)
        wipe_free(rf->sign_strings[i]);
    free(rf->ra.win);
    free(rf->ra.keep);
}

static void remote_close(icd_file *f)
{
    remote_file *rf = (remote_file *)f;
    remote_free_parts(rf);
    pthread_mutex_destroy(&rf->mu);
}

/* One ranged GET of [off, off+len) into dst. */
static int fetch_range(remote_file *rf, uint64_t off, size_t len, void *dst, size_t *got,
                       icd_error *err)
{
    icd_http_req req = {.method = "GET",
                        .url = rf->url,
                        .location = rf->base.location,
                        .sign = rf->signed_ ? &rf->sign : NULL,
                        .range_off = off,
                        .range_len = len,
                        .dest = dst,
                        .dest_cap = len};
    icd_http_resp resp;
    int rc = icd_http_perform(rf->r, &req, &resp, err);
    if (rc == 0 && resp.status != 200 && resp.status != 206)
        rc = icd_http_status_error(&req, &resp, err);
    if (rc == 0 && resp.dest_len < len && rf->base.size >= off + len)
        rc = icd_fail(err, ICD_EIO, rf->base.location, (int64_t)(off + resp.dest_len),
                      "server sent %zu of the %zu bytes asked for (object changed?)", resp.dest_len,
                      len);
    if (rc) icd_error_set_file(err, rf->base.location);
    *got = resp.dest_len;
    icd_http_resp_free(&resp);
    return rc;
}

static int grow_window(icd_readahead *ra, size_t need, icd_error *err)
{
    if (ra->win_cap >= need) return 0;
    unsigned char *w = realloc(ra->win, need);
    if (!w) return icd_fail_nomem(err);
    ra->win = w;
    ra->win_cap = need;
    return 0;
}

/* Copies [off, off+n) from a buffer holding [boff, boff+blen) when it holds all of it. */
static bool serve_from(const unsigned char *b, uint64_t boff, size_t blen, uint64_t off, void *buf,
                       size_t n)
{
    if (!b || off < boff || off - boff > blen || n > blen - (off - boff)) return false;
    memcpy(buf, b + (off - boff), n);
    return true;
}

int icd_readahead_read(icd_readahead *ra, uint64_t off, void *buf, size_t n, size_t *got,
                       icd_fetch_fn fetch, void *ctx, icd_error *err)
{
    *got = 0;
    if (n == 0) return 0;
    if (serve_from(ra->keep, ra->keep_off, ra->keep_len, off, buf, n) ||
        serve_from(ra->win, ra->win_off, ra->win_len, off, buf, n)) {
        *got = n;
        return 0;
    }
    /* Large reads (a whole column chunk) go straight to the caller's buffer. */
    if (n >= ra->readahead) return fetch(ctx, off, n, buf, got, err);
    /* A new window starting at `off`. A read that continues the current window (a
     * sequential reader) gets the full read-ahead; a jump elsewhere (a column chunk,
     * a blob, a header) gets only what it asked for, at least RANDOM_MIN, so that a
     * projection does not pull in the neighbouring columns. Near the end of the file
     * the window is moved back so that it still holds its length. */
    uint64_t size = ra->size;
    uint64_t win_end = ra->win_off + ra->win_len;
    bool sequential = ra->win_len > 0 && off >= ra->win_off && off <= win_end + RANDOM_MIN;
    size_t want = sequential ? ra->readahead : (n > RANDOM_MIN ? n : RANDOM_MIN);
    if (want > ra->readahead) want = ra->readahead;
    uint64_t start = off;
    if (size - start < want) start = size > want ? size - want : 0;
    size_t len = (size_t)(size - start < want ? size - start : want);
    /* Bytes of the old window at the start of the new one are moved, not fetched
     * again (a reader whose next chunk begins inside the window). */
    size_t have = 0;
    if (ra->win_len && start >= ra->win_off && start < win_end)
        have = (size_t)((win_end < start + len ? win_end : start + len) - start);
    int rc = grow_window(ra, len, err);
    size_t wgot = 0;
    if (rc == 0) {
        if (have) memmove(ra->win, ra->win + (start - ra->win_off), have);
        ra->win_len = 0;
        if (have < len) rc = fetch(ctx, start + have, len - have, ra->win + have, &wgot, err);
        wgot += have;
    }
    if (rc == 0) {
        ra->win_off = start;
        ra->win_len = wgot;
        size_t avail = off - start < wgot ? wgot - (size_t)(off - start) : 0;
        *got = n < avail ? n : avail;
        memcpy(buf, ra->win + (off - start), *got);
    }
    return rc;
}

static int fetch_cb(void *ctx, uint64_t off, size_t len, void *dst, size_t *got, icd_error *err)
{
    return fetch_range(ctx, off, len, dst, got, err);
}

static int remote_read_at(icd_file *f, uint64_t off, void *buf, size_t n, size_t *got,
                          icd_error *err)
{
    remote_file *rf = (remote_file *)f;
    pthread_mutex_lock(&rf->mu);
    rf->ra.size = f->size;
    int rc = icd_readahead_read(&rf->ra, off, buf, n, got, fetch_cb, rf, err);
    pthread_mutex_unlock(&rf->mu);
    return rc;
}

static const icd_file_ops REMOTE_OPS = {remote_read_at, remote_close};

static int copy_sign(remote_file *rf, const icd_sigv4 *s)
{
    const char *src[5] = {s->service, s->region, s->access_key, s->secret_key, s->session_token};
    for (size_t i = 0; i < 5; i++)
        if (src[i] && !(rf->sign_strings[i] = strdup(src[i]))) return -1;
    rf->sign.service = rf->sign_strings[0];
    rf->sign.region = rf->sign_strings[1];
    rf->sign.access_key = rf->sign_strings[2];
    rf->sign.secret_key = rf->sign_strings[3];
    rf->sign.session_token = rf->sign_strings[4];
    rf->sign.creds = s->creds;
    rf->signed_ = true;
    return 0;
}

/* Size of a resource from a HEAD (used when the tail request cannot tell it). */
static int head_size(remote_file *rf, icd_error *err)
{
    icd_http_req req = {.method = "HEAD",
                        .url = rf->url,
                        .location = rf->base.location,
                        .sign = rf->signed_ ? &rf->sign : NULL};
    icd_http_resp resp;
    int rc = icd_http_perform(rf->r, &req, &resp, err);
    if (rc == 0 && resp.status != 200) rc = icd_http_status_error(&req, &resp, err);
    if (rc == 0 && resp.content_length < 0)
        rc = icd_fail(err, ICD_EUNSUPPORTED, rf->base.location, -1,
                      "the server does not tell the size of this file (no Content-Length)");
    if (rc == 0) rf->base.size = (uint64_t)resp.content_length;
    icd_http_resp_free(&resp);
    return rc;
}

int icd_http_tail_answer(const icd_http_resp *resp, size_t tail, uint64_t *size, uint64_t *win_off,
                         size_t *win_len)
{
    *win_off = 0;
    *win_len = 0;
    if (resp->status == 206 && resp->total_size >= 0) {
        *size = (uint64_t)resp->total_size;
        if (resp->body_start > *size || resp->dest_len > *size - resp->body_start) return -1;
        *win_off = resp->body_start;
        *win_len = resp->dest_len;
        return 0;
    }
    if (resp->status == 200) { /* the server ignored Range: the body is the file */
        if (resp->content_length >= 0)
            *size = (uint64_t)resp->content_length;
        else if (resp->dest_len < tail)
            *size = resp->dest_len; /* the whole body fit */
        else {
            *win_len = resp->dest_len; /* checked against the size a HEAD tells */
            return 1;
        }
        *win_len = resp->dest_len <= *size ? resp->dest_len : 0;
        return 0;
    }
    if (resp->status == 416) return 1; /* an empty object has no last bytes */
    return -2;
}

/* The tail request of open: learns the size and fills the window with the last bytes. */
static int open_tail(remote_file *rf, icd_error *err)
{
    size_t tail = OPEN_TAIL < rf->ra.readahead ? OPEN_TAIL : rf->ra.readahead;
    ICD_TRY(grow_window(&rf->ra, tail, err));
    icd_http_req req = {.method = "GET",
                        .url = rf->url,
                        .location = rf->base.location,
                        .sign = rf->signed_ ? &rf->sign : NULL,
                        .range_suffix = tail,
                        .dest = rf->ra.win,
                        .dest_cap = tail};
    icd_http_resp resp;
    int rc = icd_http_perform(rf->r, &req, &resp, err);
    if (rc) {
        icd_http_resp_free(&resp);
        return rc;
    }
    uint64_t size = 0;
    int t = icd_http_tail_answer(&resp, tail, &size, &rf->ra.win_off, &rf->ra.win_len);
    rf->base.size = size;
    if (t == 1) {
        rc = head_size(rf, err);
        if (rc == 0 && rf->ra.win_len > rf->base.size) rf->ra.win_len = 0;
    } else if (t == -1) {
        rc = icd_fail(err, ICD_EIO, rf->base.location, -1,
                      "server sent an inconsistent Content-Range");
    } else if (t == -2) {
        rc = icd_http_status_error(&req, &resp, err);
    }
    icd_http_resp_free(&resp);
    return rc;
}

int icd_remote_file_open(icd_remote *r, const char *location, const char *path, const char *url,
                         const icd_sigv4 *sign, icd_file **out, icd_error *err)
{
    *out = NULL;
    remote_file *rf = calloc(1, sizeof *rf);
    if (!rf) return icd_fail_nomem(err);
    if (pthread_mutex_init(&rf->mu, NULL) != 0) {
        free(rf);
        return icd_fail(err, ICD_EIO, location, -1, "cannot create a mutex");
    }
    icd_http_policy pol;
    icd_http_get_policy(r, &pol);
    rf->r = r;
    rf->ra.readahead = pol.readahead;
    rf->base.ops = &REMOTE_OPS;
    rf->base.fd = -1;
    rf->base.location = strdup(location);
    rf->base.path = strdup(path);
    rf->url = strdup(url);
    int rc = 0;
    if (!rf->base.location || !rf->base.path || !rf->url || (sign && copy_sign(rf, sign)))
        rc = icd_fail_nomem(err);
    if (rc == 0) rc = open_tail(rf, err);
    if (rc == 0) { /* the open window is kept; later reads get windows of their own */
        rf->ra.keep = rf->ra.win;
        rf->ra.keep_off = rf->ra.win_off;
        rf->ra.keep_len = rf->ra.win_len;
        rf->ra.win = NULL;
        rf->ra.win_cap = rf->ra.win_len = 0;
        rf->ra.win_off = 0;
    }
    if (rc) {
        icd_file_close(&rf->base);
        return rc;
    }
    *out = &rf->base;
    return 0;
}

int icd_remote_exists(icd_remote *r, const char *location, const char *url, const icd_sigv4 *sign,
                      icd_error *err)
{
    icd_http_req req = {.method = "HEAD", .url = url, .location = location, .sign = sign};
    icd_http_resp resp;
    int rc = icd_http_perform(r, &req, &resp, err);
    if (rc == 0) {
        if (resp.status >= 200 && resp.status <= 299)
            rc = 1;
        else if (resp.status == 404)
            rc = 0;
        else
            rc = icd_http_status_error(&req, &resp, err);
    }
    icd_http_resp_free(&resp);
    return rc;
}

int icd_http_open(icd_fileio *io, const char *location, const char *path, icd_file **out,
                  icd_error *err)
{
    icd_remote *r = icd_fileio_remote(io);
    if (!r) return icd_fail_nomem(err);
    return icd_remote_file_open(r, location, path, path, NULL, out, err);
}
