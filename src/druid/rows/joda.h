/*
 * Joda-Time DateTimeFormat patterns, the custom formats of a Druid timestampSpec
 * ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "dd/MMM/yyyy:HH:mm:ss Z", ...). Parsing only.
 *
 * Every Joda letter: G (era), C (century of era), Y (year of era), y (year), x (weekyear),
 * w (week of weekyear), e (day of week number), E (day name), D (day of year), M (month,
 * MMM / MMMM names), d, a, h, H, k, K, m, s, S (fraction), Z / ZZ (offset), ZZZ (a zone
 * id of the system tz database, its rules applied), z / zz / zzz (Joda's default short
 * names UT, UTC, GMT, EST, EDT, CST, CDT, MST, MDT, PST, PDT), zzzz (printing only: every
 * parse fails, as in Joda) and '...' literals, with Joda's field resolution (joda.c).
 * Letters Joda does not know give ICD_EINVALID, as Druid's "Unable to parse timestamps
 * with format [X]".
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
/* Parses the whole of `s`; fields not in the pattern default to 1970-01-01T00:00:00.000Z
 * (the year to 2000 when the largest field is a month, week or day). */
int dr_joda_parse(const dr_joda_pattern *p, const char *s, size_t n, int64_t *out_ms,
                  icd_error *err);

#endif
