/*
 * A read-only icd_file backed by memory (see orc_memfile.h): positional reads copy from the
 * buffer, so the ORC reader's bounds checks and error paths run exactly as for a file.
 */
#include "formats/orc/orc_memfile.h"

#include <stdlib.h>
#include <string.h>

typedef struct memfile {
    icd_file base; /* first: icd_file_close() frees the whole struct */
    const uint8_t *data;
} memfile;

static int mem_read_at(icd_file *f, uint64_t off, void *buf, size_t n, size_t *got, icd_error *err)
{
    (void)err;
    const memfile *m = (const memfile *)f;
    size_t k = 0;
    if (off < f->size) k = f->size - off < n ? (size_t)(f->size - off) : n;
    if (k) memcpy(buf, m->data + off, k);
    *got = k;
    return 0;
}

static void mem_close(icd_file *f)
{
    (void)f;
}

static const icd_file_ops mem_ops = {mem_read_at, mem_close};

int orc_memfile_open(icd_file **out, const char *name, const uint8_t *data, size_t len,
                     icd_error *err)
{
    *out = NULL;
    memfile *m = calloc(1, sizeof *m);
    if (!m) return icd_fail_nomem(err);
    m->base.ops = &mem_ops;
    m->base.location = strdup(name);
    m->base.path = strdup(name);
    m->base.size = len;
    m->base.fd = -1;
    m->data = data;
    if (!m->base.location || !m->base.path) {
        free(m->base.location);
        free(m->base.path);
        free(m);
        return icd_fail_nomem(err);
    }
    *out = &m->base;
    return 0;
}
