/*
 * Unit tests of the HTTP(S) and S3 FileIO backends (io/http.c, io/s3.c).
 *
 * Offline: S3 URL construction (path-style, virtual-hosted, endpoint overrides, key
 * encoding), settings from the environment and from Iceberg properties, XML helpers.
 *
 * Live (only when tests/io/test_s3.py runs this binary with servers on loopback):
 *   ICD_S3_TEST_ENDPOINT, ICD_S3_TEST_KEY, ICD_S3_TEST_SECRET  an S3 server
 *   ICD_S3_TEST_FILES     a file of "REMOTE<TAB>LOCAL" lines: files (compare every byte,
 *                         read in uneven chunks, tails, past-the-end) and directories
 *                         (LOCAL ends in '/': compare listings)
 *   ICD_S3_TEST_FAKE      endpoint of tests/io/s3util.py's FakeS3 (key FAKEKEY/FAKESECRET)
 *                         with key flaky/f.bin failing twice and down/f.bin always;
 *   ICD_S3_TEST_FAKE_BIG_LOCAL  the local file FakeS3 serves as bkt/big/random.bin (read
 *                         policy: requests and bytes per access pattern, bytes compared)
 *   ICD_HTTP_TEST_BASE    an http:// URL serving ICD_HTTP_TEST_LOCAL (no Range support)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <icedruid/table.h>

#include "api/api.h"
#include "io/fileio.h"
#include "io/http.h"
#include "io/s3.h"
#include "test.h"

extern char **environ;

/* A FileIO given this process's environment, as the CLI does (icd_fileio_set_environment). */
static int new_io(icd_fileio **io, icd_error *err)
{
    ICD_TRY(icd_fileio_new(io, err));
    return icd_fileio_set_environment(*io, (const char *const *)environ, err);
}

static char *url_of(icd_fileio *io, const char *bucket, const char *key, const char *query)
{
    icd_error err;
    char *u = NULL;
    if (icd_s3_url(icd_remote_s3(icd_fileio_remote(io)), bucket, key, query, &u, &err)) return NULL;
    return u;
}

