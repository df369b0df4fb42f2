/*
 * Phase 2 `icedruid sync` (see sync.h): the state file (locked, atomically replaced), the
 * submission of emitted statements to Druid's task endpoints over libcurl (io/http.h,
 * with its retries), and the preparation of one run: plan the current snapshot, diff it
 * against the recorded one, emit. The command (cli/cmd_sync.c) prints, submits and
 * records in that order, so the state only ever names a snapshot Druid accepted.
 */
#include "druid/phase2/sync.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/jsonw.h"
#include "druid/rows/timestamp.h"
#include "io/http.h"

#define STATE_MAX_BYTES (16u << 20)
#define STATE_TMP_SUFFIX ".tmp."
#define DRUID_BODY_MAX (1u << 20)

/* ---- the state file ------------------------------------------------------------------ */

struct dr_state {
    char *path;
    int lock_fd;
    json_t *doc; /* {"version":1,"dataSources":{...}} */
};

void dr_state_close(dr_state *st)
{
    if (!st) return;
    if (st->lock_fd >= 0) close(st->lock_fd); /* releases the flock */
    json_decref(st->doc);
    free(st->path);
    free(st);
}

static int take_lock(dr_state *st, bool *busy, icd_error *err)
{
    size_t n = strlen(st->path) + 6;
    char *lock = malloc(n);
    if (!lock) return icd_fail_nomem(err);
    snprintf(lock, n, "%s.lock", st->path);
    /* O_NOFOLLOW: a symlink planted at the lock's name must not make us create or open
     * another file */
    st->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    int rc = 0;
    if (st->lock_fd < 0) {
        rc = icd_fail(err, ICD_EIO, lock, -1, "cannot open the state lock file: %s",
                      strerror(errno));
    } else if (flock(st->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) *busy = true;
        rc = icd_fail(err, ICD_EIO, lock, -1,
                      errno == EWOULDBLOCK
                          ? "another `icedruid sync` holds the lock of this state file"
                          : "cannot lock the state file: %s",
                      strerror(errno));
    }
    free(lock);
    return rc;
}

static int state_validate(dr_state *st, icd_error *err)
{
    json_t *v = json_object_get(st->doc, "version");
    json_t *ds = json_object_get(st->doc, "dataSources");
    if (!json_is_object(st->doc) || !json_is_integer(v) || !json_is_object(ds))
        return icd_fail(err, ICD_ECORRUPT, st->path, -1,
                        "not an icedruid sync state file (expected {\"version\":1,"
                        "\"dataSources\":{...}})");
    if (json_integer_value(v) != 1)
        return icd_fail(err, ICD_EUNSUPPORTED, st->path, -1,
                        "state file version %" PRId64 " (this icedruid writes version 1)",
                        (int64_t)json_integer_value(v));
    const char *key;
    json_t *e;
    json_object_foreach(ds, key, e)
    {
        if (!json_is_object(e) || !json_is_integer(json_object_get(e, "snapshotId")))
            return icd_fail(err, ICD_ECORRUPT, st->path, -1,
                            "dataSources.%s has no integer snapshotId", key);
    }
    return 0;
}

static int state_read(dr_state *st, icd_error *err)
{
    int fd = open(st->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT)
            return icd_fail(err, ICD_EIO, st->path, -1, "cannot open: %s", strerror(errno));
        st->doc = json_pack("{s:i,s:{}}", "version", 1, "dataSources");
        return st->doc ? 0 : icd_fail_nomem(err);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size > (off_t)STATE_MAX_BYTES) {
        close(fd);
        return icd_fail(err, ICD_EINVALID, st->path, -1, "state file larger than 16 MiB");
    }
    json_error_t je;
    st->doc = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
    close(fd);
    if (!st->doc)
        return icd_fail(err, ICD_ECORRUPT, st->path, je.position,
                        "the state file is not valid JSON (%s); fix or remove it", je.text);
    return state_validate(st, err);
}

/* The directory holding `path` ("." for a bare name), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Removes "<state>.tmp.*" left by a run that died between creating its temporary and the
 * rename (called with the lock held, so no other run is writing one). Only directory
 * entries are unlinked (a symlink is removed, not followed). */
