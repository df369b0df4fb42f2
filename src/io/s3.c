/*
 * S3 for FileIO (see s3.h): settings (environment, options, Iceberg properties), the
 * bucket/key → URL mapping (virtual-hosted or path-style, AWS or an endpoint override),
 * and the three operations the layers above need: open an object for ranged reads
 * (http.c's remote file with SigV4 signing), list a "directory" (ListObjectsV2 with a
 * prefix and "/" delimiter, following continuation tokens) and test existence (HEAD).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/array.h"
#include "io/aws_creds.h"
#include "io/s3.h"

struct icd_s3_config {
    icd_aws_creds *chain; /* the default credential chain, when an environment was given */
    char *access_key;
    char *secret_key;
    char *session_token;
    char *region;
    char *endpoint; /* normalised: scheme://host[:port][/path], no trailing '/' */
    int path_style; /* -1 auto */
    /* Fault injection for tests (ICEDRUID_TEST_S3_FAIL_AT_PART of the environment given to
     * icd_fileio_set_environment): a multipart upload fails at this part; 0: never. */
    long test_fail_at_part;
};

/* Keys of a single list page; S3's own default. */
#define LIST_PAGE_MAX (8 * 1024 * 1024)

static void wipe_free(char *s)
{
    if (s) {
        volatile char *p = s;
        while (*p)
            *p++ = 0;
        free(s);
    }
}

/* "host" -> "https://host"; drops trailing slashes (malloc'd). */
static char *normalise_endpoint(const char *e)
{
    size_t n = strlen(e);
    while (n > 0 && e[n - 1] == '/')
        n--;
    bool has_scheme = strstr(e, "://") != NULL;
    char *p = malloc(n + 9);
    if (!p) return NULL;
    size_t k = 0;
    if (!has_scheme) {
        memcpy(p, "https://", 8);
        k = 8;
    }
    memcpy(p + k, e, n);
    p[k + n] = '\0';
    return p;
}

static bool parse_bool(const char *v, int *out)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes")) {
        *out = 1;
        return true;
    }
    if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no")) {
        *out = 0;
        return true;
    }
    return false;
}

icd_s3_config *icd_s3_config_new(void)
{
    icd_s3_config *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->path_style = -1;
    if (!(c->region = strdup("us-east-1"))) {
        free(c);
        return NULL;
    }
    return c;
}

int icd_fileio_set_environment(icd_fileio *io, const char *const *envp, icd_error *err)
{
    icd_remote *r = icd_fileio_remote(io);
    if (!r) return icd_fail_nomem(err);
    icd_s3_config *c = icd_remote_s3(r);
    icd_aws_creds *chain;
    ICD_TRY(icd_aws_creds_new(envp, &chain, err));
    icd_aws_creds_free(c->chain);
    c->chain = chain;
    icd_s3_options o = {.path_style = -1};
    o.region = icd_aws_creds_region(chain);
    o.endpoint = icd_aws_creds_env(chain, "AWS_ENDPOINT_URL_S3");
    if (!o.endpoint) o.endpoint = icd_aws_creds_env(chain, "AWS_ENDPOINT_URL");
    const char *ca = icd_aws_creds_env(chain, "SSL_CERT_FILE");
    if (!ca || !ca[0]) ca = icd_aws_creds_env(chain, "CURL_CA_BUNDLE");
    if (icd_remote_set_ca_file(r, ca)) return icd_fail_nomem(err);
    const char *fail_at = icd_aws_creds_env(chain, "ICEDRUID_TEST_S3_FAIL_AT_PART");
    c->test_fail_at_part = fail_at ? strtol(fail_at, NULL, 10) : 0;
    const char *ps = icd_aws_creds_env(chain, "ICEDRUID_S3_PATH_STYLE");
    if (ps && !parse_bool(ps, &o.path_style))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "ICEDRUID_S3_PATH_STYLE must be true or false, got '%s'", ps);
    return icd_fileio_set_s3(io, &o, err);
}

