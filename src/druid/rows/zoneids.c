/*
 * Java time-zone ids without a JVM: the "auto" timestampSpec format drops a trailing word
 * that is one of Java's TimeZone.getAvailableIDs() (Druid's ParserUtils.getDateTimeZone;
 * the instant is unchanged, so only the set matters, not the zone's rules).
 *
 * Java's ids are the zones of its tz database plus a few legacy names of its own. The tz
 * database is the system's (Debian tzdata): an id is valid when $TZDIR/ID (default
 * /usr/share/zoneinfo) is a TZif file. What the code itself must know, because no file says
 * it: (1) the JDK's legacy three-letter ids, which have no zoneinfo file (the JDK maps them
 * to regions: PST = America/Los_Angeles, IST = Asia/Kolkata, ...); (2) the zoneinfo names
 * the JDK's tz compiler leaves out (Factory, GMT+0, GMT-0, ROC) and the files that are not
 * zones (localtime, posixrules, the posix/ and right/ trees). Everything else follows the
 * installed tzdata, so a tzdata update needs no code change. (The SystemV ids are Java ids
 * that Joda cannot convert, and Druid leaves them out too; tzdata has no such files.)
 * tests/druid/test_timestamp_oracle.py checks this rule against the JDK's own list.
 */
#include "druid/rows/zoneids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "druid/rows/tzrules.h"

static const char *const jdk_legacy[] = {
    "ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT", "EAT", "ECT",
    "IET", "IST", "JST", "MIT", "NET", "NST", "PLT", "PNT", "PRT", "PST", "SST", "VST"};
static const char *const not_java[] = {"Factory", "GMT+0",     "GMT-0",
                                       "ROC",     "localtime", "posixrules"};

static bool in_list(const char *const *list, size_t count, const char *s, size_t n)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0) return true;
    return false;
}

/* A zoneinfo-style name: letters, digits, '_', '-', '+', '/' between components, no
 * component starting with '.', first character a letter. */
static bool plausible_name(const char *s, size_t n)
{
    if (n == 0 || n > 64) return false;
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'))) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '+' || c == '/';
        if (!ok) return false;
        if (c == '/' && (i + 1 == n || s[i + 1] == '/' || s[i + 1] == '.')) return false;
    }
    return true;
}

bool dr_zone_is_java_id(const char *s, size_t n)
{
    if (in_list(jdk_legacy, sizeof jdk_legacy / sizeof jdk_legacy[0], s, n)) return true;
    return dr_zone_in_tzdata(s, n);
}

bool dr_zone_in_tzdata(const char *s, size_t n)
{
    if (!plausible_name(s, n) || in_list(not_java, sizeof not_java / sizeof not_java[0], s, n))
        return false;
    if ((n > 6 && memcmp(s, "posix/", 6) == 0) || (n > 6 && memcmp(s, "right/", 6) == 0))
        return false;
    const char *dir = dr_tz_dir();
    char path[512];
    int len = snprintf(path, sizeof path, "%s/%.*s", dir, (int)n, s);
    if (len < 0 || (size_t)len >= sizeof path) return false;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char magic[4];
    bool ok = fread(magic, 1, 4, f) == 4 && memcmp(magic, "TZif", 4) == 0;
    fclose(f);
    return ok;
}
