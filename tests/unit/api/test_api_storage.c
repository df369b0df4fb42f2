/*
 * The public storage settings and helpers the icedruid command uses instead of internals:
 * remote retry/timeout options (checked against a local HTTP server that answers 503 a
 * given number of times), catalog documents and their tables, the timestamp parser, the
 * redaction helper and the process-wide settings. Only public headers are included here.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <icedruid/icedruid.h>

#include "test.h"

/* ---- a server that fails `fail` requests with 503, then answers 404 --------------------- */

typedef struct flaky_server {
    int fd;
    int port;
    int fail; /* < 0: every request fails */
    atomic_int requests;
    pthread_t thread;
} flaky_server;

static void *serve(void *arg)
{
    flaky_server *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0) break; /* the listening socket was shut down */
        char req[4096];
        size_t got = 0;
        while (got < sizeof req - 1) {
            ssize_t n = recv(c, req + got, sizeof req - 1 - got, 0);
            if (n <= 0) break;
            got += (size_t)n;
            req[got] = '\0';
            if (strstr(req, "\r\n\r\n")) break;
        }
        int n = atomic_fetch_add(&s->requests, 1) + 1;
        const char *resp = s->fail < 0 || n <= s->fail
                               ? "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                 "Connection: close\r\n\r\n"
                               : "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                                 "Connection: close\r\n\r\n";
        if (send(c, resp, strlen(resp), MSG_NOSIGNAL) < 0) { /* the client went away */
        }
        close(c);
    }
    return NULL;
}

static int server_start(flaky_server *s, int fail)
{
    memset(s, 0, sizeof *s);
    s->fail = fail;
    atomic_init(&s->requests, 0);
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (s->fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(s->fd, (struct sockaddr *)&a, sizeof a) || listen(s->fd, 16) ||
        getsockname(s->fd, (struct sockaddr *)&a, &len)) {
        close(s->fd);
        return -1;
    }
    s->port = ntohs(a.sin_port);
    if (pthread_create(&s->thread, NULL, serve, s)) {
        close(s->fd);
        return -1;
    }
    return 0;
}

static void server_stop(flaky_server *s)
{
    shutdown(s->fd, SHUT_RDWR);
    pthread_join(s->thread, NULL);
    close(s->fd);
}

typedef struct retries {
    int calls;
    int attempts[8];
    long delays[8];
    int max_attempts;
    char reason[64];
    char location[256];
} retries;

static void on_retry(void *ctx, const char *location, int attempt, int max_attempts, long delay_ms,
                     const char *reason)
{
    retries *r = ctx;
    if (r->calls < 8) {
        r->attempts[r->calls] = attempt;
        r->delays[r->calls] = delay_ms;
    }
    r->calls++;
    r->max_attempts = max_attempts;
    snprintf(r->reason, sizeof r->reason, "%s", reason);
    snprintf(r->location, sizeof r->location, "%s", location);
}

/* ---- remote options ------------------------------------------------------------------------ */