icd_aws_creds *icd_fileio_aws_creds(icd_fileio *io)
{
    icd_remote *r = icd_fileio_remote(io);
    return r ? icd_remote_s3(r)->chain : NULL;
}

void icd_s3_config_free(icd_s3_config *c)
{
    if (!c) return;
    wipe_free(c->access_key);
    wipe_free(c->secret_key);
    wipe_free(c->session_token);
    icd_aws_creds_free(c->chain);
    free(c->region);
    free(c->endpoint);
    free(c);
}

/* Replaces *slot with a copy of v ("" clears when allow_clear). */
static int set_str(char **slot, const char *v, bool secret, icd_error *err)
{
    char *copy = NULL;
    if (v[0] && !(copy = strdup(v))) return icd_fail_nomem(err);
    if (secret)
        wipe_free(*slot);
    else
        free(*slot);
    *slot = copy;
    return 0;
}

int icd_fileio_set_s3(icd_fileio *io, const icd_s3_options *o, icd_error *err)
{
    icd_remote *r = icd_fileio_remote(io);
    if (!r) return icd_fail_nomem(err);
    icd_s3_config *c = icd_remote_s3(r);
    if (o->access_key_id) ICD_TRY(set_str(&c->access_key, o->access_key_id, true, err));
    if (o->secret_access_key) ICD_TRY(set_str(&c->secret_key, o->secret_access_key, true, err));
    if (o->session_token) ICD_TRY(set_str(&c->session_token, o->session_token, true, err));
    if (o->region) {
        if (!o->region[0]) return icd_fail(err, ICD_EINVALID, NULL, -1, "S3 region is empty");
        ICD_TRY(set_str(&c->region, o->region, false, err));
    }
    if (o->endpoint) {
        char *e = o->endpoint[0] ? normalise_endpoint(o->endpoint) : NULL;
        if (o->endpoint[0] && !e) return icd_fail_nomem(err);
        free(c->endpoint);
        c->endpoint = e;
    }
    if (o->path_style >= 0) c->path_style = o->path_style ? 1 : 0;
    return 0;
}

int icd_fileio_set_s3_property(icd_fileio *io, const char *key, const char *value, icd_error *err)
{
    icd_s3_options o = {.path_style = -1};
    if (!strcmp(key, "s3.access-key-id"))
        o.access_key_id = value;
    else if (!strcmp(key, "s3.secret-access-key"))
        o.secret_access_key = value;
    else if (!strcmp(key, "s3.session-token"))
        o.session_token = value;
    else if (!strcmp(key, "s3.endpoint"))
        o.endpoint = value;
    else if (!strcmp(key, "client.region") || !strcmp(key, "s3.region"))
        o.region = value;
    else if (!strcmp(key, "s3.path-style-access")) {
        if (!parse_bool(value, &o.path_style))
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "s3.path-style-access must be true or false, got '%s'", value);
    } else
        return 0;
    ICD_TRY(icd_fileio_set_s3(io, &o, err));
    return 1;
}

bool icd_s3_is_location(const char *path)
{
    return !strncmp(path, "s3://", 5) || !strncmp(path, "s3a://", 6) || !strncmp(path, "s3n://", 6);
}

int icd_s3_split(const char *location, const char *path, char **bucket, char **key, icd_error *err)
{
    *bucket = *key = NULL;
    const char *p = strstr(path, "://");
    if (!p || !icd_s3_is_location(path))
        return icd_fail(err, ICD_EINVALID, location, -1, "not an s3:// location");
    p += 3;
    const char *slash = strchr(p, '/');
    size_t bn = slash ? (size_t)(slash - p) : strlen(p);
    if (bn == 0)
        return icd_fail(err, ICD_EINVALID, location, -1, "s3 location without a bucket name");
    *bucket = strndup(p, bn);
    *key = strdup(slash ? slash + 1 : "");
    if (!*bucket || !*key) {
        free(*bucket);
        free(*key);
        *bucket = *key = NULL;
        return icd_fail_nomem(err);
    }
    return 0;
}

