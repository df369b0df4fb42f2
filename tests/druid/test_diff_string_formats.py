"""`icedruid diff` on a table whose timestamp column is a string, in every timestampSpec
format, against an independent computation from the Druid-side oracle's __time values.

A fixture table (tests/tools/icewriter) has one string column per format - auto (ISO with
'T' or ' ', offsets, trailing Java zone words, digit-only millis, quotes), iso (ISO with
offsets, numeric fallback), posix, millis, micro, nano, ruby and a Joda pattern - each
holding the same instants in that format's text, plus values Druid cannot parse. Snapshots:
S1 append, S2 append, S3 position deletes, S4 equality deletes. For every format, the
__time of every value comes from tests/druid/oracle/DruidTimestampOracle.java (Joda-Time,
Druid's rules; an unparseable value is not in Druid), and the expected intervals of
`diff --from-snapshot S1 --to-snapshot S4 --granularity HOUR` are computed here from them:
the hour buckets of the deleted rows (replaceIntervals, with exact rowsRemoved) and of the
appended rows outside those (appendIntervals, exact rowsAdded). Exit 77 without the JDK,
Joda-Time or the build's tools.
"""
import collections
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
BUILD = os.environ.get("ICD_BUILD_DIR", "build")
SRC = os.path.abspath(os.environ.get("ICD_SOURCE_DIR",
                                     os.path.join(os.path.dirname(__file__), "..", "..")))
JODA = "/usr/share/java/joda-time.jar"
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
for need in (JODA, "/usr/bin/javac"):
    if not os.path.exists(need):
        print("SKIP: %s not installed" % need)
        sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from java_oracle import compile_oracle  # noqa: E402
out_dir = compile_oracle(BUILD, ["DruidTimestampOracle"], [JODA])

from icewriter.iceberg import NestedField, PartitionSpec, Schema, Table  # noqa: E402

FORMATS = {"auto": "auto", "iso": "iso", "posix": "posix", "millis": "millis", "micro": "micro",
           "nano": "nano", "ruby": "ruby", "joda": "dd/MMM/yyyy:HH:mm:ss Z"}
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
rng = random.Random(7)
BASE = 1717200000000  # 2024-06-01T00:00:00Z


