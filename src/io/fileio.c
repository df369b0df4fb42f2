/*
 * FileIO (see fileio.h): location remapping and the local-file backend. Remapping lives
 * here so that metadata files, manifest lists, manifests, data and delete files are all
 * translated the same way, whichever layer names them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "io/fileio.h"
#include "io/http.h"
#include "io/s3.h"

typedef struct remap_rule {
    char *from;
    char *to;
} remap_rule;

/* The local read counters: shared by a FileIO and the local files it opened, which may
 * outlive it (atomic: readers run on several threads; freed with the last reference). */
struct icd_io_counters {
    uint64_t bytes, reads;
    int refs;
};

static icd_io_counters *counters_ref(icd_io_counters *c)
{
    if (c) __atomic_fetch_add(&c->refs, 1, __ATOMIC_RELAXED);
    return c;
}

static void counters_unref(icd_io_counters *c)
{
    if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) free(c);
}

struct icd_fileio {
    remap_rule *rules;
    size_t nrules;
    icd_remote *remote; /* HTTP/S3: curl handle pool and S3 settings (http.h, s3.h) */
    icd_io_counters *local;
    bool size_mismatch_warns;
};

void icd_fileio_set_size_mismatch_warns(icd_fileio *io, bool warn)
{
    io->size_mismatch_warns = warn;
}

bool icd_fileio_size_mismatch_warns(const icd_fileio *io)
{
    return io && io->size_mismatch_warns;
}

uint64_t icd_fileio_local_bytes(const icd_fileio *io)
{
    return io ? __atomic_load_n(&io->local->bytes, __ATOMIC_RELAXED) : 0;
}

uint64_t icd_fileio_local_reads(const icd_fileio *io)
{
    return io ? __atomic_load_n(&io->local->reads, __ATOMIC_RELAXED) : 0;
}

int icd_fileio_new(icd_fileio **out, icd_error *err)
{
    icd_fileio *io = calloc(1, sizeof *io);
    if (io) io->local = calloc(1, sizeof *io->local);
    if (io && io->local) io->local->refs = 1;
    if (io && (!io->local || !(io->remote = icd_remote_new()))) {
        free(io->local);
        free(io);
        io = NULL;
    }
    *out = io;
    return io ? 0 : icd_fail_nomem(err);
}

icd_remote *icd_fileio_remote(icd_fileio *io)
{
    return io ? io->remote : NULL;
}

void icd_fileio_free(icd_fileio *io)
{
    if (!io) return;
    for (size_t i = 0; i < io->nrules; i++) {
        free(io->rules[i].from);
        free(io->rules[i].to);
    }
    free(io->rules);
    icd_remote_free(io->remote);
    counters_unref(io->local);
    free(io);
}

int icd_fileio_add_remap(icd_fileio *io, const char *from, const char *to, icd_error *err)
{
    if (!from[0]) return icd_fail(err, ICD_EINVALID, NULL, -1, "--remap: the FROM prefix is empty");
    remap_rule *r = realloc(io->rules, (io->nrules + 1) * sizeof *r);
    if (!r) return icd_fail_nomem(err);
    io->rules = r;
    r[io->nrules].from = strdup(from);
    r[io->nrules].to = strdup(to);
    if (!r[io->nrules].from || !r[io->nrules].to) {
        free(r[io->nrules].from);
        free(r[io->nrules].to);
        return icd_fail_nomem(err);
    }
    io->nrules++;
    return 0;
}

int icd_fileio_add_remap_arg(icd_fileio *io, const char *arg, icd_error *err)
{
    const char *eq = strchr(arg, '=');
    if (!eq) return icd_fail(err, ICD_EINVALID, NULL, -1, "--remap expects FROM=TO, got '%s'", arg);
    char *from = strndup(arg, (size_t)(eq - arg));
    if (!from) return icd_fail_nomem(err);
    int rc = icd_fileio_add_remap(io, from, eq + 1, err);
    free(from);
    return rc;
}

/* The rule with the longest `from` that prefixes `loc`, or NULL. */
static const remap_rule *best_rule(const icd_fileio *io, const char *loc)
{
    const remap_rule *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; io && i < io->nrules; i++) {
        size_t n = strlen(io->rules[i].from);
        if (n > best_len && strncmp(loc, io->rules[i].from, n) == 0) {
            best = &io->rules[i];
            best_len = n;
        }
    }
    return best;
}