/* Host part of "scheme://host[:port][/path]" as [start, end). */
static void endpoint_host(const char *ep, const char **hs, const char **he)
{
    const char *h = strstr(ep, "://");
    h = h ? h + 3 : ep;
    const char *e = h;
    if (*e == '[') { /* IPv6 literal */
        while (*e && *e != ']')
            e++;
        if (*e) e++;
    } else {
        while (*e && *e != ':' && *e != '/')
            e++;
    }
    *hs = h;
    *he = e;
}

static bool host_is_ip_or_localhost(const char *hs, const char *he)
{
    size_t n = (size_t)(he - hs);
    if (n && hs[0] == '[') return true;
    if (n == 9 && !strncasecmp(hs, "localhost", 9)) return true;
    for (const char *p = hs; p < he; p++)
        if (!isdigit((unsigned char)*p) && *p != '.') return false;
    return n > 0;
}

/* Bucket names usable as a DNS label in a virtual-hosted URL (and, over https, matching
 * the wildcard certificate: no dots). */
static bool bucket_is_dns_safe(const char *b)
{
    size_t n = strlen(b);
    if (n < 3 || n > 63) return false;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)b[i]) || isdigit((unsigned char)b[i]) || b[i] == '-'))
            return false;
    return b[0] != '-' && b[n - 1] != '-';
}

int icd_s3_url(const icd_s3_config *c, const char *bucket, const char *key, const char *query,
               char **out, icd_error *err)
{
    *out = NULL;
    icd_buf u = ICD_BUF_INIT;
    int ps = c->path_style;
    const char *hs = NULL, *he = NULL;
    if (c->endpoint) endpoint_host(c->endpoint, &hs, &he);
    if (ps < 0)
        ps = (c->endpoint && host_is_ip_or_localhost(hs, he)) || !bucket_is_dns_safe(bucket);
    if (c->endpoint && ps) {
        icd_buf_puts(&u, c->endpoint);
        icd_buf_putc(&u, '/');
        icd_url_encode(&u, bucket, strlen(bucket), false);
    } else if (c->endpoint) {
        icd_buf_append(&u, c->endpoint, (size_t)(hs - c->endpoint)); /* scheme:// */
        icd_url_encode(&u, bucket, strlen(bucket), false);
        icd_buf_putc(&u, '.');
        icd_buf_puts(&u, hs);
    } else if (ps) {
        icd_buf_printf(&u, "https://s3.%s.amazonaws.com/", c->region);
        icd_url_encode(&u, bucket, strlen(bucket), false);
    } else {
        icd_buf_printf(&u, "https://%s.s3.%s.amazonaws.com", bucket, c->region);
    }
    if (key) {
        icd_buf_putc(&u, '/');
        icd_url_encode(&u, key, strlen(key), true);
    } else if (!ps) {
        icd_buf_putc(&u, '/'); /* the bucket itself, virtual-hosted: path "/" */
    }
    if (query && query[0]) {
        icd_buf_putc(&u, '?');
        icd_buf_puts(&u, query);
    }
    if (!icd_buf_ok(&u)) {
        icd_buf_free(&u);
        return icd_fail_nomem(err);
    }
    *out = icd_buf_detach(&u);
    return 0;
}

/* The signing parameters of `c`: static keys (catalog properties or options) first, else
 * the credential chain; NULL when neither has credentials (anonymous requests). */
static const icd_sigv4 *signing(const icd_s3_config *c, icd_sigv4 *s, const char *location,
                                icd_error *err, int *rc)
{
    *rc = 0;
    memset(s, 0, sizeof *s);
    s->service = "s3";
    s->region = c->region;
    if (!c->access_key && !c->secret_key) {
        if (!c->chain) return NULL;
        icd_aws_key k;
        int g = icd_aws_creds_get(c->chain, &k, err);
        icd_aws_key_clear(&k);
        if (g < 0) {
            *rc = g;
            if (location) icd_error_set_file(err, location);
        }
        if (g <= 0) return NULL;
        s->creds = c->chain;
        return s;
    }
    if (!c->access_key || !c->secret_key) {
        *rc = icd_fail(err, ICD_EINVALID, location, -1,
                       "S3 credentials are incomplete: an access key id needs its secret access "
                       "key and the other way round");
        return NULL;
    }
    s->access_key = c->access_key;
    s->secret_key = c->secret_key;
    s->session_token = c->session_token;
    return s;
}

