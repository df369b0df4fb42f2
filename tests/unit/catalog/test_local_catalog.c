/*
 * Local (Hadoop-layout) catalog: which metadata file is current for every kind of version
 * hint (valid, pointing back, empty, garbage, missing file, only version-hint.txt, none),
 * gzip-named versions, --remap applied to the table location, and Druid's
 * warehouse/namespace/table locations. Tables are built in a temporary directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/local.h"
#include "test.h"

static char root[] = "/tmp/icd_catalog_XXXXXX";

static const char *MINIMAL =
    "{\"format-version\":1,\"location\":\"/t\",\"last-updated-ms\":1,\"last-column-id\":0,"
    "\"schema\":{\"type\":\"struct\",\"fields\":[]},\"partition-spec\":[]}";

static void put(const char *table, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/metadata", root, table);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", root, table);
    mkdir(dir, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/metadata/%s", root, table, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Resolves ROOT/table: it must fail with `code`, the error naming `file` (a suffix of
 * err.file) and saying `text`. */
static void expect_error(icd_fileio *io, const char *table, int code, const char *file,
                         const char *text)
{
    char loc[512];
    snprintf(loc, sizeof loc, "%s/%s", root, table);
    char *got = NULL;
    icd_error err;
    int rc = cat_local_resolve(io, loc, &got, &err);
    if (rc != code) fprintf(stderr, "%s: rc %d (%s)\n", table, rc, rc ? err.message : got);
    CHECK(rc == code);
    CHECK(got == NULL);
    free(got);
    if (rc) {
        size_t n = strlen(err.file), m = strlen(file);
        if (!(n >= m && !strcmp(err.file + n - m, file)))
            fprintf(stderr, "%s: error file %s, want ...%s\n", table, err.file, file);
        CHECK(n >= m && !strcmp(err.file + n - m, file));
        if (!strstr(err.message, text)) fprintf(stderr, "%s: %s\n", table, err.message);
        CHECK(strstr(err.message, text) != NULL);
    }
}

/* Resolves ROOT/table and checks the chosen file's name. */
static void expect(icd_fileio *io, const char *table, const char *want)
{
    char loc[512], want_path[600];
    snprintf(loc, sizeof loc, "%s/%s", root, table);
    snprintf(want_path, sizeof want_path, "%s/%s/metadata/%s", root, table, want);
    char *got = NULL;
    icd_error err;
    int rc = cat_local_resolve(io, loc, &got, &err);
    if (rc) fprintf(stderr, "%s: %s\n", table, err.message);
    CHECK(rc == 0);
    CHECK_EQ_STR(got, want_path);
    free(got);
}