/* "file:///a", "file:/a" -> "/a"; other locations unchanged. */
static const char *strip_file_scheme(const char *loc)
{
    if (strncmp(loc, "file://", 7) == 0) return loc + 7;
    if (strncmp(loc, "file:", 5) == 0) return loc + 5;
    return loc;
}

char *icd_fileio_resolve(const icd_fileio *io, const char *location)
{
    const char *loc = location;
    const remap_rule *r = best_rule(io, loc);
    if (!r) { /* also try the location without its file: scheme */
        loc = strip_file_scheme(location);
        r = best_rule(io, loc);
    }
    if (!r) return strdup(strip_file_scheme(location));
    size_t from = strlen(r->from), to = strlen(r->to), rest = strlen(loc + from);
    char *p = malloc(to + rest + 1);
    if (!p) return NULL;
    memcpy(p, r->to, to);
    memcpy(p + to, loc + from, rest + 1);
    const char *s = strip_file_scheme(p);
    if (s != p) memmove(p, s, strlen(s) + 1);
    return p;
}

static int local_read_at(icd_file *f, uint64_t off, void *buf, size_t n, size_t *got,
                         icd_error *err)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(f->fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR) continue;
            return icd_fail(err, ICD_EIO, f->location, (int64_t)(off + done), "read failed: %s",
                            strerror(errno));
        }
        if (r == 0) break;
        done += (size_t)r;
    }
    if (f->counters) {
        __atomic_fetch_add(&f->counters->bytes, done, __ATOMIC_RELAXED);
        __atomic_fetch_add(&f->counters->reads, 1, __ATOMIC_RELAXED);
    }
    *got = done;
    return 0;
}

static void local_close(icd_file *f)
{
    close(f->fd);
}

static const icd_file_ops LOCAL_OPS = {local_read_at, local_close};

static bool is_http(const char *path)
{
    return !strncmp(path, "http://", 7) || !strncmp(path, "https://", 8);
}

/* Schemes that name remote storage we cannot open without a remap (s3 and http(s) are
 * dispatched to their backends before this check). */
static int check_scheme(const char *location, const char *path, icd_error *err)
{
    const char *colon = strstr(path, "://");
    if (!colon) return 0;
    size_t n = (size_t)(colon - path);
    return icd_fail(err, ICD_EUNSUPPORTED, location, -1,
                    "storage scheme '%.*s://' is not supported by this build; copy the table "
                    "locally and map its prefix with --remap FROM=TO",
                    (int)n, path);
}

int icd_file_open(icd_fileio *io, const char *location, icd_file **out, icd_error *err)
{
    *out = NULL;
    char *path = icd_fileio_resolve(io, location);
    if (!path) return icd_fail_nomem(err);
    int rc;
    if (icd_s3_is_location(path) || is_http(path)) {
        rc = is_http(path) ? icd_http_open(io, location, path, out, err)
                           : icd_s3_open(io, location, path, out, err);
        free(path);
        return rc;
    }
    rc = check_scheme(location, path, err);
    if (rc) {
        free(path);
        return rc;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        rc = icd_fail(err, e == ENOENT ? ICD_ENOTFOUND : ICD_EIO, location, -1,
                      "cannot open%s%s: %s", strcmp(path, location) ? " " : "",
                      strcmp(path, location) ? path : "", strerror(e));
        free(path);
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = icd_fail(err, ICD_EIO, location, -1, "not a regular file");
        close(fd);
        free(path);
        return rc;
    }
    icd_file *f = calloc(1, sizeof *f);
    char *loc = strdup(location);
    if (!f || !loc) {
        free(f);
        free(loc);
        close(fd);
        free(path);
        return icd_fail_nomem(err);
    }
    f->ops = &LOCAL_OPS;
    f->location = loc;
    f->path = path;
    f->size = (uint64_t)st.st_size;
    f->fd = fd;
    f->counters = io ? counters_ref(io->local) : NULL;
    *out = f;
    return 0;
}

void icd_file_close(icd_file *f)
{
    if (!f) return;
    f->ops->close(f);
    counters_unref(f->counters);
    free(f->location);
    free(f->path);
    free(f);
}

int icd_file_read_at(icd_file *f, uint64_t off, void *buf, size_t n, icd_error *err)
{
    if (off > f->size || n > f->size - off)
        return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)off,
                        "truncated: needs %zu bytes but the file has %llu", n,
                        (unsigned long long)(f->size > off ? f->size - off : 0));
    size_t got = 0;
    int rc = f->ops->read_at(f, off, buf, n, &got, err);
    if (rc) return rc;
    if (got != n)
        return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)(off + got),
                        "truncated: file ended while reading %zu bytes", n);
    return 0;
}

