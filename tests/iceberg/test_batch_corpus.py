#!/usr/bin/env python3
"""Typed batches (icd_batch, include/icedruid/scan.h) give the rows `icedruid scan` gives.

For every table (the bundled example table and the fixture writer's `alltypes` table
always; every impala and icebird corpus table when ICD_SHARED has them), build/tests/batch_dump_tool reads each task twice through the
public API: as NDJSON (icd_scan_read_task) and as typed batches
(icd_scan_read_task_batches), and checks that a 3-thread icd_scan_run_batches gives the
same row counts and positions per task. This test then compares the two readings row by
row, converting each typed value with its own rules (Python's integer arithmetic, base64,
uuid, struct; not icedruid's formatters) into the JSON of design.md §3:

  boolean, int, long      the number / true, false
  float, double           the number (float: rounded to 32 bits); NaN and infinities as
                          "NaN", "Infinity", "-Infinity"
  decimal(P,S)            unscaled int (P <= 18) or big-endian two's complement bytes
                          (P > 18) -> a string with S fraction digits
  date / time             days from 1970 / micros of day -> "YYYY-MM-DD" / "HH:MM:SS.ffffff"
  timestamp[tz][_ns]      micros (nanos) from the epoch -> ISO text, "+00:00" for tz
  string / uuid / binary  UTF-8 / canonical uuid / base64
  struct, list, map, variant   the batch's JSON text, parsed, equals the NDJSON value

Positions: within a task they increase, and with no deletes they are 0..n-1.
"""
import base64
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
from test_scan_oracles import compute_remaps, current_metadata_file  # noqa: E402

SHARED = os.environ.get("ICD_SHARED", "")
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("ICD_BUILD_DIR", "build")
TOOL = os.path.join(BUILD, "tests", "batch_dump_tool")

# icd_type_id
(BOOLEAN, INT, LONG, FLOAT, DOUBLE, DECIMAL, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_NS,
 TIMESTAMPTZ_NS, STRING, UUID, FIXED, BINARY, STRUCT, LIST, MAP, VARIANT, UNKNOWN,
 OTHER) = range(1, 23)

failures = []
stats = {"tables": 0, "rows": 0, "values": 0, "skipped_broken": 0}
TYPE_NAMES = ("boolean int long float double decimal date time timestamp timestamptz "
              "timestamp_ns timestamptz_ns string uuid fixed binary struct list map variant "
              "unknown other").split()
non_null = {}  # type name -> non-null values compared (to show what the corpus covered)


def fail(msg):
    failures.append(msg)
    print("FAIL", msg)


def civil(days):
    """(year, month, day) of a day count from 1970-01-01 (proleptic Gregorian)."""
    z = days + 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (m <= 2), m, d)


def date_text(days):
    y, m, d = civil(days)
    return "%04d-%02d-%02d" % (y, m, d) if y >= 0 else "-%04d-%02d-%02d" % (-y, m, d)


