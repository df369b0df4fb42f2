/* Unit tests of druid/phase2/sync.c without a network: the state file (round trip, atomic
 * replacement, the lock, corrupt and foreign files) and the one-line rendering of Druid's
 * error bodies (the shapes Druid's SQL and Overlord endpoints answer with). */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "druid/phase2/sync.h"
#include "test.h"

static char dir[256];

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_state_round_trip(void)
{
    char p[512];
    path_in(p, sizeof p, "state.json");
    dr_state *st = NULL;
    bool busy = true;
    icd_error err;
    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), 0); /* no file yet: empty state */
    CHECK(!busy);
    int64_t id = 0;
    CHECK(st && !dr_state_lookup(st, "orders", &id, NULL));
    const char *tasks[] = {"query-1", "query-2"};
    CHECK_EQ_INT(dr_state_record(st, "orders", 3097981595695220017LL, "demo.orders",
                                 1717200000000LL, tasks, 2, &err),
                 0);
    CHECK_EQ_INT(dr_state_save(st, &err), 0);
    /* a second run in the meantime finds the lock held */
    dr_state *other = NULL;
    CHECK_EQ_INT(dr_state_open(p, &other, &busy, &err), ICD_EIO);
    CHECK(busy && other == NULL && strstr(err.message, "lock"));
    dr_state_close(st);

    /* what was written, read back by a plain JSON parser */
    json_t *doc = json_load_file(p, 0, NULL);
    json_t *e = json_object_get(json_object_get(doc, "dataSources"), "orders");
    CHECK_EQ_INT(json_integer_value(json_object_get(doc, "version")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(e, "snapshotId")), 3097981595695220017LL);
    CHECK_EQ_STR(json_string_value(json_object_get(e, "ingestedAt")), "2024-06-01T00:00:00.000Z");
    CHECK_EQ_STR(json_string_value(json_object_get(e, "table")), "demo.orders");
    CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(e, "tasks"), 1)), "query-2");
    json_decref(doc);

    /* reopened (the lock was released): the entry is there, other entries survive updates */
    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), 0);
    const char *table = NULL;
    CHECK(st && dr_state_lookup(st, "orders", &id, &table));
    CHECK_EQ_INT(id, 3097981595695220017LL);
    CHECK_EQ_STR(table, "demo.orders");
    CHECK_EQ_INT(dr_state_record(st, "events", 7, "demo.events", 0, NULL, 0, &err), 0);
    CHECK_EQ_INT(dr_state_save(st, &err), 0);
    dr_state_close(st);
    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), 0);
    CHECK(st && dr_state_lookup(st, "orders", &id, NULL) &&
          dr_state_lookup(st, "events", &id, NULL));
    dr_state_close(st);
    /* no temporary file left next to it */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q 'state.json.tmp'", dir);
    CHECK(system(cmd) != 0);
}

static void test_state_bad_files(void)
{
    char p[512];
    dr_state *st = NULL;
    bool busy;
    icd_error err;
    path_in(p, sizeof p, "torn.json");
    write_file(p, "{\"version\":1,\"dataSources\":{\"orders\":{\"snapsh");
    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "not valid JSON") != NULL);
    CHECK_EQ_STR(read_file(p), "{\"version\":1,\"dataSources\":{\"orders\":{\"snapsh");

    path_in(p, sizeof p, "v2.json");
    write_file(p, "{\"version\":2,\"dataSources\":{}}");
    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), ICD_EUNSUPPORTED);

    path_in(p, sizeof p, "foreign.json");
    write_file(p, "{\"orders\": 5}");
    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), ICD_ECORRUPT);

    path_in(p, sizeof p, "noid.json");
    write_file(p, "{\"version\":1,\"dataSources\":{\"orders\":{\"snapshotId\":\"12\"}}}");
    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "orders") != NULL);

    /* the new state cannot be written (here: its directory was moved away after the
     * open, which fails even for root): the save fails and the old state stays whole */
    char sub[400], gone[400];
    path_in(sub, sizeof sub, "blocked");
    path_in(gone, sizeof gone, "blocked.gone");
    mkdir(sub, 0755);
    snprintf(p, sizeof p, "%.300s/state.json", sub);
    write_file(p, "{\"version\":1,\"dataSources\":{}}");
    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), 0);
    if (st) {
        CHECK_EQ_INT(dr_state_record(st, "orders", 1, "a.b", 0, NULL, 0, &err), 0);
        CHECK_EQ_INT(rename(sub, gone), 0);
        CHECK_EQ_INT(dr_state_save(st, &err), ICD_EIO);
        CHECK(strstr(err.file, ".tmp.") != NULL);
        CHECK(strstr(err.message, "cannot create the new state file") != NULL);
        CHECK_EQ_INT(rename(gone, sub), 0);
    }
    dr_state_close(st);
    CHECK_EQ_STR(read_file(p), "{\"version\":1,\"dataSources\":{}}");
}

