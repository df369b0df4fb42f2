/* Unit tests of base/bigmem.h: mappings are whole, aligned, zeroed huge pages that asked
 * for THP when told to and only then (checked in /proc/self/smaps where the system has
 * THP). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "test.h"

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

TEST_MAIN(TEST(test_map))
