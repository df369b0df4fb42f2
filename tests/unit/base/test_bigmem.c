/* Unit tests of base/bigmem.h: mappings are whole, aligned, zeroed huge pages that asked
 * for THP when told to and only then (checked in /proc/self/smaps where the system has
 * THP). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/bigmem.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif
#ifdef T_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Whether the kernel honours MADV_HUGEPAGE here ("always" or "madvise" mode). */
static bool thp_available(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return false;
    char line[128] = "";
    bool ok = fgets(line, sizeof line, f) && !strstr(line, "[never]");
    fclose(f);
    return ok;
}

/* The VmFlags of the mapping that holds `p` has "hg" (huge pages advised). -1 when the
 * mapping is not found. */
static int advised(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    bool inside = false;
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            found = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return found;
}

static void test_map(void)
{
    CHECK(icd_bigmem_map(0, true) == NULL);
    CHECK(icd_bigmem_map(SIZE_MAX, true) == NULL);
    CHECK(icd_bigmem_map(SIZE_MAX - ICD_BIGMEM_PAGE, false) == NULL);
    size_t bytes = 3 * ICD_BIGMEM_PAGE + 5; /* rounded up to four pages */
    uint8_t *m = icd_bigmem_map(bytes, true);
    CHECK(m != NULL);
    if (!m) return;
    CHECK(((uintptr_t)m & (ICD_BIGMEM_PAGE - 1)) == 0);
    size_t zeros = 0;
    for (size_t i = 0; i < 4 * ICD_BIGMEM_PAGE; i += 4096)
        zeros += m[i] == 0;
    CHECK_EQ_INT(zeros, 4 * ICD_BIGMEM_PAGE / 4096);
    memset(m, 0xA5, 4 * ICD_BIGMEM_PAGE); /* the rounded size is ours to use */
    CHECK(m[4 * ICD_BIGMEM_PAGE - 1] == 0xA5);
    if (thp_available()) CHECK_EQ_INT(advised(m + ICD_BIGMEM_PAGE), 1);
    icd_bigmem_unmap(m, bytes);
    icd_bigmem_unmap(NULL, bytes); /* (a no-op) */
    /* without the advice: the same shape, 4 KiB pages */
    m = icd_bigmem_map(ICD_BIGMEM_PAGE, false);
    CHECK(m != NULL && ((uintptr_t)m & (ICD_BIGMEM_PAGE - 1)) == 0);
    if (!m) return;
    m[ICD_BIGMEM_PAGE - 1] = 1;
    CHECK_EQ_INT(advised(m), 0);
    icd_bigmem_unmap(m, ICD_BIGMEM_PAGE);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 31 + (i >> 9));
}

static bool same(const uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seed + i * 31 + (i >> 9))) return false;
    return true;
}

/* Growable buffers: classes, contents kept across every kind of move, reuse of a freed
 * block, malloc outside the classes, and the poisoning of what was not asked for. */
