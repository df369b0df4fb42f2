/*
 * Iceberg REST catalog client (see rest.h): configuration merge, OAuth2 client-credentials
 * tokens with refresh, load-table, and the hand-over of vended credentials to FileIO.
 * HTTP goes through io/http.c (the FileIO's curl handle pool: retries on 429/5xx and
 * connection errors, timeouts, TLS verified by libcurl's defaults); JSON through jansson.
 * The result feeds ice_metadata_parse directly, without reading the metadata file again.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/array.h"
#include "base/buf.h"
#include "catalog/rest.h"
#include "io/http.h"
#include "io/s3.h"

/* Table metadata with a long history can be large; anything bigger is refused. */
#define MAX_JSON_BYTES (256u * 1024 * 1024)

typedef struct prop_list {
    cat_rest_prop *v;
    size_t n, cap;
} prop_list;

struct cat_rest {
    icd_fileio *io;
    icd_remote *remote;
    char *uri; /* no trailing '/' */
    char *prefix;
    prop_list props; /* merged */
    char **headers;  /* "Name: value" from header.* (NULL-terminated) */
    /* Auth: a static token, or a client credential exchanged for tokens. */
    char *token;
    char *credential;
    int64_t token_expires_ms; /* monotonic; 0 = no known expiry */
    unsigned token_requests;
    /* rest.sigv4-enabled: every catalog request SigV4-signed with the FileIO's AWS
     * credentials (static keys or the default chain) for rest.signing-name (default
     * execute-api) in rest.signing-region (default: the client/S3 region). */
    bool sigv4;
    char signing_name[64];
    char signing_region[64];
};

/* ---- small helpers ----------------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wipe_free(char *s)
{
    if (s) {
        volatile char *p = s;
        while (*p)
            *p++ = 0;
        free(s);
    }
}

static const char *props_get(const prop_list *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].key, key)) return l->v[i].value;
    return NULL;
}

static int props_set(prop_list *l, const char *key, const char *value, icd_error *err)
{
    char *v = strdup(value);
    if (!v) return icd_fail_nomem(err);
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].key, key)) {
            wipe_free(l->v[i].value);
            l->v[i].value = v;
            return 0;
        }
    if (ICD_ARRAY_RESERVE(l->v, l->cap, l->n + 1, 16)) {
        free(v);
        return icd_fail_nomem(err);
    }
    if (!(l->v[l->n].key = strdup(key))) {
        free(v);
        return icd_fail_nomem(err);
    }
    l->v[l->n++].value = v;
    return 0;
}

static void props_free(prop_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].key);
        wipe_free(l->v[i].value);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Merges a JSON object of string-ish values into `l` (later sets win). */
static int props_merge_json(prop_list *l, const json_t *obj, const char *what, icd_error *err)
{
    if (!obj || json_is_null(obj)) return 0;
    if (!json_is_object(obj))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "REST catalog: %s is not an object", what);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        char num[64];
        const char *s = NULL;
        if (json_is_string(v))
            s = json_string_value(v);
        else if (json_is_true(v))
            s = "true";
        else if (json_is_false(v))
            s = "false";
        else if (json_is_integer(v)) {
            snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            s = num;
        } else if (json_is_real(v)) {
            snprintf(num, sizeof num, "%.17g", json_real_value(v));
            s = num;
        } else if (json_is_null(v))
            continue;
        else
            return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                            "REST catalog: %s key '%s' is not a plain value (dynamic config "
                            "providers are not supported)",
                            what, k);
        ICD_TRY(props_set(l, k, s, err));
    }
    return 0;
}

/* Replaces every occurrence of `secret` in `s` (in place, `cap` bytes) with "****"; a
 * secret with no room left for the mask is cut off. */
static void scrub_str(char *s, size_t cap, const char *secret)
{
    size_t m = secret ? strlen(secret) : 0;
    if (m < 3 || cap < 5) return;
    size_t from = 0;
    char *p;
    /* the search goes on after each "****" (a secret such as "***" is found in it) */
    while ((p = strstr(s + from, secret)) != NULL) {
        size_t at = (size_t)(p - s);
        if (at + 4 >= cap) {
            *p = '\0';
            break;
        }
        size_t tail = strlen(p + m);
        if (at + 4 + tail + 1 > cap) tail = cap - at - 5;
        memmove(p + 4, p + m, tail);
        memcpy(p, "****", 4);
        p[4 + tail] = '\0';
        from = at + 4;
    }
}