static void clear_env(void)
{
    const char *vars[] = {"AWS_ACCESS_KEY_ID",   "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                          "AWS_REGION",          "AWS_DEFAULT_REGION",    "AWS_ENDPOINT_URL",
                          "AWS_ENDPOINT_URL_S3", "ICEDRUID_S3_PATH_STYLE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static void test_url_builder(void)
{
    clear_env();
    icd_error err;
    icd_fileio *io;
    CHECK(new_io(&io, &err) == 0);
    char *u;
    /* AWS defaults: virtual-hosted in us-east-1 */
    CHECK_EQ_STR(u = url_of(io, "my-bucket", "a/b c/x=1+2.parquet", NULL),
                 "https://my-bucket.s3.us-east-1.amazonaws.com/a/b%20c/x%3D1%2B2.parquet");
    free(u);
    /* a bucket with dots cannot be virtual-hosted over https: path-style */
    CHECK_EQ_STR(u = url_of(io, "my.bucket", "k", NULL),
                 "https://s3.us-east-1.amazonaws.com/my.bucket/k");
    free(u);
    icd_s3_options o = {.region = "eu-west-1", .path_style = -1};
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    CHECK_EQ_STR(u = url_of(io, "bkt", "k", NULL), "https://bkt.s3.eu-west-1.amazonaws.com/k");
    free(u);
    /* the bucket itself (listing): "/" path when virtual-hosted, none when path-style */
    CHECK_EQ_STR(u = url_of(io, "bkt", NULL, "list-type=2"),
                 "https://bkt.s3.eu-west-1.amazonaws.com/?list-type=2");
    free(u);
    o = (icd_s3_options){.endpoint = "https://minio.example.com:9000/", .path_style = -1};
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    CHECK_EQ_STR(u = url_of(io, "bkt", "d/f", NULL), "https://bkt.minio.example.com:9000/d/f");
    free(u);
    o = (icd_s3_options){.path_style = 1};
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    CHECK_EQ_STR(u = url_of(io, "bkt", "d/f", NULL), "https://minio.example.com:9000/bkt/d/f");
    free(u);
    CHECK_EQ_STR(u = url_of(io, "bkt", NULL, "list-type=2"),
                 "https://minio.example.com:9000/bkt?list-type=2");
    free(u);
    /* a bare host gets https; an IP endpoint is path-style unless told otherwise */
    o = (icd_s3_options){.endpoint = "127.0.0.1:9000", .path_style = -1};
    CHECK(icd_fileio_set_s3_property(io, "s3.path-style-access", "false", &err) == 1);
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    CHECK_EQ_STR(u = url_of(io, "bkt", "k", NULL), "https://bkt.127.0.0.1:9000/k");
    free(u);
    icd_fileio_free(io);

    CHECK(new_io(&io, &err) == 0);
    CHECK(icd_fileio_set_s3_property(io, "s3.endpoint", "http://127.0.0.1:9000", &err) == 1);
    CHECK_EQ_STR(u = url_of(io, "bkt", "k", NULL), "http://127.0.0.1:9000/bkt/k");
    free(u);
    CHECK(icd_fileio_set_s3_property(io, "s3.endpoint", "http://localhost:9000", &err) == 1);
    CHECK_EQ_STR(u = url_of(io, "bkt", "k", NULL), "http://localhost:9000/bkt/k");
    free(u);
    CHECK(icd_fileio_set_s3_property(io, "s3.path-style-access", "maybe", &err) == ICD_EINVALID);
    CHECK(icd_fileio_set_s3_property(io, "io-impl", "x", &err) == 0);
    icd_fileio_free(io);
}

static void test_env(void)
{
    clear_env();
    setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
    setenv("AWS_ENDPOINT_URL", "http://10.1.2.3:1234", 1);
    icd_error err;
    icd_fileio *io;
    CHECK(new_io(&io, &err) == 0);
    char *u;
    CHECK_EQ_STR(u = url_of(io, "b", "k", NULL), "http://10.1.2.3:1234/b/k");
    free(u);
    icd_fileio_free(io);
    /* AWS_ENDPOINT_URL_S3 beats AWS_ENDPOINT_URL; AWS_REGION beats AWS_DEFAULT_REGION */
    setenv("AWS_ENDPOINT_URL_S3", "https://s3.example.net", 1);
    setenv("AWS_REGION", "ca-central-1", 1);
    setenv("ICEDRUID_S3_PATH_STYLE", "true", 1);
    CHECK(new_io(&io, &err) == 0);
    CHECK_EQ_STR(u = url_of(io, "bucket", "k", NULL), "https://s3.example.net/bucket/k");
    free(u);
    icd_fileio_free(io);
    unsetenv("AWS_ENDPOINT_URL_S3");
    unsetenv("AWS_ENDPOINT_URL");
    CHECK(new_io(&io, &err) == 0);
    CHECK_EQ_STR(u = url_of(io, "bucket", "k", NULL),
                 "https://s3.ca-central-1.amazonaws.com/bucket/k");
    free(u);
    /* only half a key pair is a clear error, before any request */
    icd_s3_options o = {.access_key_id = "AKIA", .path_style = -1};
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    icd_file *f;
    CHECK(icd_file_open(io, "s3://bucket/k", &f, &err) == ICD_EINVALID);
    CHECK(strstr(err.message, "incomplete") != NULL);
    icd_fileio_free(io);
    clear_env();
}

static void test_split_and_xml(void)
{
    icd_error err;
    char *b, *k;
    CHECK(icd_s3_split("x", "s3a://bkt/a/b", &b, &k, &err) == 0);
    CHECK_EQ_STR(b, "bkt");
    CHECK_EQ_STR(k, "a/b");
    free(b);
    free(k);
    CHECK(icd_s3_split("x", "s3n://bkt", &b, &k, &err) == 0);
    CHECK_EQ_STR(k, "");
    free(b);
    free(k);
    CHECK(icd_s3_split("x", "s3:///k", &b, &k, &err) == ICD_EINVALID);
    CHECK(icd_s3_is_location("s3://a") && icd_s3_is_location("s3a://a") &&
          !icd_s3_is_location("s4://a") && !icd_s3_is_location("/s3://"));
    const char *xml = "<Error><Code>Access&amp;Denied</Code><Message>a &lt;b&gt; &#65;&#x42;"
                      "</Message></Error>";
    char *t = icd_xml_text(xml, strlen(xml), "Code", NULL);
    CHECK_EQ_STR(t, "Access&Denied");
    free(t);
    t = icd_xml_text(xml, strlen(xml), "Message", NULL);
    CHECK_EQ_STR(t, "a <b> AB");
    free(t);
    CHECK(icd_xml_text(xml, strlen(xml), "Nope", NULL) == NULL);
    CHECK(icd_xml_text("<A>unterminated", 15, "A", NULL) == NULL);
    icd_buf bb = ICD_BUF_INIT;
    icd_url_encode(&bb, "a/b ~_-.%\x1f", 10, false);
    CHECK_EQ_STR(bb.data, "a%2Fb%20~_-.%25%1F");
    icd_buf_free(&bb);
}

static void test_status_error(void)
{
    icd_http_req req = {.method = "GET", .url = "http://h/b/k", .location = "s3://b/k"};
    icd_http_resp resp = {.status = 403};
    icd_buf_puts(&resp.body, "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code>"
                             "<Message>bad\nsig</Message><StringToSign>X</StringToSign></Error>");
    icd_error err;
    icd_error_clear(&err);
    CHECK(icd_http_status_error(&req, &resp, &err) == ICD_EIO);
    CHECK_EQ_STR(err.file, "s3://b/k");
    CHECK_EQ_STR(err.message, "HTTP 403 SignatureDoesNotMatch: bad sig");
    icd_http_resp_free(&resp);
    resp = (icd_http_resp){.status = 404};
    CHECK(icd_http_status_error(&req, &resp, &err) == ICD_ENOTFOUND);
    CHECK_EQ_STR(err.message, "HTTP 404 (not found)");
}

/* ---- live ------------------------------------------------------------------------- */

static unsigned char *load_local(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)sz + 1);
    if (b && fread(b, 1, (size_t)sz, fp) != (size_t)sz) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    *n = (size_t)sz;
    return b;
}