int icd_fileio_aws_signing(icd_fileio *io, const char *service, icd_sigv4 *out, icd_error *err)
{
    icd_remote *r = icd_fileio_remote(io);
    if (!r) return icd_fail_nomem(err);
    int rc;
    const icd_sigv4 *s = signing(icd_remote_s3(r), out, NULL, err, &rc);
    if (rc) return rc;
    if (!s) return 0;
    out->service = service;
    return 1;
}

const char *icd_fileio_aws_region(icd_fileio *io)
{
    icd_remote *r = icd_fileio_remote(io);
    return r ? icd_remote_s3(r)->region : "us-east-1";
}

/* Adds a hint to an S3 error when requests were unsigned or denied. */
static int s3_hint(const icd_s3_config *c, int rc, icd_error *err)
{
    if (rc < 0 && err && strstr(err->message, "HTTP 403") && !c->access_key &&
        (!c->chain || !strcmp(icd_aws_creds_source(c->chain), "none")))
        icd_error_wrap(err, "no S3 credentials found (catalog properties, or the AWS default "
                            "chain: environment, web identity, profile, container, instance "
                            "metadata)");
    return rc;
}

int icd_s3_open(icd_fileio *io, const char *location, const char *path, icd_file **out,
                icd_error *err)
{
    *out = NULL;
    icd_remote *r = icd_fileio_remote(io);
    if (!r) return icd_fail_nomem(err);
    const icd_s3_config *c = icd_remote_s3(r);
    char *bucket, *key, *url = NULL;
    ICD_TRY(icd_s3_split(location, path, &bucket, &key, err));
    int rc = 0;
    if (!key[0])
        rc = icd_fail(err, ICD_EINVALID, location, -1, "s3 location names a bucket, not an object");
    if (rc == 0) rc = icd_s3_url(c, bucket, key, NULL, &url, err);
    icd_sigv4 s;
    const icd_sigv4 *sign = rc ? NULL : signing(c, &s, location, err, &rc);
    if (rc == 0) rc = s3_hint(c, icd_remote_file_open(r, location, path, url, sign, out, err), err);
    free(bucket);
    free(key);
    free(url);
    return rc;
}

/* A HEAD answer has no body, so an S3 refusal (403, 400) comes without its error code; a
 * 1-byte GET asks once more, to say which (SignatureDoesNotMatch, InvalidAccessKeyId,
 * AccessDenied...). 1: exists, 0: 404, < 0: the error with S3's code. */
static int exists_probe(icd_remote *r, const char *location, const char *url, const icd_sigv4 *sign,
                        icd_error *err)
{
    char byte;
    icd_http_req req = {.method = "GET",
                        .url = url,
                        .location = location,
                        .sign = sign,
                        .range_off = 0,
                        .range_len = 1,
                        .dest = &byte,
                        .dest_cap = 1};
    icd_http_resp resp;
    int rc = icd_http_perform(r, &req, &resp, err);
    if (rc == 0) {
        if ((resp.status >= 200 && resp.status <= 299) || resp.status == 416) /* empty */
            rc = 1;
        else if (resp.status == 404)
            rc = 0;
        else
            rc = icd_http_status_error(&req, &resp, err);
    }
    icd_http_resp_free(&resp);
    return rc;
}

