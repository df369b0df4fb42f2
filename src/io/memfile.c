/*
 * Memory-backed icd_file (see memfile.h): the same icd_file_ops interface as local files,
 * so readers cannot tell the difference.
 */
#include <stdlib.h>
#include <string.h>

#include "io/memfile.h"

typedef struct memfile {
    icd_file base; /* first: icd_file_close frees the whole struct */
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

int icd_memfile_open(const void *data, size_t n, const char *location, icd_file **out,
                     icd_error *err)
{
    *out = NULL;
    memfile *m = calloc(1, sizeof *m);
    char *loc = strdup(location ? location : "memory");
    if (!m || !loc) {
        free(m);
        free(loc);
        return icd_fail_nomem(err);
    }
    m->base.ops = &MEM_OPS;
    m->base.location = loc;
    m->base.path = NULL;
    m->base.size = n;
    m->base.fd = -1;
    m->data = data;
    *out = &m->base;
    return 0;
}
