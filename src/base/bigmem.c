/* Big memory (bigmem.h). */
#include "base/bigmem.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
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

/* --- growable buffers (icd_bigbuf_*) --- */

#if defined(__SANITIZE_ADDRESS__)
#define BUF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUF_ASAN 1
#endif
#endif
#ifdef BUF_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

enum {
    BUF_MIN_SHIFT = 16, /* 64 KiB: smaller buffers stay with malloc */
    BUF_MAX_SHIFT = 21, /* 2 MiB: one page */
    BUF_CLASSES = BUF_MAX_SHIFT - BUF_MIN_SHIFT + 1,
    BUF_PAGES = 4096,  /* 8 GiB of address space, reserved, not committed */
    PAGE_SPARE = 0xFF, /* cls of a page whose memory went back (icd_bigbuf_trim) */
    PAGE_DEAD = 0xFE   /* cls of a page that could not be opened (no memory): never used */
};

static struct {
    pthread_once_t once;
    pthread_mutex_t lock;
    size_t pages;              /* pages of the range opened so far */
    uint8_t cls[BUF_PAGES];    /* each opened page's class (PAGE_SPARE, PAGE_DEAD) */
    uint16_t nfree[BUF_PAGES]; /* free blocks of each page of a class */
    void *free[BUF_CLASSES];   /* each class's free blocks, linked through their first word */
    uint16_t spare[BUF_PAGES]; /* pages given back by icd_bigbuf_trim, taken first */
    size_t nspare;
} pool = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

/* The reserved range; NULL before the first block and when it could not be reserved
 * (atomic: any thread may test a pointer while another reserves the range). */
static _Atomic(uint8_t *) pool_base;

