/*
 * Hive Metastore client (see hive.h): the first step of planning a `hive` catalog table.
 * table identifier -> get_table over Thrift (thrift_binary.c codec, a TCP transport with
 * timeouts and reconnects written here) -> the table's metadata_location -> FileIO reads
 * the metadata file like for any other catalog.
 *
 * Transport: one TCP connection, kept between calls and dropped after any failure. Every
 * connect, send and receive waits at most the socket timeout (poll on a non-blocking
 * socket). A transport failure (refused, reset, closed, timed out) moves on to the next URI
 * and, after all of them, retries up to `retries` times with a pause: get_table is a read,
 * so repeating it is safe. A reply that decodes to garbage is not retried.
 *
 * OpenSSL (libssl, libcrypto) is loaded when a catalog with hive.metastore.use.SSL=true is
 * opened (base/dynlib.h), not at process start.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "base/bits.h"
#include "base/dynlib.h"
#include "catalog/hive.h"
#include "catalog/props.h"
#include "catalog/sasl_gssapi.h"
#include "catalog/thrift_binary.h"

/* Table objects are small; a reply beyond this is refused. */
#define MAX_REPLY_BYTES (64u * 1024 * 1024)
#define DEFAULT_PORT "9083"

/* OpenSSL, loaded on first use: every call goes through these pointers (libssl's and
 * libcrypto's functions in one struct, filled from the two libraries). */
static struct {
    __typeof__(SSL_CTX_new) *SSL_CTX_new;
    __typeof__(TLS_client_method) *TLS_client_method;
    __typeof__(SSL_CTX_ctrl) *SSL_CTX_ctrl;
    __typeof__(SSL_CTX_set_verify) *SSL_CTX_set_verify;
    __typeof__(SSL_CTX_load_verify_locations) *SSL_CTX_load_verify_locations;
    __typeof__(SSL_CTX_set_default_verify_paths) *SSL_CTX_set_default_verify_paths;
    __typeof__(SSL_CTX_free) *SSL_CTX_free;
    __typeof__(SSL_new) *SSL_new;
    __typeof__(SSL_free) *SSL_free;
    __typeof__(SSL_set_fd) *SSL_set_fd;
    __typeof__(SSL_set_hostflags) *SSL_set_hostflags;
    __typeof__(SSL_set1_host) *SSL_set1_host;
    __typeof__(SSL_ctrl) *SSL_ctrl;
    __typeof__(SSL_connect) *SSL_connect;
    __typeof__(SSL_get_error) *SSL_get_error;
    __typeof__(SSL_get_verify_result) *SSL_get_verify_result;
    __typeof__(SSL_write) *SSL_write;
    __typeof__(SSL_read) *SSL_read;
    __typeof__(ERR_get_error) *ERR_get_error;
    __typeof__(ERR_clear_error) *ERR_clear_error;
    __typeof__(ERR_error_string_n) *ERR_error_string_n;
    __typeof__(X509_verify_cert_error_string) *X509_verify_cert_error_string;
} ossl;

static const icd_dynsym SSL_SYMS[] = {
    ICD_DYNSYM(ossl, SSL_CTX_new, SSL_CTX_new),
    ICD_DYNSYM(ossl, TLS_client_method, TLS_client_method),
    ICD_DYNSYM(ossl, SSL_CTX_ctrl, SSL_CTX_ctrl),
    ICD_DYNSYM(ossl, SSL_CTX_set_verify, SSL_CTX_set_verify),
    ICD_DYNSYM(ossl, SSL_CTX_load_verify_locations, SSL_CTX_load_verify_locations),
    ICD_DYNSYM(ossl, SSL_CTX_set_default_verify_paths, SSL_CTX_set_default_verify_paths),
    ICD_DYNSYM(ossl, SSL_CTX_free, SSL_CTX_free),
    ICD_DYNSYM(ossl, SSL_new, SSL_new),
    ICD_DYNSYM(ossl, SSL_free, SSL_free),
    ICD_DYNSYM(ossl, SSL_set_fd, SSL_set_fd),
    ICD_DYNSYM(ossl, SSL_set_hostflags, SSL_set_hostflags),
    ICD_DYNSYM(ossl, SSL_set1_host, SSL_set1_host),
    ICD_DYNSYM(ossl, SSL_ctrl, SSL_ctrl),
    ICD_DYNSYM(ossl, SSL_connect, SSL_connect),
    ICD_DYNSYM(ossl, SSL_get_error, SSL_get_error),
    ICD_DYNSYM(ossl, SSL_get_verify_result, SSL_get_verify_result),
    ICD_DYNSYM(ossl, SSL_write, SSL_write),
    ICD_DYNSYM(ossl, SSL_read, SSL_read),
};
static const icd_dynsym CRYPTO_SYMS[] = {
    ICD_DYNSYM(ossl, ERR_get_error, ERR_get_error),
    ICD_DYNSYM(ossl, ERR_clear_error, ERR_clear_error),
    ICD_DYNSYM(ossl, ERR_error_string_n, ERR_error_string_n),
    ICD_DYNSYM(ossl, X509_verify_cert_error_string, X509_verify_cert_error_string),
};

static icd_dynlib LIBSSL =
    ICD_DYNLIB("libssl.so.3", "libssl3", "TLS to the Hive Metastore", SSL_SYMS);
static icd_dynlib LIBCRYPTO =
    ICD_DYNLIB("libcrypto.so.3", "libssl3", "TLS to the Hive Metastore", CRYPTO_SYMS);

typedef struct hive_endpoint {
    char *uri; /* as given, for errors */
    char *host;
    char *port;
} hive_endpoint;