int icd_s3_exists(icd_fileio *io, const char *location, const char *path, icd_error *err)
{
    icd_remote *r = icd_fileio_remote(io);
    if (!r) return icd_fail_nomem(err);
    const icd_s3_config *c = icd_remote_s3(r);
    char *bucket, *key, *url = NULL;
    ICD_TRY(icd_s3_split(location, path, &bucket, &key, err));
    int rc = key[0] ? icd_s3_url(c, bucket, key, NULL, &url, err) : 0;
    icd_sigv4 s;
    const icd_sigv4 *sign = rc || !url ? NULL : signing(c, &s, location, err, &rc);
    if (rc == 0 && url) {
        rc = icd_remote_exists(r, location, url, sign, err);
        if (rc < 0 && (strstr(err->message, "HTTP 403") || strstr(err->message, "HTTP 400")))
            rc = exists_probe(r, location, url, sign, err);
        rc = s3_hint(c, rc, err);
    }
    free(bucket);
    free(key);
    free(url);
    return rc;
}

/* ---- listing ----------------------------------------------------------------------- */

typedef icd_s3_names name_list;

static int push_name(name_list *l, const char *s, size_t len, icd_error *err)
{
    if (ICD_ARRAY_RESERVE(l->v, l->cap, l->n + 1, 16)) return icd_fail_nomem(err);
    if (!(l->v[l->n] = strndup(s, len))) return icd_fail_nomem(err);
    l->n++;
    return 0;
}

