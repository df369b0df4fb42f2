/*
 * `icedruid serve`'s content-addressed file provider (see serve_files.h): parses
 * /files/<table>/<snapshot>/<name>, checks the snapshot still exists, answers from the
 * cache directory or regenerates the file with stage.h's writer, and keeps the cache
 * under its bound. Runs on the server's producer pool, several requests at once.
 */
#include "druid/serve/serve_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/array.h"
#include "base/bigmem.h"
#include "base/jsonw.h"
#include "druid/plan/catalog_load.h"
#include "druid/plan/rewrite.h"
#include "druid/stage/stage.h"
#include "iceberg/reader.h"

struct dr_serve_files {
    dr_plan *plan;
    icd_fileio *io;
    dr_serve_files_opts opts;
    char *dir;
    char *table_seg; /* the <table> URL segment */
    bool has_snap;
    int64_t snap_id;
    char **names; /* per task: the staged name, NULL when raw */
    size_t ntasks;
    ice_scan_reader *reader; /* for the plan's snapshot (lazily) */
    pthread_mutex_t mu;      /* reader creation, the snapshot list, eviction */
    int64_t *snaps;
    size_t nsnaps;
    double snaps_at; /* monotonic seconds of the list, < 0: none */
    atomic_uint_fast64_t hits, generated, gone, not_found, failed, evicted;
};

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sf_log(dr_serve_files *sf, const char *fmt, ...) ICD_PRINTF(2, 3);
static void sf_log(dr_serve_files *sf, const char *fmt, ...)
{
    if (!sf->opts.log) return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sf->opts.log(sf->opts.log_ctx, line);
}

/* ---- URLs -------------------------------------------------------------------------------- */

static void url_segment(icd_buf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '.' || *p == '_' || *p == '-' || *p == '~') {
            icd_buf_putc(out, (char)*p);
        } else {
            icd_buf_putc(out, '%');
            icd_buf_putc(out, hex[*p >> 4]);
            icd_buf_putc(out, hex[*p & 15]);
        }
    }
}

static void table_segment(icd_buf *out, const dr_plan *p)
{
    const dr_spec *spec = dr_plan_spec(p);
    const char *ns = dr_spec_namespace(spec), *name = dr_spec_table_name(spec);
    icd_buf t = ICD_BUF_INIT;
    if (ns && ns[0]) icd_buf_printf(&t, "%s.", ns);
    icd_buf_puts(&t, name ? name : "table");
    url_segment(out, t.data ? t.data : "table");
    icd_buf_free(&t);
}

void dr_serve_files_url(icd_buf *out, const char *base_url, const dr_plan *p, const char *name)
{
    const ice_snapshot *snap = ice_scan_plan_snapshot(dr_plan_scan(p));
    icd_buf_printf(out, "%s/files/", base_url);
    table_segment(out, p);
    icd_buf_printf(out, "/%" PRId64 "/%s", snap ? snap->snapshot_id : 0, name);
}

size_t dr_serve_files_orc(const dr_plan *p, const char **path)
{
    size_t n = 0;
    const ice_scan_plan *sp = dr_plan_scan(p);
    for (size_t i = 0; i < ice_scan_plan_task_count(sp); i++) {
        const dr_plan_file *d = dr_plan_decision(p, i);
        const ice_scan_task *t = ice_scan_plan_task(sp, i);
        if (d && !d->raw && t->data->format != ICE_FORMAT_PARQUET &&
            t->data->format != ICE_FORMAT_AVRO) {
            if (path) *path = t->data->path;
            n++;
        }
    }
    return n;
}