struct cat_hive {
    icd_fileio *io;
    hive_endpoint *ep;
    size_t nep;
    bool framed;
    long timeout_ms;
    long retries;
    long retry_delay_ms;
    int fd;
    SSL *ssl;         /* TLS on fd (hive.metastore.use.SSL) */
    SSL_CTX *tls_ctx; /* NULL: no TLS */
    bool sasl;        /* SASL GSSAPI (Kerberos) after connecting */
    bool auth_failed; /* the last connect failed in TLS or SASL */
    char *service;    /* hive.metastore.kerberos.principal, _HOST not yet replaced */
    char *principal;  /* Druid's catalogProperties principal / keytab (NULL: ticket cache) */
    char *keytab;
    size_t cur; /* endpoint of the open connection (or to try first) */
    int32_t seqid;
    unsigned connects;
};

/* ---- options ----------------------------------------------------------------------------- */

static void free_endpoints(cat_hive *c)
{
    for (size_t i = 0; i < c->nep; i++) {
        free(c->ep[i].uri);
        free(c->ep[i].host);
        free(c->ep[i].port);
    }
    free(c->ep);
    c->ep = NULL;
    c->nep = 0;
}

/* One "thrift://host[:port]" (host may be [v6]) into an endpoint. */
static int parse_one_uri(const char *s, size_t n, hive_endpoint *e, icd_error *err)
{
    char *u = strndup(s, n);
    if (!u) return icd_fail_nomem(err);
    e->uri = u;
    if (strncasecmp(u, "thrift://", 9))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Hive catalog: catalogUri '%s' must start with thrift://", u);
    const char *h = u + 9, *hend, *port = NULL;
    if (*h == '[') {
        hend = strchr(h, ']');
        if (!hend)
            return icd_fail(err, ICD_EINVALID, NULL, -1, "Hive catalog: bad catalogUri '%s'", u);
        h++;
        if (hend[1] == ':')
            port = hend + 2;
        else if (hend[1] && hend[1] != '/')
            return icd_fail(err, ICD_EINVALID, NULL, -1, "Hive catalog: bad catalogUri '%s'", u);
    } else {
        hend = h + strcspn(h, ":/");
        if (*hend == ':') port = hend + 1;
    }
    size_t plen = port ? strcspn(port, "/") : 0;
    if (hend == h)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Hive catalog: catalogUri '%s' has no host",
                        u);
    if (port && (plen == 0 || plen > 5 || strspn(port, "0123456789") < plen))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Hive catalog: catalogUri '%s' has a bad port",
                        u);
    e->host = strndup(h, (size_t)(hend - h));
    e->port = port ? strndup(port, plen) : strdup(DEFAULT_PORT);
    if (!e->host || !e->port) return icd_fail_nomem(err);
    return 0;
}

static int parse_uris(cat_hive *c, const char *uri, icd_error *err)
{
    size_t n = 1;
    for (const char *p = uri; *p; p++)
        n += *p == ',';
    c->ep = calloc(n, sizeof *c->ep);
    if (!c->ep) return icd_fail_nomem(err);
    for (const char *p = uri;;) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, ",");
        size_t trimmed = len;
        while (trimmed && p[trimmed - 1] == ' ')
            trimmed--;
        if (trimmed) {
            c->nep++;
            ICD_TRY(parse_one_uri(p, trimmed, &c->ep[c->nep - 1], err));
        }
        if (!p[len]) break;
        p += len + 1;
    }
    if (c->nep == 0)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Hive catalog: catalogUri is empty");
    return 0;
}

/* Kerberos (SASL GSSAPI) and TLS settings. */
static int read_security(cat_hive *c, const json_t *props, icd_error *err)
{
    char tmp[1024];
    c->sasl = cat_prop_true(props, "hive.metastore.sasl.enabled");
    const char *auth = cat_prop(props, "hadoop.security.authentication", tmp, sizeof tmp);
    if (auth && !strcasecmp(auth, "kerberos") && !c->sasl)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Hive catalog: hadoop.security.authentication=kerberos needs "
                        "hive.metastore.sasl.enabled=true for the metastore connection");
    const char *v;
    if ((v = cat_prop(props, "principal", tmp, sizeof tmp)) && !(c->principal = strdup(v)))
        return icd_fail_nomem(err);
    if ((v = cat_prop(props, "keytab", tmp, sizeof tmp)) && !(c->keytab = strdup(v)))
        return icd_fail_nomem(err);
    if (c->keytab && !c->principal)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Hive catalog: keytab is set but principal is not");
    if (c->sasl) {
        v = cat_prop(props, "hive.metastore.kerberos.principal", tmp, sizeof tmp);
        if (!v || !v[0])
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "Hive catalog: hive.metastore.sasl.enabled=true needs "
                            "hive.metastore.kerberos.principal (e.g. hive/_HOST@REALM)");
        if (!(c->service = strdup(v))) return icd_fail_nomem(err);
    }
    if (!cat_prop_true(props, "hive.metastore.use.SSL")) return 0;
    const char *ts = cat_prop(props, "hive.metastore.truststore.path", tmp, sizeof tmp);
    if (ts) {
        FILE *f = fopen(ts, "r");
        char head[16] = "";
        bool pem = f && fgets(head, sizeof head, f) && !strncmp(head, "-----BEGIN", 10);
        if (f) fclose(f);
        if (!f)
            return icd_fail(err, ICD_EIO, ts, -1,
                            "Hive catalog: cannot read hive.metastore.truststore.path");
        if (!pem)
            return icd_fail(err, ICD_EUNSUPPORTED, ts, -1,
                            "Hive catalog: hive.metastore.truststore.path must be a PEM file of "
                            "CA certificates (convert a Java keystore with keytool -exportcert "
                            "-rfc)");
    }
    ICD_TRY(icd_dynlib_load(&LIBCRYPTO, err));
    ICD_TRY(icd_dynlib_load(&LIBSSL, err));
    c->tls_ctx = ossl.SSL_CTX_new(ossl.TLS_client_method());
    if (!c->tls_ctx) return icd_fail(err, ICD_EIO, NULL, -1, "Hive catalog: cannot set up TLS");
    /* SSL_CTX_set_min_proto_version, a macro over SSL_CTX_ctrl */
    ossl.SSL_CTX_ctrl(c->tls_ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
    ossl.SSL_CTX_set_verify(c->tls_ctx, SSL_VERIFY_PEER, NULL);
    if (ts ? ossl.SSL_CTX_load_verify_locations(c->tls_ctx, ts, NULL) != 1
           : ossl.SSL_CTX_set_default_verify_paths(c->tls_ctx) != 1)
        return icd_fail(err, ICD_EIO, ts, -1, "Hive catalog: cannot load the CA certificates");
    return 0;
}