/* Reads the remote file in uneven chunks, its tail, and past its end. */
static void compare_file(icd_fileio *io, const char *remote, const char *local)
{
    size_t n;
    unsigned char *want = load_local(local, &n);
    CHECK(want != NULL);
    if (!want) return;
    icd_error err;
    icd_error_clear(&err);
    icd_file *f;
    int rc = icd_file_open(io, remote, &f, &err);
    if (rc) fprintf(stderr, "open %s: %s\n", remote, err.message);
    CHECK(rc == 0);
    if (rc) {
        free(want);
        return;
    }
    CHECK_EQ_INT(icd_file_size(f), n);
    unsigned char *got = malloc(n + 1);
    size_t chunk = 1;
    int same = 1;
    for (size_t off = 0; off < n;) {
        size_t m = n - off < chunk ? n - off : chunk;
        if (icd_file_read_at(f, off, got + off, m, &err)) {
            fprintf(stderr, "read %s at %zu: %s\n", remote, off, err.message);
            same = 0;
            break;
        }
        off += m;
        chunk = chunk * 3 + 7; /* 1, 10, 37, 118, ... crosses window borders */
    }
    CHECK(same && memcmp(got, want, n) == 0);
    if (n >= 8) { /* the footer pattern: last 8 bytes, then earlier */
        CHECK(icd_file_read_at(f, n - 8, got, 8, &err) == 0 && !memcmp(got, want + n - 8, 8));
        CHECK(icd_file_read_at(f, n - 1, got, 1, &err) == 0 && got[0] == want[n - 1]);
    }
    CHECK(icd_file_read_at(f, n, got, 1, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "truncated") != NULL);
    CHECK(icd_file_read_at(f, n, got, 0, &err) == 0);
    icd_file_close(f);
    free(got);
    free(want);
}