static void test_remote_options_defaults(void)
{
    icd_storage_remote_options d, got;
    icd_storage_remote_options_init(&d);
    CHECK_EQ_INT(d.version, ICD_STORAGE_REMOTE_OPTIONS_VERSION);
    CHECK_EQ_INT(d.max_attempts, 4);
    CHECK_EQ_INT(d.base_delay_ms, 200);
    CHECK_EQ_INT(d.max_delay_ms, 5000);
    CHECK_EQ_INT(d.connect_timeout_ms, 10000);
    CHECK_EQ_INT(d.stall_timeout_s, 30);
    CHECK_EQ_INT(d.total_timeout_s, 0);
    CHECK(d.deadline_seconds == 30.0);
    CHECK_EQ_INT(d.deadline_min_rate, 65536);
    CHECK(d.on_retry == NULL && d.on_retry_ctx == NULL);

    icd_error err;
    icd_storage *s = NULL;
    CHECK_EQ_INT(icd_storage_new(&s, &err), 0);
    icd_storage_get_remote_options(s, &got); /* a new storage has the defaults */
    CHECK_EQ_INT(got.version, ICD_STORAGE_REMOTE_OPTIONS_VERSION);
    CHECK_EQ_INT(got.max_attempts, d.max_attempts);
    CHECK_EQ_INT(got.base_delay_ms, d.base_delay_ms);
    CHECK_EQ_INT(got.max_delay_ms, d.max_delay_ms);
    CHECK_EQ_INT(got.connect_timeout_ms, d.connect_timeout_ms);
    CHECK_EQ_INT(got.stall_timeout_s, d.stall_timeout_s);
    CHECK_EQ_INT(got.total_timeout_s, d.total_timeout_s);
    CHECK(got.deadline_seconds == d.deadline_seconds);
    CHECK_EQ_INT(got.deadline_min_rate, d.deadline_min_rate);

    /* set, then read back */
    retries r = {0};
    icd_storage_remote_options o = d;
    o.max_attempts = 7;
    o.base_delay_ms = 5;
    o.max_delay_ms = 50;
    o.connect_timeout_ms = 1500;
    o.stall_timeout_s = 9;
    o.total_timeout_s = 60;
    o.deadline_seconds = 2.5;
    o.deadline_min_rate = 1024;
    o.on_retry = on_retry;
    o.on_retry_ctx = &r;
    CHECK_EQ_INT(icd_storage_set_remote_options(s, &o, &err), 0);
    icd_storage_get_remote_options(s, &got);
    CHECK_EQ_INT(got.max_attempts, 7);
    CHECK_EQ_INT(got.base_delay_ms, 5);
    CHECK_EQ_INT(got.max_delay_ms, 50);
    CHECK_EQ_INT(got.connect_timeout_ms, 1500);
    CHECK_EQ_INT(got.stall_timeout_s, 9);
    CHECK_EQ_INT(got.total_timeout_s, 60);
    CHECK(got.deadline_seconds == 2.5);
    CHECK_EQ_INT(got.deadline_min_rate, 1024);
    CHECK(got.on_retry == on_retry && got.on_retry_ctx == &r);

    /* the deadline setter is a thin wrapper: the other settings stay */
    CHECK_EQ_INT(icd_storage_set_http_deadline(s, 0, 0, &err), 0);
    icd_storage_get_remote_options(s, &got);
    CHECK(got.deadline_seconds == 0.0); /* no deadline */
    CHECK_EQ_INT(got.deadline_min_rate, 1024);
    CHECK_EQ_INT(got.max_attempts, 7);
    CHECK(got.on_retry == on_retry);
    CHECK_EQ_INT(icd_storage_set_http_deadline(s, 4, 2048, &err), 0);
    icd_storage_get_remote_options(s, &got);
    CHECK(got.deadline_seconds == 4.0);
    CHECK_EQ_INT(got.deadline_min_rate, 2048);

    /* refused values leave the storage as it was */
    icd_storage_remote_options bad = o;
    bad.max_attempts = 0;
    CHECK_EQ_INT(icd_storage_set_remote_options(s, &bad, &err), ICD_EINVALID);
    CHECK(strstr(err.message, "max_attempts") != NULL);
    bad = o;
    bad.base_delay_ms = -1;
    CHECK_EQ_INT(icd_storage_set_remote_options(s, &bad, &err), ICD_EINVALID);
    bad = o;
    bad.connect_timeout_ms = 0;
    CHECK_EQ_INT(icd_storage_set_remote_options(s, &bad, &err), ICD_EINVALID);
    bad = o;
    bad.stall_timeout_s = -3;
    CHECK_EQ_INT(icd_storage_set_remote_options(s, &bad, &err), ICD_EINVALID);
    bad = o;
    bad.deadline_min_rate = 0;
    CHECK_EQ_INT(icd_storage_set_remote_options(s, &bad, &err), ICD_EINVALID);
    bad = o;
    bad.deadline_seconds = 1e12;
    CHECK_EQ_INT(icd_storage_set_remote_options(s, &bad, &err), ICD_EINVALID);
    bad = o;
    bad.version = 99;
    CHECK_EQ_INT(icd_storage_set_remote_options(s, &bad, &err), ICD_EINVALID);
    CHECK(strstr(err.message, "version 99") != NULL);
    CHECK_EQ_INT(icd_storage_set_remote_options(s, NULL, &err), ICD_EINVALID);
    CHECK_EQ_INT(icd_storage_set_remote_options(NULL, &o, &err), ICD_EINVALID);
    icd_storage_get_remote_options(s, &got);
    CHECK_EQ_INT(got.max_attempts, 7);
    CHECK_EQ_INT(got.base_delay_ms, 5);
    icd_storage_free(s);
}