/* Keeps tokens and secrets out of an error. */
static int scrub(const cat_rest *c, int rc, icd_error *err)
{
    if (rc >= 0 || !err) return rc;
    const char *secrets[4] = {c->token, c->credential, NULL, NULL};
    const char *colon = c->credential ? strchr(c->credential, ':') : NULL;
    if (colon) secrets[2] = colon + 1;
    secrets[3] = props_get(&c->props, "s3.secret-access-key");
    for (size_t i = 0; i < 4; i++) {
        scrub_str(err->message, sizeof err->message, secrets[i]);
        scrub_str(err->file, sizeof err->file, secrets[i]);
    }
    return rc;
}

/* "type: message" of an Iceberg ErrorModel ({"error":{"message","type","code"}}) or an
 * OAuth2 error ({"error":"invalid_client","error_description":...}); "" otherwise. */
static void error_text(const char *body, size_t len, char *out, size_t cap)
{
    out[0] = '\0';
    json_t *j = body && len ? json_loadb(body, len, 0, NULL) : NULL;
    json_t *e = j ? json_object_get(j, "error") : NULL;
    const char *type = NULL, *msg = NULL;
    if (json_is_object(e)) {
        type = json_string_value(json_object_get(e, "type"));
        msg = json_string_value(json_object_get(e, "message"));
    } else if (json_is_string(e)) {
        type = json_string_value(e);
        msg = json_string_value(json_object_get(j, "error_description"));
    }
    if (type || msg)
        snprintf(out, cap, "%s%s%s", type ? type : "", type && msg ? ": " : "", msg ? msg : "");
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
    json_decref(j);
}

static const char *status_hint(long status)
{
    switch (status) {
    case 400:
        return " (bad request)";
    case 401:
        return " (not authenticated: check token or credential)";
    case 403:
        return " (forbidden: the principal may not do this)";
    case 404:
        return " (not found)";
    case 419:
        return " (authentication timeout)";
    default:
        return "";
    }
}

/* ---- requests ---------------------------------------------------------------------- */

static void form_field(icd_buf *b, const char *name, const char *value)
{
    if (b->len) icd_buf_putc(b, '&');
    icd_buf_puts(b, name);
    icd_buf_putc(b, '=');
    icd_url_encode(b, value, strlen(value), false);
}

/* An OAuth2 token answer: a fresh bearer token in c->token and its expiry. */
int cat_rest_token_answer(cat_rest *c, long status, const char *body, size_t len, const char *url,
                          icd_error *err)
{
    int rc = 0;
    if (status != 200) {
        char text[400];
        error_text(body, len, text, sizeof text);
        rc = icd_fail(err, ICD_EIO, url, -1, "OAuth2 token request failed: HTTP %ld%s%s%s", status,
                      text[0] ? " " : "", text, status_hint(status));
        return scrub(c, rc, err);
    }
    json_t *j = json_loadb(body ? body : "", len, 0, NULL);
    const char *tok = json_string_value(json_object_get(j, "access_token"));
    if (!tok || !tok[0]) {
        rc = icd_fail(err, ICD_EIO, url, -1, "OAuth2 token response has no access_token");
    } else {
        wipe_free(c->token);
        c->token = strdup(tok);
        if (!c->token) rc = icd_fail_nomem(err);
        json_t *exp = json_object_get(j, "expires_in");
        c->token_expires_ms = 0;
        if (json_is_integer(exp) && json_integer_value(exp) > 0) {
            /* a lifetime past a year is taken as a year (no overflow of the clock) */
            json_int_t secs = json_integer_value(exp);
            int64_t life = (secs < 366 * 86400 ? (int64_t)secs : 366 * 86400) * 1000;
            int64_t margin = life / 10 < 60000 ? life / 10 : 60000;
            c->token_expires_ms = now_ms() + life - margin;
        }
    }
    json_decref(j);
    return scrub(c, rc, err);
}

