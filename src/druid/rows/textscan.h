/*
 * A tiny cursor over a byte range, shared by the Druid text parsers (ISO-8601 date-times,
 * periods, intervals, Joda patterns). Internal to src/druid/.
 */
#ifndef ICD_DRUID_TEXTSCAN_H
#define ICD_DRUID_TEXTSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dr_scan {
    const char *s;
    size_t n;
    size_t i;
} dr_scan;

static inline int dr_sc_peek(const dr_scan *sc)
{
    return sc->i < sc->n ? (unsigned char)sc->s[sc->i] : -1;
}
static inline bool dr_sc_end(const dr_scan *sc)
{
    return sc->i >= sc->n;
}
static inline bool dr_is_digit(int c)
{
    return c >= '0' && c <= '9';
}
static inline int dr_lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

/* Consumes `c` (ASCII letters compare case-insensitively, as Joda literals do). */
static inline bool dr_sc_eat(dr_scan *sc, int c)
{
    int p = dr_sc_peek(sc);
    if (p < 0 || dr_lower(p) != dr_lower(c)) return false;
    sc->i++;
    return true;
}

/* Reads 1..maxd decimal digits into *v; returns how many were read (0 = none). */
static inline int dr_sc_digits(dr_scan *sc, int maxd, int64_t *v)
{
    int k = 0;
    int64_t x = 0;
    while (k < maxd && dr_is_digit(dr_sc_peek(sc))) {
        x = x * 10 + (sc->s[sc->i] - '0');
        sc->i++;
        k++;
    }
    *v = x;
    return k;
}

/* Counts the digits that follow without consuming them. */
static inline size_t dr_sc_count_digits(const dr_scan *sc)
{
    size_t k = 0;
    while (sc->i + k < sc->n && dr_is_digit((unsigned char)sc->s[sc->i + k]))
        k++;
    return k;
}

#endif
