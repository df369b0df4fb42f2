/*
 * libFuzzer target: the `sync` state file (druid/phase2/sync.c) as a run reads and writes it:
 * the input is STATE.json (after a first byte of flags), opened with dr_state_open (lock
 * file, removal of stale temporaries, JSON with duplicate keys refused, version and entry
 * checks) in a directory of its own under /dev/shm (else /tmp). When it opens, every
 * data source it names must be found by dr_state_lookup with its snapshotId; with flag
 * bit 0 an entry is recorded (a new data source, or with bit 1 the first one named),
 * saved atomically, and the reopened file must hold it and every other entry unchanged.
 * Any crash, leak or sanitizer report is a bug, and so is a state that does not read
 * back what was saved or a file that opens and then fails its own lookups.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "druid/phase2/sync.h"

static char dir[64];
static char path[128];

static void cleanup(void)
{
    char p[160];
    unlink(path);
    snprintf(p, sizeof p, "%s.lock", path);
    unlink(p);
    rmdir(dir);
}

static void write_state(const uint8_t *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(data, 1, n, f) != n) abort();
    if (fclose(f)) abort();
}

/* Every entry of `doc` (the file as jansson reads it) must be found with its id. */
static void check_entries(const dr_state *st, const json_t *doc, const char *skip)
{
    const char *k;
    json_t *e;
    json_object_foreach(json_object_get(doc, "dataSources"), k, e)
    {
        if (skip && !strcmp(k, skip)) continue;
        int64_t id = 0;
        const char *table = NULL;
        if (!dr_state_lookup(st, k, &id, &table)) abort();
        if (id != json_integer_value(json_object_get(e, "snapshotId"))) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/icd_fuzz_state_XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(dir)) abort();
        snprintf(path, sizeof path, "%s/STATE.json", dir);
        atexit(cleanup);
    }
    write_state(data + 1, size - 1);
    dr_state *st;
    bool busy;
    icd_error err;
    if (dr_state_open(path, &st, &busy, &err)) {
        if (busy || strchr(err.message, '\n')) abort();
        return 0;
    }
    json_t *doc = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, NULL);
    if (!doc) abort(); /* it opened, so it parses */
    check_entries(st, doc, NULL);
    int64_t id;
    if (dr_state_lookup(st, "icd-fuzz-absent-\x01", &id, NULL)) {
        if (!json_object_get(json_object_get(doc, "dataSources"), "icd-fuzz-absent-\x01")) abort();
    }
    if (data[0] & 1) {
        const char *ds = "wikipedia";
        if (data[0] & 2) {
            void *it = json_object_iter(json_object_get(doc, "dataSources"));
            if (it) ds = json_object_iter_key(it);
        }
        char *name = strdup(ds);
        const char *tasks[] = {"query-1", "index_parallel_wikipedia_2024"};
        if (!name || dr_state_record(st, name, -42, "ns.t", 1700000000123, tasks, 2, &err) ||
            dr_state_save(st, &err))
            abort();
        dr_state_close(st);
        if (dr_state_open(path, &st, &busy, &err)) abort(); /* what was saved opens */
        const char *table = NULL;
        if (!dr_state_lookup(st, name, &id, &table) || id != -42 || !table || strcmp(table, "ns.t"))
            abort();
        check_entries(st, doc, name);
        free(name);
    }
    json_decref(doc);
    dr_state_close(st);
    return 0;
}