void icd_s3_names_free(icd_s3_names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Adds the names of one ListObjectsV2 page: keys (Contents/Key) and sub-directories
 * (CommonPrefixes/Prefix) relative to `prefix`. */
static int parse_page(const char *xml, size_t len, const char *prefix, name_list *l,
                      const char *location, icd_error *err)
{
    static const struct {
        const char *block, *field;
    } KINDS[] = {{"Contents", "Key"}, {"CommonPrefixes", "Prefix"}};
    size_t plen = strlen(prefix);
    for (size_t k = 0; k < 2; k++) {
        size_t from = 0;
        for (;;) {
            char open[32], close[32];
            snprintf(open, sizeof open, "<%s>", KINDS[k].block);
            snprintf(close, sizeof close, "</%s>", KINDS[k].block);
            const char *b = from < len ? memmem(xml + from, len - from, open, strlen(open)) : NULL;
            if (!b) break;
            const char *e = memmem(b, len - (size_t)(b - xml), close, strlen(close));
            if (!e)
                return icd_fail(err, ICD_EIO, location, -1, "malformed S3 listing (no %s)", close);
            char *name = icd_xml_text(b, (size_t)(e - b), KINDS[k].field, NULL);
            from = (size_t)(e - xml) + strlen(close);
            if (!name) continue;
            int rc = 0;
            size_t n = strlen(name);
            if (n >= plen && !strncmp(name, prefix, plen)) {
                const char *rel = name + plen;
                size_t rn = n - plen;
                if (rn && rel[rn - 1] == '/') rn--;
                if (rn && !memchr(rel, '/', rn)) rc = push_name(l, rel, rn, err);
            }
            free(name);
            ICD_TRY(rc);
        }
    }
    return 0;
}

int icd_s3_list_page(const char *xml, size_t len, const char *prefix, bool all_pages,
                     icd_s3_names *names, char **next, const char *location, icd_error *err)
{
    *next = NULL;
    int rc = parse_page(xml, len, prefix, names, location, err);
    char *trunc = icd_xml_text(xml, len, "IsTruncated", NULL);
    bool more = trunc && !strcmp(trunc, "true") && all_pages;
    free(trunc);
    if (rc == 0 && more) {
        *next = icd_xml_text(xml, len, "NextContinuationToken", NULL);
        if (*next && !**next) { /* an empty token would ask for the first page again */
            free(*next);
            *next = NULL;
        }
        if (!*next)
            rc = icd_fail(err, ICD_EIO, location, -1,
                          "S3 listing is truncated but has no continuation token");
    }
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the names directly under PREFIX (keys and common prefixes): every page, or only
 * the first one (of at most 1000 names). */
static int list_prefix(icd_fileio *io, const char *location, const char *path, bool first_page,
                       name_list *out, icd_error *err)
{
    icd_remote *r = icd_fileio_remote(io);
    if (!r) return icd_fail_nomem(err);
    const icd_s3_config *c = icd_remote_s3(r);
    char *bucket, *key;
    ICD_TRY(icd_s3_split(location, path, &bucket, &key, err));
    icd_buf prefix = ICD_BUF_INIT;
    icd_buf_puts(&prefix, key);
    if (prefix.len && prefix.data[prefix.len - 1] != '/') icd_buf_putc(&prefix, '/');
    icd_buf_puts(&prefix, "");
    char *token = NULL;
    int rc = icd_buf_ok(&prefix) ? 0 : icd_fail_nomem(err);
    icd_sigv4 s;
    const icd_sigv4 *sign = rc ? NULL : signing(c, &s, location, err, &rc);
    for (int page = 0; rc == 0; page++) {
        /* Query parameters in byte order of their names: curl 7.88 signs the query string
         * as written, and S3 compares against the sorted form. */
        icd_buf q = ICD_BUF_INIT;
        if (token) {
            icd_buf_puts(&q, "continuation-token=");
            icd_url_encode(&q, token, strlen(token), false);
            icd_buf_putc(&q, '&');
        }
        icd_buf_puts(&q, "delimiter=%2F&list-type=2");
        icd_buf_puts(&q, "&prefix=");
        icd_url_encode(&q, prefix.data, prefix.len, false);
        char *url = NULL;
        rc = icd_buf_ok(&q) ? icd_s3_url(c, bucket, NULL, q.data, &url, err) : icd_fail_nomem(err);
        icd_buf_free(&q);
        if (rc) break;
        icd_http_req req = {.method = "GET",
                            .url = url,
                            .location = location,
                            .sign = sign,
                            .max_body = LIST_PAGE_MAX};
        icd_http_resp resp;
        rc = icd_http_perform(r, &req, &resp, err);
        if (rc == 0 && resp.status != 200)
            rc = s3_hint(c, icd_http_status_error(&req, &resp, err), err);
        free(url);
        if (rc == 0) {
            free(token);
            token = NULL;
            rc = icd_s3_list_page(resp.body.data ? resp.body.data : "", resp.body.len, prefix.data,
                                  !first_page, out, &token, location, err);
            if (page > 100000 && rc == 0)
                rc = icd_fail(err, ICD_EIO, location, -1, "S3 listing does not end");
            if (!token) {
                icd_http_resp_free(&resp);
                break;
            }
        }
        icd_http_resp_free(&resp);
    }
    free(token);
    icd_buf_free(&prefix);
    free(bucket);
    free(key);
    return rc;
}

int icd_s3_list_dir(icd_fileio *io, const char *location, const char *path, char ***names,
                    size_t *count, icd_error *err)
{
    *names = NULL;
    *count = 0;
    name_list l = {0};
    int rc = list_prefix(io, location, path, false, &l, err);
    if (rc == 0 && l.n == 0)
        rc = icd_fail(err, ICD_ENOTFOUND, location, -1,
                      "cannot list directory: no objects under this prefix");
    if (rc) {
        icd_s3_names_free(&l);
        return rc;
    }
    qsort(l.v, l.n, sizeof *l.v, cmp_str);
    /* Deduplicate (a key "a" and a prefix "a/" give the same name). */
    size_t w = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (w && !strcmp(l.v[w - 1], l.v[i]))
            free(l.v[i]);
        else
            l.v[w++] = l.v[i];
    }
    *names = l.v;
    *count = w;
    return 0;
}

int icd_s3_is_dir(icd_fileio *io, const char *location, const char *path, icd_error *err)
{
    name_list l = {0};
    /* One page, not max-keys=1: the first key may be a "directory marker" named PATH/
     * (and some S3 look-alikes fail on small max-keys). */
    int rc = list_prefix(io, location, path, true, &l, err);
    bool any = l.n > 0;
    icd_s3_names_free(&l);
    return rc ? rc : any;
}

/* ---- writing: PUT, multipart upload, DELETE --------------------------------------------- */

typedef struct s3_target {
    icd_remote *r;
    const icd_s3_config *c;
    char *bucket, *key;
    icd_sigv4 sig;
    const icd_sigv4 *sign;
    const char *location;
} s3_target;

static int target_open(icd_fileio *io, const char *location, s3_target *t, icd_error *err)
{
    memset(t, 0, sizeof *t);
    t->location = location;
    t->r = icd_fileio_remote(io);
    if (!t->r) return icd_fail_nomem(err);
    t->c = icd_remote_s3(t->r);
    char *path = icd_fileio_resolve(io, location);
    if (!path) return icd_fail_nomem(err);
    int rc = icd_s3_split(location, path, &t->bucket, &t->key, err);
    free(path);
    if (rc) return rc;
    if (!t->key[0])
        return icd_fail(err, ICD_EINVALID, location, -1,
                        "s3 location names a bucket, not an object");
    t->sign = signing(t->c, &t->sig, location, err, &rc);
    return rc;
}

static void target_close(s3_target *t)
{
    free(t->bucket);
    free(t->key);
}

/* One request on the object with an optional query; `ok` is the success status. */
static int object_request(s3_target *t, const char *method, const char *query, const void *body,
                          size_t body_len, icd_http_resp *resp, icd_error *err)
{
    char *url = NULL;
    ICD_TRY(icd_s3_url(t->c, t->bucket, t->key, query, &url, err));
    /* Bodies are not hashed into the signature (curl 7.88 does not hash PUT bodies for
     * S3; the transfer's integrity is TCP/TLS's and the part ETags') */
    static const char *const unsigned_payload[] = {"x-amz-content-sha256: UNSIGNED-PAYLOAD", NULL};
    icd_http_req req = {.method = method,
                        .url = url,
                        .location = t->location,
                        .headers = body && t->sign ? unsigned_payload : NULL,
                        .body = body,
                        .body_len = body_len,
                        .sign = t->sign,
                        .max_body = (size_t)1 << 20};
    int rc = icd_http_perform(t->r, &req, resp, err);
    if (!rc && (resp->status < 200 || resp->status > 299))
        rc = s3_hint(t->c, icd_http_status_error(&req, resp, err), err);
    /* CompleteMultipartUpload may answer 200 with an <Error> body */
    if (!rc && resp->body.data && strstr(resp->body.data, "<Error>"))
        rc = icd_http_status_error(&req, resp, err);
    free(url);
    return rc;
}

static int read_part(int fd, uint64_t off, size_t n, char *buf, const char *path, icd_error *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return icd_fail(err, ICD_EIO, path, (int64_t)(off + got), "cannot read: %s",
                            r < 0 ? strerror(errno) : "file shrank");
        got += (size_t)r;
    }
    return 0;
}