static int duration_prop(const json_t *props, const char *key, long def, long *out, icd_error *err)
{
    char tmp[64];
    const char *v = cat_prop(props, key, tmp, sizeof tmp);
    *out = def;
    if (v && !cat_parse_duration_ms(v, 1000, out))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Hive catalog: %s must be a duration such as 30s or 500ms, got '%s'", key,
                        v);
    return 0;
}

static int read_options(cat_hive *c, const json_t *props, icd_error *err)
{
    char tmp[64];
    const char *framed =
        cat_prop(props, "hive.metastore.thrift.framed.transport.enabled", tmp, sizeof tmp);
    if (framed && strcasecmp(framed, "true") && strcasecmp(framed, "false"))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Hive catalog: hive.metastore.thrift.framed.transport.enabled must be "
                        "true or false, got '%s'",
                        framed);
    c->framed = framed && !strcasecmp(framed, "true");
    ICD_TRY(
        duration_prop(props, "hive.metastore.client.socket.timeout", 60000, &c->timeout_ms, err));
    if (c->timeout_ms <= 0) c->timeout_ms = 60000;
    ICD_TRY(duration_prop(props, "hive.metastore.client.connect.retry.delay", 1000,
                          &c->retry_delay_ms, err));
    const char *r = cat_prop(props, "hive.metastore.connect.retries", tmp, sizeof tmp);
    c->retries = 3;
    if (r) {
        char *end;
        errno = 0;
        long v = strtol(r, &end, 10);
        if (errno || end == r || *end || v < 0 || v > 100)
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "Hive catalog: hive.metastore.connect.retries must be 0..100, got '%s'",
                            r);
        c->retries = v;
    }
    return 0;
}

