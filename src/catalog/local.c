/*
 * Local (Hadoop-layout) catalog: finds a table's current metadata file the way Iceberg's
 * HadoopTableOperations does (version-hint.text, then walking to newer versions, with a
 * directory listing as the fallback), and builds Druid `local` catalog table locations.
 * The result feeds ice_metadata_load; nothing here parses metadata itself.
 */
#include <ctype.h>
#include <stdint.h>
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

/* Version numbers: Java reads them as a 32-bit int; we take up to 18 digits (BigQuery
 * names versions by epoch seconds, v1700000000; nothing real comes near 10^18). */
#define MAX_VERSION_DIGITS 18

/* Parses 1..18 decimal digits at *p; -1 when there are none or too many. */
static int64_t parse_digits(const char **p)
{
    const char *s = *p;
    int64_t v = 0;
    int n = 0;
    while (isdigit((unsigned char)*s)) {
        if (++n > MAX_VERSION_DIGITS) return -1;
        v = v * 10 + (*s++ - '0');
    }
    if (!n) return -1;
    *p = s;
    return v;
}

/* The suffixes a metadata file name ends with: plain, and the two gzip spellings Java
 * writes ("vN.gz.metadata.json") and used to write ("vN.metadata.json.gz"). */
static bool is_metadata_suffix(const char *p)
{
    return !strcmp(p, ".metadata.json") || !strcmp(p, ".gz.metadata.json") ||
           !strcmp(p, ".metadata.json.gz");
}

/* The version N of "vN.metadata.json" (and its gzip forms); -1 for any other name. */
static int64_t version_of(const char *name)
{
    if (name[0] != 'v') return -1;
    const char *p = name + 1;
    int64_t v = parse_digits(&p);
    return v >= 0 && is_metadata_suffix(p) ? v : -1;
}

/* The sequence number N of a catalog-written "NNNNN-<uuid>.metadata.json" (Java's
 * BaseMetastoreTableOperations, pyiceberg, every REST/SQL/Glue/Hive catalog); -1 for other
 * names. */
static int64_t sequence_of(const char *name)
{
    const char *p = name;
    int64_t v = parse_digits(&p);
    return v >= 0 && *p == '-' && cat_local_is_metadata_file_name(p) ? v : -1;
}

/* Whether the metadata file of version v exists, in any of its three names: 1 with the
 * location in *out, 0 when every name is definitely absent, < 0 when one of the checks
 * failed (a failed check is never "absent": a newer version missed means older data). */
static int version_file(icd_fileio *io, const char *mdir, int64_t v, char **out, icd_error *err)
{
    static const char *const FORMS[] = {"v%lld.metadata.json", "v%lld.gz.metadata.json",
                                        "v%lld.metadata.json.gz"};
    *out = NULL;
    for (size_t i = 0; i < sizeof FORMS / sizeof FORMS[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, FORMS[i], (long long)v);
        char *p = join(mdir, name);
        if (!p) return icd_fail_nomem(err);
        int rc = icd_fileio_exists(io, p, err);
        if (rc == 1) {
            *out = p;
            return 1;
        }
        free(p);
        if (rc < 0) return rc;
    }
    return 0;
}

typedef enum hint_kind {
    HINT_ABSENT,  /* no version-hint.text */
    HINT_VERSION, /* a version number */
    HINT_FILE,    /* a metadata file name or location */
    HINT_EMPTY,   /* present but empty (Impala-written tables have these) */
    HINT_BAD      /* present, not empty, but neither */
} hint_kind;

/* Reads metadata/version-hint.text. Only a definite "not found" is HINT_ABSENT; a hint
 * that exists but cannot be read is an error. */