static int multipart(s3_target *t, int fd, uint64_t size, size_t part, const char *path,
                     icd_error *err)
{
    icd_http_resp resp = {0};
    int rc = object_request(t, "POST", "uploads=", "", 0, &resp, err);
    char *upload_id =
        rc ? NULL
           : icd_xml_text(resp.body.data ? resp.body.data : "", resp.body.len, "UploadId", NULL);
    icd_http_resp_free(&resp);
    if (!rc && !upload_id)
        rc = icd_fail(err, ICD_EIO, t->location, -1,
                      "CreateMultipartUpload answered without an UploadId");
    if (rc) return rc;
    icd_buf q = ICD_BUF_INIT, done = ICD_BUF_INIT, enc = ICD_BUF_INIT;
    icd_url_encode(&enc, upload_id, strlen(upload_id), false);
    char *buf = malloc(part);
    if (!buf || !icd_buf_ok(&enc)) rc = icd_fail_nomem(err);
    long fail_part = t->c->test_fail_at_part;
    icd_buf_puts(&done, "<CompleteMultipartUpload>");
    uint64_t off = 0;
    for (long k = 1; !rc && off < size; k++) {
        size_t n = size - off < part ? (size_t)(size - off) : part;
        if (k == fail_part) {
            rc = icd_fail(err, ICD_EIO, t->location, -1,
                          "upload of part %ld failed (ICEDRUID_TEST_S3_FAIL_AT_PART)", k);
            break;
        }
        rc = read_part(fd, off, n, buf, path, err);
        icd_buf_clear(&q);
        icd_buf_printf(&q, "partNumber=%ld&uploadId=%s", k, enc.data);
        if (!rc && !icd_buf_ok(&q)) rc = icd_fail_nomem(err);
        icd_http_resp pr = {0};
        if (!rc) rc = object_request(t, "PUT", q.data, buf, n, &pr, err);
        if (!rc && !pr.etag[0])
            rc = icd_fail(err, ICD_EIO, t->location, -1, "UploadPart %ld answered without an ETag",
                          k);
        if (!rc) {
            icd_buf_printf(&done, "<Part><PartNumber>%ld</PartNumber><ETag>", k);
            for (const char *e = pr.etag; *e; e++) /* XML-escape the quotes of the ETag */
                icd_buf_puts(&done, *e == '"' ? "&quot;" : (char[2]){*e, 0});
            icd_buf_puts(&done, "</ETag></Part>");
        }
        icd_http_resp_free(&pr);
        off += n;
    }
    icd_buf_puts(&done, "</CompleteMultipartUpload>");
    icd_buf_clear(&q);
    icd_buf_printf(&q, "uploadId=%s", enc.data ? enc.data : "");
    if (!rc && (!icd_buf_ok(&done) || !icd_buf_ok(&q))) rc = icd_fail_nomem(err);
    if (!rc) {
        icd_http_resp cr = {0};
        rc = object_request(t, "POST", q.data, done.data, done.len, &cr, err);
        icd_http_resp_free(&cr);
    }
    if (rc && icd_buf_ok(&q)) { /* abort: no parts left behind, nothing visible */
        icd_error ignored;
        icd_error_clear(&ignored);
        icd_http_resp ar = {0};
        object_request(t, "DELETE", q.data, NULL, 0, &ar, &ignored);
        icd_http_resp_free(&ar);
    }
    free(buf);
    free(upload_id);
    icd_buf_free(&q);
    icd_buf_free(&done);
    icd_buf_free(&enc);
    return rc;
}

