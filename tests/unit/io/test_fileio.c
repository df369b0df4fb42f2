/* Unit tests of io/fileio: remapping, positional reads, truncation errors. */
#include <stdlib.h>
#include <unistd.h>

#include "io/fileio.h"
#include "test.h"

static void test_remap(void)
{
    icd_error err;
    icd_fileio *io;
    CHECK(icd_fileio_new(&io, &err) == 0);
    CHECK(icd_fileio_add_remap_arg(io, "/test-warehouse=/corpus", &err) == 0);
    CHECK(icd_fileio_add_remap_arg(io, "/test-warehouse/iceberg_test=/ice", &err) == 0);
    CHECK(icd_fileio_add_remap_arg(io, "hdfs://localhost:20500/w=/h", &err) == 0);
    CHECK(icd_fileio_add_remap_arg(io, "noequals", &err) == ICD_EINVALID);
    char *p;
    CHECK_EQ_STR(p = icd_fileio_resolve(io, "/test-warehouse/x/y"), "/corpus/x/y");
    free(p);
    CHECK_EQ_STR(p = icd_fileio_resolve(io, "/test-warehouse/iceberg_test/t"), "/ice/t");
    free(p);
    CHECK_EQ_STR(p = icd_fileio_resolve(io, "file:/test-warehouse/a"), "/corpus/a");
    free(p);
    CHECK_EQ_STR(p = icd_fileio_resolve(io, "file:///other/a"), "/other/a");
    free(p);
    CHECK_EQ_STR(p = icd_fileio_resolve(io, "hdfs://localhost:20500/w/t/data/f.parquet"),
                 "/h/t/data/f.parquet");
    free(p);
    icd_file *f;
    CHECK(icd_file_open(io, "gs://bucket/x", &f, &err) == ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "gs://") != NULL);
    icd_fileio_free(io);
}

static void test_reads(void)
{
    char path[] = "/tmp/icd_fileio_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, "0123456789", 10) == 10);
    close(fd);
    icd_error err;
    icd_fileio *io;
    icd_fileio_new(&io, &err);
    icd_file *f;
    CHECK(icd_file_open(io, path, &f, &err) == 0);
    CHECK_EQ_INT(icd_file_size(f), 10);
    char buf[8] = {0};
    CHECK(icd_file_read_at(f, 3, buf, 4, &err) == 0);
    CHECK(!memcmp(buf, "3456", 4));
    CHECK(icd_file_read_at(f, 8, buf, 4, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "truncated") != NULL);
    CHECK_EQ_INT(err.offset, 8);
    icd_file_close(f);
    char *all;
    size_t len;
    CHECK(icd_fileio_read_small(io, path, 100, &all, &len, &err) == 0);
    CHECK_EQ_INT(len, 10);
    free(all);
    CHECK(icd_fileio_read_small(io, path, 5, &all, &len, &err) == ICD_EUNSUPPORTED);
    CHECK(icd_file_open(io, "/nonexistent/file", &f, &err) == ICD_ENOTFOUND);
    unlink(path);
    icd_fileio_free(io);
}

TEST_MAIN(TEST(test_remap), TEST(test_reads))
