/*
 * Calendar arithmetic on the proleptic Gregorian calendar, UTC only: days since
 * 1970-01-01 <-> (year, month, day). Used by every value formatter and by the Druid
 * timestamp parser.
 */
#ifndef ICD_BASE_DATETIME_H
#define ICD_BASE_DATETIME_H

#include <stdint.h>

void icd_civil_from_days(int64_t days, int64_t *year, int *month, int *day);
int64_t icd_days_from_civil(int64_t year, int month, int day);

/* Floor division and modulo (the remainder has the sign of the divisor). */
static inline int64_t icd_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t icd_floormod(int64_t a, int64_t b)
{
    int64_t r = a % b; /* no a - q * b: that overflows near INT64_MIN */
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

#endif