static int read_hint(icd_fileio *io, const char *mdir, hint_kind *kind, int64_t *version,
                     char **file, icd_error *err)
{
    *kind = HINT_ABSENT;
    *file = NULL;
    char *path = join(mdir, "version-hint.text");
    if (!path) return icd_fail_nomem(err);
    int rc = icd_fileio_exists(io, path, err);
    char *buf = NULL;
    size_t len = 0;
    if (rc == 1) {
        rc = icd_fileio_read_small(io, path, MAX_HINT_BYTES, &buf, &len, err);
    } else if (rc == 0) {
        free(path); /* absent */
        return 0;
    }
    free(path);
    if (rc) return rc; /* the hint exists but could not be read */
    /* trim whitespace (Java reads the first line; writers add a newline) */
    size_t a = 0, b = len;
    while (a < b && isspace((unsigned char)buf[a]))
        a++;
    while (b > a && isspace((unsigned char)buf[b - 1]))
        b--;
    buf[b] = '\0';
    const char *t = buf + a;
    const char *p = t;
    int64_t v = parse_digits(&p);
    int64_t vn = version_of(t);
    rc = 0;
    *kind = *t ? HINT_BAD : HINT_EMPTY;
    if (v >= 0 && !*p) {
        *kind = HINT_VERSION;
        *version = v;
    } else if (vn >= 0) { /* "vN.metadata.json": version N, stepped forward like a number */
        *kind = HINT_VERSION;
        *version = vn;
    } else if (*t && strlen(t) == b - a && !strpbrk(t, " \t\r\n")) {
        /* a metadata file name or location (pyiceberg writes and follows these), or
         * pyiceberg's other form "NNNNN-<uuid>" meaning NNNNN-<uuid>.metadata.json */
        const char *q = t;
        bool seq_stem = parse_digits(&q) >= 0 && *q == '-' && !strchr(t, '/');
        if (cat_local_is_metadata_file_name(t)) {
            *kind = HINT_FILE;
            if (!(*file = strdup(t))) rc = icd_fail_nomem(err);
        } else if (seq_stem) {
            size_t n = strlen(t);
            *kind = HINT_FILE;
            if (!(*file = malloc(n + sizeof ".metadata.json")))
                rc = icd_fail_nomem(err);
            else {
                memcpy(*file, t, n);
                memcpy(*file + n, ".metadata.json", sizeof ".metadata.json");
            }
        }
    }
    free(buf);
    return rc;
}

/* Loads a candidate's last-updated-ms (for guessing among catalog-named files). */
static int last_updated_of(icd_fileio *io, const char *loc, int64_t *ms, icd_error *err)
{
    ice_metadata *md = NULL;
    ICD_TRY(ice_metadata_load(io, loc, &md, err));
    *ms = ice_metadata_last_updated_ms(md);
    ice_metadata_free(md);
    return 0;
}

/* The current metadata file by listing the directory: the highest vN (what Java's
 * HadoopTableOperations.findVersion does without a usable hint); without vN files, a
 * guess among the catalog-named files "NNNNN-<uuid>.metadata.json" — the highest NNNNN;
 * files sharing it, or names without a number, by the greatest last-updated-ms — with a
 * warning saying it was guessed. */
