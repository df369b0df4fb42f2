/*
 * Snapshot selection (spec "Snapshot References" and Appendix F "Point in Time Reads"):
 * which snapshot a scan reads — the current one, one by id, the head of a branch or a
 * tag, or the one that was current at a given time — and which schema to read it with.
 * The planner calls this once per scan, right after loading the table metadata.
 */
#include <inttypes.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/datetime.h"
#include "base/jsonw.h"
#include "iceberg/metadata.h"

/* "2024-01-02T03:04:05.678Z (1704164645678 ms)" for error messages. */
static void format_ms(icd_buf *b, int64_t ms)
{
    int64_t days = icd_floordiv(ms, 86400000);
    int64_t rem = icd_floormod(ms, 86400000);
    icd_fmt_timestamp(b, days, rem * 1000000, 3, false);
    icd_buf_printf(b, "Z (%" PRId64 " ms)", ms);
}

/* Time travel: the snapshot that was current at `ms`. */
static int select_as_of(const ice_metadata *md, int64_t ms, const ice_snapshot **out,
                        icd_error *err)
{
    const ice_snapshot *found = NULL;
    bool have_id = false;
    int64_t id = 0;
    size_t nlog = ice_metadata_snapshot_log_count(md);
    if (nlog > 0) {
        /* The snapshot-log records what was current and since when; the last entry at or
         * before the time wins (entries are in commit order). */
        for (size_t i = 0; i < nlog; i++) {
            const ice_snapshot_log_entry *e = ice_metadata_snapshot_log_at(md, i);
            if (e->timestamp_ms <= ms) {
                id = e->snapshot_id;
                have_id = true;
            }
        }
        if (have_id) {
            found = ice_metadata_snapshot(md, id);
            if (!found) {
                icd_buf t = ICD_BUF_INIT;
                format_ms(&t, ms);
                int rc = icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(md), -1,
                                  "snapshot %" PRId64 " was current at %s but has expired "
                                  "(it is no longer in 'snapshots')",
                                  id, t.data ? t.data : "?");
                icd_buf_free(&t);
                return rc;
            }
        }
    } else {
        /* No snapshot-log (it is optional). The spec asks for an error here; we fall back to
         * the snapshots' own timestamps along the current snapshot's ancestry (what older
         * Iceberg Java did), and to all snapshots when there is no current one. */
        const ice_snapshot *s = ice_metadata_current_snapshot(md);
        if (s) {
            size_t guard = ice_metadata_snapshot_count(md) + 1;
            while (s && guard--) {
                if (s->timestamp_ms <= ms) {
                    found = s;
                    break;
                }
                s = s->has_parent ? ice_metadata_snapshot(md, s->parent_snapshot_id) : NULL;
            }
        } else {
            for (size_t i = 0; i < ice_metadata_snapshot_count(md); i++) {
                const ice_snapshot *c = ice_metadata_snapshot_at(md, i);
                if (c->timestamp_ms <= ms && (!found || c->timestamp_ms >= found->timestamp_ms))
                    found = c;
            }
        }
    }
    if (!found) {
        icd_buf t = ICD_BUF_INIT;
        format_ms(&t, ms);
        int rc = icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(md), -1,
                          "no snapshot at or before %s", t.data ? t.data : "?");
        icd_buf_free(&t);
        return rc;
    }
    *out = found;
    return 0;
}

void ice_metadata_hint_moved(const ice_metadata *md, icd_error *err)
{
    const char *loc = ice_metadata_location(md), *file = ice_metadata_file(md);
    if (!loc || !*loc || !file) return;
    size_t ll = strlen(loc);
    while (ll > 1 && loc[ll - 1] == '/')
        ll--;
    if (!strncmp(file, loc, ll) && (file[ll] == '/' || !file[ll])) return; /* not moved */
    if (strncmp(err->file, loc, ll) && !strstr(err->message, loc)) return; /* another file */
    /* where the table was found: the metadata file's directory's parent */
    const char *slash = strrchr(file, '/');
    size_t fl = slash ? (size_t)(slash - file) : 0;
    if (fl >= 9 && !strncmp(file + fl - 9, "/metadata", 9)) fl -= 9;
    if (!fl) return;
    size_t used = strlen(err->message);
    snprintf(err->message + used, sizeof err->message - used,
             "; the table's metadata gives its location as '%.*s' but it was found at '%.*s': "
             "read it there with --remap %.*s=%.*s",
             (int)ll, loc, (int)fl, file, (int)ll, loc, (int)fl, file);
}