int icd_s3_upload_file(icd_fileio *io, const char *location, const char *local_path,
                       size_t part_bytes, icd_error *err)
{
    if (part_bytes == 0) part_bytes = (size_t)8 << 20;
    int fd = open(local_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return icd_fail(err, ICD_EIO, local_path, -1, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb)) {
        close(fd);
        return icd_fail(err, ICD_EIO, local_path, -1, "cannot stat: %s", strerror(errno));
    }
    s3_target t;
    int rc = target_open(io, location, &t, err);
    uint64_t size = (uint64_t)sb.st_size;
    if (!rc && size <= part_bytes) {
        char *buf = malloc(size ? size : 1);
        rc = buf ? read_part(fd, 0, (size_t)size, buf, local_path, err) : icd_fail_nomem(err);
        icd_http_resp resp = {0};
        if (!rc) rc = object_request(&t, "PUT", NULL, buf, (size_t)size, &resp, err);
        icd_http_resp_free(&resp);
        free(buf);
    } else if (!rc) {
        rc = multipart(&t, fd, size, part_bytes, local_path, err);
    }
    target_close(&t);
    close(fd);
    return rc;
}

int icd_s3_delete(icd_fileio *io, const char *location, icd_error *err)
{
    s3_target t;
    int rc = target_open(io, location, &t, err);
    icd_http_resp resp = {0};
    if (!rc) rc = object_request(&t, "DELETE", NULL, NULL, 0, &resp, err);
    icd_http_resp_free(&resp);
    target_close(&t);
    return rc;
}
