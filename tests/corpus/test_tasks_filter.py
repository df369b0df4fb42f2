#!/usr/bin/env python3
"""`icedruid tasks TABLE --filter FILTER.json` prunes exactly the data files an
independent computation says cannot match, keeps the delete files of every surviving data
file, and flags residuals where the partition does not decide the filter.

Tables: impala iceberg_partitioned (hour(event_time), identity(action)), icebird
a_partitioned_mor (identity(region), day(ts); position and equality deletes) and bench2m
(unpartitioned; pruning by id / event_time column bounds only).

The expected file sets are computed here, not taken from the filtered output:
  * the data files and their partition tuples come from `icedruid tasks` WITHOUT a filter;
  * the column bounds come from the manifests themselves, read as raw Avro records with
    `icedruid cat` and decoded here (little-endian longs for long/timestamptz bounds);
  * the manifest summaries come from the manifest list, decoded the same way;
  * each filter's "may match" test is written by hand below for that filter.
Exit 77 (skipped) when ICD_SHARED or a table is absent.
"""
import base64
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile

SHARED = os.environ.get("ICD_SHARED", "")
ICEDRUID = os.environ.get("ICEDRUID", "")
if not SHARED or not os.path.isdir(os.path.join(SHARED, "corpus")):
    print("skipped: ICD_SHARED/corpus not found")
    sys.exit(77)
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

IMPALA_T = os.path.join(SHARED, "corpus", "impala", "iceberg_partitioned")
MOR_T = os.path.join(SHARED, "corpus", "icebird", "a_partitioned_mor", "table")
BENCH_T = os.path.join(SHARED, "bench", "bench2m", "table")
for t in (IMPALA_T, MOR_T, BENCH_T):
    if not os.path.isdir(os.path.join(t, "metadata")):
        print("skipped: %s not found" % t)
        sys.exit(77)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def current_metadata(table):
    files = glob.glob(os.path.join(table, "metadata", "v*.metadata.json"))
    files.sort(key=lambda p: int(os.path.basename(p)[1:].split(".")[0]))
    with open(files[-1]) as f:
        return json.load(f)


def remap_args(table):
    return ["--remap", "%s=%s" % (current_metadata(table)["location"], table)]


def local(table, path):
    loc = current_metadata(table)["location"]
    return table + path[len(loc):] if path.startswith(loc) else path