def time_text(frac_of_day, digits):
    unit = 10 ** digits
    secs, frac = divmod(frac_of_day, unit)
    return "%02d:%02d:%02d.%0*d" % (secs // 3600, secs // 60 % 60, secs % 60, digits, frac)


def ts_text(v, digits, utc):
    day_units = 86400 * 10 ** digits
    days, rest = divmod(v, day_units)
    return date_text(days) + "T" + time_text(rest, digits) + ("+00:00" if utc else "")


def decimal_text(unscaled, scale):
    neg = unscaled < 0
    s = str(abs(unscaled)).rjust(scale + 1, "0")
    if scale:
        s = s[:-scale] + "." + s[-scale:]
    return ("-" if neg else "") + s


def float_json(d, single):
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    return d


def expected(col, v):
    """The §3 JSON value of a typed value (None for null)."""
    if v is None:
        return None
    t = col["type"]
    (k, x), = v.items()
    if k == "b":
        assert t == BOOLEAN, t
        return bool(x)
    if k == "i":
        if t in (INT, LONG):
            return x
        if t == DECIMAL:
            assert col["precision"] <= 18
            return decimal_text(x, col["scale"])
        if t == DATE:
            return date_text(x)
        if t == TIME:
            return time_text(x, 6)
        if t in (TIMESTAMP, TIMESTAMPTZ):
            return ts_text(x, 6, t == TIMESTAMPTZ)
        if t in (TIMESTAMP_NS, TIMESTAMPTZ_NS):
            return ts_text(x, 9, t == TIMESTAMPTZ_NS)
        raise AssertionError("an int value in a column of type %d" % t)
    if k == "d":
        assert t in (FLOAT, DOUBLE), t
        return float_json(float.fromhex(x), t == FLOAT)
    raw = bytes.fromhex(x)
    if k == "j":
        assert t in (STRUCT, LIST, MAP, VARIANT), t
        return json.loads(raw.decode())
    if t == STRING:
        return raw.decode("utf-8", "replace")
    if t == UUID:
        assert len(raw) == 16
        return str(uuid.UUID(bytes=raw))
    if t in (FIXED, BINARY):
        return base64.b64encode(raw).decode()
    if t == DECIMAL:
        assert col["precision"] > 18
        return decimal_text(int.from_bytes(raw, "big", signed=True), col["scale"])
    raise AssertionError("a bytes value in a column of type %d" % t)


def same(col, want, got):
    if col["type"] == FLOAT and isinstance(want, float) and isinstance(got, (int, float)):
        return struct.unpack("<f", struct.pack("<f", got))[0] == want
    if isinstance(want, float) and isinstance(got, (int, float)):
        return want == got
    return want == got


def check_table(label, table, remap):
    with tempfile.TemporaryDirectory() as tmp:
        nd_path, typed_path = os.path.join(tmp, "rows.ndjson"), os.path.join(tmp, "typed")
        p = subprocess.run([TOOL, table, nd_path, typed_path] + remap, capture_output=True,
                           text=True, timeout=600)
        if p.returncode == 2 and p.stdout.startswith("error "):
            # a table the corpus holds broken: `icedruid scan` must fail on it too
            q = subprocess.run([os.environ.get("ICEDRUID", "icedruid"), "scan", table, "-o",
                                os.devnull] + remap, capture_output=True, timeout=600)
            if q.returncode == 0:
                fail("%s: the batch read failed (%s) but icedruid scan succeeded"
                     % (label, p.stdout.strip()))
            stats["skipped_broken"] += 1
            return
        if p.returncode != 0:
            fail("%s: batch_dump_tool exit %d: %s %s" % (label, p.returncode, p.stdout.strip(),
                                                         p.stderr.strip()))
            return
        with open(nd_path, "rb") as f:
            nd = [json.loads(line) for line in f]
        with open(typed_path) as f:
            cols = json.loads(f.readline())["columns"]
            typed = [json.loads(line) for line in f]
    stats["tables"] += 1
    for c in cols:
        c["name"] = bytes.fromhex(c["name"]).decode()
    if len(nd) != len(typed):
        fail("%s: %d NDJSON rows, %d typed rows" % (label, len(nd), len(typed)))
        return
    last = {}
    for i, (row, trow) in enumerate(zip(nd, typed)):
        task, pos, vals = trow[0], trow[1], trow[2:]
        if pos <= last.get(task, -1):
            fail("%s: task %d: position %d after %d" % (label, task, pos, last[task]))
            return
        last[task] = pos
        if list(row.keys()) != [c["name"] for c in cols] or len(vals) != len(cols):
            fail("%s row %d: columns %s vs %s" % (label, i, list(row.keys()),
                                                  [c["name"] for c in cols]))
            return
        for c, v in zip(cols, vals):
            try:
                want = expected(c, v)
            except AssertionError as e:
                fail("%s row %d column %s: %s (%s)" % (label, i, c["name"], e, v))
                return
            stats["values"] += 1
            if v is not None:
                name = TYPE_NAMES[c["type"] - 1]
                if c["type"] == DECIMAL and c["precision"] > 18:
                    name = "decimal(>18)"
                non_null[name] = non_null.get(name, 0) + 1
            if not same(c, want, row[c["name"]]):
                fail("%s row %d column %s: typed %r -> %r, scan wrote %r"
                     % (label, i, c["name"], v, want, row[c["name"]]))
                return
    stats["rows"] += len(nd)


def corpus_tables():
    out = []
    for sub in ("impala", "icebird"):
        for dirpath, dirnames, _files in os.walk(os.path.join(SHARED, "corpus", sub)):
            if "metadata" in dirnames:
                out.append(dirpath)
                dirnames[:] = []
    return sorted(out)


def main():
    if not os.path.exists(TOOL):
        print("%s missing" % TOOL)
        return 1
    wh = os.path.join(SRC, "examples", "warehouse")
    check_table("example orders", os.path.join(wh, "demo", "orders"),
                ["--remap", "/tmp/icedruid-example/warehouse=" + wh])
    with tempfile.TemporaryDirectory() as tmp:  # every primitive type (decimal(38,10), fixed)
        subprocess.run([sys.executable, os.path.join(SRC, "tests", "tools", "make_fixture.py"),
                        "alltypes", tmp], check=True, capture_output=True, timeout=300)
        check_table("fixture alltypes", os.path.join(tmp, "alltypes"),
                    ["--remap", "/tmp/icedruid-edge=" + tmp])
    if SHARED and os.path.isdir(os.path.join(SHARED, "corpus", "impala")):
        for tdir in corpus_tables():
            try:
                md, remaps = current_metadata_file(tdir), compute_remaps(tdir)
            except (OSError, RuntimeError, ValueError, KeyError):
                continue  # (no metadata file: not a table)
            remap = [a for frm, to in remaps for a in ("--remap", "%s=%s" % (frm, to))]
            check_table(os.path.relpath(tdir, SHARED), md, remap)
    else:
        print("corpus part skipped: ICD_SHARED/corpus not found")
    print("%(tables)d tables, %(rows)d rows, %(values)d values compared; "
          "%(skipped_broken)d broken tables failed alike" % stats)
    print("non-null values by type:", ", ".join("%s %d" % kv for kv in sorted(non_null.items())))
    if failures:
        print("%d failures" % len(failures))
        return 1
    if stats["tables"] < 1 or stats["values"] < 1:
        print("nothing compared")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
