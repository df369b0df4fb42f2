/*
 * Joda-Time DateTimeFormat patterns, the custom formats of a Druid timestampSpec
 * ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "dd/MMM/yyyy:HH:mm:ss Z", ...). Parsing only.
 *
 * Supported letters: y Y (year; "yy" = two-digit year with Joda's pivot), M (1-2 digits,
 * MMM short / MMMM full English names), d, D (day of year), H, k, h, K, a (AM/PM), m, s,
 * S (fraction of second, at most as many digits as letters), E (day name), e (day number),
 * Z (offset +hhmm / Z), ZZ (+hh:mm), ZZZ (zone id: UTC, GMT or an offset), '...' literals.
 * Other Joda letters (G C x w z) give ICD_EUNSUPPORTED; letters Joda does not know give
 * ICD_EINVALID, as Druid's "Unable to parse timestamps with format [X]".
 */
#ifndef ICD_DRUID_JODA_H
#define ICD_DRUID_JODA_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct dr_joda_pattern dr_joda_pattern;

/* `now_ms` fixes the two-digit-year pivot (Joda uses the current year minus 30). */
int dr_joda_compile(dr_joda_pattern **out, const char *pattern, int64_t now_ms, icd_error *err);
void dr_joda_free(dr_joda_pattern *p);
/* Parses the whole of `s`; fields not in the pattern default to 1970-01-01T00:00:00.000Z. */
int dr_joda_parse(const dr_joda_pattern *p, const char *s, size_t n, int64_t *out_ms,
                  icd_error *err);

#endif