static const char *error_text(const char *body)
{
    static char out[1024];
    icd_buf b = ICD_BUF_INIT;
    dr_druid_error_text(body, strlen(body), &b);
    snprintf(out, sizeof out, "%s", b.data ? b.data : "");
    icd_buf_free(&b);
    return out;
}

static void test_druid_error_text(void)
{
    /* DruidException (SQL endpoints since Druid 28) */
    CHECK_EQ_STR(error_text("{\"error\":\"druidException\",\"errorCode\":\"invalidInput\","
                            "\"persona\":\"USER\",\"category\":\"INVALID_INPUT\","
                            "\"errorMessage\":\"Column [x] not found\",\"context\":{}}"),
                 "invalidInput (INVALID_INPUT): Column [x] not found");
    /* the older QueryException shape */
    CHECK_EQ_STR(error_text("{\"error\":\"Plan validation failed\",\"errorMessage\":\"bad\","
                            "\"errorClass\":\"org.apache.calcite.tools.ValidationException\","
                            "\"host\":null}"),
                 "Plan validation failed: bad [org.apache.calcite.tools.ValidationException]");
    /* the Overlord's {"error": "..."} */
    CHECK_EQ_STR(error_text("{\"error\":\"Cannot construct instance of IndexTask\"}"),
                 "Cannot construct instance of IndexTask");
    /* not JSON: quoted on one line, cut */
    CHECK_EQ_STR(error_text("<html>\nBad Gateway\n</html>"), "\"<html> Bad Gateway </html>\"");
    CHECK_EQ_STR(error_text(""), "(empty body)");
    char big[1000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *t = error_text(big);
    CHECK(strlen(t) == 300 + 5 && !strcmp(t + strlen(t) - 4, "...\""));
}

/* Issue 15 item 11: the temporary state file is never opened through a planted name
 * (symlink to a victim file, or the old predictable STATE.json.tmp.<pid>), it is created
 * 0600, and stale temporaries of a dead run are removed when the state is opened. */
static void test_state_temporary_is_safe(void)
{
    char p[512], victim[512], planted[600], stale[600], lockp[600];
    path_in(p, sizeof p, "safe.json");
    path_in(victim, sizeof victim, "victim.txt");
    write_file(victim, "precious\n");
    /* the old code wrote to STATE.tmp.<pid>: plant a symlink there to the victim */
    snprintf(planted, sizeof planted, "%s.tmp.%ld", p, (long)getpid());
    CHECK_EQ_INT(symlink(victim, planted), 0);
    /* a temporary left by a crashed run */
    snprintf(stale, sizeof stale, "%s.tmp.AbC123", p);
    write_file(stale, "{\"half\":");
    /* a symlink planted at the lock's name is not followed */
    char lockvictim[512];
    path_in(lockvictim, sizeof lockvictim, "lockvictim");
    snprintf(lockp, sizeof lockp, "%s.lock", p);
    CHECK_EQ_INT(symlink(lockvictim, lockp), 0);
    dr_state *st = NULL;
    bool busy = false;
    icd_error err;
    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), ICD_EIO);
    CHECK(st == NULL && strstr(err.message, "cannot open the state lock file"));
    CHECK(access(lockvictim, F_OK) != 0); /* the symlink's target was not created */
    CHECK_EQ_INT(unlink(lockp), 0);

    CHECK_EQ_INT(dr_state_open(p, &st, &busy, &err), 0);
    /* opening (lock held) removed both stale temporaries, the planted link itself only */
    CHECK(access(stale, F_OK) != 0);
    struct stat lst;
    CHECK(lstat(planted, &lst) != 0);
    CHECK_EQ_STR(read_file(victim), "precious\n");
    CHECK_EQ_INT(symlink(victim, planted), 0); /* planted again after the open */
    CHECK_EQ_INT(dr_state_record(st, "orders", 42, "demo.orders", 0, NULL, 0, &err), 0);
    CHECK_EQ_INT(dr_state_save(st, &err), 0);
    CHECK_EQ_STR(read_file(victim), "precious\n"); /* never written through the link */
    struct stat sst;
    CHECK_EQ_INT(stat(p, &sst), 0);
    CHECK_EQ_INT(sst.st_mode & 0777, 0600);
    CHECK(S_ISREG(sst.st_mode));
    dr_state_close(st);
    unlink(planted);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/icd_test_sync_XXXXXX");
    if (!mkdtemp(dir)) snprintf(dir, sizeof dir, "/tmp");
}

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (strcmp(dir, "/tmp")) CHECK_EQ_INT(system(cmd), 0);
}

TEST_MAIN({"setup", setup}, {"state_round_trip", test_state_round_trip},
          {"state_bad_files", test_state_bad_files},
          {"state_temporary_is_safe", test_state_temporary_is_safe},
          {"druid_error_text", test_druid_error_text}, {"cleanup", cleanup})
