/*
 * Memory-backed icd_file (see memfile.h): the icd_file_ops vtable of fileio.h over a
 * borrowed buffer. The icd_file is the first member of a larger allocation, so the
 * generic icd_file_close frees it whole.
 */
#include <stdlib.h>
#include <string.h>

#include "io/memfile.h"

typedef struct memfile {
    icd_file file; /* first: icd_file_close frees the memfile through it */
    const unsigned char *data;
} memfile;

static int mem_read_at(icd_file *f, uint64_t off, void *buf, size_t n, size_t *got, icd_error *err)
{
    (void)err;
    const memfile *m = (const memfile *)f;
    size_t avail = off < f->size ? (size_t)(f->size - off) : 0;
    size_t k = n < avail ? n : avail;
    if (k) memcpy(buf, m->data + off, k);
    *got = k;
    return 0;
}

static void mem_close(icd_file *f)
{
    (void)f;
}

static const icd_file_ops MEM_OPS = {mem_read_at, mem_close};

int icd_memfile_open(const void *data, size_t n, const char *name, icd_file **out, icd_error *err)
{
    *out = NULL;
    memfile *m = calloc(1, sizeof *m);
    char *loc = strdup(name ? name : "(memory)");
    char *path = strdup(name ? name : "(memory)");
    if (!m || !loc || !path) {
        free(m);
        free(loc);
        free(path);
        return icd_fail_nomem(err);
    }
    m->file.ops = &MEM_OPS;
    m->file.location = loc;
    m->file.path = path;
    m->file.size = n;
    m->file.fd = -1;
    m->data = data;
    *out = &m->file;
    return 0;
}
