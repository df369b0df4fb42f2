/*
 * FileIO: how every layer above reads bytes. A location (as written in Iceberg metadata:
 * a plain path, file:/..., hdfs://..., s3://...) is first rewritten by the remap rules
 * (`--remap FROM=TO`), then opened by the backend its scheme names. Reads are positional
 * (pread): nothing here ever loads a whole data file.
 */
#ifndef ICD_IO_FILEIO_H
#define ICD_IO_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct icd_fileio icd_fileio;
typedef struct icd_file icd_file;

/* Backend of an open file: local files here, http(s):// in io/http.c, s3:// in io/s3.c. */
typedef struct icd_file_ops {
    int (*read_at)(icd_file *f, uint64_t off, void *buf, size_t n, size_t *got, icd_error *err);
    void (*close)(icd_file *f);
} icd_file_ops;

typedef struct icd_io_counters icd_io_counters;
struct icd_file {
    const icd_file_ops *ops;
    char *location; /* as the caller named it (for error messages) */
    char *path;     /* after remapping */
    uint64_t size;
    int fd;
    struct icd_io_counters *counters; /* local files: the read counters of their FileIO */
};

/* Bytes and read calls served from local files through this FileIO since it was created
 * (all threads; remote reads are counted by http.h's icd_remote_bytes). */
uint64_t icd_fileio_local_bytes(const icd_fileio *io);
uint64_t icd_fileio_local_reads(const icd_fileio *io);
int icd_fileio_new(icd_fileio **out, icd_error *err);
void icd_fileio_free(icd_fileio *io);

/* A delete file whose size differs from its manifest entry: an error (the default), or,
 * once set, read with a warning when its record count and bounds agree (tables whose
 * manifests were edited by hand; Impala's test data has two). Set before reading. */
void icd_fileio_set_size_mismatch_warns(icd_fileio *io, bool warn);
bool icd_fileio_size_mismatch_warns(const icd_fileio *io);

/* Adds a rule: locations starting with `from` start with `to` instead. The longest
 * matching `from` wins. */
int icd_fileio_add_remap(icd_fileio *io, const char *from, const char *to, icd_error *err);
/* Parses "FROM=TO" (the --remap argument). */
int icd_fileio_add_remap_arg(icd_fileio *io, const char *arg, icd_error *err);

/* The location after remapping, with a file: scheme stripped (malloc'd; NULL on OOM). */
char *icd_fileio_resolve(const icd_fileio *io, const char *location);

/* Opens a location for positional reads. */
int icd_file_open(icd_fileio *io, const char *location, icd_file **out, icd_error *err);
void icd_file_close(icd_file *f);
static inline uint64_t icd_file_size(const icd_file *f)
{
    return f->size;
}

/* Reads exactly n bytes at `off`; a short read is a corrupt-file error naming the file and
 * offset ("truncated"). */
int icd_file_read_at(icd_file *f, uint64_t off, void *buf, size_t n, icd_error *err);

/* Reads a whole small file (metadata JSON, manifests, version hints) into a malloc'd,
 * NUL-terminated buffer. Fails with a clear error when the file exceeds `max_bytes`. */
int icd_fileio_read_small(icd_fileio *io, const char *location, size_t max_bytes, char **out,
                          size_t *len, icd_error *err);

/* Lists the names in a directory (for the Hadoop catalog): a local directory, or on S3
 * the keys and sub-prefixes directly under LOCATION/. `names` is a malloc'd, sorted
 * array of malloc'd strings. */
int icd_fileio_list_dir(icd_fileio *io, const char *location, char ***names, size_t *count,
                        icd_error *err);
/* Existence checks. 1: it exists; 0: it definitely does not (a local ENOENT/ENOTDIR, HTTP
 * 404, S3 404 NoSuchKey); < 0: it could not be told (permission denied, I/O error, HTTP
 * 403/5xx after the retries, a timeout...), with `err` naming the location. Callers must
 * never take an error for "absent": a missing newer metadata version read as absent
 * means older data, i.e. deleted rows returned. */
int icd_fileio_exists(icd_fileio *io, const char *location, icd_error *err);
/* The same for "is a directory (locally), or an S3 prefix with objects under it"; 0 also
 * when it exists but is not a directory. */
int icd_fileio_is_dir(icd_fileio *io, const char *location, icd_error *err);

#endif