/* OAuth2 client-credentials grant: a fresh bearer token in c->token. */
static int fetch_token(cat_rest *c, icd_error *err)
{
    const char *server = props_get(&c->props, "oauth2-server-uri");
    icd_buf url = ICD_BUF_INIT, form = ICD_BUF_INIT;
    if (server)
        icd_buf_puts(&url, server);
    else
        icd_buf_printf(&url, "%s/v1/oauth/tokens", c->uri);
    const char *colon = strchr(c->credential, ':');
    form_field(&form, "grant_type", "client_credentials");
    if (colon) {
        char *id = strndup(c->credential, (size_t)(colon - c->credential));
        if (id)
            form_field(&form, "client_id", id);
        else
            form.oom = true;
        free(id);
    }
    form_field(&form, "client_secret", colon ? colon + 1 : c->credential);
    const char *scope = props_get(&c->props, "scope");
    form_field(&form, "scope", scope ? scope : "catalog");
    int rc = 0;
    if (!icd_buf_ok(&url) || !icd_buf_ok(&form)) rc = icd_fail_nomem(err);
    const char *hdrs[] = {"Content-Type: application/x-www-form-urlencoded",
                          "Accept: application/json", NULL};
    icd_http_req req = {.method = "POST",
                        .url = url.data,
                        .location = url.data,
                        .headers = hdrs,
                        .body = form.data,
                        .body_len = form.len,
                        .max_body = 1024 * 1024};
    icd_http_resp resp;
    memset(&resp, 0, sizeof resp);
    if (rc == 0) rc = icd_http_perform(c->remote, &req, &resp, err);
    c->token_requests++;
    if (rc == 0)
        rc = cat_rest_token_answer(c, resp.status, resp.body.data, resp.body.len, url.data, err);
    icd_http_resp_free(&resp);
    if (form.data) memset(form.data, 0, form.len);
    icd_buf_free(&form);
    icd_buf_free(&url);
    return scrub(c, rc, err);
}

/* The header list of one catalog request (malloc'd strings; free with free_headers). */
static char **request_headers(const cat_rest *c, bool delegation)
{
    size_t n = 0;
    while (c->headers && c->headers[n])
        n++;
    char **h = calloc(n + 4, sizeof *h);
    if (!h) return NULL;
    size_t k = 0;
    h[k++] = strdup("Accept: application/json");
    if (c->token) {
        size_t len = strlen(c->token) + 32;
        if ((h[k] = malloc(len)))
            snprintf(h[k], len, "%sAuthorization: Bearer %s", c->sigv4 ? "Original-" : "",
                     c->token);
        k++;
    }
    if (delegation) h[k++] = strdup("X-Iceberg-Access-Delegation: vended-credentials");
    for (size_t i = 0; i < n; i++)
        h[k++] = strdup(c->headers[i]);
    for (size_t i = 0; i < k; i++)
        if (!h[i]) {
            for (size_t j = 0; j < k; j++)
                wipe_free(h[j]);
            free(h);
            return NULL;
        }
    return h;
}

static void free_headers(char **h)
{
    for (size_t i = 0; h && h[i]; i++)
        wipe_free(h[i]);
    free(h);
}

int cat_rest_answer(const cat_rest *c, long status, const char *body, size_t len, const char *url,
                    const char *what, json_t **out, icd_error *err)
{
    *out = NULL;
    int rc = 0;
    if (status != 200) {
        char text[400];
        error_text(body, len, text, sizeof text);
        int code = status == 404 ? ICD_ENOTFOUND : ICD_EIO;
        rc = icd_fail(err, code, url, -1, "REST catalog %s failed: HTTP %ld%s%s%s", what, status,
                      text[0] ? " " : "", text, status_hint(status));
        return scrub(c, rc, err);
    }
    json_error_t je;
    *out = json_loadb(body ? body : "", len, 0, &je);
    if (!*out || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        rc = icd_fail(err, ICD_EIO, url, -1,
                      "REST catalog %s: the answer is not a JSON object (%s)", what, je.text);
    }
    return scrub(c, rc, err);
}

