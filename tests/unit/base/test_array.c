/* Unit tests of base/array.h: growth from the minimum capacity, doubling to what is
 * needed, overflow refused with the array unchanged. */
#include <stdint.h>
#include <stdlib.h>

#include "base/array.h"
#include "test.h"

typedef struct pair {
    int64_t a, b;
} pair;

static void test_reserve(void)
{
    pair *v = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        CHECK_EQ_INT(ICD_ARRAY_RESERVE(v, cap, n + 1, 16), 0);
        v[n].a = i;
        v[n++].b = -i;
    }
    CHECK_EQ_INT(cap, 1024); /* 16 doubled six times */
    for (size_t i = 0; i < n; i++)
        CHECK(v[i].a == (int64_t)i && v[i].b == -(int64_t)i);
    /* Enough room: nothing changes. */
    pair *same = v;
    CHECK_EQ_INT(ICD_ARRAY_RESERVE(v, cap, 1024, 16), 0);
    CHECK(v == same && cap == 1024);
    /* A jump past twice the capacity doubles until it fits. */
    CHECK_EQ_INT(ICD_ARRAY_RESERVE(v, cap, 5000, 16), 0);
    CHECK_EQ_INT(cap, 8192);
    CHECK(v[999].a == 999);
    /* Sizes that overflow are refused, the array and capacity left as they were. */
    same = v;
    CHECK_EQ_INT(ICD_ARRAY_RESERVE(v, cap, SIZE_MAX / 2, 16), -1);
    CHECK(v == same && cap == 8192);
    CHECK_EQ_INT(ICD_ARRAY_RESERVE(v, cap, SIZE_MAX, 16), -1);
    CHECK(v == same && cap == 8192);
    free(v);

    char **names = NULL;
    size_t ncap = 0;
    CHECK_EQ_INT(ICD_ARRAY_RESERVE(names, ncap, 1, 0), 0); /* min_cap 0 starts at 1 */
    CHECK_EQ_INT(ncap, 1);
    free(names);
}

TEST_MAIN(TEST(test_reserve))