int cat_hive_open(icd_fileio *io, const char *uri, const json_t *props, cat_hive **out,
                  icd_error *err)
{
    *out = NULL;
    ICD_TRY(cat_props_check(props, "Hive catalog", err));
    if (!uri || !uri[0])
        return icd_fail(err, ICD_EINVALID, NULL, -1, "Hive catalog: catalogUri is not set");
    cat_hive *c = calloc(1, sizeof *c);
    if (!c) return icd_fail_nomem(err);
    c->io = io;
    c->fd = -1;
    int rc = parse_uris(c, uri, err);
    if (rc == 0) rc = read_options(c, props, err);
    if (rc == 0) rc = read_security(c, props, err);
    if (rc == 0) rc = cat_props_apply_storage(io, props, err);
    if (rc) {
        cat_hive_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static void disconnect(cat_hive *c)
{
    if (c->ssl) ossl.SSL_free(c->ssl);
    c->ssl = NULL;
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

void cat_hive_free(cat_hive *c)
{
    if (!c) return;
    disconnect(c);
    if (c->tls_ctx) ossl.SSL_CTX_free(c->tls_ctx);
    free(c->service);
    free(c->principal);
    free(c->keytab);
    free_endpoints(c);
    free(c);
}

unsigned cat_hive_connects(const cat_hive *c)
{
    return c->connects;
}

void cat_hive_table_free(cat_hive_table *t)
{
    if (!t) return;
    free(t->db_name);
    free(t->table_name);
    free(t->table_type);
    free(t->location);
    free(t->iceberg_type);
    free(t->metadata_location);
    free(t);
}

/* ---- codec ------------------------------------------------------------------------------- */

void cat_hive_encode_get_table(icd_buf *out, const char *db, const char *table, int32_t seqid,
                               bool framed)
{
    size_t start = out->len;
    if (framed) cat_tb_put_i32(out, 0); /* patched below */
    cat_tb_put_message(out, "get_table", CAT_TB_CALL, seqid);
    cat_tb_put_field(out, CAT_TB_STRING, 1); /* dbname */
    cat_tb_put_string(out, db, strlen(db));
    cat_tb_put_field(out, CAT_TB_STRING, 2); /* tbl_name */
    cat_tb_put_string(out, table, strlen(table));
    cat_tb_put_i8(out, CAT_TB_STOP);
    if (framed && icd_buf_ok(out)) {
        uint32_t n = (uint32_t)(out->len - start - 4);
        unsigned char *p = (unsigned char *)out->data + start;
        p[0] = (unsigned char)(n >> 24);
        p[1] = (unsigned char)(n >> 16);
        p[2] = (unsigned char)(n >> 8);
        p[3] = (unsigned char)n;
    }
}

/* Reads a string field into *slot (replacing an earlier value). */
static int string_field(cat_tb *r, int type, char **slot)
{
    if (type != CAT_TB_STRING) return cat_tb_skip(r, type);
    char *s;
    ICD_TRY(cat_tb_string_dup(r, &s));
    free(*slot);
    *slot = s;
    return 0;
}

/* Table.parameters: keeps table_type and metadata_location. */
static int parse_parameters(cat_tb *r, cat_hive_table *t)
{
    int kt, vt;
    uint32_t n;
    ICD_TRY(cat_tb_map_begin(r, &kt, &vt, &n));
    for (uint32_t i = 0; i < n; i++) {
        if (kt != CAT_TB_STRING || vt != CAT_TB_STRING) {
            ICD_TRY(cat_tb_skip(r, kt));
            ICD_TRY(cat_tb_skip(r, vt));
            continue;
        }
        const uint8_t *k;
        uint32_t klen;
        ICD_TRY(cat_tb_string(r, &k, &klen));
        char **slot = NULL;
        if (klen == 10 && !memcmp(k, "table_type", 10))
            slot = &t->iceberg_type;
        else if (klen == 17 && !memcmp(k, "metadata_location", 17))
            slot = &t->metadata_location;
        if (slot)
            ICD_TRY(string_field(r, CAT_TB_STRING, slot));
        else
            ICD_TRY(cat_tb_skip(r, CAT_TB_STRING));
    }
    cat_tb_container_end(r);
    return 0;
}

/* StorageDescriptor: keeps location (field 2). */
static int parse_sd(cat_tb *r, cat_hive_table *t)
{
    ICD_TRY(cat_tb_struct_begin(r));
    for (;;) {
        int type;
        int16_t id;
        ICD_TRY(cat_tb_field(r, &type, &id));
        if (type == CAT_TB_STOP) break;
        if (id == 2)
            ICD_TRY(string_field(r, type, &t->location));
        else
            ICD_TRY(cat_tb_skip(r, type));
    }
    cat_tb_struct_end(r);
    return 0;
}

/* The Table struct (hive_metastore.thrift): 1 tableName, 2 dbName, 7 sd, 9 parameters,
 * 12 tableType; every other field is skipped whatever its type. */
static int parse_table(cat_tb *r, cat_hive_table *t)
{
    ICD_TRY(cat_tb_struct_begin(r));
    for (;;) {
        int type;
        int16_t id;
        ICD_TRY(cat_tb_field(r, &type, &id));
        if (type == CAT_TB_STOP) break;
        if (id == 1)
            ICD_TRY(string_field(r, type, &t->table_name));
        else if (id == 2)
            ICD_TRY(string_field(r, type, &t->db_name));
        else if (id == 7 && type == CAT_TB_STRUCT)
            ICD_TRY(parse_sd(r, t));
        else if (id == 9 && type == CAT_TB_MAP)
            ICD_TRY(parse_parameters(r, t));
        else if (id == 12)
            ICD_TRY(string_field(r, type, &t->table_type));
        else
            ICD_TRY(cat_tb_skip(r, type));
    }
    cat_tb_struct_end(r);
    return 0;
}

/* An exception struct whose field 1 is the message (MetaException, NoSuchObjectException,
 * TApplicationException, whose field 2 is its type). */
static int parse_exception(cat_tb *r, char *msg, size_t cap, int32_t *app_type)
{
    msg[0] = '\0';
    ICD_TRY(cat_tb_struct_begin(r));
    for (;;) {
        int type;
        int16_t id;
        ICD_TRY(cat_tb_field(r, &type, &id));
        if (type == CAT_TB_STOP) break;
        if (id == 1 && type == CAT_TB_STRING) {
            const uint8_t *p;
            uint32_t n;
            ICD_TRY(cat_tb_string(r, &p, &n));
            size_t k = n < cap - 1 ? n : cap - 1;
            for (size_t i = 0; i < k; i++)
                msg[i] = p[i] < 0x20 ? ' ' : (char)p[i];
            msg[k] = '\0';
        } else if (id == 2 && type == CAT_TB_I32 && app_type) {
            ICD_TRY(cat_tb_i32(r, app_type));
        } else {
            ICD_TRY(cat_tb_skip(r, type));
        }
    }
    cat_tb_struct_end(r);
    return 0;
}

/* TApplicationException types worth naming. */
static const char *app_exception_name(int32_t t)
{
    switch (t) {
    case 1:
        return "unknown method";
    case 2:
        return "invalid message type";
    case 3:
        return "wrong method name";
    case 4:
        return "bad sequence id";
    case 5:
        return "missing result";
    case 6:
        return "internal error";
    case 7:
        return "protocol error";
    default:
        return "unknown";
    }
}

/* The get_table result struct: 0 success (Table), 1 o1 MetaException,
 * 2 o2 NoSuchObjectException. */
static int parse_result(cat_tb *r, cat_hive_table *t, const char *location, icd_error *err)
{
    char msg[600];
    int outcome = -1; /* field id that was set */
    int rc = 0;
    ICD_TRY(cat_tb_struct_begin(r));
    for (;;) {
        int type;
        int16_t id;
        ICD_TRY(cat_tb_field(r, &type, &id));
        if (type == CAT_TB_STOP) break;
        if (id == 0 && type == CAT_TB_STRUCT) {
            ICD_TRY(parse_table(r, t));
            outcome = 0;
        } else if ((id == 1 || id == 2) && type == CAT_TB_STRUCT) {
            ICD_TRY(parse_exception(r, msg, sizeof msg, NULL));
            outcome = id;
        } else {
            ICD_TRY(cat_tb_skip(r, type));
            if (outcome < 0) outcome = 1000 + id; /* an exception this client does not know */
        }
    }
    cat_tb_struct_end(r);
    if (outcome == 1)
        rc = icd_fail(err, ICD_EIO, location, -1, "get_table failed: MetaException: %s", msg);
    else if (outcome == 2)
        rc = icd_fail(err, ICD_ENOTFOUND, location, -1, "NoSuchObjectException: %s",
                      msg[0] ? msg : "no such table");
    else if (outcome >= 1000)
        rc = icd_fail(err, ICD_EIO, location, -1,
                      "get_table failed with an undeclared result field %d", outcome - 1000);
    else if (outcome < 0)
        rc = icd_fail(err, ICD_ECORRUPT, location, -1,
                      "get_table reply carries neither a table nor an exception");
    return rc;
}

int cat_hive_parse_reply(const void *p, size_t n, int32_t seqid, const char *location,
                         cat_hive_table **out, size_t *used, bool *truncated, icd_error *err)
{
    *out = NULL;
    *used = 0;
    *truncated = false;
    cat_tb r;
    cat_tb_init(&r, p, n, location, err);
    const uint8_t *name;
    uint32_t name_len;
    int type;
    int32_t seq;
    int rc = cat_tb_message_begin(&r, &name, &name_len, &type, &seq);
    if (rc == 0 && (name_len != 9 || memcmp(name, "get_table", 9)))
        rc = cat_tb_corrupt(&r, "a reply to '%.*s', expected get_table",
                            (int)(name_len > 64 ? 64 : name_len), (const char *)name);
    if (rc == 0 && type != CAT_TB_REPLY && type != CAT_TB_EXCEPTION)
        rc = cat_tb_corrupt(&r, "message type %d, expected a reply", type);
    if (rc == 0 && seq != seqid) rc = cat_tb_corrupt(&r, "sequence id %d, expected %d", seq, seqid);
    if (rc) {
        *truncated = r.truncated;
        return rc;
    }
    if (type == CAT_TB_EXCEPTION) {
        char msg[600];
        int32_t app = 0;
        rc = parse_exception(&r, msg, sizeof msg, &app);
        *truncated = r.truncated;
        if (rc) return rc;
        *used = cat_tb_pos(&r);
        return icd_fail(err, ICD_EIO, location, -1,
                        "get_table failed: TApplicationException (%s): %s", app_exception_name(app),
                        msg);
    }
    cat_hive_table *t = calloc(1, sizeof *t);
    if (!t) return icd_fail_nomem(err);
    rc = parse_result(&r, t, location, err);
    *truncated = r.truncated;
    if (rc == 0 || !r.truncated) *used = cat_tb_pos(&r);
    if (rc) {
        cat_hive_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* ---- transport --------------------------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Waits until fd is ready for `events` or the deadline passes: 1 ready, 0 timed out,
 * -1 error (errno). */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) return 0;
        struct pollfd pfd = {.fd = fd, .events = events};
        int n = poll(&pfd, 1, left > 0x7fffffff ? 0x7fffffff : (int)left);
        if (n > 0) return 1;
        if (n == 0) return 0;
        if (errno != EINTR) return -1;
    }
}

static int secure(cat_hive *c, const hive_endpoint *e, icd_error *err);

static int connect_endpoint(cat_hive *c, const hive_endpoint *e, icd_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int g = getaddrinfo(e->host, e->port, &hints, &res);
    if (g != 0)
        return icd_fail(err, ICD_EIO, e->uri, -1, "Hive Metastore: cannot resolve '%s': %s",
                        e->host, gai_strerror(g));
    int rc = ICD_EIO;
    char why[256] = "no address";
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        int fd =
            socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            snprintf(why, sizeof why, "%s", strerror(errno));
            continue;
        }
        int64_t deadline = now_ms() + c->timeout_ms;
        int ok = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        if (!ok && errno == EINPROGRESS) {
            int w = wait_fd(fd, POLLOUT, deadline);
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (w == 0)
                snprintf(why, sizeof why, "connect timed out after %ld ms", c->timeout_ms);
            else if (w < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
                snprintf(why, sizeof why, "%s", strerror(errno));
            else if (soerr)
                snprintf(why, sizeof why, "%s", strerror(soerr));
            else
                ok = 1;
        } else if (!ok) {
            snprintf(why, sizeof why, "%s", strerror(errno));
        }
        if (ok) {
            c->fd = fd;
            c->connects++;
            rc = secure(c, e, err);
            if (rc) {
                c->auth_failed = true; /* TLS/Kerberos refusals are not retried */
                disconnect(c);
                freeaddrinfo(res);
                return rc;
            }
            break;
        }
        close(fd);
    }
    freeaddrinfo(res);
    if (rc) return icd_fail(err, ICD_EIO, e->uri, -1, "Hive Metastore: cannot connect: %s", why);
    return 0;
}

/* The OpenSSL error queue's first reason, for one error line. */
static const char *tls_reason(char *buf, size_t cap)
{
    unsigned long e = ossl.ERR_get_error();
    ossl.ERR_clear_error();
    if (!e) return "connection closed";
    ossl.ERR_error_string_n(e, buf, cap);
    return buf;
}

/* After an SSL call returned k <= 0: waits for the socket when OpenSSL asks to (1: try
 * again), else fails (rc in *rc). */
static int tls_wait(cat_hive *c, const hive_endpoint *e, int k, const char *what, int *rc,
                    icd_error *err)
{
    int se = ossl.SSL_get_error(c->ssl, k);
    if (se == SSL_ERROR_WANT_READ || se == SSL_ERROR_WANT_WRITE) {
        int w =
            wait_fd(c->fd, se == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, now_ms() + c->timeout_ms);
        if (w > 0) return 1;
        *rc = icd_fail(err, ICD_EIO, e->uri, -1, "Hive Metastore: TLS %s timed out after %ld ms",
                       what, c->timeout_ms);
        return 0;
    }
    char buf[256];
    if (se == SSL_ERROR_ZERO_RETURN)
        *rc = icd_fail(err, ICD_EIO, e->uri, -1,
                       "Hive Metastore: the server closed the TLS connection");
    else
        *rc = icd_fail(err, ICD_EIO, e->uri, -1, "Hive Metastore: TLS %s failed: %s", what,
                       tls_reason(buf, sizeof buf));
    return 0;
}

static int tls_connect(cat_hive *c, const hive_endpoint *e, icd_error *err)
{
    c->ssl = ossl.SSL_new(c->tls_ctx);
    if (!c->ssl || ossl.SSL_set_fd(c->ssl, c->fd) != 1)
        return icd_fail(err, ICD_EIO, e->uri, -1, "Hive Metastore: cannot set up TLS");
    ossl.SSL_set_hostflags(c->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (ossl.SSL_set1_host(c->ssl, e->host) != 1)
        return icd_fail(err, ICD_EIO, e->uri, -1, "Hive Metastore: cannot set up TLS");
    if (!strspn(e->host, "0123456789.:") || strspn(e->host, "0123456789.:") < strlen(e->host))
        /* SSL_set_tlsext_host_name, a macro over SSL_ctrl */
        ossl.SSL_ctrl(c->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                      (void *)e->host);
    for (;;) {
        int k = ossl.SSL_connect(c->ssl);
        if (k == 1) return 0;
        int rc = 0;
        if (!tls_wait(c, e, k, "handshake", &rc, err)) {
            long v = ossl.SSL_get_verify_result(c->ssl);
            if (v != X509_V_OK)
                return icd_fail(err, ICD_EIO, e->uri, -1,
                                "Hive Metastore: TLS certificate not trusted: %s (set "
                                "hive.metastore.truststore.path to the CA's PEM file)",
                                ossl.X509_verify_cert_error_string(v));
            return rc;
        }
    }
}

static int send_all(cat_hive *c, const hive_endpoint *e, const char *p, size_t n, icd_error *err)
{
    while (n > 0) {
        if (c->ssl) {
            int k = ossl.SSL_write(c->ssl, p, n > 0x40000000 ? 0x40000000 : (int)n);
            if (k > 0) {
                p += k;
                n -= (size_t)k;
                continue;
            }
            int rc = 0;
            if (tls_wait(c, e, k, "send", &rc, err)) continue;
            return rc;
        }
        ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int w = wait_fd(c->fd, POLLOUT, now_ms() + c->timeout_ms);
            if (w > 0) continue;
            if (w == 0)
                return icd_fail(err, ICD_EIO, e->uri, -1,
                                "Hive Metastore: send timed out after %ld ms", c->timeout_ms);
        }
        return icd_fail(err, ICD_EIO, e->uri, -1, "Hive Metastore: send failed: %s",
                        strerror(errno));
    }
    return 0;
}

static int closed_error(cat_hive *c, const hive_endpoint *e, icd_error *err)
{
    if (c->sasl)
        return icd_fail(err, ICD_EIO, e->uri, -1,
                        "Hive Metastore: the server closed the connection without a reply (does "
                        "it expect SASL/Kerberos, hive.metastore.sasl.enabled=true?)");
    return icd_fail(err, ICD_EIO, e->uri, -1,
                    "Hive Metastore: the server closed the connection without a reply "
                    "(is hive.metastore.thrift.framed.transport.enabled=%s right for "
                    "this server%s?)",
                    c->framed ? "true" : "false",
                    c->ssl ? "" : ", or does it want TLS or SASL/Kerberos");
}

/* Receives up to `want` more bytes into b (at least one). */
static int recv_some(cat_hive *c, const hive_endpoint *e, icd_buf *b, size_t want, icd_error *err)
{
    if (!icd_buf_grow(b, want + 1)) return icd_fail_nomem(err);
    for (;;) {
        if (c->ssl) {
            int k =
                ossl.SSL_read(c->ssl, b->data + b->len, want > 0x40000000 ? 0x40000000 : (int)want);
            if (k > 0) {
                b->len += (size_t)k;
                b->data[b->len] = '\0';
                return 0;
            }
            if (ossl.SSL_get_error(c->ssl, k) == SSL_ERROR_ZERO_RETURN)
                return closed_error(c, e, err);
            int rc = 0;
            if (tls_wait(c, e, k, "receive", &rc, err)) continue;
            return rc;
        }
        ssize_t k = recv(c->fd, b->data + b->len, want, 0);
        if (k > 0) {
            b->len += (size_t)k;
            b->data[b->len] = '\0';
            return 0;
        }
        if (k == 0) return closed_error(c, e, err);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int w = wait_fd(c->fd, POLLIN, now_ms() + c->timeout_ms);
            if (w > 0) continue;
            if (w == 0)
                return icd_fail(err, ICD_EIO, e->uri, -1,
                                "Hive Metastore: no reply within %ld ms "
                                "(hive.metastore.client.socket.timeout)",
                                c->timeout_ms);
        }
        return icd_fail(err, ICD_EIO, e->uri, -1, "Hive Metastore: receive failed: %s",
                        strerror(errno));
    }
}

