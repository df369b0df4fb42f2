/*
 * HTTP(S) over libcurl for FileIO and the REST catalog: one request helper with retries
 * and timeouts, a pool of reusable curl handles per FileIO (so connections are kept alive),
 * and the remote-file backend behind icd_file_open for http://, https:// and (through
 * s3.c) s3:// locations. Nothing here prints; every failure is one icd_error line naming
 * the location, the HTTP status and the server's error code, never a credential.
 */
#ifndef ICD_IO_HTTP_H
#define ICD_IO_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "io/fileio.h"

/* The remote state of one icd_fileio: curl handle pool, retry/timeout policy and the S3
 * settings (s3.c). Created with the FileIO; thread-safe. */
typedef struct icd_remote icd_remote;

icd_remote *icd_remote_new(void);
void icd_remote_free(icd_remote *r);
/* The CA bundle TLS peers are verified against (NULL or "": libcurl's default). The
 * library reads no environment: icd_fileio_set_environment takes it from SSL_CERT_FILE,
 * else CURL_CA_BUNDLE, of the snapshot it is given. Set before the first request. 0, or
 * -1 out of memory. */
int icd_remote_set_ca_file(icd_remote *r, const char *path);
/* The remote state of a FileIO (defined in fileio.c). */
icd_remote *icd_fileio_remote(icd_fileio *io);

/* Retries and timeouts. Retried: connection errors, timeouts, HTTP 429 and 5xx; the delay
 * starts at base_delay_ms and doubles (capped at max_delay_ms) up to max_attempts tries. */
typedef struct icd_http_policy {
    int max_attempts;
    long base_delay_ms;
    long max_delay_ms;
    long connect_timeout_ms;
    long low_speed_time_s; /* abort a transfer slower than 1 byte/s for this long */
    long total_timeout_s;  /* 0: no limit on a whole request */
    size_t readahead;      /* read-ahead window of remote files, bytes */
    /* Deadline of one attempt of a request: deadline_base_ms plus the bytes asked for at
     * deadline_min_rate bytes/s (a trickling server cannot keep a read alive for ever).
     * Defaults: 30 s and 64 KiB/s (the library reads no environment: the CLI sets them
     * from ICEDRUID_HTTP_TIMEOUT=SECONDS and ICEDRUID_HTTP_MIN_RATE=BYTES_PER_SECOND,
     * programs with icd_storage_set_http_deadline). deadline_base_ms <= 0: no deadline. */
    long deadline_base_ms;
    long deadline_min_rate;
    /* Called before each retry (from the thread doing the request; may be NULL): the
     * request's location (no secrets), the attempt that failed, the attempts allowed, the
     * delay before the next one and why it failed. The CLI prints a line on stderr. */
    void (*on_retry)(void *ctx, const char *location, int attempt, int max_attempts, long delay_ms,
                     const char *reason);
    void *on_retry_ctx;
} icd_http_policy;

void icd_http_get_policy(icd_remote *r, icd_http_policy *out);
void icd_http_set_policy(icd_remote *r, const icd_http_policy *p);

typedef struct icd_aws_creds icd_aws_creds;

/* AWS Signature V4 (curl's CURLOPT_AWS_SIGV4). With `creds` set the keys come from that
 * provider (aws_creds.h), asked before each request so that refreshed temporary
 * credentials are used; the key fields are then ignored, and a provider without a source
 * sends the request unsigned. */
typedef struct icd_sigv4 {
    const char *service; /* "s3" */
    const char *region;
    const char *access_key;
    const char *secret_key;
    const char *session_token; /* sent as x-amz-security-token; may be NULL */
    icd_aws_creds *creds;      /* NULL: the keys above */
} icd_sigv4;

typedef struct icd_http_req {
    const char *method;         /* "GET", "HEAD", "POST", "PUT", "DELETE" */
    const char *url;            /* fully encoded */
    const char *location;       /* names the request in errors (no secrets) */
    const char *const *headers; /* "Name: value" strings, NULL-terminated; may be NULL */
    const void *body;           /* POST / PUT body */
    size_t body_len;
    const icd_sigv4 *sign; /* NULL: unsigned */
    /* A byte range: range_len > 0 asks for [range_off, range_off+range_len);
     * range_suffix > 0 asks for the last range_suffix bytes ("bytes=-N"). */
    uint64_t range_off;
    uint64_t range_len;
    uint64_t range_suffix;
    /* Where a successful (2xx) body goes: `dest` (at most dest_cap bytes, the rest of the
     * transfer is dropped) or, when dest is NULL, resp->body up to max_body bytes (more is
     * an error). Error bodies always go to resp->body (first 64 KiB). */
    void *dest;
    size_t dest_cap;
    size_t max_body;
} icd_http_req;

typedef struct icd_http_resp {
    long status;
    icd_buf body;           /* error body, or the body when req->dest is NULL */
    size_t dest_len;        /* bytes written to req->dest */
    uint64_t body_start;    /* offset in the resource of the first body byte (Content-Range) */
    int64_t content_length; /* -1 when not sent */
    int64_t total_size;     /* from Content-Range "bytes a-b/N" or "bytes * /N"; -1 unknown */
    int attempts;           /* tries this request took */
    char etag[128];         /* the ETag response header ("" when not sent) */
} icd_http_resp;