static void test_version_hints(void)
{
    CHECK(mkdtemp(root) != NULL);
    icd_fileio *io;
    icd_error err;
    CHECK(icd_fileio_new(&io, &err) == 0);

    /* a valid hint */
    put("hint", "v1.metadata.json", MINIMAL);
    put("hint", "v2.metadata.json", MINIMAL);
    put("hint", "version-hint.text", "2\n");
    expect(io, "hint", "v2.metadata.json");
    /* a stale hint: Iceberg steps forward while newer versions exist */
    put("stale", "v1.metadata.json", MINIMAL);
    put("stale", "v2.metadata.json", MINIMAL);
    put("stale", "v3.metadata.json", MINIMAL);
    put("stale", "version-hint.text", "1");
    expect(io, "stale", "v3.metadata.json");
    /* empty, garbage, or naming a missing file: the highest listed version */
    put("empty", "v1.metadata.json", MINIMAL);
    put("empty", "v3.metadata.json", MINIMAL);
    put("empty", "version-hint.text", "");
    expect(io, "empty", "v3.metadata.json");
    put("garbage", "v2.metadata.json", MINIMAL);
    put("garbage", "v10.metadata.json", MINIMAL);
    put("garbage", "v9.metadata.json", MINIMAL);
    put("garbage", "version-hint.text", "two");
    expect(io, "garbage", "v10.metadata.json");
    /* a hint naming a missing version fails, as in HadoopTableOperations ("metadata file
     * for version N is missing"): falling back to v4 would read older data (issue 15.2) */
    put("missing", "v1.metadata.json", MINIMAL);
    put("missing", "v4.metadata.json", MINIMAL);
    put("missing", "version-hint.text", "7");
    expect_error(io, "missing", ICD_ENOTFOUND, "missing/metadata/v7.metadata.json",
                 "metadata file for version 7 is missing");
    /* version-hint.txt is not Iceberg's name: ignored */
    put("txt", "v1.metadata.json", MINIMAL);
    put("txt", "v2.metadata.json", MINIMAL);
    put("txt", "version-hint.txt", "1");
    expect(io, "txt", "v2.metadata.json");
    /* no hint; other files in the directory are ignored */
    put("nohint", "v1.metadata.json", MINIMAL);
    put("nohint", "v5.metadata.json", MINIMAL);
    put("nohint", "00001-abc.metadata.json", MINIMAL);
    put("nohint", "snap-1-1-x.avro", "");
    put("nohint", "v6.metadata.json.tmp", "");
    expect(io, "nohint", "v5.metadata.json");
    /* gzip names count as versions */
    put("gz", "v1.metadata.json", MINIMAL);
    put("gz", "v2.gz.metadata.json", MINIMAL);
    expect(io, "gz", "v2.gz.metadata.json");
    put("gzhint", "v1.metadata.json", MINIMAL);
    put("gzhint", "v2.metadata.json.gz", MINIMAL);
    put("gzhint", "version-hint.text", "2");
    expect(io, "gzhint", "v2.metadata.json.gz");

    /* a metadata file path is taken as is */
    char loc[600], *got = NULL;
    snprintf(loc, sizeof loc, "%s/hint/metadata/v1.metadata.json", root);
    CHECK(cat_local_resolve(io, loc, &got, &err) == 0);
    CHECK_EQ_STR(got, loc);
    free(got);
    /* a table with trailing slashes */
    snprintf(loc, sizeof loc, "%s/hint//", root);
    CHECK(cat_local_resolve(io, loc, &got, &err) == 0);
    CHECK(got && strstr(got, "/hint/metadata/v2.metadata.json") != NULL);
    free(got);

    /* not a table / no versions */
    snprintf(loc, sizeof loc, "%s/none", root);
    CHECK(cat_local_resolve(io, loc, &got, &err) == ICD_ENOTFOUND);
    CHECK(strstr(err.message, "metadata") != NULL);
    put("noversions", "version-hint.text", "1");
    snprintf(loc, sizeof loc, "%s/noversions", root);
    CHECK(cat_local_resolve(io, loc, &got, &err) == ICD_ENOTFOUND);

    /* load goes through the same resolution */
    ice_metadata *md = NULL;
    snprintf(loc, sizeof loc, "%s/hint", root);
    CHECK(cat_local_load(io, loc, &md, &err) == 0 && md && ice_metadata_format_version(md) == 1);
    ice_metadata_free(md);
    icd_fileio_free(io);
}

static void test_remap(void)
{
    /* The table named by its "remote" location, found locally through --remap. */
    icd_fileio *io;
    icd_error err;
    CHECK(icd_fileio_new(&io, &err) == 0);
    char rule[600];
    snprintf(rule, sizeof rule, "/warehouse/db=%s", root);
    CHECK(icd_fileio_add_remap_arg(io, rule, &err) == 0);
    char *got = NULL;
    CHECK(cat_local_resolve(io, "/warehouse/db/stale", &got, &err) == 0);
    CHECK_EQ_STR(got, "/warehouse/db/stale/metadata/v3.metadata.json");
    free(got);
    CHECK(cat_local_resolve(io, "/warehouse/db/garbage", &got, &err) == 0);
    CHECK_EQ_STR(got, "/warehouse/db/garbage/metadata/v10.metadata.json");
    free(got);
    icd_fileio_free(io);
}

static void test_table_location(void)
{
    char *loc = NULL;
    icd_error err;
    CHECK(cat_local_table_location("/wh", "db", "t", &loc, &err) == 0);
    CHECK_EQ_STR(loc, "/wh/db/t");
    free(loc);
    /* a dotted namespace stays one directory level */
    CHECK(cat_local_table_location("/wh/", "a.b", "t", &loc, &err) == 0);
    CHECK_EQ_STR(loc, "/wh/a.b/t");
    free(loc);
    CHECK(cat_local_table_location("s3://bucket/wh", "ns", "tbl", &loc, &err) == 0);
    CHECK_EQ_STR(loc, "s3://bucket/wh/ns/tbl");
    free(loc);
    CHECK(cat_local_table_location("/wh", "", "t", &loc, &err) == ICD_EINVALID);
}