/* Reads exactly n more bytes into b. */
static int recv_exact(cat_hive *c, const hive_endpoint *e, icd_buf *b, size_t n, icd_error *err)
{
    size_t end = b->len + n;
    while (b->len < end)
        ICD_TRY(recv_some(c, e, b, end - b->len, err));
    return 0;
}

static void put_be32(icd_buf *b, uint32_t n)
{
    unsigned char h[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                          (unsigned char)(n >> 8), (unsigned char)n};
    icd_buf_append(b, h, 4);
}

/* ---- SASL (Thrift's TSaslTransport: status byte + 4-byte length + payload) ------------- */

enum { SASL_START = 1, SASL_OK = 2, SASL_BAD = 3, SASL_ERROR = 4, SASL_COMPLETE = 5 };

static int sasl_send(cat_hive *c, const hive_endpoint *e, int status, const void *p, size_t n,
                     icd_error *err)
{
    icd_buf m = ICD_BUF_INIT;
    icd_buf_putc(&m, (char)status);
    put_be32(&m, (uint32_t)n);
    icd_buf_append(&m, p, n);
    int rc = icd_buf_ok(&m) ? send_all(c, e, m.data, m.len, err) : icd_fail_nomem(err);
    icd_buf_free(&m);
    return rc;
}

/* The host for _HOST in the service principal: the URI's host, lower case. */
static char *service_name(const cat_hive *c, const hive_endpoint *e)
{
    icd_buf b = ICD_BUF_INIT;
    const char *s = c->service, *h;
    while ((h = strstr(s, "_HOST"))) {
        icd_buf_append(&b, s, (size_t)(h - s));
        for (const char *q = e->host; *q; q++)
            icd_buf_putc(&b, (char)((*q >= 'A' && *q <= 'Z') ? *q + 32 : *q));
        s = h + 5;
    }
    icd_buf_puts(&b, s);
    return icd_buf_ok(&b) ? icd_buf_detach(&b) : (icd_buf_free(&b), NULL);
}

