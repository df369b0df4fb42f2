/* Unit tests of base/ptrtext: texts kept by address through growth, the byte limit, and
 * misses. */
#include <stdio.h>
#include <string.h>

#include "base/ptrtext.h"
#include "test.h"

static void test_many(void)
{
    enum { N = 5000 };
    static int objs[N];
    icd_ptr_text c;
    icd_ptr_text_init(&c, (size_t)1 << 20);
    char t[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(t, sizeof t, "text-%d", i);
        icd_ptr_text_add(&c, &objs[i], t, (size_t)n);
    }
    icd_ptr_text_add(&c, &objs[7], "other", 5); /* (kept already: the first stays) */
    int bad = 0;
    icd_buf b = ICD_BUF_INIT;
    for (int i = 0; i < N; i++) {
        icd_buf_clear(&b);
        snprintf(t, sizeof t, "text-%d", i);
        if (!icd_ptr_text_append(&c, &b, &objs[i]) || b.len != strlen(t) ||
            memcmp(b.data, t, b.len))
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    int other;
    CHECK(!icd_ptr_text_append(&c, &b, &other));
    icd_buf_free(&b);
    icd_ptr_text_free(&c);
}

static void test_limit(void)
{
    int a, b2, c3;
    icd_ptr_text c;
    icd_ptr_text_init(&c, 10);
    icd_buf b = ICD_BUF_INIT;
    CHECK(!icd_ptr_text_append(&c, &b, &a)); /* empty */
    icd_ptr_text_add(&c, &a, "123456", 6);
    icd_ptr_text_add(&c, &b2, "abcdef", 6); /* over the limit: not kept, nor anything after */
    icd_ptr_text_add(&c, &c3, "x", 1);
    CHECK(icd_ptr_text_append(&c, &b, &a));
    CHECK(!icd_ptr_text_append(&c, &b, &b2));
    CHECK(!icd_ptr_text_append(&c, &b, &c3));
    CHECK_EQ_STR(b.data, "123456");
    icd_buf_free(&b);
    icd_ptr_text_free(&c);
}

TEST_MAIN(TEST(test_many), TEST(test_limit))