void ice_metadata_format_snapshot_ids(const ice_metadata *md, size_t max, char *out, size_t n)
{
    size_t count = ice_metadata_snapshot_count(md), used = 0;
    out[0] = '\0';
    if (!count) {
        snprintf(out, n, "the table has no snapshots");
        return;
    }
    used += (size_t)snprintf(out, n, "existing snapshots: ");
    for (size_t k = 0; k < count && k < max && used < n; k++) {
        const ice_snapshot *s = ice_metadata_snapshot_at(md, count - 1 - k);
        used += (size_t)snprintf(out + used, n - used, "%s%" PRId64, k ? ", " : "", s->snapshot_id);
    }
    if (count > max && used < n) snprintf(out + used, n - used, ", ... (%zu in all)", count);
}

int ice_metadata_select_snapshot(const ice_metadata *md, const ice_snapshot_selector *sel,
                                 const ice_snapshot **out, icd_error *err)
{
    *out = NULL;
    switch (sel->kind) {
    case ICE_SELECT_CURRENT:
        *out = ice_metadata_current_snapshot(md);
        return 0;
    case ICE_SELECT_ID:
        *out = ice_metadata_snapshot(md, sel->snapshot_id);
        if (!*out) {
            char ids[512];
            ice_metadata_format_snapshot_ids(md, 10, ids, sizeof ids);
            return icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(md), -1,
                            "no snapshot with id %" PRId64 " (%s)", sel->snapshot_id, ids);
        }
        return 0;
    case ICE_SELECT_REF: {
        const ice_ref *r = sel->ref ? ice_metadata_ref(md, sel->ref) : NULL;
        if (!r)
            return icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(md), -1,
                            "no branch or tag named '%s'", sel->ref ? sel->ref : "");
        *out = ice_metadata_snapshot(md, r->snapshot_id);
        if (!*out) /* parsing checks this; keep the guard */
            return icd_fail(err, ICD_ECORRUPT, ice_metadata_file(md), -1,
                            "ref '%s' names a missing snapshot", sel->ref);
        return 0;
    }
    case ICE_SELECT_AS_OF:
        return select_as_of(md, sel->timestamp_ms, out, err);
    }
    return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown snapshot selector");
}

/* The schema a snapshot was written with (Java's SnapshotUtil.schemaFor(table, id)): its
 * schema-id when it has one (a schema-id naming no schema is corrupt metadata, as in Java);
 * the current schema for snapshots older than schema ids. */
static int snapshot_own_schema(const ice_metadata *md, const ice_snapshot *snap,
                               const ice_schema **out, icd_error *err)
{
    if (!snap || !snap->has_schema_id) {
        *out = ice_metadata_current_schema(md);
        return 0;
    }
    *out = ice_metadata_schema(md, snap->schema_id);
    if (!*out)
        return icd_fail(err, ICD_ECORRUPT, ice_metadata_file(md), -1,
                        "snapshot %" PRId64 " has schema-id %d, which names no schema in "
                        "'schemas'",
                        snap->snapshot_id, (int)snap->schema_id);
    return 0;
}

int ice_metadata_read_schema(const ice_metadata *md, const ice_snapshot_selector *sel,
                             const ice_snapshot *snap, const ice_schema **out, icd_error *err)
{
    *out = ice_metadata_current_schema(md);
    switch (sel->kind) {
    case ICE_SELECT_CURRENT: /* the table's state as of now: the table's schema */
        return 0;
    case ICE_SELECT_REF: {
        /* a branch is a moving line of history that new commits (and their schema) extend:
         * the table's schema; a tag pins one snapshot: that snapshot's schema */
        const ice_ref *r = sel->ref ? ice_metadata_ref(md, sel->ref) : NULL;
        if (!r || r->type == ICE_REF_BRANCH) return 0;
        return snapshot_own_schema(md, snap, out, err);
    }
    case ICE_SELECT_ID:    /* time travel to one snapshot */
    case ICE_SELECT_AS_OF: /* time travel to what was current then */
        return snapshot_own_schema(md, snap, out, err);
    }
    return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown snapshot selector");
}