/* Opens http://127.0.0.1:PORT/t/v1.metadata.json through a storage with `o`. */
static int open_remote(const flaky_server *srv, const icd_storage_remote_options *o, icd_error *err)
{
    icd_storage *s = NULL;
    CHECK_EQ_INT(icd_storage_new(&s, err), 0);
    CHECK_EQ_INT(icd_storage_set_remote_options(s, o, err), 0);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/t/v1.metadata.json", srv->port);
    icd_table *t = NULL;
    int rc = icd_table_open(&t, s, url, err);
    icd_table_free(t);
    icd_storage_free(s);
    return rc;
}

static void test_remote_retries_take_effect(void)
{
    icd_error err;
    flaky_server srv;
    /* two 503s, then 404: two retries reported (attempts 1 and 2 of 5, the delay doubling
     * from base_delay_ms), then the missing file */
    if (server_start(&srv, 2)) {
        fprintf(stderr, "note: no local server, the retry test was not run\n");
        return;
    }
    retries r;
    memset(&r, 0, sizeof r);
    icd_storage_remote_options o;
    icd_storage_remote_options_init(&o);
    o.max_attempts = 5;
    o.base_delay_ms = 3;
    o.max_delay_ms = 100;
    o.on_retry = on_retry;
    o.on_retry_ctx = &r;
    CHECK_EQ_INT(open_remote(&srv, &o, &err), ICD_ENOTFOUND);
    CHECK_EQ_INT(r.calls, 2);
    CHECK_EQ_INT(r.attempts[0], 1);
    CHECK_EQ_INT(r.attempts[1], 2);
    CHECK_EQ_INT(r.delays[0], 3);
    CHECK_EQ_INT(r.delays[1], 6);
    CHECK_EQ_INT(r.max_attempts, 5);
    CHECK_EQ_STR(r.reason, "HTTP 503");
    CHECK(strstr(r.location, "/t/v1.metadata.json") != NULL);
    CHECK(atomic_load(&srv.requests) >= 3);
    server_stop(&srv);

    /* always 503: max_attempts requests, max_attempts - 1 retries, then the error */
    CHECK_EQ_INT(server_start(&srv, -1), 0);
    memset(&r, 0, sizeof r);
    o.max_attempts = 3;
    CHECK(open_remote(&srv, &o, &err) < 0);
    CHECK_EQ_INT(r.calls, 2);
    CHECK_EQ_INT(r.max_attempts, 3);
    CHECK_EQ_INT(atomic_load(&srv.requests), 3);
    server_stop(&srv);

    /* max_attempts 1: no retry at all, and none reported */
    CHECK_EQ_INT(server_start(&srv, -1), 0);
    memset(&r, 0, sizeof r);
    o.max_attempts = 1;
    CHECK(open_remote(&srv, &o, &err) < 0);
    CHECK_EQ_INT(r.calls, 0);
    CHECK_EQ_INT(atomic_load(&srv.requests), 1);
    server_stop(&srv);
}

/* ---- catalog documents ----------------------------------------------------------------- */

static char warehouse[4096];

static icd_storage *example_storage(void)
{
    const char *src = getenv("ICD_SOURCE_DIR");
    snprintf(warehouse, sizeof warehouse, "%s/examples/warehouse", src ? src : ".");
    icd_storage *s = NULL;
    icd_error err;
    CHECK_EQ_INT(icd_storage_new(&s, &err), 0);
    CHECK_EQ_INT(icd_storage_add_remap(s, "/tmp/icedruid-example/warehouse", warehouse, &err), 0);
    return s;
}