static int sasl_handshake(cat_hive *c, const hive_endpoint *e, icd_error *err)
{
    char *svc = service_name(c, e);
    if (!svc) return icd_fail_nomem(err);
    cat_gss *g = NULL;
    int rc = cat_gss_new(svc, c->principal, c->keytab, e->uri, &g, err);
    free(svc);
    if (rc) return rc;
    icd_buf out = ICD_BUF_INIT, in = ICD_BUF_INIT;
    bool done = false;
    rc = cat_gss_step(g, NULL, 0, &out, &done, err);
    if (rc == 0) rc = sasl_send(c, e, SASL_START, "GSSAPI", 6, err);
    if (rc == 0) rc = sasl_send(c, e, done ? SASL_COMPLETE : SASL_OK, out.data, out.len, err);
    for (int round = 0; rc == 0; round++) {
        icd_buf_clear(&in);
        rc = recv_exact(c, e, &in, 5, err);
        if (rc) break;
        int status = (unsigned char)in.data[0];
        uint32_t n = icd_load_be32((const uint8_t *)in.data + 1);
        if (n > 1024 * 1024 || status < SASL_START || status > SASL_COMPLETE) {
            rc = icd_fail(err, ICD_ECORRUPT, e->uri, -1,
                          "Hive Metastore: not a SASL answer (status %d, length %u): is this "
                          "metastore configured for Kerberos?",
                          status, n);
            break;
        }
        icd_buf_clear(&in);
        rc = recv_exact(c, e, &in, n, err);
        if (rc) break;
        if (status == SASL_BAD || status == SASL_ERROR) {
            for (size_t i = 0; i < in.len; i++)
                if ((unsigned char)in.data[i] < 0x20) in.data[i] = ' ';
            rc = icd_fail(err, ICD_EIO, e->uri, -1,
                          "Hive Metastore: SASL authentication refused by the server: %.300s",
                          in.len ? in.data : "(no reason given)");
            break;
        }
        if (status == SASL_COMPLETE && done) break; /* authenticated */
        if (round > 16 || done) {
            rc = icd_fail(err, ICD_ECORRUPT, e->uri, -1,
                          "Hive Metastore: the SASL exchange does not end");
            break;
        }
        icd_buf_clear(&out);
        rc = cat_gss_step(g, in.data, in.len, &out, &done, err);
        if (rc == 0 && status != SASL_COMPLETE)
            rc = sasl_send(c, e, done ? SASL_COMPLETE : SASL_OK, out.data, out.len, err);
        if (rc == 0 && status == SASL_COMPLETE) break;
    }
    icd_buf_free(&out);
    icd_buf_free(&in);
    cat_gss_free(g);
    return rc;
}

