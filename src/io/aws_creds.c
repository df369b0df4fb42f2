/*
 * The AWS default credential chain (see aws_creds.h): picks the first configured source
 * of an environment snapshot, fetches credentials from it (STS over http.c, the container
 * endpoint, IMDSv2, a credential_process child, the shared files) and caches them with
 * their expiry behind a mutex, so the S3/Glue/STS/REST request paths of every thread ask
 * the one provider before each request and a long `serve` or `sync` keeps working across
 * expirations.
 */
#include <ctype.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/datetime.h"
#include "io/aws_creds.h"
#include "io/http.h"

#define MAX_PROFILE_DEPTH 5
#define PROCESS_OUTPUT_MAX (64 * 1024)
#define STS_BODY_MAX (256 * 1024)
#define DEFAULT_DMI "/sys/class/dmi/id/sys_vendor"

typedef enum {
    SRC_UNRESOLVED,
    SRC_NONE,
    SRC_ENV,
    SRC_WEB,
    SRC_PROFILE,
    SRC_ECS,
    SRC_IMDS
} src_kind;

typedef struct ini_entry {
    char *section; /* profile name: "[profile x]" of config and "[x]" of credentials -> "x" */
    char *key;
    char *value;
    int from_credentials;
} ini_entry;

static int load_ini(icd_aws_creds *p, icd_error *err);
static const char *ini_get(const icd_aws_creds *p, const char *profile, const char *key);

struct icd_aws_creds {
    pthread_mutex_t mu;
    char **env;
    size_t nenv;
    src_kind kind;
    char source[160];
    icd_aws_key cur;
    int64_t fetched_at;
    unsigned fetches;
    ini_entry *ini;
    size_t nini;
    bool ini_loaded;
    char *profile;
    char *region;
    bool region_done;
    char *dmi_path;
    icd_remote *http;
};

static void wipe_free(char *s)
{
    if (s) {
        volatile char *p = s;
        while (*p)
            *p++ = 0;
        free(s);
    }
}

void icd_aws_key_clear(icd_aws_key *k)
{
    wipe_free(k->access_key);
    wipe_free(k->secret_key);
    wipe_free(k->session_token);
    memset(k, 0, sizeof *k);
}

static int key_copy(icd_aws_key *dst, const icd_aws_key *src, icd_error *err)
{
    memset(dst, 0, sizeof *dst);
    dst->expires = src->expires;
    if (!(dst->access_key = strdup(src->access_key)) ||
        !(dst->secret_key = strdup(src->secret_key)) ||
        (src->session_token && !(dst->session_token = strdup(src->session_token)))) {
        icd_aws_key_clear(dst);
        return icd_fail_nomem(err);
    }
    return 0;
}

static int64_t now_s(void)
{
    return (int64_t)time(NULL);
}

int icd_aws_creds_new(const char *const *envp, icd_aws_creds **out, icd_error *err)
{
    *out = NULL;
    icd_aws_creds *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    if (pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        return icd_fail(err, ICD_EIO, NULL, -1, "cannot create a mutex");
    }
    size_t n = 0;
    while (envp && envp[n])
        n++;
    p->env = calloc(n + 1, sizeof *p->env);
    bool ok = p->env != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = (p->env[p->nenv++] = strdup(envp[i])) != NULL;
    if (!ok) {
        icd_aws_creds_free(p);
        return icd_fail_nomem(err);
    }
    *out = p;
    return 0;
}

static void free_ini(icd_aws_creds *p)
{
    for (size_t i = 0; i < p->nini; i++) {
        free(p->ini[i].section);
        free(p->ini[i].key);
        wipe_free(p->ini[i].value);
    }
    free(p->ini);
    p->ini = NULL;
    p->nini = 0;
}

void icd_aws_creds_free(icd_aws_creds *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nenv; i++)
        wipe_free(p->env[i]);
    free(p->env);
    icd_aws_key_clear(&p->cur);
    free_ini(p);
    free(p->profile);
    free(p->region);
    free(p->dmi_path);
    icd_remote_free(p->http);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void icd_aws_creds_set_dmi_path(icd_aws_creds *p, const char *path)
{
    free(p->dmi_path);
    p->dmi_path = path ? strdup(path) : NULL;
}

const char *icd_aws_creds_env(const icd_aws_creds *p, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < p->nenv; i++)
        if (!strncmp(p->env[i], name, n) && p->env[i][n] == '=')
            return p->env[i][n + 1] ? p->env[i] + n + 1 : NULL;
    return NULL;
}

static bool env_true(const icd_aws_creds *p, const char *name)
{
    const char *v = icd_aws_creds_env(p, name);
    return v && (!strcasecmp(v, "true") || !strcmp(v, "1"));
}

/* ---- shared config / credentials files ---------------------------------------------- */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Reads one INI file; a missing file is no error. Nested (indented) sub-keys such as
 * `s3 =\n  max_concurrent_requests = 10` are skipped. */