static void compare_dir(icd_fileio *io, const char *remote, const char *local)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "ls -1 '%s'", local);
    FILE *p = popen(cmd, "r");
    char line[1024];
    char want[8192] = "";
    while (p && fgets(line, sizeof line, p))
        strncat(want, line, sizeof want - strlen(want) - 1);
    if (p) pclose(p);
    icd_error err;
    char **names;
    size_t count;
    int rc = icd_fileio_list_dir(io, remote, &names, &count, &err);
    if (rc) fprintf(stderr, "list %s: %s\n", remote, err.message);
    CHECK(rc == 0);
    char got[8192] = "";
    for (size_t i = 0; rc == 0 && i < count; i++) {
        strncat(got, names[i], sizeof got - strlen(got) - 2);
        strcat(got, "\n");
        free(names[i]);
    }
    if (rc == 0) free(names);
    CHECK_EQ_STR(got, want);
    CHECK(icd_fileio_is_dir(io, remote, &err) == 1);
}

static void test_live_files(void)
{
    const char *ep = getenv("ICD_S3_TEST_ENDPOINT"), *list = getenv("ICD_S3_TEST_FILES");
    if (!ep || !list) {
        printf("live S3 checks skipped (run by tests/io/test_s3.py)\n");
        return;
    }
    icd_error err;
    icd_fileio *io;
    CHECK(new_io(&io, &err) == 0);
    icd_s3_options o = {.endpoint = ep,
                        .access_key_id = getenv("ICD_S3_TEST_KEY"),
                        .secret_access_key = getenv("ICD_S3_TEST_SECRET"),
                        .path_style = 1};
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    FILE *fp = fopen(list, "r");
    CHECK(fp != NULL);
    char line[4096];
    int files = 0, dirs = 0;
    while (fp && fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = '\0';
        size_t ln = strlen(tab + 1);
        if (ln && tab[ln] == '/') {
            compare_dir(io, line, tab + 1);
            dirs++;
        } else {
            compare_file(io, line, tab + 1);
            files++;
        }
    }
    if (fp) fclose(fp);
    printf("compared %d files and %d listings over S3; %llu requests\n", files, dirs,
           (unsigned long long)icd_remote_requests(icd_fileio_remote(io)));
    CHECK(files > 0 && dirs > 0);
    /* exists / not found */
    CHECK(icd_fileio_exists(io, "s3://warehouse/no/such/key", &err) == 0);
    icd_file *f;
    CHECK(icd_file_open(io, "s3://warehouse/no/such/key", &f, &err) == ICD_ENOTFOUND);
    CHECK(strstr(err.message, "HTTP 404") != NULL);
    icd_fileio_free(io);
}

/* Sequential small reads of a large file: the read-ahead window keeps requests few. */
static void test_live_readahead(void)
{
    const char *ep = getenv("ICD_S3_TEST_ENDPOINT"), *big = getenv("ICD_S3_TEST_BIG");
    if (!ep || !big) return;
    icd_error err;
    icd_fileio *io;
    CHECK(new_io(&io, &err) == 0);
    icd_s3_options o = {.endpoint = ep,
                        .access_key_id = getenv("ICD_S3_TEST_KEY"),
                        .secret_access_key = getenv("ICD_S3_TEST_SECRET"),
                        .path_style = 1};
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    icd_file *f;
    CHECK(icd_file_open(io, big, &f, &err) == 0);
    uint64_t size = icd_file_size(f);
    CHECK(size > 3 * 1024 * 1024);
    uint64_t before = icd_remote_requests(icd_fileio_remote(io));
    char buf[4096];
    for (uint64_t off = 0; off + sizeof buf <= size; off += sizeof buf)
        if (icd_file_read_at(f, off, buf, sizeof buf, &err)) break;
    uint64_t used = icd_remote_requests(icd_fileio_remote(io)) - before;
    uint64_t windows = (size + 1024 * 1024 - 1) / (1024 * 1024);
    printf("read %llu bytes in 4 KiB reads with %llu requests\n", (unsigned long long)size,
           (unsigned long long)used);
    CHECK(used <= windows + 1);
    /* one large read goes straight to the caller's buffer */
    char *large = malloc(2 * 1024 * 1024);
    before = icd_remote_requests(icd_fileio_remote(io));
    CHECK(icd_file_read_at(f, 12345, large, 2 * 1024 * 1024, &err) == 0);
    CHECK_EQ_INT(icd_remote_requests(icd_fileio_remote(io)) - before, 1);
    free(large);
    icd_file_close(f);
    icd_fileio_free(io);
}