static void remove_stale_temporaries(const char *path)
{
    char *dir = dir_of(path);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    DIR *d = dir ? opendir(dir) : NULL;
    if (d) {
        size_t bl = strlen(base), sl = strlen(STATE_TMP_SUFFIX);
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strncmp(de->d_name, base, bl) != 0 ||
                strncmp(de->d_name + bl, STATE_TMP_SUFFIX, sl) != 0 || !de->d_name[bl + sl])
                continue;
            unlinkat(dirfd(d), de->d_name, 0);
        }
        closedir(d);
    }
    free(dir);
}

int dr_state_open(const char *path, dr_state **out, bool *busy, icd_error *err)
{
    *out = NULL;
    *busy = false;
    dr_state *st = calloc(1, sizeof *st);
    if (!st) return icd_fail_nomem(err);
    st->lock_fd = -1;
    st->path = strdup(path);
    int rc = st->path ? take_lock(st, busy, err) : icd_fail_nomem(err);
    if (!rc) remove_stale_temporaries(st->path);
    if (!rc) rc = state_read(st, err);
    if (rc) {
        dr_state_close(st);
        return rc;
    }
    *out = st;
    return 0;
}

bool dr_state_lookup(const dr_state *st, const char *data_source, int64_t *snapshot_id,
                     const char **table)
{
    json_t *e = json_object_get(json_object_get(st->doc, "dataSources"), data_source);
    if (!json_is_object(e)) return false;
    *snapshot_id = json_integer_value(json_object_get(e, "snapshotId"));
    if (table) *table = json_string_value(json_object_get(e, "table"));
    return true;
}

int dr_state_record(dr_state *st, const char *data_source, int64_t snapshot_id, const char *table,
                    int64_t now_ms, const char *const *tasks, size_t n_tasks, icd_error *err)
{
    icd_buf when = ICD_BUF_INIT;
    dr_fmt_iso_ms(&when, now_ms);
    json_t *ids = json_array();
    for (size_t i = 0; ids && i < n_tasks; i++)
        if (json_array_append_new(ids, json_string(tasks[i] ? tasks[i] : ""))) {
            json_decref(ids);
            ids = NULL;
        }
    json_t *e = icd_buf_ok(&when)
                    ? json_pack("{s:I,s:s,s:s}", "snapshotId", (json_int_t)snapshot_id,
                                "ingestedAt", when.data, "table", table ? table : "")
                    : NULL;
    icd_buf_free(&when);
    /* set_new takes `ids` whatever happens */
    if (!e || !ids || json_object_set_new(e, "tasks", ids)) {
        if (!e) json_decref(ids);
        json_decref(e);
        return icd_fail_nomem(err);
    }
    if (json_object_set_new(json_object_get(st->doc, "dataSources"), data_source, e))
        return icd_fail_nomem(err);
    return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int dr_state_save(dr_state *st, icd_error *err)
{
    char *text = json_dumps(st->doc, JSON_INDENT(2) | JSON_SORT_KEYS);
    size_t n = strlen(st->path) + 32;
    char *tmp = malloc(n);
    char *dir = dir_of(st->path);
    if (!text || !tmp || !dir) {
        free(text);
        free(tmp);
        free(dir);
        return icd_fail_nomem(err);
    }
    /* mkostemp: a fresh unpredictable name created with O_EXCL (a planted file or
     * symlink is never opened) and mode 0600, in the state's directory so the rename
     * stays atomic */
    snprintf(tmp, n, "%s" STATE_TMP_SUFFIX "XXXXXX", st->path);
    int rc = 0;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        rc = icd_fail(err, ICD_EIO, tmp, -1, "cannot create the new state file: %s",
                      strerror(errno));
    } else {
        if (write_all(fd, text, strlen(text)) || write_all(fd, "\n", 1) || fsync(fd))
            rc = icd_fail(err, ICD_EIO, tmp, -1, "cannot write the new state file: %s",
                          strerror(errno));
        if (close(fd) && !rc)
            rc = icd_fail(err, ICD_EIO, tmp, -1, "cannot write the new state file: %s",
                          strerror(errno));
        if (!rc && rename(tmp, st->path))
            rc = icd_fail(err, ICD_EIO, st->path, -1, "cannot replace the state file: %s",
                          strerror(errno));
        if (rc) unlink(tmp);
    }
    if (!rc) { /* the rename itself is durable once the directory is synced */
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd))
            rc = icd_fail(err, ICD_EIO, dir, -1, "cannot sync the state directory: %s",
                          strerror(errno));
        if (dfd >= 0) close(dfd);
    }
    free(text);
    free(tmp);
    free(dir);
    return rc;
}

