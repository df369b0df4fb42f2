/*
 * Big memory: whole 2 MiB pages that the kernel may back with transparent huge pages.
 *
 * Why: on the VMs we measure on, a 4 KiB page fault costs 7-24 us. A run that touches
 * 350 MiB of fresh memory page by page (20M equality-delete keys, a million-file plan)
 * takes ~50,000 faults and 0.4-1.3 s of system time; huge pages take one fault per
 * 2 MiB. Debian's default THP mode is "madvise": only memory that asks gets huge pages,
 * and only 2 MiB-aligned ranges that lie wholly inside one mapping. Where the system has
 * no THP (or "never"), the advice is ignored and everything still works.
 *
 * Two ways in:
 *  - icd_bigmem_map/unmap: a private anonymous mapping of whole, aligned huge pages
 *    (zero-filled), for structures that own big blocks (slabs, an index's region);
 *  - icd_bigmem_advise: asks for huge pages inside a block from malloc before it is first
 *    touched (an arena chunk); whatever malloc does with the block later is unaffected;
 *  - icd_bigmem_realloc: realloc for blocks that grow big (the growable array and buffer).
 */
#ifndef ICD_BASE_BIGMEM_H
#define ICD_BASE_BIGMEM_H

#include <stdbool.h>
#include <stddef.h>

#define ICD_BIGMEM_PAGE ((size_t)2 << 20)

/* A zeroed mapping of `bytes` rounded up to ICD_BIGMEM_PAGE, aligned to ICD_BIGMEM_PAGE;
 * NULL when out of memory (or bytes is 0). `huge` advises huge pages; without it the
 * mapping keeps 4 KiB pages, for a block that may stay mostly untouched (a huge page
 * counts whole in the RSS once one byte of it is written). Free with icd_bigmem_unmap and
 * the same `bytes`. */
void *icd_bigmem_map(size_t bytes, bool huge);
void icd_bigmem_unmap(void *p, size_t bytes);

/* Advises huge pages for the whole ICD_BIGMEM_PAGE pages inside [p, p + bytes). A no-op
 * for blocks too small to hold one. */
void icd_bigmem_advise(void *p, size_t bytes);

/* Blocks from this size up are advised (smaller ones could not hold a whole huge page
 * besides malloc's own head and tail). */
#define ICD_BIGMEM_MIN (2 * ICD_BIGMEM_PAGE)

/* realloc(old, new_bytes) of a block of old_bytes: below ICD_BIGMEM_MIN just that; from it
 * on a new block, advised before the old bytes are copied in, and the old block freed
 * (realloc would copy into -- or fault -- the new block 4 KiB at a time first). NULL
 * when out of memory, the old block untouched. */
void *icd_bigmem_realloc(void *old, size_t old_bytes, size_t new_bytes);

#endif