static void test_catalog_documents(void)
{
    icd_storage *st = example_storage();
    icd_error err;
    char text[8192];
    /* a bare icebergCatalog object, and the table named apart */
    snprintf(text, sizeof text, "{\"type\":\"local\",\"warehousePath\":\"%s\"}", warehouse);
    icd_druid_spec *spec = NULL;
    int rc =
        icd_druid_spec_parse_catalog(&spec, text, strlen(text), "cat.json", "demo.orders", &err);
    if (rc) fprintf(stderr, "catalog: %s\n", err.message);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(icd_druid_spec_namespace(spec), "demo");
    CHECK_EQ_STR(icd_druid_spec_table_name(spec), "orders");
    CHECK_EQ_INT(icd_druid_spec_case_sensitive(spec), 1);
    icd_table *t = NULL;
    rc = icd_druid_spec_open_table(&t, spec, st, &err);
    if (rc) fprintf(stderr, "open: %s\n", err.message);
    CHECK_EQ_INT(rc, 0);
    icd_druid_spec_free(spec); /* the table does not refer to the spec */
    if (t) {
        CHECK_EQ_INT(icd_table_format_version(t), 2);
        int64_t snap = 0;
        CHECK_EQ_INT(icd_table_current_snapshot(t, &snap, &err), 0);
        CHECK(snap != 0);
        CHECK(strstr(icd_table_metadata_location(t), "demo/orders/metadata/") != NULL);
    }
    icd_table_free(t);

    /* the catalog object needs NAMESPACE.TABLE */
    CHECK_EQ_INT(
        icd_druid_spec_parse_catalog(&spec, text, strlen(text), "cat.json", "orders", &err),
        ICD_EINVALID);
    CHECK(spec == NULL);
    CHECK(strstr(err.message, "NAMESPACE.TABLE") != NULL);
    CHECK_EQ_INT(icd_druid_spec_parse_catalog(&spec, text, strlen(text), "cat.json", NULL, &err),
                 ICD_EINVALID);

    /* an input source names its table; a TABLE besides is refused */
    snprintf(text, sizeof text,
             "{\"type\":\"iceberg\",\"namespace\":\"demo\",\"tableName\":\"orders\","
             "\"icebergCatalog\":{\"type\":\"local\",\"caseSensitive\":false,"
             "\"warehousePath\":\"%s\"},\"warehouseSource\":{\"type\":\"local\"}}",
             warehouse);
    rc = icd_druid_spec_parse_catalog(&spec, text, strlen(text), "is.json", NULL, &err);
    if (rc) fprintf(stderr, "input source: %s\n", err.message);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(icd_druid_spec_case_sensitive(spec), 0);
    CHECK_EQ_INT(icd_druid_spec_open_table(&t, spec, st, &err), 0);
    icd_table_free(t);
    CHECK_EQ_INT(icd_druid_spec_open_table(&t, spec, NULL, &err), ICD_EINVALID);
    CHECK(t == NULL);
    icd_druid_spec_free(spec);
    CHECK_EQ_INT(
        icd_druid_spec_parse_catalog(&spec, text, strlen(text), "is.json", "demo.orders", &err),
        ICD_EINVALID);
    CHECK(strstr(err.message, "leave out TABLE") != NULL);
    CHECK_EQ_INT(icd_druid_spec_parse_catalog(&spec, "{", 1, "bad.json", NULL, &err), ICD_EINVALID);
    CHECK_EQ_STR(err.file, "bad.json");

    /* a table the catalog does not have */
    snprintf(text, sizeof text, "{\"type\":\"local\",\"warehousePath\":\"%s\"}", warehouse);
    CHECK_EQ_INT(icd_druid_spec_parse_catalog(&spec, text, strlen(text), NULL, "demo.nope", &err),
                 0);
    CHECK(icd_druid_spec_open_table(&t, spec, st, &err) < 0);
    CHECK(t == NULL);
    icd_druid_spec_free(spec);
    icd_storage_free(st);
}

/* ---- small helpers --------------------------------------------------------------------- */

static void test_timestamp_parse(void)
{
    icd_error err;
    int64_t ms = 0;
    CHECK_EQ_INT(icd_timestamp_parse("2024-06-01T00:00:00Z", &ms, &err), 0);
    CHECK_EQ_INT(ms, 1717200000000LL);
    CHECK_EQ_INT(icd_timestamp_parse("2024-06-01T02:00:00.250+02:00", &ms, &err), 0);
    CHECK_EQ_INT(ms, 1717200000250LL);
    CHECK_EQ_INT(icd_timestamp_parse("2024-06-01 00:00:01", &ms, &err), 0); /* UTC */
    CHECK_EQ_INT(ms, 1717200001000LL);
    ms = 42;
    CHECK_EQ_INT(icd_timestamp_parse("yesterday", &ms, &err), ICD_EINVALID);
    CHECK(strstr(err.message, "yesterday") != NULL);
    CHECK_EQ_INT(ms, 42);
    CHECK_EQ_INT(icd_timestamp_parse(NULL, &ms, &err), ICD_EINVALID);
}