/* ---- Druid ---------------------------------------------------------------------------- */

static void put_field(icd_buf *out, const json_t *o, const char *key, const char *before,
                      const char *after)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v || !*v) return;
    icd_buf_puts(out, before);
    icd_buf_append(out, v, strnlen(v, 2000));
    icd_buf_puts(out, after);
}

void dr_druid_error_text(const char *body, size_t len, icd_buf *out)
{
    json_t *o = len ? json_loadb(body, len, 0, NULL) : NULL;
    if (!json_is_object(o) || !json_is_string(json_object_get(o, "error"))) {
        /* not JSON: quote the start of it on one line */
        icd_buf_puts(out, len ? "\"" : "(empty body)");
        size_t n = len < 300 ? len : 300;
        for (size_t i = 0; i < n; i++)
            icd_buf_putc(out, (body[i] == '\n' || body[i] == '\r') ? ' ' : body[i]);
        if (len) icd_buf_puts(out, len > n ? "...\"" : "\"");
        json_decref(o);
        return;
    }
    /* DruidException: error="druidException", errorCode, category, errorMessage */
    const char *code = json_string_value(json_object_get(o, "errorCode"));
    if (code) {
        icd_buf_puts(out, code);
        put_field(out, o, "category", " (", ")");
    } else {
        put_field(out, o, "error", "", "");
    }
    put_field(out, o, "errorMessage", ": ", "");
    put_field(out, o, "errorClass", " [", "]");
    json_decref(o);
}

static char *base_url(const char *url)
{
    size_t n = strlen(url);
    while (n && url[n - 1] == '/')
        n--;
    return strndup(url, n);
}

int dr_druid_answer(long status, int attempts, const char *body, size_t len, const char *url,
                    json_t **out, icd_error *err)
{
    *out = NULL;
    if (status < 200 || status > 299) {
        icd_buf text = ICD_BUF_INIT;
        dr_druid_error_text(body, len, &text);
        int rc = icd_fail(err, status == 400 ? ICD_EINVALID : ICD_EIO, url, -1,
                          "Druid answered HTTP %ld%s: %s", status,
                          attempts > 1 ? " (after retries)" : "", text.data ? text.data : "");
        icd_buf_free(&text);
        return rc;
    }
    *out = json_loadb(body ? body : "", len, 0, NULL);
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return icd_fail(err, ICD_EIO, url, -1,
                        "Druid answered HTTP %ld with a body that is not a JSON object", status);
    }
    return 0;
}

/* One request to Druid: `body` (NULL for GET) to base URL + path. On 2xx the parsed JSON
 * answer (*out); otherwise an error with the status and Druid's error text. */
