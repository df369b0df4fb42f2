/*
 * Libraries loaded on first use (base/dynlib.h): a missing library or symbol gives one
 * error line naming the library, the symbol, dlerror()'s text and the package, and never
 * a crash; a load happens once, also under concurrent callers. Then every user (remote
 * files, the split server, Hive TLS, Kerberos) is run with its library made unloadable
 * (icd_dynlib_test_redirect) and must fail with that line.
 */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/dynlib.h"
#include "catalog/hive.h"
#include "catalog/sasl_gssapi.h"
#include "druid/serve/server.h"
#include "io/fileio.h"
#include "test.h"

#define MISSING "libicedruid-test-missing.so.0"

static bool one_line(const char *s)
{
    return s[0] && !strchr(s, '\n') && !strchr(s, '\r');
}

static struct {
    __typeof__(cos) *cos;
} m1;
static const icd_dynsym M1_SYMS[] = {ICD_DYNSYM(m1, cos, cos)};

static void test_missing_library(void)
{
    static icd_dynlib lib = ICD_DYNLIB(MISSING, "libicedruid-test", "the test", M1_SYMS);
    for (int round = 0; round < 2; round++) { /* the outcome is kept: same error again */
        icd_error err;
        icd_error_clear(&err);
        CHECK_EQ_INT(icd_dynlib_load(&lib, &err), ICD_EUNSUPPORTED);
        CHECK_EQ_INT(err.code, ICD_EUNSUPPORTED);
        CHECK(one_line(err.message));
        CHECK(strstr(err.message, "cannot load " MISSING " (needed for the test)") != NULL);
        CHECK(strstr(err.message, "cannot open shared object file") != NULL); /* dlerror() */
        CHECK(strstr(err.message, "install the Debian package libicedruid-test") != NULL);
        CHECK(m1.cos == NULL);
    }
    CHECK_EQ_INT(icd_dynlib_load(&lib, NULL), ICD_EUNSUPPORTED); /* err may be NULL */
}

static struct {
    __typeof__(sin) *sin;
    __typeof__(cos) *cos;
} m2;
static const icd_dynsym M2_SYMS[] = {
    ICD_DYNSYM(m2, sin, sin),
    {"icd_no_such_symbol", &m2.cos},
};

static void test_missing_symbol(void)
{
    static icd_dynlib lib = ICD_DYNLIB("libm.so.6", "libc6", "the test", M2_SYMS);
    icd_error err;
    icd_error_clear(&err);
    CHECK_EQ_INT(icd_dynlib_load(&lib, &err), ICD_EUNSUPPORTED);
    CHECK(one_line(err.message));
    CHECK(strstr(err.message, "libm.so.6") != NULL);
    CHECK(strstr(err.message, "has no symbol icd_no_such_symbol") != NULL);
    CHECK(strstr(err.message, "undefined symbol") != NULL); /* dlerror() */
    CHECK(strstr(err.message, "libc6") != NULL);
    CHECK(m2.sin == NULL); /* all or nothing */
    CHECK(m2.cos == NULL);
}

/* Functions and a data symbol (libc's environ: only its address is checked, the program
 * may use a copy of it), from several threads at once. */
static struct {
    __typeof__(cos) *cos;
    __typeof__(environ) *environ_;
} m3;
static const icd_dynsym M3_SYMS[] = {ICD_DYNSYM(m3, cos, cos)};
static const icd_dynsym LIBC_SYMS[] = {ICD_DYNSYM(m3, environ_, environ)};
static icd_dynlib m3_lib = ICD_DYNLIB("libm.so.6", "libc6", "the test", M3_SYMS);
static icd_dynlib libc_lib = ICD_DYNLIB("libc.so.6", "libc6", "the test", LIBC_SYMS);

static void *load_thread(void *arg)
{
    icd_error err;
    icd_error_clear(&err);
    int rc = icd_dynlib_load(&m3_lib, &err) || icd_dynlib_load(&libc_lib, &err);
    *(int *)arg = rc == 0 && m3.cos && m3.cos(0.0) == 1.0 && m3.environ_ != NULL;
    return NULL;
}

static void test_load_threads(void)
{
    pthread_t t[8];
    int ok[8] = {0};
    size_t n = 0;
    for (; n < 8; n++)
        if (pthread_create(&t[n], NULL, load_thread, &ok[n])) break;
    CHECK(n > 0);
    for (size_t i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        CHECK(ok[i]);
    }
    icd_error err;
    icd_error_clear(&err);
    CHECK_EQ_INT(icd_dynlib_load(&m3_lib, &err), 0);
    CHECK_EQ_INT(err.code, 0);
    CHECK(m3.cos(0.0) == 1.0);
}

/* ---- the users, with their library unloadable ----------------------------------- */