static void test_redact(void)
{
    char s[128] = "GET http://user:secret@host:8080/x failed; s3://b/k fine";
    CHECK_EQ_INT(icd_redact_userinfo(s, sizeof s), 1);
    CHECK_EQ_STR(s, "GET http://***@host:8080/x failed; s3://b/k fine");
    icd_redact_userinfo(s, sizeof s); /* redacting again changes nothing */
    CHECK_EQ_STR(s, "GET http://***@host:8080/x failed; s3://b/k fine");
    char plain[32] = "no url here";
    CHECK_EQ_INT(icd_redact_userinfo(plain, sizeof plain), 0);
    CHECK_EQ_STR(plain, "no url here");
}

static int warnings;
static char warned_about[256];
static void count_warning(void *ctx, const char *file, const char *message)
{
    (void)ctx;
    warnings++;
    snprintf(warned_about, sizeof warned_about, "%s: %s", file, message);
}

/* A table directory whose version-hint.text is unusable: opening it warns (and takes the
 * newest listed metadata file). `dir` gets the directory (mkdtemp). */
static int bad_hint_table(char *dir, size_t n)
{
    char src[4096]; /* absolute: the links point at it */
    if (!realpath(getenv("ICD_SOURCE_DIR") ? getenv("ICD_SOURCE_DIR") : ".", src)) return -1;
    snprintf(dir, n, "/tmp/icd_api_storage_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char path[4096], target[8192];
    snprintf(path, sizeof path, "%s/metadata", dir);
    if (mkdir(path, 0700)) return -1;
    for (int v = 1; v <= 4; v++) {
        snprintf(target, sizeof target,
                 "%s/examples/warehouse/demo/orders/metadata/v%d.metadata.json", src, v);
        snprintf(path, sizeof path, "%s/metadata/v%d.metadata.json", dir, v);
        if (symlink(target, path)) return -1;
    }
    snprintf(path, sizeof path, "%s/metadata/version-hint.text", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("not a hint\n", f);
    return fclose(f) ? -1 : 0;
}

static void remove_table(const char *dir)
{
    char path[4096];
    for (int v = 1; v <= 4; v++) {
        snprintf(path, sizeof path, "%s/metadata/v%d.metadata.json", dir, v);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/metadata/version-hint.text", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/metadata", dir);
    rmdir(path);
    rmdir(dir);
}

static void test_process_settings(void)
{
    char dir[256];
    CHECK_EQ_INT(bad_hint_table(dir, sizeof dir), 0);
    icd_error err;
    icd_storage *s = NULL;
    CHECK_EQ_INT(icd_storage_new(&s, &err), 0);
    icd_table *t = NULL;
    /* the handler gets the warning ... */
    icd_set_warn_handler(count_warning, NULL);
    int rc = icd_table_open(&t, s, dir, &err);
    if (rc) fprintf(stderr, "open: %s\n", err.message);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(warnings, 1);
    CHECK(strstr(warned_about, "version-hint.text") != NULL);
    if (t) CHECK(strstr(icd_table_metadata_location(t), "v4.metadata.json") != NULL);
    icd_table_free(t);
    /* ... and none once removed */
    icd_set_warn_handler(NULL, NULL);
    rc = icd_table_open(&t, s, dir, &err);
    if (rc) fprintf(stderr, "open again: %s: %s\n", err.file, err.message);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(warnings, 1);
    icd_table_free(t);
    icd_storage_free(s);
    remove_table(dir);
    /* the tz folder: set and restored (the Druid timestamp tests cover zone rules) */
    icd_druid_set_tz_dir("/usr/share/zoneinfo");
    icd_druid_set_tz_dir(NULL);
    icd_druid_set_tz_dir("");
}

TEST_MAIN(TEST(test_remote_options_defaults), TEST(test_remote_retries_take_effect),
          TEST(test_catalog_documents), TEST(test_timestamp_parse), TEST(test_redact),
          TEST(test_process_settings))