static int druid_request(const dr_druid_client *c, const char *path, const char *body, json_t **out,
                         icd_error *err)
{
    *out = NULL;
    char *base = base_url(c->url);
    icd_buf url = ICD_BUF_INIT, auth = ICD_BUF_INIT, cred = ICD_BUF_INIT;
    icd_remote *r = icd_remote_new();
    int rc = (!base || !r || icd_remote_set_ca_file(r, c->ca_file)) ? icd_fail_nomem(err) : 0;
    if (!rc) {
        icd_buf_printf(&url, "%s%s", base, path);
        if (c->user) {
            icd_buf_printf(&cred, "%s:%s", c->user, c->password ? c->password : "");
            icd_buf_puts(&auth, "Authorization: Basic ");
            icd_base64_raw(&auth, (const uint8_t *)(cred.data ? cred.data : ""), cred.len);
        }
        if (!icd_buf_ok(&url) || !icd_buf_ok(&auth) || !icd_buf_ok(&cred)) rc = icd_fail_nomem(err);
    }
    icd_http_resp resp = {0};
    if (!rc) {
        icd_http_policy pol;
        icd_http_get_policy(r, &pol);
        pol.max_attempts = c->max_attempts > 0 ? c->max_attempts : 3;
        pol.base_delay_ms = c->base_delay_ms > 0 ? c->base_delay_ms : 500;
        pol.total_timeout_s = 300;
        icd_http_set_policy(r, &pol);
        const char *headers[4] = {"Content-Type: application/json", "Accept: application/json",
                                  c->user ? auth.data : NULL, NULL};
        icd_http_req req = {0};
        req.method = body ? "POST" : "GET";
        req.url = url.data;
        req.location = url.data; /* no credential in it: they go in a header */
        req.headers = headers;
        req.body = body;
        req.body_len = body ? strlen(body) : 0;
        req.max_body = DRUID_BODY_MAX;
        rc = icd_http_perform(r, &req, &resp, err);
    }
    if (!rc)
        rc = dr_druid_answer(resp.status, resp.attempts, resp.body.data, resp.body.len, url.data,
                             out, err);
    /* wipe the credential copies */
    if (cred.data) memset(cred.data, 0, cred.len);
    if (auth.data) memset(auth.data, 0, auth.len);
    icd_buf_free(&cred);
    icd_buf_free(&auth);
    icd_buf_free(&url);
    icd_http_resp_free(&resp);
    icd_remote_free(r);
    free(base);
    return rc;
}

int dr_druid_submit_answer(const json_t *o, const char *path, char **task_id, icd_error *err)
{
    *task_id = NULL;
    const char *id = json_string_value(json_object_get(o, "taskId"));
    if (!id) id = json_string_value(json_object_get(o, "task"));
    if (!id || !id[0]) /* an empty id would poll "./task//status" */
        return icd_fail(err, ICD_EIO, NULL, -1, "Druid accepted %s without a task id in its answer",
                        path);
    if (!(*task_id = strdup(id))) return icd_fail_nomem(err);
    return 0;
}

int dr_druid_submit(const dr_druid_client *c, const dr_emit_item *item, char **task_id,
                    icd_error *err)
{
    *task_id = NULL;
    const char *path = item->kind == DR_EMIT_MSQ ? "/druid/v2/sql/task" : "/druid/indexer/v1/task";
    char *body = json_dumps(item->payload, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!body) return icd_fail_nomem(err);
    json_t *o = NULL;
    int rc = druid_request(c, path, body, &o, err);
    free(body);
    if (rc) return rc;
    rc = dr_druid_submit_answer(o, path, task_id, err);
    json_decref(o);
    return rc;
}

int dr_druid_status_answer(const json_t *o, const char *task_id, bool *done, icd_error *err)
{
    *done = false;
    int rc = 0;
    const json_t *st = json_object_get(o, "status");
    const char *code = json_string_value(json_object_get(st, "statusCode"));
    if (!code) code = json_string_value(json_object_get(st, "status"));
    if (!code) {
        rc = icd_fail(err, ICD_EIO, NULL, -1, "task %s: Druid's status answer has no status",
                      task_id);
    } else if (!strcmp(code, "SUCCESS")) {
        *done = true;
    } else if (!strcmp(code, "FAILED")) {
        const char *msg = json_string_value(json_object_get(st, "errorMsg"));
        rc = icd_fail(err, ICD_EIO, NULL, -1, "Druid task %s FAILED%s%.800s", task_id,
                      msg ? ": " : "", msg ? msg : "");
    }
    return rc;
}