static void check_user_error(const icd_error *err, int rc, const char *soname, const char *pkg)
{
    CHECK_EQ_INT(rc, ICD_EUNSUPPORTED);
    CHECK(one_line(err->message));
    char want[128];
    snprintf(want, sizeof want, "cannot load %s", soname);
    CHECK(strstr(err->message, want) != NULL);
    snprintf(want, sizeof want, "install the Debian package %s", pkg);
    CHECK(strstr(err->message, want) != NULL);
    char line[2100];
    icd_error_format(err, line, sizeof line);
    printf("  %s\n", line);
}

static void test_remote_without_libcurl(void)
{
    icd_fileio *io = NULL;
    icd_error err;
    icd_error_clear(&err);
    CHECK_EQ_INT(icd_fileio_new(&io, &err), 0);
    const char *locs[] = {"http://127.0.0.1:9/t/metadata.json", "s3://bucket/t/metadata.json"};
    for (size_t i = 0; io && i < 2; i++) {
        icd_file *f = NULL;
        icd_error_clear(&err);
        int rc = icd_file_open(io, locs[i], &f, &err);
        CHECK(f == NULL);
        check_user_error(&err, rc, "libcurl.so.4", "libcurl4");
        CHECK(strstr(err.file, locs[i]) != NULL);
    }
    icd_fileio_free(io);
}

static size_t no_splits(void *ctx)
{
    return 0;
}
static int no_spec(void *ctx, const char *base_url, icd_buf *out, icd_error *err)
{
    return 0;
}
static int no_open(void *ctx, size_t n, void **stream, icd_error *err)
{
    return icd_fail(err, ICD_EINTERNAL, NULL, -1, "not called");
}
static int no_next(void *stream, icd_buf *out, bool *eof, icd_error *err)
{
    return icd_fail(err, ICD_EINTERNAL, NULL, -1, "not called");
}
static void no_close(void *stream) {}

static void test_serve_without_libmicrohttpd(void)
{
    dr_server_provider p = {.split_count = no_splits,
                            .write_spec = no_spec,
                            .split_open = no_open,
                            .split_next = no_next,
                            .split_close = no_close};
    dr_server_config cfg = {.listen = "127.0.0.1:0"};
    dr_server *s = NULL;
    icd_error err;
    icd_error_clear(&err);
    int rc = dr_server_start(&cfg, &p, &s, &err);
    CHECK(s == NULL);
    check_user_error(&err, rc, "libmicrohttpd.so.12", "libmicrohttpd12");
    if (s) dr_server_stop(s);
}

static void test_hive_tls_without_openssl(void)
{
    icd_fileio *io = NULL;
    icd_error err;
    icd_error_clear(&err);
    CHECK_EQ_INT(icd_fileio_new(&io, &err), 0);
    json_t *props = json_pack("{s:s}", "hive.metastore.use.SSL", "true");
    cat_hive *c = NULL;
    int rc = cat_hive_open(io, "thrift://127.0.0.1:9083", props, &c, &err);
    CHECK(c == NULL);
    check_user_error(&err, rc, "libcrypto.so.3", "libssl3");
    cat_hive_free(c);
    json_decref(props);
    icd_fileio_free(io);
}

static void test_kerberos_without_gssapi(void)
{
    cat_gss *g = NULL;
    icd_error err;
    icd_error_clear(&err);
    int rc =
        cat_gss_new("hive/metastore@EXAMPLE.COM", NULL, NULL, "thrift://metastore:9083", &g, &err);
    CHECK(g == NULL);
    check_user_error(&err, rc, "libgssapi_krb5.so.2", "libgssapi-krb5-2");
    CHECK_EQ_STR(err.file, "thrift://metastore:9083");
    cat_gss_free(g);
}

int main(void)
{
    /* before any load: the five libraries cannot be found in this process */
    icd_dynlib_test_redirect("libcurl.so.4", MISSING);
    icd_dynlib_test_redirect("libmicrohttpd.so.12", MISSING);
    icd_dynlib_test_redirect("libssl.so.3", MISSING);
    icd_dynlib_test_redirect("libcrypto.so.3", MISSING);
    icd_dynlib_test_redirect("libgssapi_krb5.so.2", MISSING);
    test_case_ cases[] = {TEST(test_missing_library),
                          TEST(test_missing_symbol),
                          TEST(test_load_threads),
                          TEST(test_remote_without_libcurl),
                          TEST(test_serve_without_libmicrohttpd),
                          TEST(test_hive_tls_without_openssl),
                          TEST(test_kerberos_without_gssapi)};
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int before = test_failures_;
        cases[i].fn();
        if (test_failures_ != before) {
            failed++;
            fprintf(stderr, "FAILED: %s\n", cases[i].name);
        }
    }
    printf("%d passed, %d failed (%d checks)\n", (int)(sizeof cases / sizeof cases[0]) - failed,
           failed, test_checks_);
    return failed ? 1 : 0;
}