static void test_bigbuf(void)
{
    /* below 64 KiB: malloc's (no advice) */
    uint8_t *p = icd_bigbuf_realloc(NULL, 1000);
    CHECK(p != NULL);
    if (!p) return;
    fill(p, 1000, 1);
    /* into a class: a 128 KiB block of a 2 MiB page advised for huge pages */
    p = icd_bigbuf_realloc(p, 100 * 1024);
    CHECK(p != NULL);
    if (!p) return;
    CHECK(same(p, 1000, 1));
    if (thp_available()) CHECK_EQ_INT(advised(p), 1);
    CHECK(((uintptr_t)p & (128 * 1024 - 1)) == 0);
    fill(p, 100 * 1024, 2);
    /* smaller, and up to the block's size: in place */
    CHECK(icd_bigbuf_realloc(p, 70 * 1024) == p);
    CHECK(icd_bigbuf_realloc(p, 128 * 1024) == p);
    CHECK(same(p, 70 * 1024, 2));
    /* a bigger class: moved, contents kept */
    uint8_t *q = icd_bigbuf_realloc(p, 1536 * 1024);
    CHECK(q != NULL && q != p);
    if (!q) return;
    CHECK(same(q, 70 * 1024, 2));
    fill(q, 1536 * 1024, 3);
    /* the 128 KiB block went back to its class: the next one is it */
    uint8_t *r = icd_bigbuf_realloc(NULL, 65 * 1024);
    CHECK(r == p);
    icd_bigbuf_free(r);
    /* beyond 2 MiB: malloc's again, contents kept */
    p = icd_bigbuf_realloc(q, 5 * 1024 * 1024);
    CHECK(p != NULL);
    if (!p) return;
    CHECK(same(p, 1536 * 1024, 3));
    fill(p, 5 * 1024 * 1024, 4);
    icd_bigbuf_free(p);
    icd_bigbuf_free(NULL);
#ifdef T_ASAN
    /* only what was asked for is addressable; nothing of a free block */
    p = icd_bigbuf_realloc(NULL, 300 * 1024);
    CHECK(p != NULL);
    if (!p) return;
    CHECK(!__asan_address_is_poisoned(p + 300 * 1024 - 1));
    CHECK(__asan_address_is_poisoned(p + 300 * 1024));
    CHECK(icd_bigbuf_realloc(p, 200 * 1024) == p);
    CHECK(__asan_address_is_poisoned(p + 200 * 1024));
    icd_bigbuf_free(p);
    CHECK(__asan_address_is_poisoned(p + 4096));
#endif
}

/* Threads growing and freeing buffers of every class at once: each buffer keeps its own
 * contents (a block handed out twice would be overwritten by its other owner). */
static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    uint8_t *b[4] = {NULL, NULL, NULL, NULL};
    size_t n[4] = {0, 0, 0, 0};
    bool ok = true;
    for (int it = 0; it < 400 && ok; it++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)(seed >> 16) % 4;
        if (b[k] && !same(b[k], n[k], (unsigned)k + (unsigned)(uintptr_t)arg)) ok = false;
        if ((seed >> 8) % 5 == 0) {
            icd_bigbuf_free(b[k]);
            b[k] = NULL;
            n[k] = 0;
            continue;
        }
        size_t want = (size_t)1 << (12 + (seed >> 20) % 11); /* 4 KiB .. 4 MiB */
        uint8_t *nb = icd_bigbuf_realloc(b[k], want);
        if (!nb) {
            ok = false;
            break;
        }
        size_t kept = n[k] < want ? n[k] : want;
        if (!same(nb, kept, (unsigned)k + (unsigned)(uintptr_t)arg)) ok = false;
        b[k] = nb;
        n[k] = want;
        fill(b[k], want, (unsigned)k + (unsigned)(uintptr_t)arg);
    }
    for (int k = 0; k < 4; k++)
        icd_bigbuf_free(b[k]);
    return ok ? arg : NULL;
}

static void test_bigbuf_threads(void)
{
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        CHECK(pthread_create(&t[i], NULL, churn, (void *)(i + 1)) == 0);
    for (uintptr_t i = 0; i < 4; i++) {
        void *rv = NULL;
        pthread_join(t[i], &rv);
        CHECK(rv == (void *)(i + 1));
    }
}

/* Threads that all need fresh pages at once: a page is opened (and faulted in) outside
 * the pool's lock, its first block kept by the opener and the others put on the free
 * list; no block may be handed out twice, and every block keeps what its owner wrote. */
enum { RACE_THREADS = 4, RACE_BLOCKS = 9 };
static pthread_barrier_t race_start;
static uint8_t *race_got[RACE_THREADS][RACE_BLOCKS];

static void *race(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    pthread_barrier_wait(&race_start);
    for (int k = 0; k < RACE_BLOCKS; k++) { /* 512 KiB blocks: four to a page */
        race_got[id][k] = icd_bigbuf_realloc(NULL, 500 * 1024);
        if (race_got[id][k]) fill(race_got[id][k], 500 * 1024, (unsigned)(id * 16 + (unsigned)k));
    }
    return NULL;
}

