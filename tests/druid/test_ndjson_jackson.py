"""Served NDJSON as Druid's json reader sees it: corpus tables with delete files (v2, read
by Druid from `icedruid serve`) are served, and tests/druid/oracle/DruidJsonReaderOracle.java
(Jackson 2.14 from Debian's libjackson2-databind-java, compiled with javac into the build
directory) fetches every split with HttpURLConnection and parses each row the way Druid's
json inputFormat does (featureSpec ALLOW_NON_NUMERIC_NUMBERS; integral numbers -> Long,
other numbers -> Double, text -> String). Every row's values and Java types must equal what
Druid's Parquet reader gives for the same row of the data file - Impala's expected rows
converted here with ParquetGroupConverter's rules (int/long -> Long, timestamp -> epoch
millis Long, date -> epoch millis Long, float/double -> Double, string -> String), written
independently of icedruid - plus __time from the timestampSpec. The oracle also resumes the
first split at half its length with a Range request: a 206 must carry exactly the rest, a
200 (serve without Range support) the whole body again; which one happened is printed.
Then every corpus table with Impala's expected rows of its current snapshot (Parquet, ORC
and Avro data files, v1 and v2) is read with `icedruid read` (the same row writer as
`serve`) and every row compared the same way with what Druid's reader for that format gives
(ParquetGroupConverter; OrcStructConverter: dates as DateTimes, decimals as doubles,
timestamps as millis; Avro GenericRecord through AvroFlattenerMaker: dates as int days,
timestamps as raw micros, decimals as the fixed's bytes); the table and row counts are
printed.
Exit 77 when the corpus, javac or the Jackson jars are missing.
"""
import datetime
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
# two corpus tables record delete-file facts that are not the files' (see
# tests/corpus/test_scan_oracles.py SIZE_MISMATCH); this test is not about that
os.environ["ICEDRUID_SIZE_MISMATCH"] = "warn"

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SHARED = os.environ.get("ICD_SHARED", "../shared")
BUILD = os.environ.get("ICD_BUILD_DIR", "build")
SRC = os.path.abspath(os.environ.get("ICD_SOURCE_DIR",
                                     os.path.join(os.path.dirname(__file__), "..", "..")))
IMPALA = os.path.join(SHARED, "corpus", "impala")
EXPECTED = os.path.join(SHARED, "corpus", "expected")
HC = os.path.join(IMPALA, "hadoop_catalog")
JARS = ["/usr/share/java/jackson-databind.jar", "/usr/share/java/jackson-core.jar",
        "/usr/share/java/jackson-annotations.jar"]

if not os.path.isdir(HC):
    print("SKIP: corpus absent")
    sys.exit(77)
for need in JARS + ["/usr/bin/javac"]:
    if not os.path.exists(need):
        print("SKIP: %s not installed (libjackson2-databind-java / JDK)" % need)
        sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from java_oracle import compile_oracle  # noqa: E402
out_dir = compile_oracle(BUILD, ["DruidJsonReaderOracle"], JARS)
CP = ":".join(JARS + [out_dir])

failures = []
checks = 0


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, flush=True)


def current_metadata(tdir):
    best = None
    for p in glob.glob(os.path.join(tdir, "metadata", "v*.metadata.json")):
        n = os.path.basename(p)[1:].split(".")[0]
        if n.isdigit() and (best is None or int(n) > best[0]):
            best = (int(n), p)
    with open(best[1]) as f:
        return json.load(f)


def impala_ts_millis(s):
    date, _, t = s.partition(" ")
    hms, _, frac = t.partition(".")
    dt = datetime.datetime.strptime(date + " " + hms, "%Y-%m-%d %H:%M:%S")
    micros = int((frac + "000000")[:6]) if frac else 0
    d = dt - datetime.datetime(1970, 1, 1)
    total = (d.days * 86400 + d.seconds) * 1000000 + micros
    return int(total / 1000)  # TimeUnit.MICROSECONDS -> MILLISECONDS: toward zero


