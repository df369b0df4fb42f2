/* icd_parallel_for: every item exactly once, first error returned, single-thread path. */
#include <stdatomic.h>

#include "base/parallel.h"
#include "test.h"

typedef struct ctx {
    atomic_int hits[1000];
    size_t fail_at;
} ctx;

static int item(void *p, size_t i, icd_error *err)
{
    ctx *c = p;
    atomic_fetch_add(&c->hits[i], 1);
    if (i == c->fail_at) return icd_fail(err, ICD_EIO, "f", (int64_t)i, "item %zu failed", i);
    return 0;
}

static void test_all_once(void)
{
    for (int threads = 1; threads <= 4; threads++) {
        static ctx c;
        for (int i = 0; i < 1000; i++)
            atomic_init(&c.hits[i], 0);
        c.fail_at = (size_t)-1;
        icd_error err;
        CHECK(icd_parallel_for(1000, threads, item, &c, &err) == 0);
        int ok = 1;
        for (int i = 0; i < 1000; i++)
            ok &= atomic_load(&c.hits[i]) == 1;
        CHECK(ok);
    }
}

static void test_error(void)
{
    static ctx c;
    for (int i = 0; i < 1000; i++)
        atomic_init(&c.hits[i], 0);
    c.fail_at = 500;
    icd_error err;
    icd_error_clear(&err);
    CHECK(icd_parallel_for(1000, 3, item, &c, &err) == ICD_EIO);
    CHECK_EQ_INT(err.offset, 500);
    CHECK(strstr(err.message, "item 500") != NULL);
}

TEST_MAIN(TEST(test_all_once), TEST(test_error))