int dr_druid_task_status(const dr_druid_client *c, const char *task_id, bool *done, icd_error *err)
{
    *done = false;
    icd_buf path = ICD_BUF_INIT;
    icd_buf_puts(&path, "/druid/indexer/v1/task/");
    icd_url_encode(&path, task_id, strlen(task_id), false);
    icd_buf_puts(&path, "/status");
    if (!icd_buf_ok(&path)) return icd_fail_nomem(err);
    json_t *o = NULL;
    int rc = druid_request(c, path.data, NULL, &o, err);
    icd_buf_free(&path);
    if (rc) return rc;
    rc = dr_druid_status_answer(o, task_id, done, err);
    json_decref(o);
    return rc;
}

/* ---- planning a given snapshot ------------------------------------------------------ */

static int64_t plan_snapshot_id(const dr_plan *p, bool *has)
{
    const ice_snapshot *s = ice_scan_plan_snapshot(dr_plan_scan(p));
    *has = s != NULL;
    return s ? s->snapshot_id : 0;
}

int dr_plan_at_snapshot(const dr_spec *spec, icd_fileio *io, bool has_id, int64_t snapshot_id,
                        const dr_plan_opts *po, dr_plan **plan, dr_spec **spec_out, icd_error *err)
{
    *plan = NULL;
    *spec_out = NULL;
    dr_plan *p = NULL;
    ICD_TRY(dr_plan_build(spec, io, po, &p, err));
    bool has;
    if (!has_id || (plan_snapshot_id(p, &has) == snapshot_id && has)) {
        *plan = p;
        return 0;
    }
    const ice_snapshot *snap = ice_metadata_snapshot(dr_plan_metadata(p), snapshot_id);
    if (!snap) {
        dr_plan_free(p);
        return icd_fail(err, ICD_ENOTFOUND, NULL, -1, "the table has no snapshot %" PRId64,
                        snapshot_id);
    }
    /* select it by time, as Druid's snapshotTime does */
    json_t *doc = json_deep_copy(dr_spec_document(spec));
    const char *path = dr_spec_input_source_path(spec);
    json_t *src = doc;
    for (const char *k = path; src && *k;) {
        const char *dot = strchr(k, '.');
        size_t n = dot ? (size_t)(dot - k) : strlen(k);
        char key[128];
        if (n >= sizeof key) {
            src = NULL;
            break;
        }
        memcpy(key, k, n);
        key[n] = '\0';
        src = json_object_get(src, key);
        k = dot ? dot + 1 : k + n;
    }
    icd_buf when = ICD_BUF_INIT;
    dr_fmt_iso_ms(&when, snap->timestamp_ms);
    dr_plan_free(p);
    p = NULL;
    int rc = (!doc || !json_is_object(src) || !icd_buf_ok(&when) ||
              json_object_set_new(src, "snapshotTime", json_string(when.data)))
                 ? icd_fail_nomem(err)
                 : 0;
    icd_buf_free(&when);
    dr_spec *s2 = NULL;
    if (!rc) rc = dr_spec_parse_json(&s2, doc, "(spec at snapshot)", NULL, err);
    json_decref(doc);
    if (!rc) rc = dr_plan_build(s2, io, po, &p, err);
    if (!rc && (plan_snapshot_id(p, &has) != snapshot_id || !has))
        rc = icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                      "snapshot %" PRId64 " cannot be selected by its timestamp (it is not in "
                      "the table's history of current snapshots, or another snapshot shares "
                      "its millisecond)",
                      snapshot_id);
    if (rc) {
        dr_plan_free(p);
        dr_spec_free(s2);
        return rc;
    }
    *plan = p;
    *spec_out = s2;
    return 0;
}

/* ---- one run -------------------------------------------------------------------------- */

void dr_sync_job_free(dr_sync_job *job)
{
    if (!job) return;
    dr_emit_list_free(&job->list);
    if (job->has_diff) dr_diff_free(&job->diff);
    dr_plan_free(job->plan);
    free(job->table);
    memset(job, 0, sizeof *job);
}