/* GET {uri}{path}: the JSON answer in *out. Refreshes an expiring OAuth2 token first and
 * once more after a 401. `what` names the operation in errors. */
static int rest_get(cat_rest *c, const char *path, bool delegation, const char *what, json_t **out,
                    icd_error *err)
{
    *out = NULL;
    icd_buf url = ICD_BUF_INIT;
    icd_buf_printf(&url, "%s%s", c->uri, path);
    if (!icd_buf_ok(&url)) return icd_fail_nomem(err);
    int rc = 0;
    bool refreshed = false;
    for (;;) {
        bool expired = c->token_expires_ms && now_ms() >= c->token_expires_ms;
        if (c->credential && (!c->token || expired)) {
            rc = fetch_token(c, err);
            refreshed = true;
            if (rc) break;
        }
        char **hdrs = request_headers(c, delegation);
        if (!hdrs) {
            rc = icd_fail_nomem(err);
            break;
        }
        icd_http_req req = {.method = "GET",
                            .url = url.data,
                            .location = url.data,
                            .headers = (const char *const *)hdrs,
                            .max_body = MAX_JSON_BYTES};
        icd_sigv4 sign;
        if (c->sigv4) {
            int have = icd_fileio_aws_signing(c->io, c->signing_name, &sign, err);
            if (have == 0)
                rc = icd_fail(err, ICD_EINVALID, url.data, -1,
                              "REST catalog: rest.sigv4-enabled=true but no AWS credentials were "
                              "found (catalog s3.* keys or the AWS default chain)");
            if (have <= 0) {
                if (have < 0) rc = have;
                free_headers(hdrs);
                break;
            }
            if (c->signing_region[0]) sign.region = c->signing_region;
            req.sign = &sign;
        }
        icd_http_resp resp;
        rc = icd_http_perform(c->remote, &req, &resp, err);
        free_headers(hdrs);
        if (rc == 0 && resp.status == 401 && c->credential && !refreshed) {
            icd_http_resp_free(&resp);
            wipe_free(c->token);
            c->token = NULL; /* fetch a new one and try once more */
            continue;
        }
        if (rc == 0)
            rc = cat_rest_answer(c, resp.status, resp.body.data, resp.body.len, url.data, what, out,
                                 err);
        icd_http_resp_free(&resp);
        break;
    }
    icd_buf_free(&url);
    return scrub(c, rc, err);
}

/* ---- open -------------------------------------------------------------------------- */

static char *trim_slashes(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '/')
        n--;
    return strndup(s, n);
}

/* Re-reads uri, prefix, token, headers and S3 settings from the merged properties. */
static int apply_props(cat_rest *c, icd_error *err)
{
    const char *uri = props_get(&c->props, "uri");
    if (!uri || !uri[0])
        return icd_fail(err, ICD_EINVALID, NULL, -1, "REST catalog: catalogUri (uri) is not set");
    if (strncmp(uri, "http://", 7) && strncmp(uri, "https://", 8))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "REST catalog: uri must start with http:// or https://, got '%s'", uri);
    char *u = trim_slashes(uri);
    const char *pre = props_get(&c->props, "prefix");
    char *p = pre && pre[0] ? trim_slashes(pre[0] == '/' ? pre + 1 : pre) : NULL;
    if (!u || (pre && pre[0] && !p)) {
        free(u);
        free(p);
        return icd_fail_nomem(err);
    }
    free(c->uri);
    free(c->prefix);
    c->uri = u;
    c->prefix = p;
    const char *sigv4 = props_get(&c->props, "rest.sigv4-enabled");
    c->sigv4 = sigv4 && !strcasecmp(sigv4, "true");
    const char *sn = props_get(&c->props, "rest.signing-name");
    const char *sr = props_get(&c->props, "rest.signing-region");
    if (!sr || !sr[0]) sr = props_get(&c->props, "client.region");
    snprintf(c->signing_name, sizeof c->signing_name, "%s", sn && sn[0] ? sn : "execute-api");
    snprintf(c->signing_region, sizeof c->signing_region, "%s", sr ? sr : "");
    /* header.NAME properties become request headers */
    free_headers(c->headers);
    c->headers = calloc(c->props.n + 1, sizeof *c->headers);
    if (!c->headers) return icd_fail_nomem(err);
    size_t k = 0;
    for (size_t i = 0; i < c->props.n; i++) {
        const cat_rest_prop *pr = &c->props.v[i];
        if (strncmp(pr->key, "header.", 7) || !pr->key[7]) continue;
        size_t len = strlen(pr->key) + strlen(pr->value) + 4;
        if (!(c->headers[k] = malloc(len))) return icd_fail_nomem(err);
        snprintf(c->headers[k++], len, "%s: %s", pr->key + 7, pr->value);
    }
    /* S3 settings of the catalog apply to every table's files */
    for (size_t i = 0; i < c->props.n; i++)
        ICD_TRY(icd_fileio_set_s3_property(c->io, c->props.v[i].key, c->props.v[i].value, err));
    return 0;
}

