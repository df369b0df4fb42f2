/*
 * Local (Hadoop-layout) catalog: which metadata file is current for every kind of version
 * hint (valid, pointing back, empty, garbage, missing file, only version-hint.txt, none),
 * gzip-named versions, --remap applied to the table location, and Druid's
 * warehouse/namespace/table locations. Tables are built in a temporary directory.
 */
#include <stdio.h>
#include <stdlib.h>
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
    put("missing", "v1.metadata.json", MINIMAL);
    put("missing", "v4.metadata.json", MINIMAL);
    put("missing", "version-hint.text", "7");
    expect(io, "missing", "v4.metadata.json");
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

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

TEST_MAIN(TEST(test_version_hints), TEST(test_remap), TEST(test_table_location), TEST(cleanup))
