/*
 * Which words Druid takes for a time-zone id: the ids of Java's TimeZone.getAvailableIDs()
 * that Joda-Time can convert (ParserUtils.getDateTimeZone, used by the "auto" timestamp
 * format for a trailing zone word). Internal to src/druid/.
 */
#ifndef ICD_DRUID_ZONEIDS_H
#define ICD_DRUID_ZONEIDS_H

#include <stdbool.h>
#include <stddef.h>

/* True when `s` (n bytes) is such an id: a zone of the system tz database (dr_tz_dir(),
 * tzrules.h) under a name the JDK also uses, or one of the JDK's own legacy
 * three-letter ids (PST, IST, JST, ...). */
bool dr_zone_is_java_id(const char *s, size_t n);
/* The same without the JDK's legacy ids: a zone of the system tz database. */
bool dr_zone_in_tzdata(const char *s, size_t n);

#endif