int cat_rest_config_answer(cat_rest *c, const json_t *cfg, icd_error *err)
{
    /* defaults < client properties < overrides */
    prop_list merged = {0};
    int rc = props_merge_json(&merged, json_object_get(cfg, "defaults"), "config defaults", err);
    for (size_t i = 0; rc == 0 && i < c->props.n; i++)
        rc = props_set(&merged, c->props.v[i].key, c->props.v[i].value, err);
    if (rc == 0)
        rc = props_merge_json(&merged, json_object_get(cfg, "overrides"), "config overrides", err);
    if (rc) {
        props_free(&merged);
        return scrub(c, rc, err);
    }
    props_free(&c->props);
    c->props = merged;
    rc = apply_props(c, err);
    /* A token in the overrides replaces a static one. */
    const char *tok2 = props_get(&c->props, "token");
    if (rc == 0 && !c->credential && tok2 && tok2[0] && (!c->token || strcmp(tok2, c->token))) {
        wipe_free(c->token);
        if (!(c->token = strdup(tok2))) rc = icd_fail_nomem(err);
    }
    return scrub(c, rc, err);
}

int cat_rest_connect(cat_rest *c, icd_error *err)
{
    /* GET /v1/config[?warehouse=W] */
    icd_buf path = ICD_BUF_INIT;
    icd_buf_puts(&path, "/v1/config");
    const char *wh = props_get(&c->props, "warehouse");
    if (wh && wh[0]) {
        icd_buf_puts(&path, "?warehouse=");
        icd_url_encode(&path, wh, strlen(wh), false);
    }
    if (!icd_buf_ok(&path)) return icd_fail_nomem(err);
    json_t *cfg = NULL;
    int rc = rest_get(c, path.data, false, "get config", &cfg, err);
    icd_buf_free(&path);
    if (rc == 0) rc = cat_rest_config_answer(c, cfg, err);
    json_decref(cfg);
    return rc;
}