/* The read policy on a file whose bytes are known (FakeS3's bkt/big/random.bin, whose
 * local copy is ICD_S3_TEST_FAKE_BIG_LOCAL; FakeS3, unlike s3rver 4.0.4, answers a
 * suffix range "bytes=-N" with the last N bytes as S3 does): the open
 * request's tail stays served, a jump fetches about what it asks for, a read running past
 * the window gets the full read-ahead without fetching the overlap again, and any mix of
 * reads returns the file's bytes. Counted with icd_remote_requests / icd_remote_bytes. */
static void test_live_access_pattern(void)
{
    const char *ep = getenv("ICD_S3_TEST_FAKE"), *big = "s3://bkt/big/random.bin";
    const char *local = getenv("ICD_S3_TEST_FAKE_BIG_LOCAL");
    if (!ep || !local) return;
    icd_error err;
    icd_fileio *io;
    CHECK(new_io(&io, &err) == 0);
    icd_s3_options o = {.endpoint = ep,
                        .access_key_id = "FAKEKEY",
                        .secret_access_key = "FAKESECRET",
                        .session_token = "SESSION-TOKEN-123",
                        .path_style = 1};
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    icd_remote *r = icd_fileio_remote(io);
    icd_file *f = NULL, *lf = NULL;
    CHECK(icd_file_open(io, local, &lf, &err) == 0);
    uint64_t req0 = icd_remote_requests(r), bytes0 = icd_remote_bytes(r);
    CHECK(icd_file_open(io, big, &f, &err) == 0);
    if (!f || !lf) {
        icd_file_close(f);
        icd_file_close(lf);
        icd_fileio_free(io);
        return;
    }
    uint64_t size = icd_file_size(f);
    CHECK_EQ_INT(size, icd_file_size(lf));
    CHECK_EQ_INT(icd_remote_requests(r) - req0, 1);
    CHECK_EQ_INT(icd_remote_bytes(r) - bytes0, 256 * 1024); /* the open tail */
    size_t cap = 2 * 1024 * 1024;
    unsigned char *a = malloc(cap), *b = malloc(cap);
    /* head magic, then the footer again: the footer is still held */
    CHECK(icd_file_read_at(f, 0, a, 4, &err) == 0 && icd_file_read_at(lf, 0, b, 4, &err) == 0);
    CHECK(!memcmp(a, b, 4));
    uint64_t req1 = icd_remote_requests(r), bytes1 = icd_remote_bytes(r);
    CHECK_EQ_INT(req1 - req0, 2);
    CHECK(bytes1 - bytes0 <= 256 * 1024 + 64 * 1024);
    CHECK(icd_file_read_at(f, size - 8, a, 8, &err) == 0);
    CHECK(icd_file_read_at(lf, size - 8, b, 8, &err) == 0 && !memcmp(a, b, 8));
    CHECK_EQ_INT(icd_remote_requests(r), req1);
    /* a jump: one request of the minimum window */
    CHECK(icd_file_read_at(f, 2000000, a, 30000, &err) == 0);
    CHECK_EQ_INT(icd_remote_requests(r) - req1, 1);
    CHECK_EQ_INT(icd_remote_bytes(r) - bytes1, 64 * 1024);
    /* running past that window: full read-ahead from 2030000, overlap not fetched again */
    uint64_t bytes2 = icd_remote_bytes(r);
    CHECK(icd_file_read_at(f, 2030000, a, 50000, &err) == 0);
    CHECK_EQ_INT(icd_remote_bytes(r) - bytes2, 1024 * 1024 - (2000000 + 64 * 1024 - 2030000));
    CHECK(icd_file_read_at(lf, 2030000, b, 50000, &err) == 0 && !memcmp(a, b, 50000));
    /* a mix of reads (sizes from 1 byte to 1.5 MiB, sequential runs and jumps) */
    uint64_t x = 0x243F6A8885A308D3ull;
    uint64_t off = 0;
    int bad = 0;
    for (int i = 0; i < 300 && !bad; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = (size_t)((x >> 33) % ((i % 7 == 0) ? 1536 * 1024 : 70000)) + 1;
        if ((x >> 20) % 3 == 0) off = (x >> 11) % size; /* a jump */
        if (off + n > size) off = size - n;
        if (icd_file_read_at(f, off, a, n, &err) || icd_file_read_at(lf, off, b, n, &err) ||
            memcmp(a, b, n))
            bad = 1;
        off += n;
    }
    CHECK(!bad);
    printf("access pattern: 300 mixed reads compared, %llu requests, %llu bytes for a %llu-byte "
           "object\n",
           (unsigned long long)(icd_remote_requests(r) - req0),
           (unsigned long long)(icd_remote_bytes(r) - bytes0), (unsigned long long)size);
    free(a);
    free(b);
    icd_file_close(f);
    icd_file_close(lf);
    icd_fileio_free(io);
}