static void pool_reserve(void)
{
    size_t len = (size_t)BUF_PAGES * ICD_BIGMEM_PAGE;
    /* address space only: PROT_NONE and MAP_NORESERVE commit nothing until a page is
     * opened (pool_page) */
    uint8_t *m = mmap(NULL, len + ICD_BIGMEM_PAGE, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return;
    uintptr_t at = ((uintptr_t)m + ICD_BIGMEM_PAGE - 1) & ~(uintptr_t)(ICD_BIGMEM_PAGE - 1);
    size_t head = at - (uintptr_t)m;
    if (head) munmap(m, head);
    munmap((uint8_t *)at + len, ICD_BIGMEM_PAGE - head);
    atomic_store(&pool_base, (uint8_t *)at);
}

static bool in_pool(const void *p)
{
    uint8_t *base = atomic_load_explicit(&pool_base, memory_order_relaxed);
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
    return base && a >= b && a - b < (uintptr_t)BUF_PAGES * ICD_BIGMEM_PAGE;
}

static size_t block_size(int c)
{
    return (size_t)1 << (BUF_MIN_SHIFT + c);
}

/* The page of the range that holds p. */
static size_t page_of(const void *p)
{
    return ((uintptr_t)p - (uintptr_t)atomic_load(&pool_base)) / ICD_BIGMEM_PAGE;
}

/* The class of a block of the pool. */
static int class_of_block(const void *p)
{
    return pool.cls[page_of(p)];
}

/* The smallest class that holds n bytes (BUF_MIN < n <= BUF_MAX or n == BUF_MIN). */
static int class_for(size_t n)
{
    int c = 0;
    while (block_size(c) < n)
        c++;
    return c;
}

/* Claims a page of the range for class c (called with the lock held): a page given back
 * earlier (still open and advised, its memory gone) or the next one never opened (*fresh);
 * SIZE_MAX when the range is used up. Its blocks are not on the free list yet. */
static size_t claim_page(int c, bool *fresh)
{
    size_t i;
    *fresh = false;
    if (pool.nspare) {
        i = pool.spare[--pool.nspare];
    } else {
        if (pool.pages == BUF_PAGES) return SIZE_MAX;
        i = pool.pages++;
        *fresh = true;
    }
    pool.cls[i] = (uint8_t)c;
    pool.nfree[i] = 0;
    return i;
}

/* Opens page i (fresh: never opened) and links its blocks of class c into a list, the
 * first block first; returns the list's head, NULL when the memory is not there. Called
 * WITHOUT the lock: the first write to the page faults in (and the kernel zeroes) a whole
 * 2 MiB huge page, a millisecond on the VMs we measure on, and under the lock every other
 * thread that wanted a buffer waited for it (two bench2m threads lost 10-20 % of their
 * first 100 ms that way). *last gets the last block. */
static void *open_page(size_t i, int c, bool fresh, void **last)
{
    uint8_t *page = atomic_load(&pool_base) + i * ICD_BIGMEM_PAGE;
    if (fresh) {
        if (mprotect(page, ICD_BIGMEM_PAGE, PROT_READ | PROT_WRITE)) return NULL;
#ifdef MADV_HUGEPAGE
        madvise(page, ICD_BIGMEM_PAGE, MADV_HUGEPAGE);
#endif
    }
    UNPOISON(page, ICD_BIGMEM_PAGE);
    size_t bs = block_size(c);
    void *head = NULL;
    *last = NULL;
    for (size_t off = ICD_BIGMEM_PAGE; off >= bs; off -= bs) { /* last first: pops go up */
        void *b = page + off - bs;
        memcpy(b, &head, sizeof(void *));
        if (!head) *last = b;
        head = b;
        POISON((uint8_t *)b + sizeof(void *), bs - sizeof(void *));
    }
    return head;
}

/* A free block of class c, addressable for n bytes; NULL when there is none to be had. */
static void *pool_take(int c, size_t n)
{
    pthread_once(&pool.once, pool_reserve);
    if (!atomic_load(&pool_base)) return NULL;
    pthread_mutex_lock(&pool.lock);
    void *b = pool.free[c];
    if (b) {
        memcpy(&pool.free[c], b, sizeof(void *));
        pool.nfree[page_of(b)]--;
        pthread_mutex_unlock(&pool.lock);
    } else {
        bool fresh;
        size_t i = claim_page(c, &fresh);
        pthread_mutex_unlock(&pool.lock);
        if (i == SIZE_MAX) return NULL;
        void *last;
        b = open_page(i, c, fresh, &last);
        pthread_mutex_lock(&pool.lock);
        if (!b) { /* (mprotect failed: out of memory, the page is left aside) */
            pool.cls[i] = PAGE_DEAD;
        } else { /* this thread keeps the first block; the others join the free list */
            uint16_t per_page = (uint16_t)(ICD_BIGMEM_PAGE / block_size(c));
            if (per_page > 1) {
                void *rest;
                memcpy(&rest, b, sizeof(void *));
                memcpy(last, &pool.free[c], sizeof(void *));
                pool.free[c] = rest;
            }
            pool.nfree[i] = (uint16_t)(per_page - 1);
        }
        pthread_mutex_unlock(&pool.lock);
    }
    if (b) {
        POISON(b, block_size(c));
        UNPOISON(b, n);
    }
    return b;
}

void icd_bigbuf_free(void *p)
{
    if (!in_pool(p)) {
        free(p);
        return;
    }
    int c = class_of_block(p);
    UNPOISON(p, sizeof(void *));
    POISON((uint8_t *)p + sizeof(void *), block_size(c) - sizeof(void *));
    pthread_mutex_lock(&pool.lock);
    memcpy(p, &pool.free[c], sizeof(void *));
    pool.free[c] = p;
    pool.nfree[page_of(p)]++;
    pthread_mutex_unlock(&pool.lock);
}

size_t icd_bigbuf_trim(void)
{
    uint8_t *base = atomic_load(&pool_base);
    if (!base) return 0;
    pthread_mutex_lock(&pool.lock);
    size_t given = 0;
    for (int c = 0; c < BUF_CLASSES; c++) {
        uint16_t per_page = (uint16_t)(ICD_BIGMEM_PAGE / block_size(c));
        bool whole = false; /* a page of this class with every block free */
        for (size_t i = 0; i < pool.pages && !whole; i++)
            whole = pool.cls[i] == c && pool.nfree[i] == per_page;
        if (!whole) continue;
        /* the free list without the blocks of whole pages, then those pages go back */
        void *prev = NULL, *b = pool.free[c];
        while (b) {
            void *next;
            memcpy(&next, b, sizeof next);
            if (pool.nfree[page_of(b)] != per_page)
                prev = b;
            else if (prev)
                memcpy(prev, &next, sizeof next);
            else
                pool.free[c] = next;
            b = next;
        }
        for (size_t i = 0; i < pool.pages; i++) {
            if (pool.cls[i] != c || pool.nfree[i] != per_page) continue;
            uint8_t *page = base + i * ICD_BIGMEM_PAGE;
            madvise(page, ICD_BIGMEM_PAGE, MADV_DONTNEED);
            POISON(page, ICD_BIGMEM_PAGE);
            pool.cls[i] = PAGE_SPARE;
            pool.nfree[i] = 0;
            pool.spare[pool.nspare++] = (uint16_t)i;
            given++;
        }
    }
    pthread_mutex_unlock(&pool.lock);
    return given * ICD_BIGMEM_PAGE;
}

void *icd_bigbuf_realloc(void *p, size_t n)
{
    const size_t lo = block_size(0), hi = block_size(BUF_CLASSES - 1);
    bool ours = in_pool(p);
    if (!ours && (n < lo || n > hi)) return realloc(p, n);
    size_t have = !p ? 0 : ours ? block_size(class_of_block(p)) : malloc_usable_size(p);
    if (ours && n <= have) { /* it fits: only the addressable part changes */
        POISON(p, have);
        UNPOISON(p, n);
        return p;
    }
#ifdef BUF_ASAN
    if (ours) { /* the bytes to keep: the size last asked for, the addressable ones */
        void *end = __asan_region_is_poisoned(p, have);
        if (end) have = (size_t)((uint8_t *)end - (uint8_t *)p);
    }
#endif
    void *q = n >= lo && n <= hi ? pool_take(class_for(n), n) : NULL;
    if (!q) { /* no block: malloc's */
        if (!ours) return realloc(p, n);
        if (!(q = malloc(n))) return NULL;
    }
    if (p) {
        memcpy(q, p, have < n ? have : n);
        icd_bigbuf_free(p);
    }
    return q;
}
