/*
 * libFuzzer target: a TZif time-zone file from arbitrary bytes (druid/rows/tzrules.c: headers,
 * counts, transitions, local time types, the POSIX TZ footer). A parsed zone answers
 * offsets, transitions and Joda's offset-from-local at instants across the millisecond
 * range. Any crash, leak or sanitizer report is a bug; errors are expected.
 */
#include <stddef.h>
#include <stdint.h>

#include "druid/rows/tzrules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icd_error err;
    dr_tz *z = NULL;
    if (dr_tz_parse(&z, data, size, "fuzz", &err) == 0) {
        static const int64_t at[] = {
            INT64_MIN,       INT64_MIN / 2,     -62135596800000LL, -1,       0, 1616893200000LL,
            4102444800000LL, 253402300800000LL, INT64_MAX / 2,     INT64_MAX};
        int64_t acc = 0;
        for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
            acc += dr_tz_offset(z, at[i]);
            acc += dr_tz_next_transition(z, at[i]) & 1;
            acc += dr_tz_prev_transition(z, at[i]) & 1;
            if (at[i] > INT64_MIN / 2 && at[i] < INT64_MAX / 2)
                acc += dr_tz_offset_from_local(z, at[i]);
        }
        (void)acc;
        dr_tz_free(z);
    }
    return 0;
}