static void test_bigbuf_open_race(void)
{
    icd_bigbuf_trim(); /* (so that the pages taken are fresh or given back ones) */
    CHECK(pthread_barrier_init(&race_start, NULL, RACE_THREADS) == 0);
    pthread_t t[RACE_THREADS];
    for (uintptr_t i = 0; i < RACE_THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, race, (void *)i) == 0);
    for (int i = 0; i < RACE_THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&race_start);
    size_t distinct = 0, n = 0;
    for (int i = 0; i < RACE_THREADS; i++)
        for (int k = 0; k < RACE_BLOCKS; k++) {
            CHECK(race_got[i][k] != NULL);
            if (!race_got[i][k]) continue;
            n++;
            CHECK(same(race_got[i][k], 500 * 1024, (unsigned)(i * 16 + k)));
            bool dup = false;
            for (int j = 0; j < RACE_THREADS * RACE_BLOCKS && !dup; j++) {
                const uint8_t *o = race_got[j / RACE_BLOCKS][j % RACE_BLOCKS];
                dup = j < i * RACE_BLOCKS + k && o == race_got[i][k];
            }
            distinct += !dup;
        }
    CHECK(n == RACE_THREADS * RACE_BLOCKS && distinct == n);
    for (int i = 0; i < RACE_THREADS; i++)
        for (int k = 0; k < RACE_BLOCKS; k++)
            icd_bigbuf_free(race_got[i][k]);
}

/* Whether the 4 KiB page at p is resident (mincore). */
static bool resident(const void *p)
{
    unsigned char v = 0;
    void *page = (void *)((uintptr_t)p & ~(uintptr_t)4095);
    if (mincore(page, 4096, &v)) return true;
    return v & 1;
}

/* icd_bigbuf_trim gives back the pages whose blocks are all free, and only those; the
 * pool goes on working with them afterwards. */
static void test_bigbuf_trim(void)
{
    /* a 1 MiB class page with both blocks in use, then one freed: nothing to give back */
    uint8_t *a = icd_bigbuf_realloc(NULL, 1000 * 1024);
    uint8_t *b = icd_bigbuf_realloc(NULL, 1000 * 1024);
    CHECK(a != NULL && b != NULL);
    if (!a || !b) return;
    bool same_page = ((uintptr_t)a >> 21) == ((uintptr_t)b >> 21);
    fill(a, 1000 * 1024, 7);
    fill(b, 1000 * 1024, 8);
    icd_bigbuf_free(a);
    icd_bigbuf_trim(); /* (may give back pages other tests left free) */
    CHECK(same(b, 1000 * 1024, 8));
    if (same_page) CHECK(resident(b));
    /* b freed too: its page goes back */
    icd_bigbuf_free(b);
    CHECK(icd_bigbuf_trim() >= ICD_BIGMEM_PAGE);
    CHECK(!resident(b));
    CHECK(icd_bigbuf_trim() == 0); /* nothing left to give */
    /* the pages given back are used again, for any class */
    uint8_t *c[40];
    for (int i = 0; i < 40; i++) {
        c[i] = icd_bigbuf_realloc(NULL, 64 * 1024);
        CHECK(c[i] != NULL);
        if (!c[i]) return;
        fill(c[i], 64 * 1024, (unsigned)i);
    }
    for (int i = 0; i < 40; i++)
        CHECK(same(c[i], 64 * 1024, (unsigned)i));
    for (int i = 0; i < 40; i += 2)
        icd_bigbuf_free(c[i]);
    icd_bigbuf_trim(); /* every page still holds blocks in use */
    for (int i = 1; i < 40; i += 2)
        CHECK(same(c[i], 64 * 1024, (unsigned)i));
    for (int i = 1; i < 40; i += 2)
        icd_bigbuf_free(c[i]);
    CHECK(icd_bigbuf_trim() >= 2 * ICD_BIGMEM_PAGE); /* 40 blocks of 64 KiB: two pages */
    uint8_t *d = icd_bigbuf_realloc(NULL, 2 * 1024 * 1024);
    CHECK(d != NULL);
    if (!d) return;
    fill(d, 2 * 1024 * 1024, 9);
    CHECK(same(d, 2 * 1024 * 1024, 9));
    icd_bigbuf_free(d);
}

TEST_MAIN(TEST(test_map), TEST(test_bigbuf), TEST(test_bigbuf_threads), TEST(test_bigbuf_open_race),
          TEST(test_bigbuf_trim))