/* TCP connected: TLS, then SASL, as configured. */
static int secure(cat_hive *c, const hive_endpoint *e, icd_error *err)
{
    if (c->tls_ctx) ICD_TRY(tls_connect(c, e, err));
    if (c->sasl) ICD_TRY(sasl_handshake(c, e, err));
    return 0;
}

/* Outcome of one exchange: 0 ok, or an error that is a transport failure (retry) or not. */
typedef enum { XR_OK, XR_TRANSPORT, XR_FINAL } xresult;

/* A plain client's first reply bytes that are a SASL BAD/ERROR message (status 3 or 4: never
 * the start of a Thrift reply, framed or not): the server wants Kerberos. */
static bool sasl_refusal(const cat_hive *c, const hive_endpoint *e, const icd_buf *b, int *rc,
                         icd_error *err)
{
    if (c->sasl || b->len < 1 || (b->data[0] != SASL_BAD && b->data[0] != SASL_ERROR)) return false;
    *rc = icd_fail(err, ICD_EIO, e->uri, -1,
                   "Hive Metastore: the server answered with a SASL error: it expects Kerberos "
                   "(hive.metastore.sasl.enabled=true, hive.metastore.kerberos.principal)");
    return true;
}

/* Sends the request and decodes the reply on the open connection. */
static xresult exchange(cat_hive *c, const hive_endpoint *e, const icd_buf *req, int32_t seqid,
                        cat_hive_table **out, int *rc, icd_error *err)
{
    icd_buf b = ICD_BUF_INIT;
    xresult x = XR_OK;
    *rc = send_all(c, e, req->data, req->len, err);
    if (*rc) return XR_TRANSPORT;
    size_t body = 0, frame = 0;
    if (c->framed || c->sasl) { /* a SASL connection frames every message like framed */
        while (*rc == 0 && b.len < 4)
            *rc = recv_some(c, e, &b, 4 - b.len, err);
        if (*rc == 0 && sasl_refusal(c, e, &b, rc, err)) x = XR_FINAL;
        if (*rc == 0) {
            const unsigned char *h = (const unsigned char *)b.data;
            uint32_t n = icd_load_be32(h);
            if (n > MAX_REPLY_BYTES) {
                *rc = icd_fail(err, ICD_ECORRUPT, e->uri, 0,
                               "Hive Metastore: reply frame of %u bytes (limit %u; an unframed "
                               "server read as framed?)",
                               n, MAX_REPLY_BYTES);
                x = XR_FINAL;
            }
            frame = n;
            body = 4;
            while (*rc == 0 && b.len < body + frame)
                *rc = recv_some(c, e, &b, body + frame - b.len, err);
            if (*rc == 0 && c->sasl && c->framed) { /* framed inside the SASL frame */
                if (frame < 4 || icd_load_be32((const uint8_t *)b.data + 4) != frame - 4) {
                    *rc = icd_fail(err, ICD_ECORRUPT, e->uri, 0,
                                   "Hive Metastore: the SASL frame does not hold one framed "
                                   "reply (is hive.metastore.thrift.framed.transport.enabled "
                                   "right?)");
                    x = XR_FINAL;
                }
                body += 4;
                frame -= 4;
            }
        }
        if (*rc) {
            icd_buf_free(&b);
            return x == XR_FINAL ? XR_FINAL : XR_TRANSPORT;
        }
        size_t used;
        bool truncated;
        *rc =
            cat_hive_parse_reply(b.data + body, frame, seqid, e->uri, out, &used, &truncated, err);
        if (*rc == 0 && used != frame)
            *rc = icd_fail(err, ICD_ECORRUPT, e->uri, (int64_t)used,
                           "Hive Metastore: %zu bytes after the reply in its frame", frame - used);
        icd_buf_free(&b);
        return *rc ? XR_FINAL : XR_OK;
    }
    /* Unframed: read until the reply decodes. */
    for (;;) {
        *rc = recv_some(c, e, &b, 64 * 1024, err);
        if (*rc) {
            x = XR_TRANSPORT;
            break;
        }
        if (sasl_refusal(c, e, &b, rc, err)) {
            x = XR_FINAL;
            break;
        }
        size_t used;
        bool truncated;
        icd_error perr;
        icd_error_clear(&perr);
        *rc = cat_hive_parse_reply(b.data, b.len, seqid, e->uri, out, &used, &truncated, &perr);
        if (*rc && truncated && b.len < MAX_REPLY_BYTES) continue;
        if (err && *rc) *err = perr;
        if (*rc == 0 && used != b.len)
            *rc = icd_fail(err, ICD_ECORRUPT, e->uri, (int64_t)used,
                           "Hive Metastore: %zu unexpected bytes after the reply", b.len - used);
        x = *rc ? XR_FINAL : XR_OK;
        break;
    }
    icd_buf_free(&b);
    return x;
}