static int load_ini_stream(icd_aws_creds *p, FILE *f, int from_credentials, icd_error *err)
{
    char line[4096];
    char *section = NULL;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        bool indented = line[0] == ' ' || line[0] == '\t';
        char *s = trim(line);
        if (!s[0] || s[0] == '#' || s[0] == ';') continue;
        if (s[0] == '[') {
            char *e = strchr(s, ']');
            free(section);
            section = NULL;
            if (!e) continue;
            *e = '\0';
            char *name = trim(s + 1);
            if (!from_credentials) {
                if (!strncmp(name, "profile ", 8))
                    name = trim(name + 8);
                else if (strcmp(name, "default") != 0)
                    continue; /* [sso-session x], [services x] */
            }
            if (!(section = strdup(name))) rc = icd_fail_nomem(err);
            continue;
        }
        if (!section || indented) continue;
        char *eq = strchr(s, '=');
        if (!eq) continue;
        *eq = '\0';
        char *k = trim(s), *v = trim(eq + 1);
        ini_entry *ne = realloc(p->ini, (p->nini + 1) * sizeof *ne);
        if (!ne) {
            rc = icd_fail_nomem(err);
            break;
        }
        p->ini = ne;
        ini_entry *e = &p->ini[p->nini];
        e->section = strdup(section);
        e->key = strdup(k);
        e->value = strdup(v);
        e->from_credentials = from_credentials;
        p->nini++;
        if (!e->section || !e->key || !e->value) rc = icd_fail_nomem(err);
    }
    free(section);
    return rc;
}

static int load_ini_file(icd_aws_creds *p, const char *path, int from_credentials, icd_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int rc = load_ini_stream(p, f, from_credentials, err);
    fclose(f);
    return rc;
}

/* A key of a profile; the credentials file wins over the config file. */
static const char *ini_get(const icd_aws_creds *p, const char *profile, const char *key)
{
    const char *found = NULL;
    int from = -1;
    for (size_t i = 0; i < p->nini; i++)
        if (!strcmp(p->ini[i].section, profile) && !strcasecmp(p->ini[i].key, key) &&
            p->ini[i].from_credentials >= from) {
            found = p->ini[i].value;
            from = p->ini[i].from_credentials;
        }
    return found && found[0] ? found : NULL;
}

int icd_aws_creds_load_profile_text(icd_aws_creds *p, const char *text, size_t len,
                                    bool credentials_file, icd_error *err)
{
    if (!len) return 0;
    FILE *f = fmemopen((void *)text, len, "r");
    if (!f) return icd_fail_nomem(err);
    pthread_mutex_lock(&p->mu);
    int rc = load_ini(p, err); /* the real files first (none for an empty snapshot) */
    if (rc == 0) rc = load_ini_stream(p, f, credentials_file ? 1 : 0, err);
    pthread_mutex_unlock(&p->mu);
    fclose(f);
    return rc;
}

const char *icd_aws_creds_profile_value(icd_aws_creds *p, const char *key)
{
    pthread_mutex_lock(&p->mu);
    icd_error e;
    icd_error_clear(&e);
    const char *v = load_ini(p, &e) == 0 ? ini_get(p, p->profile, key) : NULL;
    pthread_mutex_unlock(&p->mu);
    return v;
}

static int load_ini(icd_aws_creds *p, icd_error *err)
{
    if (p->ini_loaded) return 0;
    p->ini_loaded = true;
    const char *home = icd_aws_creds_env(p, "HOME");
    char buf[4096];
    const char *cfg = icd_aws_creds_env(p, "AWS_CONFIG_FILE");
    if (!cfg && home) {
        snprintf(buf, sizeof buf, "%s/.aws/config", home);
        cfg = buf;
    }
    if (cfg) ICD_TRY(load_ini_file(p, cfg, 0, err));
    const char *cred = icd_aws_creds_env(p, "AWS_SHARED_CREDENTIALS_FILE");
    if (!cred && home) {
        snprintf(buf, sizeof buf, "%s/.aws/credentials", home);
        cred = buf;
    }
    if (cred) ICD_TRY(load_ini_file(p, cred, 1, err));
    const char *prof = icd_aws_creds_env(p, "AWS_PROFILE");
    if (!prof) prof = icd_aws_creds_env(p, "AWS_DEFAULT_PROFILE");
    if (!(p->profile = strdup(prof ? prof : "default"))) return icd_fail_nomem(err);
    return 0;
}

static bool profile_exists(const icd_aws_creds *p, const char *profile)
{
    for (size_t i = 0; i < p->nini; i++)
        if (!strcmp(p->ini[i].section, profile)) return true;
    return false;
}

static bool profile_has_creds(const icd_aws_creds *p, const char *profile)
{
    return ini_get(p, profile, "aws_access_key_id") || ini_get(p, profile, "role_arn") ||
           ini_get(p, profile, "credential_process") ||
           ini_get(p, profile, "web_identity_token_file");
}