int cat_rest_new(icd_fileio *io, const char *uri, const cat_rest_prop *props, size_t nprops,
                 cat_rest **out, icd_error *err)
{
    *out = NULL;
    cat_rest *c = calloc(1, sizeof *c);
    if (!c) return icd_fail_nomem(err);
    c->io = io;
    c->remote = icd_fileio_remote(io);
    int rc = c->remote ? 0 : icd_fail_nomem(err);
    for (size_t i = 0; rc == 0 && i < nprops; i++)
        rc = props_set(&c->props, props[i].key, props[i].value, err);
    if (rc == 0 && uri) /* like Druid: catalogUri wins over a `uri` property */
        rc = props_set(&c->props, "uri", uri, err);
    if (rc == 0) rc = apply_props(c, err);
    const char *tok = props_get(&c->props, "token");
    const char *cred = props_get(&c->props, "credential");
    if (rc == 0 && cred && cred[0] && !(c->credential = strdup(cred))) rc = icd_fail_nomem(err);
    if (rc == 0 && !c->credential && tok && tok[0] && !(c->token = strdup(tok)))
        rc = icd_fail_nomem(err);
    if (rc) {
        cat_rest_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int cat_rest_new_json(icd_fileio *io, const char *uri, const json_t *props, cat_rest **out,
                      icd_error *err)
{
    *out = NULL;
    prop_list l = {0};
    int rc = props_merge_json(&l, props, "catalogProperties", err);
    if (rc == 0) rc = cat_rest_new(io, uri, l.v, l.n, out, err);
    props_free(&l);
    return rc;
}

/* A client that has fetched its configuration, or an error (nothing left open). */
static int connected(cat_rest *c, cat_rest **out, icd_error *err)
{
    int rc = c ? cat_rest_connect(c, err) : 0;
    if (rc) {
        cat_rest_free(c);
        *out = NULL;
    }
    return rc;
}

int cat_rest_open(icd_fileio *io, const char *uri, const cat_rest_prop *props, size_t nprops,
                  cat_rest **out, icd_error *err)
{
    ICD_TRY(cat_rest_new(io, uri, props, nprops, out, err));
    return connected(*out, out, err);
}

int cat_rest_open_json(icd_fileio *io, const char *uri, const json_t *props, cat_rest **out,
                       icd_error *err)
{
    ICD_TRY(cat_rest_new_json(io, uri, props, out, err));
    return connected(*out, out, err);
}

void cat_rest_free(cat_rest *c)
{
    if (!c) return;
    free(c->uri);
    free(c->prefix);
    props_free(&c->props);
    free_headers(c->headers);
    wipe_free(c->token);
    wipe_free(c->credential);
    free(c);
}

const char *cat_rest_property(const cat_rest *c, const char *key)
{
    return props_get(&c->props, key);
}

unsigned cat_rest_token_requests(const cat_rest *c)
{
    return c->token_requests;
}

/* ---- tables ------------------------------------------------------------------------ */

char *cat_rest_table_path(const char *prefix, const char *const *ns, size_t nlevels,
                          const char *table)
{
    icd_buf b = ICD_BUF_INIT;
    icd_buf_puts(&b, "/v1/");
    if (prefix && prefix[0]) {
        icd_buf_puts(&b, prefix);
        icd_buf_putc(&b, '/');
    }
    icd_buf_puts(&b, "namespaces/");
    for (size_t i = 0; i < nlevels; i++) {
        if (i) icd_buf_puts(&b, "%1F"); /* the unit separator joins namespace levels */
        icd_url_encode(&b, ns[i], strlen(ns[i]), false);
    }
    icd_buf_puts(&b, "/tables/");
    icd_url_encode(&b, table, strlen(table), false);
    return icd_buf_detach(&b);
}

void cat_rest_table_free(cat_rest_table *t)
{
    if (!t) return;
    free(t->metadata_location);
    free(t->metadata_json);
    for (size_t i = 0; i < t->nconfig; i++) {
        free(t->config[i].key);
        wipe_free(t->config[i].value);
    }
    free(t->config);
    free(t);
}

const char *cat_rest_table_config(const cat_rest_table *t, const char *key)
{
    for (size_t i = 0; i < t->nconfig; i++)
        if (!strcmp(t->config[i].key, key)) return t->config[i].value;
    return NULL;
}

static size_t cred_prefix_len(const json_t *e)
{
    const char *p = json_string_value(json_object_get(e, "prefix"));
    return p ? strlen(p) : 0;
}

/* Adds the storage-credentials entries whose prefix covers the table location, shortest
 * prefix first, so the most specific one wins. */
static int merge_storage_credentials(prop_list *l, const json_t *creds, const char *location,
                                     icd_error *err)
{
    size_t n = json_is_array(creds) && location ? json_array_size(creds) : 0;
    if (n == 0) return 0;
    const json_t **match = calloc(n, sizeof *match);
    if (!match) return icd_fail_nomem(err);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(creds, i);
        const char *p = json_string_value(json_object_get(e, "prefix"));
        if (p && !strncmp(location, p, strlen(p))) match[k++] = e;
    }
    for (size_t i = 1; i < k; i++) /* insertion sort by prefix length */
        for (size_t j = i; j > 0 && cred_prefix_len(match[j - 1]) > cred_prefix_len(match[j]);
             j--) {
            const json_t *t = match[j];
            match[j] = match[j - 1];
            match[j - 1] = t;
        }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < k; i++)
        rc = props_merge_json(l, json_object_get(match[i], "config"), "storage-credentials", err);
    free(match);
    return rc;
}

