/*
 * Unit tests of the REST catalog client (catalog/rest.c).
 *
 * Offline: request paths (prefix, multi-level namespaces joined by %1F, encoding),
 * configuration errors found before any request (no uri, rest.sigv4-enabled without
 * credentials).
 *
 * Live, when tests/catalog/test_rest_catalog.py runs this binary against
 * tests/catalog/rest_server.py on loopback (ICD_REST_TEST_* variables): config merge,
 * OAuth2 client credentials, expiry and 401-driven token refresh, header.* forwarding,
 * load table (metadata parses and equals the local file's), vended S3 credentials, a 503
 * answered once (load table, token endpoint) and retried, and the errors for bad
 * credentials, bad and expired tokens, unknown tables and namespaces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/rest.h"
#include "io/http.h"
#include "io/s3.h"
#include "test.h"

static void test_paths(void)
{
    const char *two[] = {"db", "sales"};
    char *p = cat_rest_table_path("ws1", two, 2, "orders");
    CHECK_EQ_STR(p, "/v1/ws1/namespaces/db%1Fsales/tables/orders");
    free(p);
    const char *odd[] = {"a.b", "x y/z"};
    p = cat_rest_table_path(NULL, odd, 2, "t%1");
    CHECK_EQ_STR(p, "/v1/namespaces/a.b%1Fx%20y%2Fz/tables/t%251");
    free(p);
    const char *one[] = {"analytics"};
    p = cat_rest_table_path("", one, 1, "events");
    CHECK_EQ_STR(p, "/v1/namespaces/analytics/tables/events");
    free(p);
}

static void test_config_errors(void)
{
    icd_error err;
    icd_fileio *io;
    CHECK(icd_fileio_new(&io, &err) == 0);
    cat_rest *c;
    CHECK(cat_rest_open(io, NULL, NULL, 0, &c, &err) == ICD_EINVALID);
    CHECK(strstr(err.message, "uri") != NULL);
    CHECK(cat_rest_open(io, "ftp://x", NULL, 0, &c, &err) == ICD_EINVALID);
    /* port 9 (discard) is never contacted: the option is refused first */
    cat_rest_prop sig[] = {{"rest.sigv4-enabled", "true"}};
    /* SigV4 without any AWS credentials: refused before a request is sent */
    CHECK(cat_rest_open(io, "http://127.0.0.1:9", sig, 1, &c, &err) == ICD_EINVALID);
    CHECK(strstr(err.message, "no AWS credentials were found") != NULL);
    json_t *props = json_pack("{s:s, s:{s:s}}", "warehouse", "w", "druid.dynamic.config.provider",
                              "type", "env");
    CHECK(cat_rest_open_json(io, "http://127.0.0.1:9", props, &c, &err) == ICD_EUNSUPPORTED);
    json_decref(props);
    icd_fileio_free(io);
}

/* ---- live ------------------------------------------------------------------------- */

static const char *env(const char *k)
{
    return getenv(k);
}

static int post_revoke(icd_fileio *io, const char *uri)
{
    char url[512];
    snprintf(url, sizeof url, "%s/test/revoke", uri);
    icd_http_req req = {.method = "POST", .url = url, .body = "", .body_len = 0, .max_body = 4096};
    icd_http_resp resp;
    icd_error err;
    int rc = icd_http_perform(icd_fileio_remote(io), &req, &resp, &err);
    rc = rc ? rc : resp.status == 200 ? 0 : -1;
    icd_http_resp_free(&resp);
    return rc;
}

/* Asks the test server to answer the next `count` requests under `path` with `status`. */
static int post_fail(icd_fileio *io, const char *uri, const char *path, int count, int status)
{
    char url[512], body[512];
    snprintf(url, sizeof url, "%s/test/fail", uri);
    snprintf(body, sizeof body, "{\"path\": \"%s\", \"count\": %d, \"status\": %d}", path, count,
             status);
    icd_http_req req = {
        .method = "POST", .url = url, .body = body, .body_len = strlen(body), .max_body = 4096};
    icd_http_resp resp;
    icd_error err;
    int rc = icd_http_perform(icd_fileio_remote(io), &req, &resp, &err);
    rc = rc ? rc : resp.status == 200 ? 0 : -1;
    icd_http_resp_free(&resp);
    return rc;
}

static cat_rest *open_client(icd_fileio *io, const char *credential, const char *token,
                             const char *tenant, icd_error *err, int *rc)
{
    cat_rest_prop p[8];
    size_t n = 0;
    p[n++] = (cat_rest_prop){"warehouse", (char *)env("ICD_REST_TEST_WAREHOUSE")};
    p[n++] = (cat_rest_prop){"a", "client"};
    p[n++] = (cat_rest_prop){"b", "client"};
    if (credential) p[n++] = (cat_rest_prop){"credential", (char *)credential};
    if (token) p[n++] = (cat_rest_prop){"token", (char *)token};
    if (tenant) p[n++] = (cat_rest_prop){"header.X-Tenant", (char *)tenant};
    cat_rest *c = NULL;
    icd_error_clear(err);
    *rc = cat_rest_open(io, env("ICD_REST_TEST_URI"), p, n, &c, err);
    return c;
}

