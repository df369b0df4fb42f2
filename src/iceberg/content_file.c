/*
 * Small helpers over ice_content_file (see content_file.h).
 */
#include <stddef.h>
#include <string.h>

#include "iceberg/content_file.h"

const ice_col_stats *ice_content_file_stats(const ice_content_file *f, int32_t field_id)
{
    size_t lo = 0, hi = (size_t)(f->nstats > 0 ? f->nstats : 0);
    while (lo < hi) { /* stats are sorted by field id */
        size_t mid = lo + (hi - lo) / 2;
        if (f->stats[mid].field_id < field_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < (size_t)(f->nstats > 0 ? f->nstats : 0) && f->stats[lo].field_id == field_id
               ? &f->stats[lo]
               : NULL;
}

const char *ice_file_format_name(ice_file_format fmt)
{
    switch (fmt) {
    case ICE_FORMAT_PARQUET:
        return "PARQUET";
    case ICE_FORMAT_AVRO:
        return "AVRO";
    case ICE_FORMAT_ORC:
        return "ORC";
    case ICE_FORMAT_PUFFIN:
        return "PUFFIN";
    default:
        return "UNKNOWN";
    }
}

const char *ice_content_name(ice_content c)
{
    switch (c) {
    case ICE_CONTENT_DATA:
        return "data";
    case ICE_CONTENT_POSITION_DELETES:
        return "position_deletes";
    case ICE_CONTENT_EQUALITY_DELETES:
        return "equality_deletes";
    default:
        return "unknown";
    }
}

const char *ice_location_key(const char *loc, size_t len, size_t *out_len)
{
    const char *p = loc, *end = loc + len;
    /* until nothing changes, so that the key of a key is the key ("file:hdfs://nn/a") */
    for (;;) {
        size_t n = (size_t)(end - p);
        if (n >= 7 && !memcmp(p, "file://", 7)) {
            p += 7;
        } else if (n >= 5 && !memcmp(p, "file:", 5)) {
            p += 5;
        } else if ((n >= 7 && !memcmp(p, "hdfs://", 7)) || (n >= 9 && !memcmp(p, "viewfs://", 9))) {
            const char *auth = (const char *)memchr(p, ':', n) + 3;
            const char *slash = memchr(auth, '/', (size_t)(end - auth));
            p = slash ? slash : end;
        } else {
            break;
        }
    }
    *out_len = (size_t)(end - p);
    return p;
}