int dr_sync_prepare(const dr_spec *spec, icd_fileio *io, const dr_state *st, const dr_sync_opts *o,
                    dr_sync_job *job, icd_error *err)
{
    memset(job, 0, sizeof *job);
    job->data_source = dr_spec_data_source(spec);
    if (!job->data_source)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "sync needs a whole ingestion spec (dataSchema.dataSource), not a bare "
                        "input source");
    icd_buf t = ICD_BUF_INIT;
    icd_buf_printf(&t, "%s.%s", dr_spec_namespace(spec), dr_spec_table_name(spec));
    job->table = icd_buf_detach(&t);
    if (!job->table) return icd_fail_nomem(err);
    dr_plan_opts po = {o->threads, false, o->project_staged, false};
    int rc = dr_plan_build(spec, io, &po, &job->plan, err);
    if (rc) {
        dr_sync_job_free(job);
        return rc;
    }
    const ice_snapshot *snap = ice_scan_plan_snapshot(dr_plan_scan(job->plan));
    job->has_snapshot = snap != NULL;
    if (snap) job->to_snapshot = snap->snapshot_id;
    const char *table = NULL;
    job->has_from = dr_state_lookup(st, job->data_source, &job->from_snapshot, &table);
    if (job->has_from && table && *table && strcmp(table, job->table)) {
        rc = icd_fail(err, ICD_EINVALID, NULL, -1,
                      "the state records data source '%s' as ingested from table %s, but the "
                      "spec reads %s: use another state file, or --full to re-ingest",
                      job->data_source, table, job->table);
        if (!o->full) {
            dr_sync_job_free(job);
            return rc;
        }
        icd_error_clear(err);
        rc = 0;
    }
    if (!job->has_snapshot) return 0; /* nothing to read yet */
    job->full = o->full || !job->has_from;
    if (dr_plan_is_v2(job->plan) && !o->serve_later &&
        (!o->emit.serve_url || !*o->emit.serve_url) &&
        !(job->has_from && job->from_snapshot == job->to_snapshot)) {
        /* fail before the diff: the emitter would refuse anyway */
        rc = icd_fail(err, ICD_EINVALID, NULL, -1,
                      "snapshot %" PRId64 " has delete files (v2): Druid's iceberg input source "
                      "would bring deleted rows back, so the re-ingestion reads from `icedruid "
                      "serve`; give its URL with --serve-url",
                      job->to_snapshot);
        dr_sync_job_free(job);
        return rc;
    }
    if (!job->full && job->from_snapshot == job->to_snapshot) {
        job->up_to_date = true;
        return 0;
    }
    if (!job->full) {
        dr_diff_opts dopt = {0};
        dopt.from_snapshot = job->from_snapshot;
        dopt.has_to = true;
        dopt.to_snapshot = job->to_snapshot;
        dopt.threads = o->threads;
        rc = dr_diff_compute(spec, io, &dopt, &job->diff, err);
        if (rc) {
            icd_error_wrap(err,
                           "diff of snapshots %" PRId64 " -> %" PRId64
                           " (use --full to re-ingest the whole table)",
                           job->from_snapshot, job->to_snapshot);
            dr_sync_job_free(job);
            return rc;
        }
        job->has_diff = true;
    }
    if (o->serve_later) return 0;
    return dr_sync_emit(spec, io, o, job, err);
}

int dr_sync_emit(const dr_spec *spec, icd_fileio *io, const dr_sync_opts *o, dr_sync_job *job,
                 icd_error *err)
{
    dr_emit_list_free(&job->list);
    if (!job->has_snapshot || job->up_to_date) return 0;
    dr_emit_opts eo = o->emit;
    eo.plan = job->plan;
    eo.io = io;
    /* files mode reads the raw / materialized decision of every file; rows mode too, on a
     * table without deletes (a file that cannot be read raw sends every row through icedruid) */
    int rc = eo.files ? dr_plan_decide(job->plan, err) : dr_plan_decide_rows(job->plan, err);
    if (rc) {
        dr_sync_job_free(job);
        return rc;
    }
    rc = dr_emit_build(o->kind, spec, job->full ? NULL : &job->diff, &eo, &job->list, err);
    if (rc) dr_sync_job_free(job);
    return rc;
}