def text(fmt, ms):
    dt = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
    r = rng.random()
    if fmt == "auto":
        if r < 0.2:
            return str(ms)
        if r < 0.4:
            return dt.strftime("%Y-%m-%d %H:%M:%S") + " " + rng.choice(["UTC", "PST", "Asia/Tokyo", "GB"])
        if r < 0.5:
            return '"%s"' % dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        if r < 0.6:
            off = dt + datetime.timedelta(hours=5, minutes=30)
            return off.strftime("%Y-%m-%dT%H:%M:%S") + "+05:30"
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03d" % (ms % 1000)
    if fmt == "iso":
        if r < 0.2:
            return str(ms)  # DateTimes.of: numeric fallback
        if r < 0.4:
            off = dt - datetime.timedelta(hours=8)
            return off.strftime("%Y-%m-%dT%H:%M:%S") + "-08:00"
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)
    if fmt == "posix":
        return str(ms // 1000)
    if fmt == "millis":
        return str(ms) if r < 0.8 else ' "%d" ' % ms
    if fmt == "micro":
        return str(ms * 1000 + rng.randint(0, 999))
    if fmt == "nano":
        return str(ms * 1000000 + rng.randint(0, 999999))
    if fmt == "ruby":
        return "%d.%03d" % (ms // 1000, ms % 1000)
    return "%02d/%s/%d:%s +0000" % (dt.day, MON[dt.month - 1], dt.year, dt.strftime("%H:%M:%S"))


def bad_text(fmt):
    return rng.choice(["", "garbage", "2024-13-01T00:00:00Z", "2024-06-01 10:00 +05:00",
                       "99999999999999999999", "1e3", "2024-06-01T10:00:00 Asia/Nowhere"])


with tempfile.TemporaryDirectory() as tmp:
    loc = "/tmp/icedruid-strfmt/db/events"
    path = os.path.join(tmp, "db", "events")
    fields = [NestedField(1, "id", "long", True)] + [
        NestedField(2 + i, "s_" + name, "string", False) for i, name in enumerate(FORMATS)]
    t = Table.create(path, loc, Schema(fields), PartitionSpec.unpartitioned())

    def rows(ids, start):
        out = []
        for k, i in enumerate(ids):
            ms = start + rng.randint(0, 47 * 3600 * 1000)
            r = {"id": i}
            for name in FORMATS:
                r["s_" + name] = bad_text(name) if rng.random() < 0.05 else (
                    None if rng.random() < 0.03 else text(name, ms))
            out.append(r)
        return out
    r1 = rows(range(0, 300), BASE)
    r2 = rows(range(300, 400), BASE + 72 * 3600 * 1000)
    f1 = t.write_data(r1, name="f1")
    t.append(f1)
    f2 = t.write_data(r2, name="f2")
    t.append(f2)
    pos_rows = sorted(rng.sample(range(300), 25))
    t.row_delta(deletes=[t.write_position_deletes([(f1[0], p) for p in pos_rows])])
    eq_ids = sorted(rng.sample([i for i in range(300) if i not in pos_rows], 10))
    t.row_delta(deletes=[t.write_equality_deletes([{"id": i} for i in eq_ids], ["id"])])
    md = json.load(open(os.path.join(path, "metadata", "v5.metadata.json")))
    snaps = sorted(md["snapshots"], key=lambda s: s["sequence-number"])
    s1, s4 = snaps[0]["snapshot-id"], snaps[-1]["snapshot-id"]
    removed = [r1[p] for p in pos_rows] + [r for r in r1 if r["id"] in eq_ids]
    added = r2

    # the oracle's __time of every value, per format
    lines, keys = [], []
    for name, fmt in FORMATS.items():
        for r in removed + added:
            v = r["s_" + name]
            keys.append((name, r["id"]))
            kind = "null" if v is None else "string"
            lines.append("%d\t%s\t%s\t%s\n" % (len(keys) - 1, fmt.encode().hex(), kind,
                                               (v or "").encode().hex()))
    res = subprocess.run(["java", "-cp", JODA + ":" + out_dir, "DruidTimestampOracle"],
                         input="".join(lines), capture_output=True, text=True, check=True).stdout
    druid_time = {}
    for line in res.splitlines():
        p = line.split("\t")
        if p[1] == "OK":
            druid_time[keys[int(p[0])]] = int(p[2])

    def hour(ms):
        s = ms - ms % 3600000
        f = lambda x: datetime.datetime.utcfromtimestamp(x / 1000).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        return "%s/%s" % (f(s), f(s + 3600000))

    failures, compared = [], 0
    for name, fmt in FORMATS.items():
        rem = collections.Counter(hour(druid_time[(name, r["id"])]) for r in removed
                                  if (name, r["id"]) in druid_time)
        add = collections.Counter(hour(druid_time[(name, r["id"])]) for r in added
                                  if (name, r["id"]) in druid_time)
        spec = {"type": "index_parallel", "spec": {
            "dataSchema": {"dataSource": "events",
                           "timestampSpec": {"column": "s_" + name, "format": fmt},
                           "dimensionsSpec": {"dimensions": []},
                           "granularitySpec": {"segmentGranularity": "hour", "rollup": False}},
            "ioConfig": {"type": "index_parallel", "inputSource": {
                "type": "iceberg", "tableName": "events", "namespace": "db",
                "icebergCatalog": {"type": "local", "warehousePath": tmp},
                "warehouseSource": {"type": "local"}}, "inputFormat": {"type": "parquet"}},
            "tuningConfig": {"type": "index_parallel", "maxParseExceptions": 1000000}}}
        sp = os.path.join(tmp, name + ".spec.json")
        json.dump(spec, open(sp, "w"))
        p = subprocess.run([ICEDRUID, "diff", "--spec", sp, "--from-snapshot", str(s1), "--to-snapshot",
                            str(s4), "--granularity", "HOUR", "--remap", "%s=%s" % (loc, path)],
                           capture_output=True, text=True)
        if p.returncode:
            failures.append("%s: diff failed: %s" % (name, p.stderr.strip()))
            continue
        d = json.loads(p.stdout)
        want_replace = sorted(rem)
        want_append = sorted(k for k in add if k not in rem)
        got_removed = {k: v for k, v in d.get("rowsRemoved", {}).items()}
        got_added = {k: v for k, v in d.get("rowsAdded", {}).items() if k in d["appendIntervals"]}
        ok = (sorted(d["replaceIntervals"]) == want_replace and sorted(d["appendIntervals"]) == want_append
              and got_removed == dict(rem) and got_added == {k: add[k] for k in want_append})
        if not ok:
            failures.append("%s: diff %s\n  want replace %s (%s)\n  want append %s" % (
                name, json.dumps({k: d.get(k) for k in ("replaceIntervals", "appendIntervals",
                                                        "rowsRemoved", "rowsAdded")}),
                want_replace, dict(rem), want_append))
        compared += 1
        print("%-6s %2d replace, %2d append intervals (%d removed, %d added rows in Druid)" % (
            name, len(want_replace), len(want_append), sum(rem.values()), sum(add.values())))
    for f in failures:
        print("FAIL:", f)
    print("%d passed, %d failed" % (compared - len(failures), len(failures)))
    sys.exit(1 if failures else 0)