static void test_live(void)
{
    const char *uri = env("ICD_REST_TEST_URI");
    if (!uri) {
        printf("live REST checks skipped (run by tests/catalog/test_rest_catalog.py)\n");
        return;
    }
    const char *cred = env("ICD_REST_TEST_CLIENT"), *stat = env("ICD_REST_TEST_STATIC");
    int ttl = atoi(env("ICD_REST_TEST_TTL"));
    icd_error err;
    icd_fileio *io;
    CHECK(icd_fileio_new(&io, &err) == 0);
    int rc;
    /* an expired token (issued by the server, past its lifetime): a clear 401.
     * First, before /test/revoke makes the server forget every token it issued. */
    const char *expired = env("ICD_REST_TEST_EXPIRED");
    if (expired) {
        cat_rest *x = open_client(io, NULL, expired, "acme", &err, &rc);
        CHECK(rc == ICD_EIO && x == NULL);
        CHECK(strstr(err.message, "HTTP 401 NotAuthorizedException") != NULL);
        CHECK(strstr(err.message, "expired") != NULL);
        CHECK(strstr(err.message, expired) == NULL);
    }
    cat_rest *c = open_client(io, cred, NULL, "acme", &err, &rc);
    if (rc) fprintf(stderr, "open: %s\n", err.message);
    CHECK(rc == 0);
    if (rc) {
        icd_fileio_free(io);
        return;
    }
    /* defaults < client < overrides */
    CHECK_EQ_STR(cat_rest_property(c, "a"), "client");
    CHECK_EQ_STR(cat_rest_property(c, "b"), "override");
    CHECK_EQ_STR(cat_rest_property(c, "c"), "default-only");
    CHECK_EQ_STR(cat_rest_property(c, "prefix"), "ws1");
    CHECK_EQ_INT(cat_rest_token_requests(c), 1);

    /* load a table in a two-level namespace */
    const char *ns[] = {"db", "sales"};
    cat_rest_table *t = NULL;
    rc = cat_rest_load_table(c, ns, 2, "orders", &t, &err);
    if (rc) fprintf(stderr, "load: %s\n", err.message);
    CHECK(rc == 0);
    if (t) {
        CHECK_EQ_STR(t->metadata_location, env("ICD_REST_TEST_MD_LOCATION"));
        CHECK_EQ_STR(cat_rest_table_config(t, "s3.access-key-id"), "S3RVER");
        ice_metadata *md = NULL, *local = NULL;
        CHECK(ice_metadata_parse(t->metadata_json, t->metadata_len, t->metadata_location, &md,
                                 &err) == 0);
        CHECK(ice_metadata_load(io, env("ICD_REST_TEST_MD_LOCAL"), &local, &err) == 0);
        if (md && local) {
            CHECK_EQ_STR(ice_metadata_table_uuid(md), ice_metadata_table_uuid(local));
            CHECK_EQ_INT(ice_metadata_snapshot_count(md), ice_metadata_snapshot_count(local));
            CHECK_EQ_INT(ice_metadata_current_snapshot(md)->snapshot_id,
                         ice_metadata_current_snapshot(local)->snapshot_id);
            CHECK_EQ_INT(ice_metadata_last_sequence_number(md),
                         ice_metadata_last_sequence_number(local));
            CHECK_EQ_STR(ice_metadata_file(md), env("ICD_REST_TEST_MD_LOCATION"));
        }
        ice_metadata_free(md);
        ice_metadata_free(local);
        /* vended credentials and endpoint reach FileIO */
        CHECK(cat_rest_table_apply(t, io, &err) == 0);
        char *u = NULL;
        CHECK(icd_s3_url(icd_remote_s3(icd_fileio_remote(io)), "warehouse", "k", NULL, &u, &err) ==
              0);
        char want[256];
        snprintf(want, sizeof want, "%s/warehouse/k", cat_rest_table_config(t, "s3.endpoint"));
        CHECK_EQ_STR(u, want);
        free(u);
        cat_rest_table_free(t);
    }
    /* the whole path: load + apply + parse, then read a data file over S3 with the vended
     * credentials (when the test started an S3 server) */
    ice_metadata *md = NULL;
    CHECK(cat_rest_load(c, ns, 2, "orders", &md, &err) == 0);
    ice_metadata_free(md);
    const char *s3file = env("ICD_REST_TEST_S3_FILE");
    if (s3file) {
        icd_file *f;
        rc = icd_file_open(io, s3file, &f, &err);
        if (rc) fprintf(stderr, "vended read: %s\n", err.message);
        CHECK(rc == 0);
        if (rc == 0) {
            char magic[4];
            CHECK(icd_file_read_at(f, 0, magic, 4, &err) == 0 && !memcmp(magic, "PAR1", 4));
            icd_file_close(f);
        }
    }
    /* a one-level namespace with a dot is one level (Druid's namespace) */
    const char *dotted[] = {"a.b"};
    CHECK(cat_rest_load(c, dotted, 1, "t", &md, &err) == 0);
    ice_metadata_free(md);
    CHECK_EQ_INT(cat_rest_token_requests(c), 1);

    /* the token expires: the client fetches a new one before the request */
    sleep((unsigned)ttl + 1);
    rc = cat_rest_load(c, ns, 2, "orders", &md, &err);
    if (rc) fprintf(stderr, "after expiry: %s\n", err.message);
    CHECK(rc == 0);
    ice_metadata_free(md);
    CHECK_EQ_INT(cat_rest_token_requests(c), 2);
    /* the server forgets the token: 401, one refresh, success */
    CHECK(post_revoke(io, uri) == 0);
    rc = cat_rest_load(c, ns, 2, "orders", &md, &err);
    if (rc) fprintf(stderr, "after revoke: %s\n", err.message);
    CHECK(rc == 0);
    ice_metadata_free(md);
    CHECK_EQ_INT(cat_rest_token_requests(c), 3);

    /* a 503 once (load table), then success: the request is retried */
    CHECK(post_fail(io, uri, "/v1/ws1/namespaces/db%1Fsales/tables/orders", 1, 503) == 0);
    rc = cat_rest_load(c, ns, 2, "orders", &md, &err);
    if (rc) fprintf(stderr, "after a 503: %s\n", err.message);
    CHECK(rc == 0);
    ice_metadata_free(md);
    CHECK_EQ_INT(cat_rest_token_requests(c), 3);

    /* unknown table / namespace */
    CHECK(cat_rest_load(c, ns, 2, "nope", &md, &err) == ICD_ENOTFOUND);
    CHECK(strstr(err.message, "HTTP 404 NoSuchTableException") != NULL);
    const char *other[] = {"db", "nope"};
    CHECK(cat_rest_load(c, other, 2, "orders", &md, &err) == ICD_ENOTFOUND);
    CHECK(strstr(err.message, "NoSuchNamespaceException") != NULL);
    cat_rest_free(c);

    /* a bad client secret: a clear 401 that does not show the secret */
    c = open_client(io, "client1:wrong-secret-QQQ", NULL, "acme", &err, &rc);
    CHECK(rc == ICD_EIO && c == NULL);
    CHECK(strstr(err.message, "HTTP 401 invalid_client") != NULL);
    CHECK(strstr(err.message, "wrong-secret-QQQ") == NULL && strstr(err.file, "QQQ") == NULL);
    /* a static token: works; a bad one is a 401 that does not show it */
    c = open_client(io, NULL, stat, "acme", &err, &rc);
    CHECK(rc == 0);
    if (c) {
        CHECK(cat_rest_load(c, ns, 2, "orders", &md, &err) == 0);
        ice_metadata_free(md);
        CHECK_EQ_INT(cat_rest_token_requests(c), 0);
        cat_rest_free(c);
    }
    c = open_client(io, NULL, "bad-token-ZZZ", "acme", &err, &rc);
    CHECK(rc == ICD_EIO && c == NULL);
    CHECK(strstr(err.message, "HTTP 401 NotAuthorizedException") != NULL);
    CHECK(strstr(err.message, "bad-token-ZZZ") == NULL);
    /* a 503 from the token endpoint once, then success */
    CHECK(post_fail(io, uri, "/v1/oauth/tokens", 1, 503) == 0);
    c = open_client(io, cred, NULL, "acme", &err, &rc);
    if (rc) fprintf(stderr, "token after a 503: %s\n", err.message);
    CHECK(rc == 0);
    if (c) {
        CHECK_EQ_INT(cat_rest_token_requests(c), 1);
        cat_rest_free(c);
    }
    /* without the required header.X-Tenant the server refuses */
    c = open_client(io, cred, NULL, NULL, &err, &rc);
    CHECK(rc == ICD_EIO && strstr(err.message, "HTTP 400 BadRequestException") != NULL);
    /* an unknown warehouse */
    cat_rest_prop wp[] = {
        {"warehouse", "nowhere"}, {"credential", (char *)cred}, {"header.X-Tenant", "acme"}};
    CHECK(cat_rest_open(io, uri, wp, 3, &c, &err) == ICD_ENOTFOUND);
    CHECK(strstr(err.message, "NoSuchWarehouseException") != NULL);
    icd_fileio_free(io);
}

TEST_MAIN(TEST(test_paths), TEST(test_config_errors), TEST(test_live))
