/* Big memory (bigmem.h). */
#include "base/bigmem.h"

#include <stdint.h>
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