/* A metadata file with this last-updated-ms. */
static void put_ms(const char *table, const char *name, long long ms)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"format-version\":1,\"location\":\"/t\",\"last-updated-ms\":%lld,"
             "\"last-column-id\":0,\"schema\":{\"type\":\"struct\",\"fields\":[]},"
             "\"partition-spec\":[]}",
             ms);
    put(table, name, text);
}

static char warned[2048];
static int nwarned;
static void on_warn(void *ctx, const char *file, const char *message)
{
    (void)ctx;
    snprintf(warned, sizeof warned, "%s: %s", file, message);
    nwarned++;
}

/* Issue 14.4: other naming conventions; what a hint naming a file means. */
static void test_other_conventions(void)
{
    icd_fileio *io;
    icd_error err;
    CHECK(icd_fileio_new(&io, &err) == 0);
    icd_set_warn_handler(on_warn, NULL);

    /* versions beyond 10^9 (BigQuery: epoch seconds), hinted and listed, and stepping on */
    put("epoch", "v1699999999.metadata.json", MINIMAL);
    put("epoch", "v1700000000.metadata.json", MINIMAL);
    put("epoch", "v1700000001.metadata.json", MINIMAL);
    put("epoch", "version-hint.text", "1700000000\n");
    expect(io, "epoch", "v1700000001.metadata.json");
    put("epoch_list", "v999999999.metadata.json", MINIMAL);
    put("epoch_list", "v1700000000.metadata.json", MINIMAL);
    expect(io, "epoch_list", "v1700000000.metadata.json");
    put("epoch_big", "v99999999999.metadata.json", MINIMAL); /* beyond Java's int */
    put("epoch_big", "version-hint.text", "99999999999");
    expect(io, "epoch_big", "v99999999999.metadata.json");
    CHECK(nwarned == 0);

    /* a hint naming a file is followed: relative to metadata/, or a location as is; a
     * vN name is that version (and steps forward like a number) */
    put("hintfile", "00001-aaa.metadata.json", MINIMAL);
    put("hintfile", "00002-bbb.metadata.json", MINIMAL);
    put("hintfile", "version-hint.text", "00001-aaa.metadata.json\n");
    expect(io, "hintfile", "00001-aaa.metadata.json");
    put("hintstem", "00003-ccc.metadata.json", MINIMAL); /* pyiceberg's "NNNNN-uuid" form */
    put("hintstem", "version-hint.text", "00003-ccc");
    expect(io, "hintstem", "00003-ccc.metadata.json");
    char text[600];
    put("hintabs", "00001-x.metadata.json", MINIMAL);
    snprintf(text, sizeof text, "%s/hintabs/metadata/00001-x.metadata.json", root);
    put("hintabs", "version-hint.text", text);
    expect(io, "hintabs", "00001-x.metadata.json");
    put("hintv", "v2.metadata.json", MINIMAL);
    put("hintv", "v3.metadata.json", MINIMAL);
    put("hintv", "version-hint.text", "v2.metadata.json");
    expect(io, "hintv", "v3.metadata.json");
    put("hintgone", "00002-b.metadata.json", MINIMAL);
    put("hintgone", "version-hint.text", "00001-a.metadata.json");
    expect_error(io, "hintgone", ICD_ENOTFOUND, "hintgone/metadata/00001-a.metadata.json",
                 "the metadata file version-hint.text names is missing");
    CHECK(nwarned == 0);

    /* no vN: the highest sequence number, guessed, with a warning */
    put("catalog", "00001-aaa.metadata.json", MINIMAL);
    put("catalog", "00010-ccc.metadata.json", MINIMAL);
    put("catalog", "00009-bbb.metadata.json", MINIMAL);
    put("catalog", "snap-1.avro", "");
    expect(io, "catalog", "00010-ccc.metadata.json");
    CHECK(nwarned == 1 && strstr(warned, "guessed that 00010-ccc.metadata.json") &&
          strstr(warned, "highest sequence number of 3 metadata files"));
    /* two writers with one sequence number: the greatest last-updated-ms */
    put_ms("tie", "00004-aaa.metadata.json", 5000);
    put_ms("tie", "00004-bbb.metadata.json", 9000);
    put_ms("tie", "00004-ccc.metadata.json", 7000);
    put_ms("tie", "00003-ddd.metadata.json", 99999);
    expect(io, "tie", "00004-bbb.metadata.json");
    CHECK(nwarned == 2 && strstr(warned, "greatest last-updated-ms of 3 candidates"));
    /* names without a sequence number: by last-updated-ms alone */
    put_ms("unnumbered", "a.metadata.json", 300);
    put_ms("unnumbered", "b.metadata.json", 100);
    expect(io, "unnumbered", "a.metadata.json");
    CHECK(nwarned == 3);
    /* a candidate that cannot be read fails the guess (never skipped) */
    put_ms("badcand", "00002-a.metadata.json", 1);
    put("badcand", "00002-b.metadata.json", "{not json");
    expect_error(io, "badcand", ICD_ECORRUPT, "badcand/metadata/00002-b.metadata.json", "");
    /* vN files win over catalog names without any note */
    nwarned = 0;
    put("mixed", "00007-z.metadata.json", MINIMAL);
    put("mixed", "v2.metadata.json", MINIMAL);
    expect(io, "mixed", "v2.metadata.json");
    CHECK(nwarned == 0);
    /* an unusable hint falls back to the listing, with a warning */
    put("garbage2", "v5.metadata.json", MINIMAL);
    put("garbage2", "version-hint.text", "five please");
    expect(io, "garbage2", "v5.metadata.json");
    CHECK(nwarned == 1 && strstr(warned, "neither a version number"));
    icd_set_warn_handler(NULL, NULL);
    icd_fileio_free(io);
}

