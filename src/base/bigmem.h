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
 * and region). icd_bigbuf_realloc/free below put the file readers' reused buffers on huge
 * pages. Other blocks from malloc (arrays, arena chunks) keep 4 KiB pages: advised the
 * same way, a million-file plan took half the faults but 15-20 % more RSS and no
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

/* Growable buffers on huge pages: a drop-in realloc/free for the buffers a reader grows
 * once and then reuses for every page, row group and file it reads (column chunk windows,
 * decompressed pages, levels, values). Such a buffer of 64 KiB..2 MiB gets a block of its
 * power-of-two size class carved from 2 MiB pages advised for huge pages, inside one
 * address range reserved at first use. A reader's working set is ~16 MiB, and on the VMs
 * we measure on every first touch of a 4 KiB page costs ~10 us (a bench2m scan took 5,000
 * faults on one thread, 9,000 on two: 8-13 % of its CPU time); in huge pages that set is
 * eight faults.
 *
 * - Any size, any pointer: outside the classes (smaller, larger) and when the range or
 *   the memory runs out, the calls are plain realloc/free. A block from malloc may be
 *   grown or freed here and vice versa, so code can switch a buffer over one call at a
 *   time; but a pointer that may come from icd_bigbuf_realloc must never reach plain
 *   realloc or free.
 * - Freed blocks stay with their class for the next buffer of that size (the process's
 *   high-water mark per class is kept until icd_bigbuf_trim).
 * - Thread-safe (one lock; only growth and freeing take it, never the reads). A new page
 *   is opened and faulted in outside the lock; threads that race for fresh blocks of one
 *   class may each open a page.
 * - Under AddressSanitizer a block is addressable only up to the size asked for, and not
 *   at all while free. */
void *icd_bigbuf_realloc(void *p, size_t n);
void icd_bigbuf_free(void *p);
/* Gives the memory of every page whose blocks are all free back to the system (the pages
 * are reused first, fresh zeroed memory); returns the bytes given back. For a process that
 * goes idle after a burst (serve): what the pool keeps is otherwise its high-water mark. */
size_t icd_bigbuf_trim(void);

#endif