int icd_fileio_read_small(icd_fileio *io, const char *location, size_t max_bytes, char **out,
                          size_t *len, icd_error *err)
{
    *out = NULL;
    icd_file *f;
    ICD_TRY(icd_file_open(io, location, &f, err));
    if (f->size > max_bytes) {
        int rc = icd_fail(err, ICD_EUNSUPPORTED, location, -1,
                          "file is %llu bytes, more than the %zu this reader accepts",
                          (unsigned long long)f->size, max_bytes);
        icd_file_close(f);
        return rc;
    }
    char *buf = malloc(f->size + 1);
    if (!buf) {
        icd_file_close(f);
        return icd_fail_nomem(err);
    }
    int rc = icd_file_read_at(f, 0, buf, f->size, err);
    if (rc) {
        free(buf);
        icd_file_close(f);
        return rc;
    }
    buf[f->size] = '\0';
    if (len) *len = f->size;
    *out = buf;
    icd_file_close(f);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int icd_fileio_list_dir(icd_fileio *io, const char *location, char ***names, size_t *count,
                        icd_error *err)
{
    *names = NULL;
    *count = 0;
    char *path = icd_fileio_resolve(io, location);
    if (!path) return icd_fail_nomem(err);
    int rc;
    if (icd_s3_is_location(path)) {
        rc = icd_s3_list_dir(io, location, path, names, count, err);
        free(path);
        return rc;
    }
    if (is_http(path)) {
        free(path);
        return icd_fail(err, ICD_EUNSUPPORTED, location, -1,
                        "cannot list a directory over http(s):// (HTTP has no listing); the "
                        "table needs metadata/version-hint.text, or name its metadata file");
    }
    rc = check_scheme(location, path, err);
    if (rc) {
        free(path);
        return rc;
    }
    DIR *d = opendir(path);
    if (!d) {
        int e = errno;
        free(path);
        return icd_fail(err, e == ENOENT || e == ENOTDIR ? ICD_ENOTFOUND : ICD_EIO, location, -1,
                        "cannot list directory: %s", strerror(e));
    }
    free(path);
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (ICD_ARRAY_RESERVE(v, cap, n + 1, 16)) {
            rc = icd_fail_nomem(err);
            break;
        }
        if (!(v[n] = strdup(e->d_name))) {
            rc = icd_fail_nomem(err);
            break;
        }
        n++;
    }
    closedir(d);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            free(v[i]);
        free(v);
        return rc;
    }
    if (n) qsort(v, n, sizeof *v, cmp_str);
    *names = v;
    *count = n;
    return 0;
}

/* A local stat() that only calls "no such file" absent: ENOENT, or ENOTDIR (a component of
 * the path is a file). 1: exists (*st filled), 0: absent, <0: error naming the location. */
static int local_stat(const char *location, const char *path, struct stat *st, icd_error *err)
{
    if (stat(path, st) == 0) return 1;
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) return 0;
    return icd_fail(err, ICD_EIO, location, -1, "cannot tell whether it exists: %s", strerror(e));
}

int icd_fileio_exists(icd_fileio *io, const char *location, icd_error *err)
{
    char *path = icd_fileio_resolve(io, location);
    if (!path) return icd_fail_nomem(err);
    int rc;
    if (icd_s3_is_location(path)) {
        rc = icd_s3_exists(io, location, path, err);
    } else if (is_http(path)) {
        icd_remote *r = icd_fileio_remote(io);
        rc = r ? icd_remote_exists(r, location, path, NULL, err) : icd_fail_nomem(err);
    } else if ((rc = check_scheme(location, path, err)) == 0) {
        struct stat st;
        rc = local_stat(location, path, &st, err);
    }
    free(path);
    return rc;
}

int icd_fileio_is_dir(icd_fileio *io, const char *location, icd_error *err)
{
    char *path = icd_fileio_resolve(io, location);
    if (!path) return icd_fail_nomem(err);
    int rc;
    if (icd_s3_is_location(path)) {
        rc = icd_s3_is_dir(io, location, path, err);
    } else {
        struct stat st;
        rc = local_stat(location, path, &st, err);
        if (rc == 1) rc = S_ISDIR(st.st_mode) ? 1 : 0;
    }
    free(path);
    return rc;
}
