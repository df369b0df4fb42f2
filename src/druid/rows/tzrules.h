/*
 * Time-zone rules from the system tz database (TZif files, RFC 8536, as Debian's tzdata
 * installs them under /usr/share/zoneinfo, or the folder dr_tz_set_dir names), answering what
 * Joda-Time's DateTimeZone answers for a Joda pattern's zone (ZZZ ids, z names): the offset at an
 * instant, the next / previous transition and Joda's getOffsetFromLocal (gap and overlap
 * rules). Times after the file's last transition follow its POSIX TZ footer. Leap-second
 * records are ignored (Joda has none). Internal to src/druid/.
 */
#ifndef ICD_DRUID_TZRULES_H
#define ICD_DRUID_TZRULES_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct dr_tz dr_tz;

/* Parses one TZif file's bytes; `what` names it in errors (ICD_ECORRUPT). */
int dr_tz_parse(dr_tz **out, const uint8_t *data, size_t len, const char *what, icd_error *err);
/* The tz database folder: /usr/share/zoneinfo unless set (the icedruid command passes
 * $TZDIR; the library reads no environment variable). Set it before any zone is looked up:
 * it is process-wide and not synchronized. NULL or "" restores the default. */
void dr_tz_set_dir(const char *dir);
const char *dr_tz_dir(void);
/* Loads dr_tz_dir()/ID. */
int dr_tz_load(dr_tz **out, const char *id, icd_error *err);
/* A zone with one fixed offset and no transitions (Joda's UTC). */
int dr_tz_fixed(dr_tz **out, int64_t offset_ms, icd_error *err);
void dr_tz_free(dr_tz *z);

/* Offset (ms to add to UTC) at the UTC instant `ms`. */
int64_t dr_tz_offset(const dr_tz *z, int64_t ms);
/* Joda's nextTransition: the first transition after `ms`, or `ms` when there is none. */
int64_t dr_tz_next_transition(const dr_tz *z, int64_t ms);
/* Joda's previousTransition: (the last transition at or before `ms`) - 1, or `ms`. */
int64_t dr_tz_prev_transition(const dr_tz *z, int64_t ms);
/* Joda's DateTimeZone.getOffsetFromLocal: the offset to subtract from a local wall time
 * (a gap moves forward, an overlap takes the earlier offset). */
int64_t dr_tz_offset_from_local(const dr_tz *z, int64_t local_ms);

/* The zone ids Joda-Time knows, as found in the tz database: every TZif file under the
 * directory except posix/, right/, localtime, posixrules and Factory. Sorted (strcmp);
 * the caller frees each string and the array. */
int dr_tz_list_ids(char ***ids, size_t *n, icd_error *err);

#endif