int cat_rest_table_answer(const cat_rest *c, const json_t *j, cat_rest_table **out, icd_error *err)
{
    *out = NULL;
    int rc = 0;
    cat_rest_table *t = calloc(1, sizeof *t);
    prop_list cfg = {0};
    const char *mloc = json_string_value(json_object_get(j, "metadata-location"));
    json_t *md = json_object_get(j, "metadata");
    if (!t)
        rc = icd_fail_nomem(err);
    else if (!mloc || !mloc[0])
        rc = icd_fail(err, ICD_EUNSUPPORTED, c->uri, -1,
                      "REST catalog: load table answer has no metadata-location (staged table?)");
    else if (!json_is_object(md))
        rc = icd_fail(err, ICD_EIO, mloc, -1, "REST catalog: load table answer has no metadata");
    if (rc == 0) {
        t->metadata_location = strdup(mloc);
        t->metadata_json = json_dumps(md, JSON_COMPACT);
        if (!t->metadata_location || !t->metadata_json)
            rc = icd_fail_nomem(err);
        else
            t->metadata_len = strlen(t->metadata_json);
    }
    if (rc == 0) rc = props_merge_json(&cfg, json_object_get(j, "config"), "table config", err);
    if (rc == 0) {
        const char *loc = json_string_value(json_object_get(md, "location"));
        rc = merge_storage_credentials(&cfg, json_object_get(j, "storage-credentials"),
                                       loc ? loc : mloc, err);
    }
    if (rc) {
        props_free(&cfg);
        cat_rest_table_free(t);
        return scrub(c, rc, err);
    }
    t->config = cfg.v;
    t->nconfig = cfg.n;
    *out = t;
    return 0;
}

int cat_rest_load_table(cat_rest *c, const char *const *ns, size_t nlevels, const char *table,
                        cat_rest_table **out, icd_error *err)
{
    *out = NULL;
    if (nlevels == 0 || !table || !table[0])
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "REST catalog: a table needs a namespace and a name");
    for (size_t i = 0; i < nlevels; i++)
        if (!ns[i] || !ns[i][0])
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "REST catalog: namespace level %zu is empty", i + 1);
    char *path = cat_rest_table_path(c->prefix, ns, nlevels, table);
    if (!path) return icd_fail_nomem(err);
    json_t *j = NULL;
    int rc = rest_get(c, path, true, "load table", &j, err);
    free(path);
    if (rc) return rc;
    rc = cat_rest_table_answer(c, j, out, err);
    json_decref(j);
    return rc;
}

int cat_rest_table_apply(const cat_rest_table *t, icd_fileio *io, icd_error *err)
{
    for (size_t i = 0; i < t->nconfig; i++) {
        int rc = icd_fileio_set_s3_property(io, t->config[i].key, t->config[i].value, err);
        if (rc < 0) return rc;
    }
    return 0;
}

int cat_rest_load(cat_rest *c, const char *const *ns, size_t nlevels, const char *table,
                  ice_metadata **out, icd_error *err)
{
    *out = NULL;
    cat_rest_table *t;
    ICD_TRY(cat_rest_load_table(c, ns, nlevels, table, &t, err));
    int rc = cat_rest_table_metadata(c, t, out, err);
    cat_rest_table_free(t);
    return rc;
}

int cat_rest_table_metadata(const cat_rest *c, const cat_rest_table *t, ice_metadata **out,
                            icd_error *err)
{
    *out = NULL;
    int rc = cat_rest_table_apply(t, c->io, err);
    if (rc == 0)
        rc = ice_metadata_parse(t->metadata_json, t->metadata_len, t->metadata_location, out, err);
    /* the metadata location comes from the server: it names the file in these errors */
    return scrub(c, rc, err);
}