/* ---- parsing answers ------------------------------------------------------------------ */

/* "2026-12-01T21:00:00Z", with optional fraction and "+00:00" -> Unix seconds. */
static bool parse_iso8601(const char *s, int64_t *out)
{
    int y, mo, d, h, mi, sec;
    int n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6) return false;
    const char *r = s + n;
    if (*r == '.')
        for (r++; isdigit((unsigned char)*r); r++) {
        }
    int64_t off = 0;
    if (*r == '+' || *r == '-') {
        int oh, om;
        if (sscanf(r + 1, "%2d:%2d", &oh, &om) != 2) return false;
        off = (oh * 3600 + om * 60) * (*r == '-' ? -1 : 1);
    } else if (*r != 'Z' && *r != '\0') {
        return false;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
    *out = icd_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
    return true;
}

/* The JSON of the container endpoint, IMDS and credential_process: AccessKeyId,
 * SecretAccessKey, Token or SessionToken, Expiration. */
static int key_from_json(const char *text, size_t len, icd_aws_key *k, const char *what,
                         icd_error *err);

int icd_aws_parse_key_json(const char *text, size_t len, icd_aws_key *k, icd_error *err)
{
    return key_from_json(text, len, k, "credentials", err);
}

static int key_from_json(const char *text, size_t len, icd_aws_key *k, const char *what,
                         icd_error *err)
{
    memset(k, 0, sizeof *k);
    json_error_t je;
    json_t *j = json_loadb(text, len, 0, &je);
    if (!j || !json_is_object(j)) {
        json_decref(j);
        return icd_fail(err, ICD_EIO, NULL, -1, "%s: the credentials answer is not a JSON object",
                        what);
    }
    const char *code = json_string_value(json_object_get(j, "Code"));
    const char *ak = json_string_value(json_object_get(j, "AccessKeyId"));
    const char *sk = json_string_value(json_object_get(j, "SecretAccessKey"));
    const char *tok = json_string_value(json_object_get(j, "Token"));
    if (!tok) tok = json_string_value(json_object_get(j, "SessionToken"));
    const char *exp = json_string_value(json_object_get(j, "Expiration"));
    int rc = 0;
    if (code && strcmp(code, "Success") != 0)
        rc = icd_fail(err, ICD_EIO, NULL, -1, "%s: the credentials answer has Code '%.60s'", what,
                      code);
    else if (!ak || !sk || !ak[0] || !sk[0])
        rc = icd_fail(err, ICD_EIO, NULL, -1,
                      "%s: the credentials answer lacks AccessKeyId or SecretAccessKey", what);
    else if (exp && !parse_iso8601(exp, &k->expires))
        rc = icd_fail(err, ICD_EIO, NULL, -1, "%s: cannot parse Expiration '%.40s'", what, exp);
    if (rc == 0 && (!(k->access_key = strdup(ak)) || !(k->secret_key = strdup(sk)) ||
                    (tok && tok[0] && !(k->session_token = strdup(tok)))))
        rc = icd_fail_nomem(err);
    json_decref(j);
    if (rc) icd_aws_key_clear(k);
    return rc;
}

/* ---- HTTP ----------------------------------------------------------------------------- */

static int http_client(icd_aws_creds *p, icd_error *err)
{
    if (p->http) return 0;
    if (!(p->http = icd_remote_new())) return icd_fail_nomem(err);
    icd_http_policy pol;
    icd_http_get_policy(p->http, &pol);
    pol.max_attempts = 3;
    pol.base_delay_ms = 100;
    pol.max_delay_ms = 1000;
    pol.connect_timeout_ms = 2000;
    pol.low_speed_time_s = 10;
    pol.total_timeout_s = 20;
    icd_http_set_policy(p->http, &pol);
    const char *ca = icd_aws_creds_env(p, "SSL_CERT_FILE");
    if (!ca || !ca[0]) ca = icd_aws_creds_env(p, "CURL_CA_BUNDLE");
    if (icd_remote_set_ca_file(p->http, ca)) return icd_fail_nomem(err);
    return 0;
}

static int http_do(icd_aws_creds *p, icd_http_req *req, icd_http_resp *resp, const char *what,
                   icd_error *err)
{
    ICD_TRY(http_client(p, err));
    req->location = what;
    if (!req->max_body) req->max_body = STS_BODY_MAX;
    int rc = icd_http_perform(p->http, req, resp, err);
    if (rc == 0 && (resp->status < 200 || resp->status > 299))
        rc = icd_http_status_error(req, resp, err);
    if (rc) icd_http_resp_free(resp);
    return rc;
}

/* ---- STS ------------------------------------------------------------------------------- */

static const char *region_locked(icd_aws_creds *p);

static const char *region_or_default(icd_aws_creds *p)
{
    const char *r = region_locked(p);
    return r ? r : "us-east-1";
}

