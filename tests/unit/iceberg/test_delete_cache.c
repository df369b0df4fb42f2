/* Unit tests of iceberg/deletes/delete_cache: the position-delete loader's entry. A
 * delete file that references one data file holds one position set and one path, no
 * map and no fixed pages (memory proportional to the content); with several data files
 * the sets stay in file_path order and each is found by its path (with or without the
 * file:// scheme); records out of the spec's order are an error naming the file. The size
 * check of a delete file against its manifest entry: an error unless the FileIO was told
 * to warn (icd_fileio_set_size_mismatch_warns, ICEDRUID_SIZE_MISMATCH=warn in the CLI);
 * data files are never checked by size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iceberg/deletes/delete_cache.h"
#include "io/fileio.h"
#include "test.h"

static ice_content_file pos_file(void)
{
    ice_content_file df;
    memset(&df, 0, sizeof df);
    df.content = ICE_CONTENT_POSITION_DELETES;
    df.path = "deletes.parquet";
    df.record_count = -1;
    return df;
}

static void test_one_data_file(void)
{
    ice_content_file df = pos_file();
    cache_entry *e = calloc(1, sizeof *e);
    icd_error err;
    ice_rd_posload pl;
    CHECK(ice_rd_posload_init(&pl, e, &df, &err) == 0);
    const char *path = "file:///warehouse/t/data/00000.parquet";
    for (int64_t i = 0; i < 1000; i++)
        CHECK(ice_rd_posload_add(&pl, path, strlen(path), i * 3, i, &err) == 0);
    CHECK(ice_rd_posload_finish(&pl, &err) == 0);
    ice_rd_posload_free(&pl);
    CHECK_EQ_INT(e->nposset, 1);
    /* the entry holds the path once and two offsets: well under a kilobyte */
    CHECK(ice_delete_entry_memory(e) < 512);
    const ice_posset *ps = ice_delete_entry_positions(e, "/warehouse/t/data/00000.parquet",
                                                      strlen("/warehouse/t/data/00000.parquet"));
    CHECK(ps != NULL);
    CHECK_EQ_INT(ice_posset_cardinality(ps), 1000);
    CHECK(ice_posset_contains(ps, 2997) && !ice_posset_contains(ps, 2998));
    CHECK(ice_delete_entry_positions(e, path, strlen(path)) == ps);
    CHECK(ice_delete_entry_positions(e, "/other", 6) == NULL);
    ice_delete_entry_free(e);
}

static void test_many_data_files(void)
{
    ice_content_file df = pos_file();
    cache_entry *e = calloc(1, sizeof *e);
    icd_error err;
    ice_rd_posload pl;
    CHECK(ice_rd_posload_init(&pl, e, &df, &err) == 0);
    char path[64];
    int64_t row = 0;
    for (int f = 0; f < 300; f++) {
        snprintf(path, sizeof path, "/d/%05d.parquet", f);
        for (int64_t p = 0; p <= f % 7; p++)
            CHECK(ice_rd_posload_add(&pl, path, strlen(path), p * 10 + f, row++, &err) == 0);
    }
    CHECK(ice_rd_posload_finish(&pl, &err) == 0);
    ice_rd_posload_free(&pl);
    CHECK_EQ_INT(e->nposset, 300);
    for (int f = 0; f < 300; f++) {
        snprintf(path, sizeof path, "file:/d/%05d.parquet", f);
        const ice_posset *ps = ice_delete_entry_positions(e, path, strlen(path));
        CHECK(ps != NULL);
        CHECK_EQ_INT(ice_posset_cardinality(ps), f % 7 + 1);
        CHECK(ice_posset_contains(ps, (uint64_t)f));
    }
    CHECK(ice_delete_entry_positions(e, "/d/00300.parquet", 16) == NULL);
    CHECK(ice_delete_entry_positions(e, "/c", 2) == NULL);
    ice_delete_entry_free(e);
}

static void test_order_is_checked(void)
{
    ice_content_file df = pos_file();
    cache_entry *e = calloc(1, sizeof *e);
    icd_error err;
    ice_rd_posload pl;
    CHECK(ice_rd_posload_init(&pl, e, &df, &err) == 0);
    CHECK(ice_rd_posload_add(&pl, "/b", 2, 1, 0, &err) == 0);
    CHECK(ice_rd_posload_add(&pl, "/a", 2, 1, 1, &err) != 0);
    CHECK(strstr(err.message, "not sorted") != NULL);
    ice_rd_posload_free(&pl);
    ice_delete_entry_free(e);
}

static void test_size_mismatch(void)
{
    char path[] = "/tmp/icd-size-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, "0123456789", 10) == 10);
    close(fd);
    ice_content_file df = pos_file();
    df.path = path;
    df.file_size = 12;
    icd_fileio *io;
    icd_error err;
    CHECK(icd_fileio_new(&io, &err) == 0);
    icd_file *f = NULL;
    CHECK(!icd_fileio_size_mismatch_warns(io));
    CHECK_EQ_INT(ice_delete_open_entry(io, &df, &f, &err), ICD_ECORRUPT);
    CHECK(f == NULL);
    CHECK(strstr(err.message, "10 bytes but its manifest entry says 12") != NULL);
    CHECK_EQ_STR(err.file, path);
    icd_fileio_set_size_mismatch_warns(io, true);
    CHECK_EQ_INT(ice_delete_open_entry(io, &df, &f, &err), 0);
    icd_file_close(f);
    /* the rows still have to agree */
    CHECK_EQ_INT(ice_delete_check_entry(&df, 10, 3, true, &err), 0);
    df.record_count = 4;
    CHECK_EQ_INT(ice_delete_check_entry(&df, 10, 3, true, &err), ICD_ECORRUPT);
    /* a data file is checked by its row count only */
    icd_fileio_set_size_mismatch_warns(io, false);
    df.content = ICE_CONTENT_DATA;
    f = NULL;
    CHECK_EQ_INT(ice_delete_open_entry(io, &df, &f, &err), 0);
    icd_file_close(f);
    icd_fileio_free(io);
    unlink(path);
}

TEST_MAIN(TEST(test_one_data_file), TEST(test_many_data_files), TEST(test_order_is_checked),
          TEST(test_size_mismatch))