static void test_live_fake(void)
{
    const char *ep = getenv("ICD_S3_TEST_FAKE");
    if (!ep) return;
    icd_error err;
    icd_fileio *io;
    CHECK(new_io(&io, &err) == 0);
    icd_http_policy pol;
    icd_http_get_policy(icd_fileio_remote(io), &pol);
    pol.base_delay_ms = 20; /* keep the test quick */
    icd_http_set_policy(icd_fileio_remote(io), &pol);
    icd_s3_options o = {.endpoint = ep,
                        .access_key_id = "FAKEKEY",
                        .secret_access_key = "FAKESECRET",
                        .session_token = "SESSION-TOKEN-123",
                        .region = "us-east-1",
                        .path_style = 1};
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    /* 500, 500, then 200: retried and read */
    icd_file *f;
    int rc = icd_file_open(io, "s3://bkt/flaky/f.bin", &f, &err);
    if (rc) fprintf(stderr, "flaky: %s\n", err.message);
    CHECK(rc == 0);
    if (rc == 0) {
        char b[5] = "";
        CHECK(icd_file_read_at(f, 0, b, 4, &err) == 0);
        CHECK(!memcmp(b, "flak", 4));
        icd_file_close(f);
    }
    /* always 500: the retries run out and the error says so */
    CHECK(icd_file_open(io, "s3://bkt/down/f.bin", &f, &err) == ICD_EIO);
    CHECK_EQ_STR(err.file, "s3://bkt/down/f.bin");
    CHECK(strstr(err.message, "HTTP 500 InternalError") != NULL);
    /* listing with continuation tokens (the fake answers two entries per page) */
    char **names;
    size_t count;
    CHECK(icd_fileio_list_dir(io, "s3://bkt/many", &names, &count, &err) == 0);
    CHECK_EQ_INT(count, 5);
    if (count == 5) {
        CHECK_EQ_STR(names[0], "a.txt");
        CHECK_EQ_STR(names[3], "sub");
        CHECK_EQ_STR(names[4], "z.txt");
    }
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    /* wrong secret: the fake's own signature check fails */
    o = (icd_s3_options){.secret_access_key = "WRONG", .path_style = -1};
    CHECK(icd_fileio_set_s3(io, &o, &err) == 0);
    CHECK(icd_file_open(io, "s3://bkt/flaky/f.bin", &f, &err) == ICD_EIO);
    CHECK(strstr(err.message, "HTTP 403 SignatureDoesNotMatch") != NULL);
    CHECK(strstr(err.message, "WRONG") == NULL);
    icd_fileio_free(io);
}

