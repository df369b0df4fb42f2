/* Big memory (bigmem.h). */
#include "base/bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static size_t round_up(size_t n)
{
    return (n + ICD_BIGMEM_PAGE - 1) & ~(ICD_BIGMEM_PAGE - 1);
}

void *icd_bigmem_map(size_t bytes, bool huge)
{
    if (bytes == 0 || bytes > SIZE_MAX - 2 * ICD_BIGMEM_PAGE) return NULL;
    size_t len = round_up(bytes);
    /* One page more than needed, then the unaligned head and the tail go back: the
     * kernel aligns anonymous mappings to huge pages only in some versions. */
    uint8_t *m = mmap(NULL, len + ICD_BIGMEM_PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    uintptr_t at = ((uintptr_t)m + ICD_BIGMEM_PAGE - 1) & ~(uintptr_t)(ICD_BIGMEM_PAGE - 1);
    size_t head = at - (uintptr_t)m;
    if (head) munmap(m, head);
    munmap((uint8_t *)at + len, ICD_BIGMEM_PAGE - head);
#ifdef MADV_HUGEPAGE
    if (huge) madvise((void *)at, len, MADV_HUGEPAGE);
#endif
    return (void *)at;
}

void icd_bigmem_unmap(void *p, size_t bytes)
{
    if (p) munmap(p, round_up(bytes));
}

void icd_bigmem_advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    uintptr_t lo = ((uintptr_t)p + ICD_BIGMEM_PAGE - 1) & ~(uintptr_t)(ICD_BIGMEM_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(ICD_BIGMEM_PAGE - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

void *icd_bigmem_realloc(void *old, size_t old_bytes, size_t new_bytes)
{
    if (new_bytes < ICD_BIGMEM_MIN) return realloc(old, new_bytes);
    void *p = malloc(new_bytes);
    if (!p) return NULL;
    icd_bigmem_advise(p, new_bytes);
    if (old) memcpy(p, old, old_bytes < new_bytes ? old_bytes : new_bytes);
    free(old);
    return p;
}
