/*
 * Days <-> civil date conversion (proleptic Gregorian). The computation works in
 * 400-year eras of 146097 days, shifted so that years start on March 1st, which puts the
 * leap day last; it is exact for every int64 day count whose year fits in int64.
 */
#include "base/datetime.h"

void icd_civil_from_days(int64_t days, int64_t *year, int *month, int *day)
{
    int64_t z = days + 719468; /* days since 0000-03-01 */
    int64_t era = icd_floordiv(z, 146097);
    int64_t doe = z - era * 146097;                                      /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                                    /* [0, 11] */
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = yoe + era * 400 + (m <= 2);
    *month = m;
    *day = d;
}

int64_t icd_days_from_civil(int64_t year, int month, int day)
{
    year -= month <= 2;
    int64_t era = icd_floordiv(year, 400);
    int64_t yoe = year - era * 400;
    int64_t mp = month > 2 ? month - 3 : month + 9;
    int64_t doy = (153 * mp + 2) / 5 + day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}