/* Issue 15.1: an existence check that fails is an error naming the location, never
 * "absent". Local faults that work as root too: a symlink loop (ELOOP) and a name too
 * long (ENAMETOOLONG). */
static void test_failed_checks(void)
{
    icd_fileio *io;
    icd_error err;
    CHECK(icd_fileio_new(&io, &err) == 0);
    char path[600], target[600];
    /* stale hint 1; v2 exists; the check for v3 fails: an error, not v2 */
    put("loop", "v1.metadata.json", MINIMAL);
    put("loop", "v2.metadata.json", MINIMAL);
    put("loop", "version-hint.text", "1");
    snprintf(path, sizeof path, "%s/loop/metadata/v3.metadata.json", root);
    CHECK(symlink(path, path) == 0); /* points at itself */
    expect_error(io, "loop", ICD_EIO, "loop/metadata/v3.metadata.json",
                 "cannot tell whether it exists");
    /* the hinted version itself */
    put("loop2", "v1.metadata.json", MINIMAL);
    put("loop2", "version-hint.text", "2");
    snprintf(path, sizeof path, "%s/loop2/metadata/v2.metadata.json", root);
    CHECK(symlink(path, path) == 0);
    expect_error(io, "loop2", ICD_EIO, "loop2/metadata/v2.metadata.json",
                 "cannot tell whether it exists");
    /* the hint file: a loop is an error, not "no hint, list the directory" */
    put("loophint", "v1.metadata.json", MINIMAL);
    snprintf(path, sizeof path, "%s/loophint/metadata/version-hint.text", root);
    CHECK(symlink(path, path) == 0);
    expect_error(io, "loophint", ICD_EIO, "loophint/metadata/version-hint.text",
                 "cannot tell whether it exists");
    /* ENOTDIR (a path component is a file) is a definite "absent" */
    put("notdir", "v1.metadata.json", MINIMAL);
    snprintf(path, sizeof path, "%s/notdir/metadata/version-hint.text", root);
    CHECK(icd_fileio_exists(io, path, &err) == 0);
    snprintf(target, sizeof target, "%s/notdir/metadata/v1.metadata.json/x", root);
    CHECK(icd_fileio_exists(io, target, &err) == 0);
    /* a name too long for the file system: an error naming it */
    char longp[5000];
    int n = snprintf(longp, sizeof longp, "%s/", root);
    memset(longp + n, 'a', 4500);
    longp[n + 4500] = '\0';
    CHECK(icd_fileio_exists(io, longp, &err) == ICD_EIO);
    CHECK(strstr(err.message, "cannot tell whether it exists") != NULL);
    CHECK(icd_fileio_is_dir(io, longp, &err) == ICD_EIO);
    snprintf(path, sizeof path, "%s/notdir", root);
    CHECK(icd_fileio_is_dir(io, path, &err) == 1);
    snprintf(path, sizeof path, "%s/notdir/metadata/v1.metadata.json", root);
    CHECK(icd_fileio_is_dir(io, path, &err) == 0);
    icd_fileio_free(io);
}

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

TEST_MAIN(TEST(test_version_hints), TEST(test_other_conventions), TEST(test_failed_checks),
          TEST(test_remap), TEST(test_table_location), TEST(cleanup))