int cat_hive_get_table(cat_hive *c, const char *db, const char *table, cat_hive_table **out,
                       icd_error *err)
{
    *out = NULL;
    if (!db || !db[0] || !table || !table[0])
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Hive catalog: a table needs a database (namespace) and a name");
    int32_t seqid = ++c->seqid;
    if (seqid <= 0) seqid = c->seqid = 1;
    icd_buf req = ICD_BUF_INIT;
    if (c->sasl && c->framed) put_be32(&req, 0); /* the SASL frame around the framed call */
    cat_hive_encode_get_table(&req, db, table, seqid, c->framed || c->sasl);
    if (c->sasl && c->framed && icd_buf_ok(&req)) {
        uint32_t n = (uint32_t)(req.len - 4);
        unsigned char *h = (unsigned char *)req.data;
        h[0] = (unsigned char)(n >> 24);
        h[1] = (unsigned char)(n >> 16);
        h[2] = (unsigned char)(n >> 8);
        h[3] = (unsigned char)n;
    }
    if (!icd_buf_ok(&req)) return icd_fail_nomem(err);
    int rc = ICD_EIO;
    long attempts = 0;
    for (long round = 0; round <= c->retries; round++) {
        if (round > 0 && c->retry_delay_ms > 0) sleep_ms(c->retry_delay_ms);
        for (size_t k = 0; k < c->nep; k++) {
            size_t i = (c->cur + k) % c->nep;
            const hive_endpoint *e = &c->ep[i];
            attempts++;
            if (c->fd >= 0 && i != c->cur) disconnect(c);
            if (c->fd < 0) {
                c->auth_failed = false;
                rc = connect_endpoint(c, e, err);
                if (rc == ICD_ENOMEM || c->auth_failed) goto done;
                if (rc) continue;
                c->cur = i;
            }
            xresult x = exchange(c, e, &req, seqid, out, &rc, err);
            if (x == XR_OK) goto done;
            disconnect(c); /* the stream state is unknown after any failure */
            if (x == XR_FINAL || rc == ICD_ENOMEM) goto done;
        }
    }
    if (attempts > 1) icd_error_wrap(err, "after %ld attempts", attempts);
done:
    icd_buf_free(&req);
    return rc;
}

int cat_hive_resolve(cat_hive *c, const char *db, const char *table, char **metadata_location,
                     icd_error *err)
{
    *metadata_location = NULL;
    cat_hive_table *t;
    ICD_TRY(cat_hive_get_table(c, db, table, &t, err));
    int rc = 0;
    const char *where = c->ep[c->cur].uri;
    if (!t->iceberg_type || strcasecmp(t->iceberg_type, "ICEBERG"))
        rc = icd_fail(
            err, ICD_EINVALID, where, -1,
            "Hive table %s.%s is not an Iceberg table (its table_type parameter is %s%s%s)", db,
            table, t->iceberg_type ? "'" : "", t->iceberg_type ? t->iceberg_type : "not set",
            t->iceberg_type ? "'" : "");
    else if (!t->metadata_location || !t->metadata_location[0])
        rc = icd_fail(err, ICD_EINVALID, where, -1,
                      "Hive table %s.%s has no metadata_location parameter", db, table);
    else {
        *metadata_location = t->metadata_location;
        t->metadata_location = NULL;
    }
    cat_hive_table_free(t);
    return rc;
}

int cat_hive_load(cat_hive *c, const char *db, const char *table, ice_metadata **out,
                  icd_error *err)
{
    *out = NULL;
    char *loc;
    ICD_TRY(cat_hive_resolve(c, db, table, &loc, err));
    int rc = ice_metadata_load(c->io, loc, out, err);
    free(loc);
    return rc;
}