static int sts_url(icd_aws_creds *p, icd_buf *u)
{
    const char *ep = icd_aws_creds_env(p, "AWS_ENDPOINT_URL_STS");
    if (!ep) ep = icd_aws_creds_env(p, "AWS_ENDPOINT_URL");
    if (ep) {
        if (!strstr(ep, "://")) icd_buf_puts(u, "https://");
        icd_buf_puts(u, ep);
        if (u->len && u->data[u->len - 1] != '/') icd_buf_putc(u, '/');
    } else {
        icd_buf_printf(u, "https://sts.%s.amazonaws.com/", region_or_default(p));
    }
    return 0;
}

static void form_put(icd_buf *b, const char *k, const char *v)
{
    if (b->len) icd_buf_putc(b, '&');
    icd_buf_puts(b, k);
    icd_buf_putc(b, '=');
    icd_url_encode(b, v, strlen(v), false);
}

/* Calls an STS action (form POST); `sign` NULL for AssumeRoleWithWebIdentity. */
static int sts_call(icd_aws_creds *p, const char *action, icd_buf *form, const icd_aws_key *sign,
                    icd_aws_key *out, icd_error *err)
{
    memset(out, 0, sizeof *out);
    icd_buf url = ICD_BUF_INIT;
    sts_url(p, &url);
    form_put(form, "Action", action);
    form_put(form, "Version", "2011-06-15");
    if (!icd_buf_ok(&url) || !icd_buf_ok(form)) {
        icd_buf_free(&url);
        return icd_fail_nomem(err);
    }
    static const char *const HDRS[] = {"Content-Type: application/x-www-form-urlencoded",
                                       "Accept: application/xml", NULL};
    icd_sigv4 s = {0};
    if (sign) {
        s.service = "sts";
        s.region = region_or_default(p);
        s.access_key = sign->access_key;
        s.secret_key = sign->secret_key;
        s.session_token = sign->session_token;
    }
    char what[96];
    snprintf(what, sizeof what, "STS %s", action);
    icd_http_req req = {.method = "POST",
                        .url = url.data,
                        .headers = HDRS,
                        .body = form->data,
                        .body_len = form->len,
                        .sign = sign ? &s : NULL};
    icd_http_resp resp;
    int rc = http_do(p, &req, &resp, what, err);
    icd_buf_free(&url);
    if (rc) return rc;
    const char *xml = resp.body.data ? resp.body.data : "";
    size_t n = resp.body.len;
    char *ak = icd_xml_text(xml, n, "AccessKeyId", NULL);
    char *sk = icd_xml_text(xml, n, "SecretAccessKey", NULL);
    char *tok = icd_xml_text(xml, n, "SessionToken", NULL);
    char *exp = icd_xml_text(xml, n, "Expiration", NULL);
    if (!ak || !sk || !tok)
        rc = icd_fail(err, ICD_EIO, what, -1, "the answer holds no Credentials");
    else if (exp && !parse_iso8601(exp, &out->expires))
        rc = icd_fail(err, ICD_EIO, what, -1, "cannot parse Expiration '%.40s'", exp);
    if (rc == 0) {
        out->access_key = ak;
        out->secret_key = sk;
        out->session_token = tok;
        ak = sk = tok = NULL;
    }
    wipe_free(ak);
    wipe_free(sk);
    wipe_free(tok);
    free(exp);
    icd_http_resp_free(&resp);
    return rc;
}

static int read_token_file(const char *path, char **out, const char *what, icd_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return icd_fail(err, ICD_EIO, path, -1, "%s: cannot read the token file", what);
    icd_buf b = ICD_BUF_INIT;
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len < 1024 * 1024)
        icd_buf_append(&b, chunk, k);
    fclose(f);
    icd_buf_puts(&b, "");
    if (!icd_buf_ok(&b)) return icd_fail_nomem(err);
    while (b.len && isspace((unsigned char)b.data[b.len - 1]))
        b.data[--b.len] = '\0';
    if (!b.len) {
        icd_buf_free(&b);
        return icd_fail(err, ICD_EINVALID, path, -1, "%s: the token file is empty", what);
    }
    *out = icd_buf_detach(&b);
    return 0;
}

static int web_identity(icd_aws_creds *p, const char *token_file, const char *role,
                        const char *session, icd_aws_key *out, icd_error *err)
{
    char *tok;
    ICD_TRY(read_token_file(token_file, &tok, "web identity", err));
    icd_buf form = ICD_BUF_INIT;
    form_put(&form, "RoleArn", role);
    form_put(&form, "RoleSessionName", session ? session : "icedruid");
    form_put(&form, "WebIdentityToken", tok);
    wipe_free(tok);
    int rc = sts_call(p, "AssumeRoleWithWebIdentity", &form, NULL, out, err);
    if (form.data) memset(form.data, 0, form.len);
    icd_buf_free(&form);
    return rc;
}

/* ---- credential_process ------------------------------------------------------------- */

