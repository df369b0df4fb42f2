/*
 * libFuzzer target: version-hint.text parsing and local (Hadoop-layout) table resolution,
 * cat_local_resolve over a real metadata/ directory built from the input, then
 * cat_local_load on what it chose. Input: records separated by 0x01; the first is the
 * hint's bytes (a first byte 0x00 means "no version-hint.text"), each further record a
 * file name in metadata/ whose first byte picks its content (odd: a minimal metadata
 * JSON with last-updated-ms from the second byte, even: garbage). Names are made safe
 * (no '/', not "." or ".."); "://" in a hint is defused so nothing goes to the network.
 * The directory is rebuilt for every input under one temporary directory per process.
 * Any crash, leak, sanitizer report or an "absent" taken for an error is a bug.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/local.h"

#define MAX_FILES 12
#define MAX_NAME 120

static char root[64];
static char table[128];
static char mdir[160];

static void clear_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

static void write_file(const char *name, const void *data, size_t n)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", mdir, name);
    FILE *f = fopen(p, "wb");
    if (!f) return;
    if (n) fwrite(data, 1, n, f);
    fclose(f);
}

static void cleanup(void)
{
    clear_dir(mdir);
    rmdir(mdir);
    rmdir(table);
    rmdir(root);
}

static void warn_sink(void *ctx, const char *file, const char *message)
{
    (void)ctx;
    (void)file;
    (void)message;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!root[0]) {
        snprintf(root, sizeof root, "/tmp/icd_fuzz_local_XXXXXX");
        if (!mkdtemp(root)) return 0;
        snprintf(table, sizeof table, "%s/t", root);
        snprintf(mdir, sizeof mdir, "%s/metadata", table);
        mkdir(table, 0755);
        mkdir(mdir, 0755);
        icd_set_warn_handler(warn_sink, NULL);
        atexit(cleanup);
    }
    clear_dir(mdir);
    size_t start = 0, rec = 0, nfiles = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != 0x01) continue;
        const uint8_t *r = data + start;
        size_t n = i - start;
        start = i + 1;
        if (rec++ == 0) {
            if (n && r[0] == 0x00) continue; /* no hint */
            char *h = malloc(n + 1);
            if (!h) return 0;
            memcpy(h, r, n);
            for (size_t k = 0; k + 2 < n; k++)
                if (h[k] == ':' && h[k + 1] == '/' && h[k + 2] == '/') h[k] = '_';
            write_file("version-hint.text", h, n);
            free(h);
            continue;
        }
        if (nfiles >= MAX_FILES || n < 2) continue;
        char name[MAX_NAME + 1];
        size_t m = n - 1 > MAX_NAME ? MAX_NAME : n - 1;
        for (size_t k = 0; k < m; k++) {
            char c = (char)r[1 + k];
            name[k] = c == '/' || c == '\0' ? '_' : c;
        }
        name[m] = '\0';
        if (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "version-hint.text"))
            continue;
        char text[320];
        int len;
        if (r[0] & 1)
            len = snprintf(text, sizeof text,
                           "{\"format-version\":1,\"location\":\"/t\",\"last-updated-ms\":%u,"
                           "\"last-column-id\":0,\"schema\":{\"type\":\"struct\",\"fields\":[]},"
                           "\"partition-spec\":[]}",
                           (unsigned)(n > 2 ? r[2] : 0));
        else
            len = snprintf(text, sizeof text, "{garbage");
        write_file(name, text, (size_t)len);
        nfiles++;
    }
    icd_fileio *io;
    icd_error err;
    if (icd_fileio_new(&io, &err)) return 0;
    char *loc = NULL;
    int rc = cat_local_resolve(io, table, &loc, &err);
    if (rc == 0) {
        /* a chosen file must exist (only a definite "found" may be chosen) */
        if (icd_fileio_exists(io, loc, &err) != 1) abort();
        ice_metadata *md = NULL;
        if (cat_local_load(io, table, &md, &err) == 0) ice_metadata_free(md);
    } else if (loc) {
        abort(); /* an error leaves *out NULL */
    }
    free(loc);
    icd_fileio_free(io);
    return 0;
}