def jackson_value(v, t):
    """Druid's Parquet-reader value of an Impala-printed value, as a typed string."""
    if v is None:
        return None
    if t in ("int", "long"):
        return "L:%d" % v
    if t in ("timestamp", "timestamptz"):
        return "L:%d" % impala_ts_millis(v)
    if t == "date":
        return "L:%d" % ((datetime.date.fromisoformat(v) - datetime.date(1970, 1, 1)).days * 86400000)
    if t in ("float", "double"):
        return "D:%r" % float(v)
    if t == "boolean":
        return "Z:%s" % ("true" if v else "false")
    if t == "string":
        return "S:" + v
    return None  # not compared (decimal: BigDecimal in Druid's Parquet reader, Double in JSON)


def java_double_text(s):
    """Python repr of the Double Java printed ('D:1.0E7' -> 'D:10000000.0')."""
    return "D:%r" % float(s[2:])


def serve(spec, remaps):
    p = subprocess.Popen([ICEDRUID, "serve", "--rows", "--spec", spec, *remaps, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = p.stdout.readline().strip()
    return p, url


tables = 0
rows_compared = 0
range_status = set()
with tempfile.TemporaryDirectory() as tmp:
    for side in sorted(glob.glob(os.path.join(EXPECTED, "*.json"))):
        if side.endswith("index.json"):
            continue
        meta = json.load(open(side))
        rel = meta.get("table_dir", "")
        if (not meta.get("rows_file") or not meta.get("complete_columns", True)
                or not rel.startswith("hadoop_catalog/ice/") or "orc" in rel or "avro" in rel
                or meta.get("snapshot_selection") == "time_travel"):
            continue
        tdir = os.path.join(IMPALA, rel)
        md = current_metadata(tdir)
        if md.get("format-version", 1) < 2:
            continue
        cols = {c["name"]: c["iceberg_type"] for c in meta["columns"]}
        if any(t.startswith(("list", "map", "struct")) for t in cols.values()):
            continue
        table = os.path.basename(rel)
        if table == "iceberg_v2_delete_equality_nulls":
            # its delete file has 2 records where the manifest entry says 1: icedruid refuses
            # the table (tests/corpus/test_scan_oracles.py SIZE_MISMATCH)
            continue
        long_col = next((n for n, t in cols.items() if t in ("long", "int")), None)
        ts = {"column": long_col or "nope", "format": "millis", "missingValue": 981173106000}
        spec = {"type": "index_parallel", "spec": {
            "dataSchema": {"dataSource": table, "timestampSpec": ts,
                           "dimensionsSpec": {"dimensions": []},
                           "granularitySpec": {"segmentGranularity": "day", "rollup": False}},
            "ioConfig": {"type": "index_parallel", "inputSource": {
                "type": "iceberg", "tableName": table, "namespace": "ice",
                "icebergCatalog": {"type": "local", "warehousePath": HC},
                "warehouseSource": {"type": "local"}}, "inputFormat": {"type": "parquet"}}}}
        path = os.path.join(tmp, table + ".json")
        json.dump(spec, open(path, "w"))
        remaps = ["--remap", md["location"].rstrip("/") + "=" + os.path.abspath(tdir)]
        plan = subprocess.run([ICEDRUID, "plan", "--spec", path, *remaps], capture_output=True, text=True)
        if plan.returncode or '"icebergFileTask"' not in plan.stdout:
            continue  # v1 plan: Druid reads the Parquet files itself
        proc, url = serve(path, remaps)
        try:
            check(url.startswith("http://127.0.0.1:"), "%s: serve started (%s)" % (table, url))
            import urllib.request
            splits = json.loads(urllib.request.urlopen(url + "/splits").read())["splits"]
            r = subprocess.run(["java", "-cp", CP, "DruidJsonReaderOracle", *splits],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0, "%s: Jackson read every served row: %s" % (table, r.stderr[-500:]))
            lines = r.stdout.splitlines()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        if not lines:
            continue
        status = lines[-1].split()
        check(status[0] == "RANGE" and status[-1] == "ok", "%s: resume at an offset: %s" % (table, lines[-1]))
        range_status.add(status[1])
        got = []
        for line in lines[:-1]:
            row = json.loads(line)
            got.append({k: (java_double_text(v) if isinstance(v, str) and v.startswith("D:") else v)
                        for k, v in row.items()})
        want = []
        for e in (json.loads(l) for l in open(os.path.join(EXPECTED, meta["rows_file"])) if l.strip()):
            d = {k: jackson_value(v, cols[k]) for k, v in e.items()}
            t = e.get(long_col) if long_col else None
            d["__time"] = "L:%d" % (t if t is not None else 981173106000)
            want.append(d)
        comparable = [k for k, t in cols.items() if not t.startswith("decimal")] + ["__time"]
        key = lambda r: json.dumps({k: r.get(k) for k in comparable}, sort_keys=True)
        g, w = sorted(map(key, got)), sorted(map(key, want))
        check(g == w, "%s: Jackson's values/types differ from Druid's Parquet reader:\n got  %s\n want %s"
              % (table, g[:3], w[:3]))
        tables += 1
        rows_compared += len(got)
print("Jackson oracle, served: %d v2 tables, %d rows compared; Range answer(s): %s"
      % (tables, rows_compared, ", ".join(sorted(range_status)) or "-"))


# ---- every corpus table with expected rows, through `icedruid read` --------------------
# The rows of `read` are the rows `serve` sends (one row writer); here every table of the
# corpus with Impala's expected rows of its current snapshot is read - Parquet, ORC and
# Avro, v1 and v2 - and each row's values and Java types compared with what Druid's reader
# for the data files' format gives (rules written here from Druid's ParquetGroupConverter,
# OrcStructConverter and AvroFlattenerMaker, independently of icedruid).

def decimal_bytes(precision):
    n = 1
    while 2 ** (8 * n - 1) - 1 < 10 ** precision - 1:
        n += 1
    return n


def float_text(v):
    """The float's Java Float.toString digits (shortest text that rounds to the float), as
    Jackson then reads them into a Double."""
    import struct
    f32 = struct.unpack("f", struct.pack("f", v))[0]
    for digits in range(1, 10):
        s = "%.*g" % (digits, f32)
        if struct.unpack("f", struct.pack("f", float(s)))[0] == f32:
            return "D:%r" % float(s)
    return "D:%r" % f32


def reader_value(v, t, fmt):
    """Druid's value of an Impala-printed value for the data file format, typed."""
    if v is None:
        return None
    if t == "float":        # a Float everywhere, printed by its Java text
        return float_text(float(v))
    if t.startswith("decimal"):
        p, sc = [int(x) for x in t[t.index("(") + 1:-1].split(",")]
        if fmt == "orc":    # HiveDecimal.doubleValue()
            return "D:%r" % float(v)
        if fmt == "avro":   # the fixed's bytes (Iceberg: the fewest bytes for P digits)
            import base64
            import decimal
            unscaled = int(decimal.Decimal(str(v)).scaleb(sc))
            raw = unscaled.to_bytes(decimal_bytes(p), "big", signed=True)
            return "S:" + base64.b64encode(raw).decode()
        return None         # Parquet: depends on the physical type (not compared)
    if t in ("timestamp", "timestamptz"):
        if fmt == "avro":   # timestamp-micros, no logical-type conversion: the raw long
            date, _, tm = v.partition(" ")
            hms, _, frac = tm.partition(".")
            d = datetime.datetime.strptime(date + " " + hms, "%Y-%m-%d %H:%M:%S") - \
                datetime.datetime(1970, 1, 1)
            return "L:%d" % ((d.days * 86400 + d.seconds) * 1000000 + int((frac + "000000")[:6] or 0))
        if fmt == "orc":    # OrcTimestamp.getTime(): floor
            date, _, tm = v.partition(" ")
            hms, _, frac = tm.partition(".")
            d = datetime.datetime.strptime(date + " " + hms, "%Y-%m-%d %H:%M:%S") - \
                datetime.datetime(1970, 1, 1)
            us = (d.days * 86400 + d.seconds) * 1000000 + int((frac + "000000")[:6] or 0)
            return "L:%d" % (us // 1000)
    if t == "date":
        days = (datetime.date.fromisoformat(v) - datetime.date(1970, 1, 1)).days
        if fmt == "avro":   # the int of days
            return "L:%d" % days
        if fmt == "orc":    # DateTimes.utc(...): the DateTime's text
            return "S:%sT00:00:00.000Z" % v
    return jackson_value(v, t)


def data_format(tdir):
    exts = [os.path.splitext(f)[1] for _, _, fs in os.walk(os.path.join(tdir, "data")) for f in fs]
    for ext, fmt in ((".orc", "orc"), (".avro", "avro")):
        if exts and exts.count(ext) * 2 > len(exts):
            return fmt
    return "parquet"


read_tables = 0
read_rows = 0
read_skipped = []
with tempfile.TemporaryDirectory() as tmp:
    for side in sorted(glob.glob(os.path.join(EXPECTED, "*.json"))):
        if side.endswith("index.json"):
            continue
        meta = json.load(open(side))
        if not meta.get("rows_file") or meta.get("snapshot_selection") == "time_travel":
            continue
        rel = meta["table_dir"]
        tdir = os.path.abspath(os.path.join(IMPALA, rel))
        table = os.path.basename(rel)
        if not meta.get("complete_columns", True):
            read_skipped.append(table + " (expected rows lack columns)")
            continue
        if table == "iceberg_v2_delete_equality_nulls":
            read_skipped.append(table + " (refused: delete file record count != manifest)")
            continue
        md = current_metadata(tdir)
        fmt = data_format(tdir)
        cols = {c["name"]: c["iceberg_type"] for c in meta["columns"]}
        long_col = next((n for n, t in cols.items() if t in ("long", "int")), None)
        ts = {"column": long_col or "nope", "format": "millis", "missingValue": 981173106000}
        spec = {"type": "index_parallel", "spec": {
            "dataSchema": {"dataSource": table, "timestampSpec": ts,
                           "dimensionsSpec": {"dimensions": []},
                           "granularitySpec": {"segmentGranularity": "day", "rollup": False}},
            "ioConfig": {"type": "index_parallel", "inputSource": {
                "type": "iceberg", "tableName": table,
                "namespace": os.path.basename(os.path.dirname(tdir)),
                "icebergCatalog": {"type": "local",
                                   "warehousePath": os.path.dirname(os.path.dirname(tdir))},
                "warehouseSource": {"type": "local"}}, "inputFormat": {"type": fmt}}}}
        path = os.path.join(tmp, table + ".json")
        json.dump(spec, open(path, "w"))
        out = os.path.join(tmp, table + ".ndjson")
        r = subprocess.run([ICEDRUID, "read", "--spec", path, "--remap",
                            md["location"].rstrip("/") + "=" + tdir, "-o", out],
                           capture_output=True, text=True)
        check(r.returncode == 0, "%s: read: %s" % (table, r.stderr.strip()[-300:]))
        if r.returncode:
            continue
        j = subprocess.run(["java", "-cp", CP, "DruidJsonReaderOracle", "file://" + out],
                           capture_output=True, text=True, timeout=120)
        check(j.returncode == 0, "%s: Jackson read every row: %s" % (table, j.stderr[-500:]))
        got = [json.loads(line) for line in j.stdout.splitlines()[:-1]]
        got = [{k: (java_double_text(v) if isinstance(v, str) and v.startswith("D:") else v)
                for k, v in row.items()} for row in got]
        want = []
        for e in (json.loads(l) for l in open(os.path.join(EXPECTED, meta["rows_file"])) if l.strip()):
            d = {k: reader_value(v, cols[k], fmt) for k, v in e.items()}
            t = e.get(long_col) if long_col else None
            d["__time"] = "L:%d" % (t if t is not None else 981173106000)
            want.append(d)
        comparable = [k for k, t in cols.items()
                      if not t.startswith(("list", "map", "struct"))
                      and not (t.startswith("decimal") and fmt == "parquet")] + ["__time"]
        key = lambda r: json.dumps({k: r.get(k) for k in comparable}, sort_keys=True)
        g, w = sorted(map(key, got)), sorted(map(key, want))
        check(g == w, "%s (%s): Jackson's values/types differ from Druid's %s reader:\n got  %s\n"
              " want %s" % (table, fmt, fmt, [x for x in g if x not in w][:3],
                            [x for x in w if x not in g][:3]))
        read_tables += 1
        read_rows += len(got)
print("Jackson oracle, read: %d corpus tables (%s), %d rows compared, every row of each; "
      "skipped: %s" % (read_tables, "Parquet, ORC, Avro", read_rows, "; ".join(read_skipped) or "-"))
check(read_tables >= 15, "at least 15 corpus tables read (%d)" % read_tables)
check(tables >= 5, "at least 5 v2 corpus tables compared (%d)" % tables)
print("%d passed, %d failed" % (checks - len(failures), len(failures)))
sys.exit(1 if failures else 0)