def run(args):
    p = subprocess.run([ICEDRUID] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("icedruid %s failed: %s" % (" ".join(args), p.stderr))
    return p.stdout


def tasks(table, flt=None):
    args = ["tasks", table] + remap_args(table)
    if flt is not None:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(flt, f)
            name = f.name
        try:
            return json.loads(run(args + ["--filter", name]))
        finally:
            os.unlink(name)
    return json.loads(run(args))


def avro_records(path):
    return [json.loads(l) for l in run(["cat", path]).splitlines() if l.strip()]


def i64(b64):
    return struct.unpack("<q", base64.b64decode(b64))[0]


def i32(b64):
    return struct.unpack("<i", base64.b64decode(b64))[0]


def kv(lst):
    return {e["key"]: e["value"] for e in (lst or [])}


def manifest_list(table):
    md = current_metadata(table)
    snap = [s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"]][0]
    return avro_records(local(table, snap["manifest-list"]))


def file_stats(table):
    """data file path -> (record_count, value_counts, null_counts, lower, upper) from the
    manifests' raw records (live data entries only)."""
    out = {}
    for m in manifest_list(table):
        if m.get("content", 0) != 0:
            continue
        for e in avro_records(local(table, m["manifest_path"])):
            if e["status"] == 2:
                continue
            d = e["data_file"]
            if d.get("content", 0) != 0:
                continue
            out[d["file_path"]] = (d["record_count"], kv(d.get("value_counts")),
                                   kv(d.get("null_value_counts")), kv(d.get("lower_bounds")),
                                   kv(d.get("upper_bounds")))
    return out


US = 1000000
DAY_US = 86400 * US


def iso_us(s):
    import datetime
    dt = datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    return int((dt - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)).total_seconds()) * US


def long_range(stats, fid):
    """(lower, upper) of a long/timestamp column, None where absent."""
    _, _, _, lo, hi = stats
    return (i64(lo[fid]) if fid in lo else None, i64(hi[fid]) if fid in hi else None)


def overlaps(stats, fid, start, end_excl):
    """Can the file hold a value v with start <= v < end_excl? (bounds inclusive)"""
    lo, hi = long_range(stats, fid)
    if stats[0] == 0:
        return False
    return (hi is None or hi >= start) and (lo is None or lo < end_excl)


def verify(name, table, flt, may_match, residual_of, full, stats, manifests_pruned=None):
    """may_match(task, stats) -> bool decides the expected file set; residual_of(task) the
    expected per-task residual flag."""
    got = tasks(table, flt)
    all_tasks = {t["data_file"]["path"]: t for t in full["tasks"]}
    expect = {p for p, t in all_tasks.items() if may_match(t, stats.get(p))}
    got_paths = [t["data_file"]["path"] for t in got["tasks"]]
    check(len(got_paths) == len(set(got_paths)), "%s: duplicate tasks" % name)
    check(set(got_paths) == expect,
          "%s: pruned set differs: extra %s missing %s" %
          (name, sorted(set(got_paths) - expect)[:3], sorted(expect - set(got_paths))[:3]))
    c = got["counts"]
    check(c["data_files"] == len(expect), "%s: data_files count" % name)
    check(c["data_files_total"] == len(all_tasks), "%s: data_files_total %d != %d" %
          (name, c["data_files_total"], len(all_tasks)))
    check(c["data_files_pruned"] + c["data_files"] + (c["data_files_total"] - len(all_tasks)) <=
          len(all_tasks), "%s: counts add up" % name)
    if manifests_pruned is not None:
        check(c["manifests_pruned"] == manifests_pruned,
              "%s: manifests_pruned %d != %d" % (name, c["manifests_pruned"], manifests_pruned))
    any_res = False
    for t in got["tasks"]:
        p = t["data_file"]["path"]
        ref = all_tasks.get(p)
        if not ref:
            continue
        # the deletes of a surviving data file are never touched by the filter
        check(t["delete_files"] == ref["delete_files"], "%s: deletes of %s changed" % (name, p))
        want = residual_of(ref)
        check(t["residual"] == want, "%s: residual of %s is %s, expected %s" %
              (name, p, t["residual"], want))
        any_res = any_res or want
    check((got["residual"] is not None) == any_res,
          "%s: plan residual %r (expected %s)" % (name, got["residual"], any_res))
    print("%s: %d of %d data files, %d manifests pruned, residual %r" %
          (name, len(got_paths), len(all_tasks), c["manifests_pruned"], got["residual"]))
    return got


def part(t, key):
    return t["data_file"]["partition"][key]


# ---- impala iceberg_partitioned: hour(event_time), identity(action) ----------------------
full = tasks(IMPALA_T)
stats = file_stats(IMPALA_T)
check(len(full["tasks"]) == 20 and len(stats) == 20, "impala: 20 data files")
HOUR9 = iso_us("2020-01-01T09:00:00Z") // (3600 * US)  # 438297

verify("impala equals action", IMPALA_T,
       {"type": "equals", "filterColumn": "action", "filterValue": "click"},
       lambda t, s: part(t, "action") == "click", lambda t: False, full, stats)
verify("impala not equals", IMPALA_T,
       {"type": "not", "filter": {"type": "equals", "filterColumn": "action", "filterValue": "click"}},
       lambda t, s: part(t, "action") != "click", lambda t: False, full, stats)
verify("impala hour-aligned interval", IMPALA_T,
       {"type": "interval", "filterColumn": "event_time",
        "intervals": ["2020-01-01T09:00:00Z/2020-01-01T10:00:00Z"]},
       lambda t, s: part(t, "event_time_hour") == HOUR9 and
       overlaps(s, 4, iso_us("2020-01-01T09:00:00Z"), iso_us("2020-01-01T10:00:00Z")),
       lambda t: False, full, stats)
# 09:30-10:00: hour 9 by partition, but every event of hour 9 is at 09:00 by the bounds
verify("impala unaligned interval", IMPALA_T,
       {"type": "interval", "filterColumn": "event_time",
        "intervals": ["2020-01-01T09:30:00Z/2020-01-01T10:00:00Z"]},
       lambda t, s: part(t, "event_time_hour") == HOUR9 and
       overlaps(s, 4, iso_us("2020-01-01T09:30:00Z"), iso_us("2020-01-01T10:00:00Z")),
       lambda t: True, full, stats)
verify("impala and with a data column", IMPALA_T,
       {"type": "and", "filters": [
           {"type": "equals", "filterColumn": "action", "filterValue": "view"},
           {"type": "range", "filterColumn": "id", "lower": 5}]},
       lambda t, s: part(t, "action") == "view" and
       (s[4].get(1) is None or i32(s[4][1]) >= 5),
       lambda t: True, full, stats)

# ---- icebird a_partitioned_mor: identity(region), day(ts); deletes ---------------------
full = tasks(MOR_T)
stats = file_stats(MOR_T)
check(len(full["tasks"]) == 65, "mor: 65 data files")
check(any(t["delete_files"] for t in full["tasks"]), "mor: some tasks carry deletes")
days = sorted({part(t, "ts_day") for t in full["tasks"]})
D1 = days[1]


def day_start(d):
    return d * DAY_US


def iso_of(us):
    import datetime
    return (datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=us)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def data_manifests_pruned(region_ok, day_ok):
    """Data manifests with live files whose summaries exclude the filter: region_ok(lo, hi)
    and day_ok(lo, hi) say whether a bound range may match."""
    n = 0
    for m in manifest_list(MOR_T):
        if m.get("content", 0) != 0:
            continue
        if m.get("added_files_count") == 0 and m.get("existing_files_count") == 0:
            continue
        ps = m["partitions"]
        rlo, rhi = (base64.b64decode(ps[0]["lower_bound"]).decode(),
                    base64.b64decode(ps[0]["upper_bound"]).decode())
        dlo, dhi = i32(ps[1]["lower_bound"]), i32(ps[1]["upper_bound"])
        if not (region_ok(rlo, rhi) and day_ok(dlo, dhi)):
            n += 1
    return n


interval = [iso_of(day_start(D1)) + "/" + iso_of(day_start(D1 + 1))]
verify("mor day-aligned interval", MOR_T,
       {"type": "interval", "filterColumn": "ts", "intervals": interval},
       lambda t, s: part(t, "ts_day") == D1 and overlaps(s, 3, day_start(D1), day_start(D1 + 1)),
       lambda t: False, full, stats,
       data_manifests_pruned(lambda lo, hi: True, lambda lo, hi: lo <= D1 <= hi))
start = day_start(D1) + 6 * 3600 * US
interval = [iso_of(start) + "/" + iso_of(day_start(D1 + 2))]
verify("mor unaligned interval", MOR_T,
       {"type": "interval", "filterColumn": "ts", "intervals": interval},
       lambda t, s: part(t, "ts_day") in (D1, D1 + 1) and overlaps(s, 3, start, day_start(D1 + 2)),
       lambda t: part(t, "ts_day") == D1, full, stats)
verify("mor or of regions", MOR_T,
       {"type": "or", "filters": [
           {"type": "equals", "filterColumn": "region", "filterValue": "JP"},
           {"type": "equals", "filterColumn": "region", "filterValue": "DE"}]},
       lambda t, s: part(t, "region") in ("JP", "DE"), lambda t: False, full, stats)
ids = (1000, 1999)
verify("mor id range (data column)", MOR_T,
       {"type": "range", "filterColumn": "id", "lower": ids[0], "upper": ids[1]},
       lambda t, s: overlaps(s, 1, ids[0], ids[1] + 1), lambda t: True, full, stats)
verify("mor region below every manifest", MOR_T,
       {"type": "equals", "filterColumn": "region", "filterValue": "AA"},
       lambda t, s: False, lambda t: False, full, stats,
       data_manifests_pruned(lambda lo, hi: lo <= "AA" <= hi, lambda lo, hi: True))
verify("mor interval after every manifest", MOR_T,
       {"type": "interval", "filterColumn": "ts",
        "intervals": ["2030-01-01T00:00:00Z/2030-01-02T00:00:00Z"]},
       lambda t, s: False, lambda t: False, full, stats,
       data_manifests_pruned(lambda lo, hi: True,
                             lambda lo, hi: hi >= iso_us("2030-01-01T00:00:00Z") // DAY_US))

# ---- bench2m: unpartitioned, metrics only ------------------------------------------------
full = tasks(BENCH_T)
stats = file_stats(BENCH_T)
check(any(t["delete_files"] for t in full["tasks"]), "bench2m: some tasks carry deletes")
verify("bench2m id range", BENCH_T,
       {"type": "range", "filterColumn": "id", "lower": 500000, "upper": 699999},
       lambda t, s: overlaps(s, 1, 500000, 700000), lambda t: True, full, stats, 0)
verify("bench2m event_time interval", BENCH_T,
       {"type": "interval", "filterColumn": "event_time",
        "intervals": ["2024-01-03T00:00:00Z/2024-01-04T00:00:00Z"]},
       lambda t, s: overlaps(s, 2, iso_us("2024-01-03T00:00:00Z"), iso_us("2024-01-04T00:00:00Z")),
       lambda t: True, full, stats, 0)

# ---- errors ------------------------------------------------------------------------------
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump({"type": "equals", "filterColumn": "nope", "filterValue": "x"}, f)
    bad = f.name
p = subprocess.run([ICEDRUID, "tasks", MOR_T] + remap_args(MOR_T) + ["--filter", bad],
                   capture_output=True, text=True)
os.unlink(bad)
check(p.returncode != 0 and "filter column 'nope' not found" in p.stderr,
      "unknown filter column is a clear error: %r" % p.stderr)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("all filter checks passed")