/* "icd-XXXXXXXX-<32 hex>.parquet|avro" */
static bool valid_name(const char *s)
{
    if (strncmp(s, "icd-", 4) != 0) return false;
    const char *p = s + 4;
    for (int i = 0; i < 8; i++, p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return false;
    if (*p++ != '-') return false;
    for (int i = 0; i < 32; i++, p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return false;
    return !strcmp(p, ".parquet") || !strcmp(p, ".avro");
}

/* ---- the snapshot list ------------------------------------------------------------------ */

/* Is `id` a snapshot of the table now (metadata at most max_age old)? */
static int snapshot_exists(dr_serve_files *sf, int64_t id, bool *exists, icd_error *err)
{
    int age = sf->opts.metadata_max_age_ms;
    pthread_mutex_lock(&sf->mu);
    int rc = 0;
    if (sf->snaps_at < 0 || (mono_s() - sf->snaps_at) * 1000.0 >= (double)age) {
        ice_metadata *md = NULL;
        rc = dr_plan_load_metadata(dr_plan_spec(sf->plan), sf->io, &md, err);
        if (!rc) {
            size_t n = ice_metadata_snapshot_count(md);
            int64_t *v = malloc((n ? n : 1) * sizeof *v);
            if (!v) {
                rc = icd_fail_nomem(err);
            } else {
                for (size_t i = 0; i < n; i++)
                    v[i] = ice_metadata_snapshot_at(md, i)->snapshot_id;
                free(sf->snaps);
                sf->snaps = v;
                sf->nsnaps = n;
                sf->snaps_at = mono_s();
            }
        }
        ice_metadata_free(md);
    }
    *exists = false;
    for (size_t i = 0; !rc && i < sf->nsnaps; i++)
        if (sf->snaps[i] == id) *exists = true;
    pthread_mutex_unlock(&sf->mu);
    return rc;
}

/* ---- the cache ------------------------------------------------------------------------- */

typedef struct cached {
    char *name;
    int64_t size;
    struct timespec mtime;
} cached;

static int cmp_cached(const void *a, const void *b)
{
    const cached *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Removes the oldest cached files until the total fits the bound (`keep` stays). */
static void evict(dr_serve_files *sf, const char *keep)
{
    pthread_mutex_lock(&sf->mu);
    DIR *d = opendir(sf->dir);
    cached *v = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    struct dirent *de;
    char path[4096];
    while (d && (de = readdir(d))) {
        /* only this table's files ("icd-<table hash>-", as `keep`, which was found in
         * this table): a shared directory's other files are not ours */
        if (!valid_name(de->d_name) || strncmp(de->d_name, keep, 13) != 0) continue;
        snprintf(path, sizeof path, "%s/%s", sf->dir, de->d_name);
        struct stat sb;
        if (stat(path, &sb)) continue;
        if (ICD_ARRAY_RESERVE(v, cap, n + 1, 64)) break;
        v[n].name = strdup(de->d_name);
        if (!v[n].name) break;
        v[n].size = (int64_t)sb.st_size;
        v[n].mtime = sb.st_mtim;
        total += (uint64_t)sb.st_size;
        n++;
    }
    if (d) closedir(d);
    if (n) qsort(v, n, sizeof *v, cmp_cached);
    for (size_t i = 0; i < n && total > sf->opts.cache_max_bytes; i++) {
        if (!strcmp(v[i].name, keep)) continue;
        snprintf(path, sizeof path, "%s/%s", sf->dir, v[i].name);
        if (!unlink(path)) {
            total -= (uint64_t)v[i].size;
            atomic_fetch_add(&sf->evicted, 1);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
    pthread_mutex_unlock(&sf->mu);
}

/* Opens DIR/name when it is there (*fd = -1 when not), refreshing its time for the LRU. */
static int open_cached(dr_serve_files *sf, const char *name, int *fd, uint64_t *size,
                       icd_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", sf->dir, name);
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        if (errno == ENOENT) return 0;
        return icd_fail(err, ICD_EIO, path, -1, "cannot open: %s", strerror(errno));
    }
    struct stat sb;
    if (fstat(*fd, &sb)) {
        int e = errno;
        close(*fd);
        *fd = -1;
        return icd_fail(err, ICD_EIO, path, -1, "cannot stat: %s", strerror(e));
    }
    *size = (uint64_t)sb.st_size;
    futimens(*fd, NULL);
    return 0;
}

/* ---- regeneration ---------------------------------------------------------------------- */

/* Writes the file of the plan's own snapshot whose name is `name`; *found = false when
 * no task has it. */
static int generate_planned(dr_serve_files *sf, const char *name, bool *found, icd_error *err)
{
    *found = false;
    size_t ti = sf->ntasks;
    for (size_t i = 0; i < sf->ntasks; i++)
        if (sf->names[i] && !strcmp(sf->names[i], name)) ti = i;
    if (ti == sf->ntasks) return 0;
    *found = true;
    const dr_plan *p = sf->plan;
    pthread_mutex_lock(&sf->mu);
    int rc = 0;
    const dr_stage_cols *sc = dr_plan_stage_cols(p);
    if (!sf->reader) {
        rc = ice_scan_reader_new(sf->io, dr_plan_metadata(p), dr_plan_schema(p),
                                 (const char *const *)sc->names, sc->n, &sf->reader, err);
        if (!rc) ice_scan_reader_set_read_budget(sf->reader, sf->opts.read_budget);
    }
    pthread_mutex_unlock(&sf->mu);
    if (rc) return rc;
    int64_t bytes;
    ice_read_stats rs = {0};
    rc = dr_stage_write_local(sf->io, dr_plan_metadata(p), sc->schema, sf->reader,
                              ice_scan_plan_task(dr_plan_scan(p), ti), sf->dir, name, &bytes, &rs,
                              err);
    icd_bigbuf_trim(); /* a file is staged once, then served from the cache */
    return rc;
}

/* Another snapshot: the table loaded again, that snapshot planned, its tasks decided and
 * named until one is `name`. *gone when the snapshot is not in the metadata. */
static int generate_other(dr_serve_files *sf, int64_t snap, const char *name, bool *found,
                          bool *gone, icd_error *err)
{
    *found = *gone = false;
    ice_metadata *md = NULL;
    ICD_TRY(dr_plan_load_metadata(dr_plan_spec(sf->plan), sf->io, &md, err));
    if (!ice_metadata_snapshot(md, snap)) {
        *gone = true;
        ice_metadata_free(md);
        return 0;
    }
    ice_scan_opts so = {0};
    so.select.kind = ICE_SELECT_ID;
    so.select.snapshot_id = snap;
    so.case_sensitive = true;
    ice_scan_plan *sp = NULL;
    dr_decide_ctx *dc = NULL;
    ice_scan_reader *rd = NULL;
    icd_buf nm = ICD_BUF_INIT;
    int rc = ice_scan_plan_build(sf->io, md, &so, &sp, err);
    const ice_schema *schema = sp ? ice_scan_plan_schema(sp) : NULL;
    dr_stage_cols sc = {0};
    if (!rc)
        rc = dr_stage_cols_init(&sc, dr_plan_spec(sf->plan), dr_plan_projects_staged(sf->plan),
                                schema, err);
    if (!rc) rc = dr_decide_new(sf->io, md, schema, &dc, err);
    const ice_scan_task *hit = NULL;
    for (size_t i = 0; !rc && !hit && i < ice_scan_plan_task_count(sp); i++) {
        const ice_scan_task *t = ice_scan_plan_task(sp, i);
        dr_file_decision d;
        rc = dr_decide_task(dc, t, &d, err);
        if (rc || d.raw) continue;
        icd_buf_clear(&nm);
        rc = dr_stage_name(md, sc.schema, t, &nm, err);
        if (!rc && !strcmp(nm.data, name)) hit = t;
    }
    if (!rc && hit) {
        *found = true;
        rc = ice_scan_reader_new(sf->io, md, schema, (const char *const *)sc.names, sc.n, &rd, err);
        if (!rc) ice_scan_reader_set_read_budget(rd, sf->opts.read_budget);
        int64_t bytes;
        ice_read_stats rs = {0};
        if (!rc)
            rc = dr_stage_write_local(sf->io, md, sc.schema, rd, hit, sf->dir, name, &bytes, &rs,
                                      err);
    }
    dr_stage_cols_free(&sc);
    icd_buf_free(&nm);
    ice_scan_reader_free(rd);
    dr_decide_free(dc);
    ice_scan_plan_free(sp);
    ice_metadata_free(md);
    return rc;
}

/* ---- the provider callbacks -------------------------------------------------------------- */

static int f_open(void *ctx, const char *rel, dr_server_file *out, icd_error *err)
{
    dr_serve_files *sf = ctx;
    out->fd = -1;
    out->status = 404;
    const char *s1 = strchr(rel, '/');
    const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    size_t tl = strlen(sf->table_seg);
    if (!s1 || !s2 || (size_t)(s1 - rel) != tl || memcmp(rel, sf->table_seg, tl) != 0) {
        atomic_fetch_add(&sf->not_found, 1);
        return icd_fail(err, ICD_ENOTFOUND, NULL, -1,
                        "no such file: this server serves /files/%s/SNAPSHOT/NAME", sf->table_seg);
    }
    const char *name = s2 + 1;
    char *end = NULL;
    errno = 0;
    long long snap = strtoll(s1 + 1, &end, 10);
    if (errno || end != s2 || end == s1 + 1 || !valid_name(name)) {
        atomic_fetch_add(&sf->not_found, 1);
        return icd_fail(err, ICD_ENOTFOUND, NULL, -1,
                        "no such file: expected /files/%s/SNAPSHOT_ID/icd-...", sf->table_seg);
    }
    bool exists = false;
    out->status = 500;
    ICD_TRY(snapshot_exists(sf, snap, &exists, err));
    if (!exists) {
        out->status = 410;
        atomic_fetch_add(&sf->gone, 1);
        return icd_fail(err, ICD_ENOTFOUND, NULL, -1,
                        "snapshot %lld no longer exists in table %s (expired): its files are "
                        "gone; plan the table again (icedruid rewrite-spec) and resubmit",
                        snap, sf->table_seg);
    }
    snprintf(out->etag, sizeof out->etag, "%.*s", (int)(strrchr(name, '.') - name), name);
    out->type = strstr(name, ".avro") ? "application/avro" : "application/vnd.apache.parquet";
    int fd;
    ICD_TRY(open_cached(sf, name, &fd, &out->size, err));
    if (fd >= 0) {
        atomic_fetch_add(&sf->hits, 1);
        out->fd = fd;
        out->status = 0;
        return 0;
    }
    bool found = false, gone = false;
    int rc = sf->has_snap && snap == sf->snap_id
                 ? generate_planned(sf, name, &found, err)
                 : generate_other(sf, snap, name, &found, &gone, err);
    if (rc) {
        atomic_fetch_add(&sf->failed, 1);
        return rc;
    }
    if (gone) {
        out->status = 410;
        atomic_fetch_add(&sf->gone, 1);
        return icd_fail(err, ICD_ENOTFOUND, NULL, -1,
                        "snapshot %lld no longer exists in table %s (expired)", snap,
                        sf->table_seg);
    }
    if (!found) {
        out->status = 404;
        atomic_fetch_add(&sf->not_found, 1);
        return icd_fail(err, ICD_ENOTFOUND, NULL, -1,
                        "no materialized file of snapshot %lld of table %s is named %s (a "
                        "name of another icedruid version, or not a file of that snapshot)",
                        snap, sf->table_seg, name);
    }
    atomic_fetch_add(&sf->generated, 1);
    sf_log(sf, "wrote %s/%s (snapshot %lld) into the cache", sf->dir, name, snap);
    evict(sf, name);
    ICD_TRY(open_cached(sf, name, &fd, &out->size, err));
    if (fd < 0) {
        atomic_fetch_add(&sf->failed, 1);
        return icd_fail(err, ICD_EIO, sf->dir, -1,
                        "%s vanished from the cache right after it was written", name);
    }
    out->fd = fd;
    out->status = 0;
    return 0;
}

static size_t f_count(void *ctx)
{
    (void)ctx;
    return 0;
}

static int f_split_open(void *ctx, size_t n, void **stream, icd_error *err)
{
    (void)ctx, (void)stream;
    return icd_fail(err, ICD_ENOTFOUND, NULL, -1, "split %zu does not exist", n);
}

static int f_split_next(void *stream, icd_buf *out, bool *eof, icd_error *err)
{
    (void)stream, (void)out, (void)err;
    *eof = true;
    return 0;
}

static void f_split_close(void *stream)
{
    (void)stream;
}

static int f_spec(void *ctx, const char *base_url, icd_buf *out, icd_error *err)
{
    dr_serve_files *sf = ctx;
    dr_rewrite_opts o = {base_url, sf->opts.auth_user, sf->opts.auth_password, true, NULL, NULL};
    return dr_rewrite_spec_text(sf->plan, &o, out, err);
}

static void f_health(void *ctx, icd_buf *out)
{
    dr_serve_files *sf = ctx;
    icd_buf_puts(out, ",\"mode\":\"files\",\"table\":");
    icd_json_cstr(out, sf->table_seg);
    if (sf->has_snap)
        icd_buf_printf(out, ",\"snapshotId\":\"%" PRId64 "\"", sf->snap_id);
    else
        icd_buf_puts(out, ",\"snapshotId\":null");
    size_t m = 0;
    for (size_t i = 0; i < sf->ntasks; i++)
        m += sf->names[i] != NULL;
    icd_buf_printf(out, ",\"rawFiles\":%zu,\"materializedFiles\":%zu,\"cacheDir\":", sf->ntasks - m,
                   m);
    icd_json_cstr(out, sf->dir);
}

static void f_metrics(void *ctx, icd_buf *out)
{
    dr_serve_files *sf = ctx;
    icd_buf_puts(out, "# HELP icedruid_serve_files_total File requests by outcome: hit (from the "
                      "cache), generated (written into the cache), gone (410), not_found (404), "
                      "failed (500).\n# TYPE icedruid_serve_files_total counter\n");
    icd_buf_printf(out,
                   "icedruid_serve_files_total{result=\"hit\"} %" PRIu64 "\n"
                   "icedruid_serve_files_total{result=\"generated\"} %" PRIu64 "\n"
                   "icedruid_serve_files_total{result=\"gone\"} %" PRIu64 "\n"
                   "icedruid_serve_files_total{result=\"not_found\"} %" PRIu64 "\n"
                   "icedruid_serve_files_total{result=\"failed\"} %" PRIu64 "\n"
                   "# HELP icedruid_serve_cache_evictions_total Cached files removed to keep "
                   "the cache under its bound.\n# TYPE icedruid_serve_cache_evictions_total "
                   "counter\nicedruid_serve_cache_evictions_total %" PRIu64 "\n",
                   (uint64_t)atomic_load(&sf->hits), (uint64_t)atomic_load(&sf->generated),
                   (uint64_t)atomic_load(&sf->gone), (uint64_t)atomic_load(&sf->not_found),
                   (uint64_t)atomic_load(&sf->failed), (uint64_t)atomic_load(&sf->evicted));
}

void dr_serve_files_get(dr_serve_files *sf, dr_server_provider *out)
{
    *out =
        (dr_server_provider){sf,       f_count,   f_spec, f_split_open, f_split_next, f_split_close,
                             f_health, f_metrics, f_open, NULL,         NULL};
}

/* ---- life ------------------------------------------------------------------------------ */

int dr_serve_files_new(dr_plan *plan, icd_fileio *io, const dr_serve_files_opts *opts,
                       dr_serve_files **out, icd_error *err)
{
    *out = NULL;
    if (!opts || !opts->cache_dir || !*opts->cache_dir)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "serve: the file cache needs a directory");
    ICD_TRY(dr_plan_decide(plan, err));
    const char *orc = NULL;
    size_t norc = dr_serve_files_orc(plan, &orc);
    if (norc)
        return icd_fail(err, ICD_EUNSUPPORTED, orc, -1,
                        "%zu ORC data file%s must be materialized and icedruid has no ORC "
                        "writer yet: serve this table's rows as NDJSON splits (serve --rows)",
                        norc, norc == 1 ? "" : "s");
    struct stat sb;
    if (stat(opts->cache_dir, &sb) && dr_make_dirs(opts->cache_dir))
        return icd_fail(err, ICD_EIO, opts->cache_dir, -1, "cannot create the cache directory: %s",
                        strerror(errno));
    if (stat(opts->cache_dir, &sb) || !S_ISDIR(sb.st_mode))
        return icd_fail(err, ICD_EINVALID, opts->cache_dir, -1, "the cache is not a directory");
    dr_serve_files *sf = calloc(1, sizeof *sf);
    if (!sf) return icd_fail_nomem(err);
    sf->plan = plan;
    sf->io = io;
    sf->opts = *opts;
    if (!sf->opts.cache_max_bytes) sf->opts.cache_max_bytes = (uint64_t)10 << 30;
    if (sf->opts.metadata_max_age_ms < 0) sf->opts.metadata_max_age_ms = 5000;
    sf->snaps_at = -1;
    pthread_mutex_init(&sf->mu, NULL);
    sf->dir = dr_absolute_path(opts->cache_dir);
    icd_buf tb = ICD_BUF_INIT;
    table_segment(&tb, plan);
    sf->table_seg = icd_buf_detach(&tb);
    const ice_snapshot *snap = ice_scan_plan_snapshot(dr_plan_scan(plan));
    if (snap) {
        sf->has_snap = true;
        sf->snap_id = snap->snapshot_id;
    }
    sf->ntasks = ice_scan_plan_task_count(dr_plan_scan(plan));
    sf->names = calloc(sf->ntasks ? sf->ntasks : 1, sizeof *sf->names);
    int rc = (!sf->dir || !sf->table_seg || !sf->names) ? icd_fail_nomem(err) : 0;
    icd_buf nm = ICD_BUF_INIT;
    for (size_t i = 0; !rc && i < sf->ntasks; i++) {
        if (dr_plan_decision(plan, i)->raw) continue;
        icd_buf_clear(&nm);
        rc = dr_stage_name(dr_plan_metadata(plan), dr_plan_stage_cols(plan)->schema,
                           ice_scan_plan_task(dr_plan_scan(plan), i), &nm, err);
        if (!rc && !(sf->names[i] = strdup(nm.data))) rc = icd_fail_nomem(err);
    }
    icd_buf_free(&nm);
    if (rc) {
        dr_serve_files_free(sf);
        return rc;
    }
    *out = sf;
    return 0;
}

void dr_serve_files_free(dr_serve_files *sf)
{
    if (!sf) return;
    for (size_t i = 0; sf->names && i < sf->ntasks; i++)
        free(sf->names[i]);
    free(sf->names);
    free(sf->snaps);
    free(sf->dir);
    free(sf->table_seg);
    ice_scan_reader_free(sf->reader);
    pthread_mutex_destroy(&sf->mu);
    free(sf);
}