/* Runs the profile's credential_process with /bin/sh. Its stdout is the JSON answer; its
 * stderr goes to a temporary file whose first line (at most 160 bytes) the error quotes. */
static int run_process(const char *cmd, icd_aws_key *out, icd_error *err)
{
    char errpath[] = "/tmp/icedruid-credproc-XXXXXX";
    int efd = mkstemp(errpath);
    if (efd < 0) return icd_fail(err, ICD_EIO, NULL, -1, "credential_process: no temporary file");
    close(efd);
    icd_buf sh = ICD_BUF_INIT;
    icd_buf_printf(&sh, "( %s ) 2>'%s'", cmd, errpath);
    FILE *f = icd_buf_ok(&sh) ? popen(sh.data, "r") : NULL;
    icd_buf_free(&sh);
    if (!f) {
        unlink(errpath);
        return icd_fail(err, ICD_EIO, NULL, -1, "credential_process: cannot start it");
    }
    icd_buf b = ICD_BUF_INIT;
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (b.len < PROCESS_OUTPUT_MAX) icd_buf_append(&b, chunk, k);
    int st = pclose(f);
    char why[161] = "";
    FILE *ef = fopen(errpath, "r");
    if (ef) {
        if (fgets(why, sizeof why, ef)) why[strcspn(why, "\r\n")] = '\0';
        fclose(ef);
    }
    unlink(errpath);
    for (char *q = why; *q; q++)
        if ((unsigned char)*q < 0x20) *q = ' ';
    int rc = 0;
    if (!icd_buf_ok(&b))
        rc = icd_fail_nomem(err);
    else if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        rc = icd_fail(err, ICD_EIO, NULL, -1, "credential_process failed (exit status %d)%s%s",
                      st == -1        ? -1
                      : WIFEXITED(st) ? WEXITSTATUS(st)
                                      : 128 + WTERMSIG(st),
                      why[0] ? ": " : "", why);
    else if (b.len >= PROCESS_OUTPUT_MAX)
        rc = icd_fail(err, ICD_EIO, NULL, -1, "credential_process printed more than %d bytes",
                      PROCESS_OUTPUT_MAX);
    if (rc == 0) rc = key_from_json(b.data ? b.data : "", b.len, out, "credential_process", err);
    if (b.data) memset(b.data, 0, b.len);
    icd_buf_free(&b);
    return rc;
}

/* ---- container and instance metadata ---------------------------------------------- */

static bool host_allowed_plain(const char *url)
{
    const char *h = strstr(url, "://");
    if (!h) return false;
    h += 3;
    static const char *const OK[] = {"127.",          "localhost",      "[::1]",
                                     "169.254.170.2", "169.254.170.23", "[fd00:ec2::23]"};
    for (size_t i = 0; i < sizeof OK / sizeof *OK; i++)
        if (!strncmp(h, OK[i], strlen(OK[i]))) return true;
    return false;
}

