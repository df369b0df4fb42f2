/*
 * A minimal unit-test harness: CHECK records a failure and goes on; main() from
 * TEST_MAIN runs each test function and prints "N passed, N failed".
 */
#ifndef ICD_TEST_H
#define ICD_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_failures_;
static int test_checks_;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        test_checks_++;                                                                            \
        if (!(cond)) {                                                                             \
            test_failures_++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        test_checks_++;                                                                            \
        if (a_ != b_) {                                                                            \
            test_failures_++;                                                                      \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b,  \
                    a_, b_);                                                                       \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        test_checks_++;                                                                            \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                   \
            test_failures_++;                                                                      \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a,  \
                    #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                   \
        }                                                                                          \
    } while (0)

typedef struct test_case_ {
    const char *name;
    void (*fn)(void);
} test_case_;

#define TEST_MAIN(...)                                                                             \
    int main(void)                                                                                 \
    {                                                                                              \
        test_case_ cases[] = {__VA_ARGS__};                                                        \
        int passed = 0, failed = 0;                                                                \
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {                              \
            int before = test_failures_;                                                           \
            cases[i].fn();                                                                         \
            if (test_failures_ == before) {                                                        \
                passed++;                                                                          \
            } else {                                                                               \
                failed++;                                                                          \
                fprintf(stderr, "FAILED: %s\n", cases[i].name);                                    \
            }                                                                                      \
        }                                                                                          \
        printf("%d passed, %d failed (%d checks)\n", passed, failed, test_checks_);                \
        return failed ? 1 : 0;                                                                     \
    }
#define TEST(fn)                                                                                   \
    {                                                                                              \
#fn, fn                                                                                    \
    }

#endif