static int newest_listed(icd_fileio *io, const char *mdir, const char *table, char **out,
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
    int64_t best = -1, best_seq = -1;
    const char *best_name = NULL;
    size_t n_meta = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = version_of(names[i]);
        /* For one N in several forms, prefer the uncompressed name. */
        bool plain = !strstr(names[i], ".gz");
        if (v > best || (v == best && v >= 0 && plain && strstr(best_name, ".gz"))) {
            best = v;
            best_name = names[i];
        }
        if (cat_local_is_metadata_file_name(names[i])) n_meta++;
        int64_t sq = sequence_of(names[i]);
        if (sq > best_seq) best_seq = sq;
    }
    rc = 0;
    if (best_name) {
        if (!(*out = join(mdir, best_name))) rc = icd_fail_nomem(err);
    } else if (!n_meta) {
        rc = icd_fail(err, ICD_ENOTFOUND, mdir, -1,
                      "no metadata file (v<N>.metadata.json or <N>-<uuid>.metadata.json) in the "
                      "directory");
    } else {
        /* candidates: the highest sequence number's files, or (none numbered) every
         * metadata file; one is taken as is, several by the greatest last-updated-ms
         * (then the last name) */
        size_t ncand = 0;
        for (size_t i = 0; i < n; i++)
            if (cat_local_is_metadata_file_name(names[i]) &&
                (best_seq < 0 || sequence_of(names[i]) == best_seq))
                ncand++;
        int64_t best_ms = INT64_MIN;
        char *chosen = NULL;
        for (size_t i = 0; i < n && !rc; i++) {
            if (!cat_local_is_metadata_file_name(names[i])) continue;
            if (best_seq >= 0 && sequence_of(names[i]) != best_seq) continue;
            char *loc = join(mdir, names[i]);
            if (!loc) {
                rc = icd_fail_nomem(err);
                break;
            }
            int64_t ms = 0;
            if (ncand > 1) rc = last_updated_of(io, loc, &ms, err);
            if (!rc && (!chosen || ms >= best_ms)) {
                free(chosen);
                chosen = loc;
                best_ms = ms;
            } else {
                free(loc);
            }
        }
        if (!rc) {
            *out = chosen;
            chosen = NULL;
            const char *base = strrchr(*out, '/');
            base = base ? base + 1 : *out;
            if (best_seq >= 0 && ncand == 1)
                icd_warn(table,
                         "no version-hint.text and no v<N>.metadata.json: guessed that %s "
                         "(the highest sequence number of %zu metadata files) is current; "
                         "name the metadata file to be sure",
                         base, n_meta);
            else
                icd_warn(table,
                         "no version-hint.text and no v<N>.metadata.json: guessed that %s "
                         "(the greatest last-updated-ms of %zu candidates) is current; name "
                         "the metadata file to be sure",
                         base, ncand);
        }
        free(chosen);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* A location a version hint names: as is when absolute (a scheme or a leading '/'), else
 * relative to the metadata directory. */
static char *hinted_location(const char *mdir, const char *name)
{
    if (name[0] == '/' || strstr(name, "://")) return strdup(name);
    return join(mdir, name);
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
    hint_kind kind;
    int64_t v = -1;
    char *named = NULL, *file = NULL;
    int rc = read_hint(io, mdir, &kind, &v, &named, err);
    if (rc) {
        /* leave as is: the error names the hint */
    } else if (kind == HINT_VERSION) {
        /* Like HadoopTableOperations: the hinted version must exist ("Metadata file for
         * version N is missing" otherwise; falling back to an older one would return rows
         * deleted since), then step forward while a newer version exists (the hint is
         * written after the metadata file, so it may be stale). */
        rc = version_file(io, mdir, v, &file, err);
        if (rc == 0) {
            char name[64];
            snprintf(name, sizeof name, "v%lld.metadata.json", (long long)v);
            char *want = join(mdir, name);
            rc = icd_fail(err, ICD_ENOTFOUND, want ? want : mdir, -1,
                          "metadata file for version %lld is missing (version-hint.text names "
                          "version %lld; no v%lld.gz.metadata.json or v%lld.metadata.json.gz "
                          "either)",
                          (long long)v, (long long)v, (long long)v, (long long)v);
            free(want);
        }
        while (rc == 1 && v < INT64_MAX) {
            char *next;
            rc = version_file(io, mdir, v + 1, &next, err);
            if (rc == 1) {
                free(file);
                file = next;
                v++;
            }
        }
    } else if (kind == HINT_FILE) {
        /* a hint naming a metadata file (pyiceberg, some tools): followed exactly */
        if (!(file = hinted_location(mdir, named))) {
            rc = icd_fail_nomem(err);
        } else {
            rc = icd_fileio_exists(io, file, err);
            if (rc == 0)
                rc = icd_fail(err, ICD_ENOTFOUND, file, -1,
                              "the metadata file version-hint.text names is missing");
        }
    } else {
        if (kind == HINT_BAD)
            icd_warn(mdir, "version-hint.text holds neither a version number nor a metadata "
                           "file name; using the newest listed metadata file");
        rc = newest_listed(io, mdir, table, &file, err);
    }
    if (rc >= 0) {
        *out = file;
        file = NULL;
        rc = 0;
    }
    free(file);
    free(named);
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