static int container(icd_aws_creds *p, icd_aws_key *out, icd_error *err)
{
    const char *full = icd_aws_creds_env(p, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const char *rel = icd_aws_creds_env(p, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    icd_buf url = ICD_BUF_INIT;
    if (rel) {
        icd_buf_puts(&url, "http://169.254.170.2");
        if (rel[0] != '/') icd_buf_putc(&url, '/');
        icd_buf_puts(&url, rel);
    } else {
        icd_buf_puts(&url, full);
        if (strncasecmp(full, "https://", 8) && !host_allowed_plain(full)) {
            icd_buf_free(&url);
            return icd_fail(err, ICD_EINVALID, NULL, -1,
                            "AWS_CONTAINER_CREDENTIALS_FULL_URI must be https or name a loopback "
                            "or the container credentials host");
        }
    }
    char *token = NULL;
    const char *tf = icd_aws_creds_env(p, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    const char *tv = icd_aws_creds_env(p, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
    int rc = 0;
    if (tf)
        rc = read_token_file(tf, &token, "container credentials", err);
    else if (tv && !(token = strdup(tv)))
        rc = icd_fail_nomem(err);
    icd_buf auth = ICD_BUF_INIT;
    if (token) icd_buf_printf(&auth, "Authorization: %s", token);
    wipe_free(token);
    const char *hdrs[3] = {"Accept: application/json", auth.len ? auth.data : NULL, NULL};
    if (rc == 0 && (!icd_buf_ok(&url) || !icd_buf_ok(&auth))) rc = icd_fail_nomem(err);
    if (rc == 0) {
        icd_http_req req = {.method = "GET", .url = url.data, .headers = hdrs};
        icd_http_resp resp;
        rc = http_do(p, &req, &resp, "container credentials", err);
        if (rc == 0) {
            rc = key_from_json(resp.body.data ? resp.body.data : "", resp.body.len, out,
                               "container credentials", err);
            if (resp.body.data) memset(resp.body.data, 0, resp.body.len);
            icd_http_resp_free(&resp);
        }
    }
    if (auth.data) memset(auth.data, 0, auth.len);
    icd_buf_free(&auth);
    icd_buf_free(&url);
    return rc;
}

static const char *imds_base(const icd_aws_creds *p)
{
    const char *ep = icd_aws_creds_env(p, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
    return ep ? ep : "http://169.254.169.254";
}

/* Whether to ask the instance metadata service at all (see aws_creds.h). */
static bool imds_wanted(const icd_aws_creds *p)
{
    if (env_true(p, "AWS_EC2_METADATA_DISABLED")) return false;
    if (icd_aws_creds_env(p, "AWS_EC2_METADATA_SERVICE_ENDPOINT")) return true;
    FILE *f = fopen(p->dmi_path ? p->dmi_path : DEFAULT_DMI, "r");
    if (!f) return false;
    char v[128] = "";
    bool ec2 = fgets(v, sizeof v, f) && strstr(v, "Amazon EC2");
    fclose(f);
    return ec2;
}

/* GET of an IMDS path with the session token into *out (malloc'd text). */
static int imds_get(icd_aws_creds *p, const char *token, const char *path, char **out,
                    icd_error *err)
{
    *out = NULL;
    icd_buf url = ICD_BUF_INIT, th = ICD_BUF_INIT;
    icd_buf_puts(&url, imds_base(p));
    while (url.len && url.data[url.len - 1] == '/')
        url.data[--url.len] = '\0';
    icd_buf_puts(&url, path);
    icd_buf_printf(&th, "X-aws-ec2-metadata-token: %s", token);
    int rc = 0;
    if (!icd_buf_ok(&url) || !icd_buf_ok(&th)) rc = icd_fail_nomem(err);
    const char *hdrs[2] = {th.data, NULL};
    if (rc == 0) {
        icd_http_req req = {.method = "GET", .url = url.data, .headers = hdrs};
        icd_http_resp resp;
        rc = http_do(p, &req, &resp, "instance metadata", err);
        if (rc == 0) {
            icd_buf_puts(&resp.body, "");
            if (!icd_buf_ok(&resp.body))
                rc = icd_fail_nomem(err);
            else
                *out = icd_buf_detach(&resp.body);
            icd_http_resp_free(&resp);
        }
    }
    if (th.data) memset(th.data, 0, th.len);
    icd_buf_free(&th);
    icd_buf_free(&url);
    return rc;
}

static int imds_token(icd_aws_creds *p, char **token, icd_error *err)
{
    *token = NULL;
    icd_buf url = ICD_BUF_INIT;
    icd_buf_puts(&url, imds_base(p));
    while (url.len && url.data[url.len - 1] == '/')
        url.data[--url.len] = '\0';
    icd_buf_puts(&url, "/latest/api/token");
    if (!icd_buf_ok(&url)) return icd_fail_nomem(err);
    static const char *const HDRS[] = {"X-aws-ec2-metadata-token-ttl-seconds: 21600", NULL};
    icd_http_req req = {.method = "PUT", .url = url.data, .headers = HDRS};
    icd_http_resp resp;
    int rc = http_do(p, &req, &resp, "instance metadata (IMDSv2 token)", err);
    icd_buf_free(&url);
    if (rc) return rc;
    icd_buf_puts(&resp.body, "");
    if (!icd_buf_ok(&resp.body)) rc = icd_fail_nomem(err);
    if (rc == 0 && !resp.body.len)
        rc = icd_fail(err, ICD_EIO, "instance metadata", -1, "empty IMDSv2 session token");
    if (rc == 0) *token = icd_buf_detach(&resp.body);
    icd_http_resp_free(&resp);
    return rc;
}

static int imds(icd_aws_creds *p, icd_aws_key *out, icd_error *err)
{
    char *token, *role = NULL, *body = NULL;
    ICD_TRY(imds_token(p, &token, err));
    int rc = imds_get(p, token, "/latest/meta-data/iam/security-credentials/", &role, err);
    if (rc == 0) {
        role[strcspn(role, "\r\n")] = '\0';
        if (!role[0])
            rc = icd_fail(err, ICD_EIO, "instance metadata", -1,
                          "the instance has no IAM role (instance profile)");
    }
    if (rc == 0) {
        icd_buf path = ICD_BUF_INIT;
        icd_buf_puts(&path, "/latest/meta-data/iam/security-credentials/");
        icd_url_encode(&path, role, strlen(role), false);
        rc = icd_buf_ok(&path) ? imds_get(p, token, path.data, &body, err) : icd_fail_nomem(err);
        icd_buf_free(&path);
    }
    if (rc == 0) rc = key_from_json(body, strlen(body), out, "instance metadata", err);
    if (rc == 0 && !p->region_done) {
        char *reg = NULL;
        icd_error e2;
        icd_error_clear(&e2);
        if (imds_get(p, token, "/latest/meta-data/placement/region", &reg, &e2) == 0 && reg[0]) {
            free(p->region);
            p->region = reg;
            reg = NULL;
        }
        free(reg);
    }
    wipe_free(body);
    free(role);
    wipe_free(token);
    return rc;
}

/* ---- profiles ------------------------------------------------------------------------- */

static int profile_creds(icd_aws_creds *p, const char *name, int depth, icd_aws_key *out,
                         icd_error *err);

static int env_static(icd_aws_creds *p, icd_aws_key *out, icd_error *err)
{
    icd_aws_key k = {.access_key = (char *)icd_aws_creds_env(p, "AWS_ACCESS_KEY_ID"),
                     .secret_key = (char *)icd_aws_creds_env(p, "AWS_SECRET_ACCESS_KEY"),
                     .session_token = (char *)icd_aws_creds_env(p, "AWS_SESSION_TOKEN")};
    if (!k.access_key || !k.secret_key)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together");
    return key_copy(out, &k, err);
}

static int assume_role(icd_aws_creds *p, const char *name, int depth, const char *role,
                       icd_aws_key *out, icd_error *err)
{
    icd_aws_key src = {0};
    const char *sp = ini_get(p, name, "source_profile");
    const char *cs = ini_get(p, name, "credential_source");
    int rc;
    if (sp && strcmp(sp, name) != 0)
        rc = profile_creds(p, sp, depth + 1, &src, err);
    else if (sp) { /* source_profile = itself: its static keys */
        icd_aws_key k = {.access_key = (char *)ini_get(p, name, "aws_access_key_id"),
                         .secret_key = (char *)ini_get(p, name, "aws_secret_access_key"),
                         .session_token = (char *)ini_get(p, name, "aws_session_token")};
        rc = k.access_key && k.secret_key
                 ? key_copy(&src, &k, err)
                 : icd_fail(err, ICD_EINVALID, NULL, -1,
                            "AWS profile '%s': source_profile names itself but it has no keys",
                            name);
    } else if (cs && !strcasecmp(cs, "Environment"))
        rc = env_static(p, &src, err);
    else if (cs && !strcasecmp(cs, "EcsContainer"))
        rc = container(p, &src, err);
    else if (cs && !strcasecmp(cs, "Ec2InstanceMetadata"))
        rc = imds(p, &src, err);
    else
        rc = icd_fail(err, ICD_EINVALID, NULL, -1,
                      "AWS profile '%s': role_arn needs source_profile or credential_source "
                      "(Environment, EcsContainer, Ec2InstanceMetadata)",
                      name);
    if (rc) return rc;
    icd_buf form = ICD_BUF_INIT;
    form_put(&form, "RoleArn", role);
    const char *sn = ini_get(p, name, "role_session_name");
    form_put(&form, "RoleSessionName", sn ? sn : "icedruid");
    const char *ext = ini_get(p, name, "external_id");
    if (ext) form_put(&form, "ExternalId", ext);
    const char *dur = ini_get(p, name, "duration_seconds");
    if (dur) form_put(&form, "DurationSeconds", dur);
    rc = sts_call(p, "AssumeRole", &form, &src, out, err);
    icd_buf_free(&form);
    icd_aws_key_clear(&src);
    if (rc) icd_error_wrap(err, "AWS profile '%s'", name);
    return rc;
}

static int profile_creds(icd_aws_creds *p, const char *name, int depth, icd_aws_key *out,
                         icd_error *err)
{
    memset(out, 0, sizeof *out);
    if (depth > MAX_PROFILE_DEPTH)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "AWS profile '%s': source_profile chain is longer than %d (a loop?)", name,
                        MAX_PROFILE_DEPTH);
    if (!profile_exists(p, name))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "AWS profile '%s' is not in the shared config or credentials file", name);
    const char *role = ini_get(p, name, "role_arn");
    const char *wtf = ini_get(p, name, "web_identity_token_file");
    const char *proc = ini_get(p, name, "credential_process");
    if (role && wtf)
        return web_identity(p, wtf, role, ini_get(p, name, "role_session_name"), out, err);
    if (role) return assume_role(p, name, depth, role, out, err);
    if (proc) return run_process(proc, out, err);
    icd_aws_key k = {.access_key = (char *)ini_get(p, name, "aws_access_key_id"),
                     .secret_key = (char *)ini_get(p, name, "aws_secret_access_key"),
                     .session_token = (char *)ini_get(p, name, "aws_session_token")};
    if (!k.access_key || !k.secret_key)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "AWS profile '%s' has no aws_access_key_id/aws_secret_access_key, "
                        "role_arn or credential_process",
                        name);
    return key_copy(out, &k, err);
}

/* ---- the chain ------------------------------------------------------------------------ */

static int resolve(icd_aws_creds *p, icd_error *err)
{
    ICD_TRY(load_ini(p, err));
    bool explicit_profile = icd_aws_creds_env(p, "AWS_PROFILE") != NULL;
    if (icd_aws_creds_env(p, "AWS_ACCESS_KEY_ID") ||
        icd_aws_creds_env(p, "AWS_SECRET_ACCESS_KEY")) {
        p->kind = SRC_ENV;
        snprintf(p->source, sizeof p->source, "environment");
    } else if (icd_aws_creds_env(p, "AWS_WEB_IDENTITY_TOKEN_FILE") &&
               icd_aws_creds_env(p, "AWS_ROLE_ARN")) {
        p->kind = SRC_WEB;
        snprintf(p->source, sizeof p->source, "web-identity");
    } else if (explicit_profile || profile_has_creds(p, p->profile)) {
        p->kind = SRC_PROFILE;
        snprintf(p->source, sizeof p->source, "profile %.100s", p->profile);
    } else if (icd_aws_creds_env(p, "AWS_CONTAINER_CREDENTIALS_FULL_URI") ||
               icd_aws_creds_env(p, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
        p->kind = SRC_ECS;
        snprintf(p->source, sizeof p->source, "container");
    } else if (imds_wanted(p)) {
        p->kind = SRC_IMDS;
        snprintf(p->source, sizeof p->source, "instance-metadata");
    } else {
        p->kind = SRC_NONE;
        snprintf(p->source, sizeof p->source, "none");
    }
    return 0;
}

static int fetch(icd_aws_creds *p, icd_aws_key *out, icd_error *err)
{
    int rc;
    switch (p->kind) {
    case SRC_ENV:
        rc = env_static(p, out, err);
        break;
    case SRC_WEB:
        rc = web_identity(p, icd_aws_creds_env(p, "AWS_WEB_IDENTITY_TOKEN_FILE"),
                          icd_aws_creds_env(p, "AWS_ROLE_ARN"),
                          icd_aws_creds_env(p, "AWS_ROLE_SESSION_NAME"), out, err);
        break;
    case SRC_PROFILE:
        rc = profile_creds(p, p->profile, 0, out, err);
        break;
    case SRC_ECS:
        rc = container(p, out, err);
        break;
    case SRC_IMDS:
        rc = imds(p, out, err);
        break;
    default:
        return 0;
    }
    if (rc == 0) p->fetches++;
    return rc;
}

/* Due for a refresh: less than min(300 s, half the lifetime) left. */
static bool refresh_due(const icd_aws_creds *p, int64_t now)
{
    if (!p->cur.access_key) return true;
    if (!p->cur.expires) return false;
    int64_t life = p->cur.expires - p->fetched_at;
    int64_t window = life / 2 < 300 ? life / 2 : 300;
    if (window < 1) window = 1;
    return now >= p->cur.expires - window;
}

int icd_aws_creds_get(icd_aws_creds *p, icd_aws_key *key, icd_error *err)
{
    memset(key, 0, sizeof *key);
    pthread_mutex_lock(&p->mu);
    int rc = 0;
    if (p->kind == SRC_UNRESOLVED) rc = resolve(p, err);
    if (rc == 0 && p->kind == SRC_NONE) {
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    int64_t now = now_s();
    if (rc == 0 && refresh_due(p, now)) {
        icd_aws_key fresh;
        icd_error e2;
        icd_error_clear(&e2);
        int frc = fetch(p, &fresh, err ? err : &e2);
        if (frc == 0) {
            icd_aws_key_clear(&p->cur);
            p->cur = fresh;
            p->fetched_at = now;
        } else if (!p->cur.access_key || (p->cur.expires && now >= p->cur.expires)) {
            rc = frc; /* nothing valid to fall back to */
            icd_error_wrap(err, "AWS credentials (%s)", p->source);
        } else if (err) {
            icd_error_clear(err); /* the old credentials still hold */
        }
    }
    if (rc == 0) rc = key_copy(key, &p->cur, err);
    pthread_mutex_unlock(&p->mu);
    return rc ? rc : 1;
}

static const char *region_locked(icd_aws_creds *p)
{
    const char *r = icd_aws_creds_env(p, "AWS_REGION");
    if (!r) r = icd_aws_creds_env(p, "AWS_DEFAULT_REGION");
    if (r) return r;
    if (!p->region_done) {
        p->region_done = true;
        icd_error e;
        icd_error_clear(&e);
        if (load_ini(p, &e) == 0) {
            const char *pr = ini_get(p, p->profile, "region");
            if (pr && !p->region) p->region = strdup(pr);
        }
    }
    return p->region;
}

const char *icd_aws_creds_region(icd_aws_creds *p)
{
    pthread_mutex_lock(&p->mu);
    const char *r = region_locked(p);
    pthread_mutex_unlock(&p->mu);
    return r;
}

const char *icd_aws_creds_source(icd_aws_creds *p)
{
    return p->source;
}

unsigned icd_aws_creds_fetches(icd_aws_creds *p)
{
    pthread_mutex_lock(&p->mu);
    unsigned n = p->fetches;
    pthread_mutex_unlock(&p->mu);
    return n;
}