static void test_live_http(void)
{
    const char *base = getenv("ICD_HTTP_TEST_BASE"), *local = getenv("ICD_HTTP_TEST_LOCAL");
    const char *rel = getenv("ICD_HTTP_TEST_FILES");
    if (!base || !local || !rel) return;
    icd_error err;
    icd_fileio *io;
    CHECK(new_io(&io, &err) == 0);
    char *list = strdup(rel), *save = NULL;
    int n = 0;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char r[2048], l[2048];
        snprintf(r, sizeof r, "%s/%s", base, t);
        snprintf(l, sizeof l, "%s/%s", local, t);
        compare_file(io, r, l);
        n++;
    }
    free(list);
    printf("compared %d files over http://\n", n);
    char r[2048];
    snprintf(r, sizeof r, "%s/no-such-file", base);
    icd_file *f;
    CHECK(icd_file_open(io, r, &f, &err) == ICD_ENOTFOUND);
    CHECK(icd_fileio_exists(io, r, &err) == 0);
    /* nothing listens on port 9 (discard): a connection error after the retries */
    icd_http_policy pol;
    icd_http_get_policy(icd_fileio_remote(io), &pol);
    pol.base_delay_ms = 10;
    pol.max_attempts = 2;
    icd_http_set_policy(icd_fileio_remote(io), &pol);
    CHECK(icd_file_open(io, "http://127.0.0.1:9/x", &f, &err) == ICD_EIO);
    CHECK(strstr(err.message, "after 2 attempts") != NULL);
    icd_fileio_free(io);
}

/* The per-attempt deadline: the library reads no ICEDRUID_HTTP_* variable (the CLI does
 * and passes them in); programs set it with icd_storage_set_http_deadline. */
static void test_http_deadline_setting(void)
{
    setenv("ICEDRUID_HTTP_TIMEOUT", "0.5", 1);
    setenv("ICEDRUID_HTTP_MIN_RATE", "7", 1);
    icd_error err;
    icd_storage *s = NULL;
    CHECK_EQ_INT(icd_storage_new(&s, &err), 0);
    icd_remote *r = icd_fileio_remote(s->io);
    CHECK(r != NULL);
    icd_http_policy p;
    icd_http_get_policy(r, &p);
    CHECK_EQ_INT(p.deadline_base_ms, 30000); /* the defaults, whatever the environment */
    CHECK_EQ_INT(p.deadline_min_rate, 65536);
    CHECK_EQ_INT(icd_storage_set_http_deadline(s, 2.5, 1024, &err), 0);
    icd_http_get_policy(r, &p);
    CHECK_EQ_INT(p.deadline_base_ms, 2500);
    CHECK_EQ_INT(p.deadline_min_rate, 1024);
    CHECK_EQ_INT(icd_storage_set_http_deadline(s, 0, 0, &err), 0); /* no deadline, rate kept */
    icd_http_get_policy(r, &p);
    CHECK_EQ_INT(p.deadline_base_ms, 0);
    CHECK_EQ_INT(p.deadline_min_rate, 1024);
    CHECK_EQ_INT(icd_storage_set_http_deadline(NULL, 1, 1, &err), ICD_EINVALID);
    icd_storage_free(s);
    unsetenv("ICEDRUID_HTTP_TIMEOUT");
    unsetenv("ICEDRUID_HTTP_MIN_RATE");
}

TEST_MAIN(TEST(test_url_builder), TEST(test_env), TEST(test_http_deadline_setting),
          TEST(test_split_and_xml), TEST(test_status_error), TEST(test_live_files),
          TEST(test_live_readahead), TEST(test_live_access_pattern), TEST(test_live_fake),
          TEST(test_live_http))
