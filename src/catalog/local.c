/*
 * Local (Hadoop-layout) catalog: finds a table's current metadata file the way Iceberg's
 * HadoopTableOperations does (version-hint.text, then walking to newer versions, with a
 * directory listing as the fallback), and builds Druid `local` catalog table locations.
 * The result feeds ice_metadata_load; nothing here parses metadata itself.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/local.h"

/* Version hints are a number and maybe a newline; anything large is not a hint. */
#define MAX_HINT_BYTES 4096

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !memcmp(s + n - m, suffix, m);
}

bool cat_local_is_metadata_file_name(const char *path)
{
    return ends_with(path, ".metadata.json") || ends_with(path, ".metadata.json.gz");
}

/* DIR/NAME without doubling a trailing slash (malloc'd). */
static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t m = strlen(name);
    char *p = malloc(n + m + 2);
    if (!p) return NULL;
    memcpy(p, dir, n);
    if (n == 1 && dir[0] == '/') n = 0; /* the root: "/" + name */
    p[n] = '/';
    memcpy(p + n + 1, name, m + 1);
    return p;
}

/* The version N of "vN.metadata.json", "vN.gz.metadata.json" or "vN.metadata.json.gz";
 * -1 for any other name. */
static long version_of(const char *name)
{
    if (name[0] != 'v' || !isdigit((unsigned char)name[1])) return -1;
    const char *p = name + 1;
    long v = 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p++ - '0');
        if (v > 1000000000L) return -1;
    }
    if (!strcmp(p, ".metadata.json") || !strcmp(p, ".gz.metadata.json") ||
        !strcmp(p, ".metadata.json.gz"))
        return v;
    return -1;
}

/* The existing metadata file of version v (malloc'd), or NULL (also on OOM: *oom set). */
static char *version_file(icd_fileio *io, const char *mdir, long v, bool *oom)
{
    static const char *const FORMS[] = {"v%ld.metadata.json", "v%ld.gz.metadata.json",
                                        "v%ld.metadata.json.gz"};
    for (size_t i = 0; i < sizeof FORMS / sizeof FORMS[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, FORMS[i], v);
        char *p = join(mdir, name);
        if (!p) {
            *oom = true;
            return NULL;
        }
        if (icd_fileio_exists(io, p)) return p;
        free(p);
    }
    return NULL;
}

/* The number in version-hint.text, or -1 when it is missing, empty or not a number. */
static long read_hint(icd_fileio *io, const char *mdir)
{
    char *path = join(mdir, "version-hint.text");
    if (!path || !icd_fileio_exists(io, path)) {
        free(path);
        return -1;
    }
    char *buf = NULL;
    size_t len = 0;
    icd_error ignored;
    icd_error_clear(&ignored);
    int rc = icd_fileio_read_small(io, path, MAX_HINT_BYTES, &buf, &len, &ignored);
    free(path);
    if (rc) return -1;
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    long v = 0;
    size_t digits = 0;
    while (i < len && isdigit((unsigned char)buf[i]) && digits < 10) {
        v = v * 10 + (buf[i++] - '0');
        digits++;
    }
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    bool ok = digits > 0 && digits < 10 && i == len;
    free(buf);
    return ok ? v : -1;
}

/* The highest vN metadata file in the directory listing. */
static int highest_listed(icd_fileio *io, const char *mdir, const char *table, char **out,
                          icd_error *err)
{
    char **names;
    size_t n;
    int rc = icd_fileio_list_dir(io, mdir, &names, &n, err);
    if (rc) {
        /* a missing bucket (S3 NoSuchBucket) is said as such, not as "not a table" */
        if (rc == ICD_ENOTFOUND && !strstr(err->message, "NoSuchBucket"))
            return icd_fail(err, ICD_ENOTFOUND, table, -1,
                            "not an Iceberg table: there is no metadata/ directory");
        return rc;
    }
    long best = -1;
    const char *best_name = NULL;
    for (size_t i = 0; i < n; i++) {
        long v = version_of(names[i]);
        /* For one N in several forms, prefer the uncompressed name. */
        bool plain = !strstr(names[i], ".gz");
        if (v > best || (v == best && v >= 0 && plain && strstr(best_name, ".gz"))) {
            best = v;
            best_name = names[i];
        }
    }
    rc = 0;
    if (!best_name)
        rc = icd_fail(err, ICD_ENOTFOUND, mdir, -1, "no v<N>.metadata.json file in the directory");
    else if (!(*out = join(mdir, best_name)))
        rc = icd_fail_nomem(err);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int cat_local_resolve(icd_fileio *io, const char *table, char **out, icd_error *err)
{
    *out = NULL;
    if (!table || !*table) return icd_fail(err, ICD_EINVALID, NULL, -1, "no table location given");
    if (cat_local_is_metadata_file_name(table)) {
        if (!(*out = strdup(table))) return icd_fail_nomem(err);
        return 0;
    }
    char *mdir = join(table, "metadata");
    if (!mdir) return icd_fail_nomem(err);
    int rc = 0;
    long v = read_hint(io, mdir);
    bool oom = false;
    char *file = v >= 0 ? version_file(io, mdir, v, &oom) : NULL;
    if (file) {
        /* HadoopTableOperations trusts the hint as a lower bound and steps forward while a
         * newer version exists (the hint is written after the metadata file). */
        char *next;
        while (v < 1000000000L && (next = version_file(io, mdir, v + 1, &oom)) != NULL) {
            free(file);
            file = next;
            v++;
        }
    }
    if (oom)
        rc = icd_fail_nomem(err);
    else if (file) {
        *out = file;
        file = NULL;
    } else
        rc = highest_listed(io, mdir, table, out, err);
    free(file);
    free(mdir);
    return rc;
}

int cat_local_load(icd_fileio *io, const char *table, ice_metadata **out, icd_error *err)
{
    *out = NULL;
    char *loc;
    ICD_TRY(cat_local_resolve(io, table, &loc, err));
    int rc = ice_metadata_load(io, loc, out, err);
    free(loc);
    return rc;
}

int cat_local_table_location(const char *warehouse, const char *ns, const char *table, char **out,
                             icd_error *err)
{
    *out = NULL;
    if (!warehouse || !*warehouse || !ns || !*ns || !table || !*table)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "a local catalog table needs a warehousePath, a namespace and a name");
    char *tmp = join(warehouse, ns);
    char *loc = tmp ? join(tmp, table) : NULL;
    free(tmp);
    if (!loc) return icd_fail_nomem(err);
    *out = loc;
    return 0;
}