void icd_http_resp_free(icd_http_resp *resp);

/* Performs the request with retries. Returns 0 once a final HTTP status is known (any
 * status: the caller judges it; 429/5xx only after the retries are spent) and ICD_EIO for
 * a transport failure that outlived the retries. */
int icd_http_perform(icd_remote *r, const icd_http_req *req, icd_http_resp *resp, icd_error *err);

/* Fills `err` for an unexpected status: "LOCATION: HTTP 403 SignatureDoesNotMatch: msg".
 * The S3 XML <Code>/<Message> or the REST ErrorModel is used when the body has one. The
 * code is ICD_ENOTFOUND for 404, ICD_EINVALID for 400, ICD_EIO otherwise. */
int icd_http_status_error(const icd_http_req *req, const icd_http_resp *resp, icd_error *err);

/* The text of the first <tag>...</tag> in an XML body, entities decoded (malloc'd), or
 * NULL. `from` is advanced past the element when non-NULL. */
char *icd_xml_text(const char *xml, size_t len, const char *tag, size_t *from);

/* Appends `s` percent-encoded (RFC 3986 unreserved kept; '/' kept when keep_slash). */
void icd_url_encode(icd_buf *b, const char *s, size_t n, bool keep_slash);

/* Remote files: open learns the size with one ranged GET of the tail (which also fills the
 * read-ahead window, so a footer or a small file costs one request), read_at serves from a
 * read-ahead window or fetches a new one with one ranged GET. `url` is the encoded URL;
 * `sign` is copied. */
int icd_remote_file_open(icd_remote *r, const char *location, const char *path, const char *url,
                         const icd_sigv4 *sign, icd_file **out, icd_error *err);

/* HEAD: 1 when the resource exists, 0 when the server says 404, negative on other errors. */
int icd_remote_exists(icd_remote *r, const char *location, const char *url, const icd_sigv4 *sign,
                      icd_error *err);

/* The http(s) backend for icd_file_open. */
int icd_http_open(icd_fileio *io, const char *location, const char *path, icd_file **out,
                  icd_error *err);

/* ---- internal, exposed for fuzzing: the response handling without a socket ---------- */

/* The state of one transfer, given to libcurl's header and write callbacks. */
typedef struct icd_http_xfer {
    const icd_http_req *req;
    icd_http_resp *resp;
    bool started;  /* first body byte seen */
    bool is_error; /* non-2xx status */
    bool overflow; /* buffered body exceeded max_body */
    bool done;     /* dest is full; the rest of the body was dropped on purpose */
    uint64_t pos;  /* resource offset of the next body byte */
    uint64_t want_off, want_end;
} icd_http_xfer;

/* CURLOPT_HEADERFUNCTION: the status line, Content-Range, Content-Length and ETag. */
size_t icd_http_on_header(char *data, size_t size, size_t nmemb, void *ud);
/* CURLOPT_WRITEFUNCTION: error bodies, buffered bodies, and ranged bodies placed into
 * req->dest by their offset in the resource. Returns less than given to stop. */
size_t icd_http_on_body(char *data, size_t size, size_t nmemb, void *ud);
/* A ranged answer that ended before the range and the object did (retried). */
bool icd_http_short_range(const icd_http_req *req, const icd_http_resp *resp);
/* What the tail answer of a remote file's open tells (`tail` bytes were asked for): 0 with
 * the size and the window [win_off, win_off + win_len) it holds; 1 when a HEAD must tell
 * the size (*win_len is then checked against it); -1 for an inconsistent Content-Range;
 * -2 for a status that is an error. */
int icd_http_tail_answer(const icd_http_resp *resp, size_t tail, uint64_t *size, uint64_t *win_off,
                         size_t *win_len);

/* The read-ahead of a remote file: what its open kept, the current window, and the
 * policy. `fetch` is one ranged GET of [off, off + len) into dst. */
typedef int (*icd_fetch_fn)(void *ctx, uint64_t off, size_t len, void *dst, size_t *got,
                            icd_error *err);
typedef struct icd_readahead {
    uint64_t size;      /* of the file */
    size_t readahead;   /* full window, bytes */
    unsigned char *win; /* bytes [win_off, win_off + win_len) */
    size_t win_cap;
    uint64_t win_off;
    size_t win_len;
    /* What the open request brought (the file's tail, or its head when the server ignored
     * Range), kept for the file's life: a Parquet reader reads the head magic after the
     * footer, and that must not cost the footer a second fetch. */
    unsigned char *keep;
    uint64_t keep_off;
    size_t keep_len;
} icd_readahead;

/* One read of [off, off + n) (within the file): from what is held, else with one fetch
 * (a new window, or straight into buf for a read of the read-ahead size or more). *got
 * is less than n only when a fetch brought less. */
int icd_readahead_read(icd_readahead *ra, uint64_t off, void *buf, size_t n, size_t *got,
                       icd_fetch_fn fetch, void *ctx, icd_error *err);

/* Statistics (tests and --stats): requests sent, including retries, and the response
 * body bytes they brought (what a ranged read costs in transfer). */
uint64_t icd_remote_requests(icd_remote *r);
uint64_t icd_remote_bytes(icd_remote *r);

#endif
