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
 * icd_bigmem_map/unmap give a private anonymous mapping of whole, aligned huge pages
 * (zero-filled), for structures that own big blocks they fill (the equality index's slabs
 * and region). Blocks from malloc (arrays, buffers, arena chunks) keep 4 KiB pages: advised
 * the same way, a million-file plan took half the faults but 15-20 % more RSS and no
 * measurable system time less (the faults that remained were the cost: first touches).
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

#endif
