"""Phase-2 MSQ statements: the native/MSQ choice per timestamp column type, and every
emitted statement parsed with druid-query-toolkit (the SQL parser of Druid's console,
tests/node/parse_msq.cjs) and checked by structure.

On corpus tables with columns of every primitive type (iceberg_alltypes_part in Parquet
and ORC, iceberg_timestamp_part, iceberg_timestamptz_part), for each column as the
timestampSpec column and each format (auto, millis, posix, micro, nano, ruby, iso, a Joda
pattern), `icedruid sync --emit msq` (a dry run: the full ingestion) must
  - emit MSQ exactly when the SQL provably equals Druid's native parse: a numeric format
    (or auto) on a column Druid's reader hands over as a Java Long (int, long, timestamp,
    timestamptz; date only from Parquet, whose reader gives epoch millis), and
  - otherwise refuse with a pointer to --emit native (strings: TIME_PARSE is not the
    native parser; floats, booleans, decimals, ORC dates: not proven), while
    `--emit native` works for every case.
Every statement must parse, have no trailing ';', REPLACE INTO the data source, select
__time first, read TABLE(EXTERN(source, format, signature)) whose three literals are JSON
with the timestamp column typed long (double for ruby), and PARTITIONED BY the
segmentGranularity; non-standard periods (PT2H, PT3600S, origins) are refused, standard
ones (PT6H, WEEK, QUARTER) emitted. Interval statements (`diff --emit msq` on a v2 table)
are parsed and checked the same way (OVERWRITE WHERE __time bounds = WHERE bounds).
Exit 77 when the corpus or druid-query-toolkit is absent.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
# two corpus tables record delete-file facts that are not the files' (see
# tests/corpus/test_scan_oracles.py SIZE_MISMATCH); this test is not about that
os.environ["ICEDRUID_SIZE_MISMATCH"] = "warn"

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SHARED = os.environ.get("ICD_SHARED", "../shared")
SRC = os.path.abspath(os.environ.get("ICD_SOURCE_DIR",
                                     os.path.join(os.path.dirname(__file__), "..", "..")))
ICE = os.path.join(SHARED, "corpus", "impala", "hadoop_catalog")
NODE_DIR = os.path.join(SRC, "tests", "node")

if not os.path.isdir(ICE):
    print("SKIP: corpus absent")
    sys.exit(77)
if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "druid-query-toolkit")):
    print("SKIP: druid-query-toolkit not installed (scripts/node-deps.sh)")
    sys.exit(77)

failures = []
checks = 0


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, flush=True)


def current_metadata(table_dir):
    best = None
    for p in glob.glob(os.path.join(table_dir, "metadata", "v*.metadata.json")):
        n = os.path.basename(p)[1:].split(".")[0]
        if n.isdigit() and (best is None or int(n) > best[0]):
            best = (int(n), p)
    with open(best[1]) as f:
        return json.load(f)


def schema_of(meta):
    if "schemas" in meta:
        return [s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"]][0]
    return meta["schema"]


def write_spec(tmp, table, fmt_type, column, ts_format, seg="day", extra_is=None):
    src = {"type": "iceberg", "tableName": table, "namespace": "ice",
           "icebergCatalog": {"type": "local", "warehousePath": ICE},
           "warehouseSource": {"type": "local"}}
    src.update(extra_is or {})
    # one dimension that is a column of the table (icedruid checks the spec's columns)
    names = [f["name"] for f in schema_of(current_metadata(os.path.join(ICE, "ice", table)))["fields"]]
    dims = ["i"] if "i" in names else [n for n in names if n != column][:1]
    spec = {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": "ds_" + table,
                       "timestampSpec": {"column": column, "format": ts_format},
                       "dimensionsSpec": {"dimensions": dims},
                       "granularitySpec": {"segmentGranularity": seg, "rollup": False}},
        "ioConfig": {"type": "index_parallel", "inputSource": src,
                     "inputFormat": {"type": fmt_type}},
        "tuningConfig": {"type": "index_parallel"}}}
    path = os.path.join(tmp, "%s.%s.%s.json" % (table, column, abs(hash((ts_format, str(seg))))))
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def remaps(table):
    d = os.path.join(ICE, "ice", table)
    return ["--remap", current_metadata(d)["location"].rstrip("/") + "=" + os.path.abspath(d)]


def sync(tmp, spec, table, emit):
    state = os.path.join(tmp, "state-%d.json" % len(os.listdir(tmp)))
    # iceberg_alltypes_part's identity-partition-only columns make its files materialized:
    # without a URL (or staging) the re-ingestion is refused, with one the files are served
    return subprocess.run([ICEDRUID, "sync", "--spec", spec, "--state", state, "--emit", emit,
                           "--serve-url", "http://127.0.0.1:8200", *remaps(table)],
                          capture_output=True, text=True, timeout=120)


def statements(text):
    """The printed MSQ statements (one blank line between two)."""
    parts = text.split("\n\nREPLACE INTO ")
    return [p if i == 0 else "REPLACE INTO " + p for i, p in enumerate(parts) if p.strip()]


LONG_TYPES = {"int", "long", "timestamp", "timestamptz"}
NUMERIC = ["auto", "millis", "posix", "micro", "nano", "ruby"]
FORMATS = NUMERIC + ["iso", "yyyy-MM-dd"]
TABLES = [("iceberg_alltypes_part", "parquet"), ("iceberg_alltypes_part_orc", "orc"),
          ("iceberg_timestamp_part", "parquet"), ("iceberg_timestamptz_part", "parquet")]

emitted = []  # (sql, expectation dict)
with tempfile.TemporaryDirectory() as tmp:
    choice = {"msq": 0, "refused": 0}
    for table, fmt_type in TABLES:
        meta = current_metadata(os.path.join(ICE, "ice", table))
        # a table whose rows come through icedruid (v2: deletes, or an ORC file to
        # materialize, there being no ORC writer) gives MSQ a long __time column
        probe = write_spec(tmp, table, fmt_type, schema_of(meta)["fields"][0]["name"], "auto")
        served = json.loads(subprocess.run([ICEDRUID, "plan", "--spec", probe, *remaps(table)],
                                           capture_output=True, text=True,
                                           check=True).stdout)["mode"] == "v2"
        for field in schema_of(meta)["fields"]:
            col, typ = field["name"], field["type"]
            for ts_format in FORMATS:
                spec = write_spec(tmp, table, fmt_type, col, ts_format)
                want_msq = served or (ts_format in NUMERIC and (
                    typ in LONG_TYPES or (typ == "date" and fmt_type == "parquet")))
                r = sync(tmp, spec, table, "msq")
                what = "%s.%s (%s, %s) format %s" % (table, col, typ, fmt_type, ts_format)
                if want_msq:
                    check(r.returncode == 0, "MSQ emitted for %s: %s" % (what, r.stderr.strip()))
                    choice["msq"] += 1
                    for sql in statements(r.stdout):
                        emitted.append((sql, {"table": "ds_" + table,
                                              "col": "__time" if served else col,
                                              "sig": "double" if ts_format == "ruby" and not served
                                              else "long",
                                              "part": "PARTITIONED BY DAY", "full": True,
                                              "what": what}))
                else:
                    check(r.returncode != 0 and "--emit native" in r.stderr,
                          "MSQ refused with a pointer to --emit native for %s: rc=%d %s"
                          % (what, r.returncode, r.stderr.strip()))
                    choice["refused"] += 1
                r = sync(tmp, spec, table, "native")
                check(r.returncode == 0 and json.loads(r.stdout or "{}").get("type") == "index_parallel",
                      "--emit native works for %s: %s" % (what, r.stderr.strip()))
    print("native/MSQ choice: %(msq)d MSQ, %(refused)d refused" % choice)

    # segment granularities: only the standard ones reach PARTITIONED BY
    grans = [("hour", "PARTITIONED BY HOUR"), ("week", 'PARTITIONED BY TIME_FLOOR("__time", \'P1W\')'),
             ("quarter", 'PARTITIONED BY TIME_FLOOR("__time", \'P3M\')'),
             ("six_hour", 'PARTITIONED BY TIME_FLOOR("__time", \'PT6H\')'),
             ({"type": "period", "period": "PT6H"}, 'PARTITIONED BY TIME_FLOOR("__time", \'PT6H\')'),
             ({"type": "period", "period": "P1D"}, "PARTITIONED BY DAY"),
             ("all", "PARTITIONED BY ALL TIME"),
             ({"type": "period", "period": "PT2H"}, None),
             ({"type": "period", "period": "PT3600S"}, None),
             ({"type": "period", "period": "PT60M"}, None),
             ({"type": "period", "period": "P1D", "origin": "2020-01-01T06:00:00Z"}, None),
             ({"type": "duration", "duration": 3600000}, None)]
    for seg, want in grans:
        spec = write_spec(tmp, "iceberg_timestamp_part", "parquet", "ts", "auto", seg=seg)
        r = sync(tmp, spec, "iceberg_timestamp_part", "msq")
        if want is None:
            check(r.returncode != 0 and "--emit native" in r.stderr,
                  "segmentGranularity %s refused for PARTITIONED BY: %s" % (seg, r.stderr.strip()))
        else:
            check(r.returncode == 0, "segmentGranularity %s emitted: %s" % (seg, r.stderr.strip()))
            for sql in statements(r.stdout):
                emitted.append((sql, {"table": "ds_iceberg_timestamp_part", "col": "ts", "sig": "long",
                                      "part": want, "full": True, "what": "granularity %s" % (seg,)}))

    # interval statements on a v2 table (rows served by icedruid: __time is a long column)
    table = "iceberg_v2_delete_positional"
    meta = current_metadata(os.path.join(ICE, "ice", table))
    snaps = sorted(meta["snapshots"], key=lambda s: s["sequence-number"])
    spec = write_spec(tmp, table, "parquet", "id", "millis")
    r = subprocess.run([ICEDRUID, "diff", "--spec", spec, "--from-snapshot", str(snaps[0]["snapshot-id"]),
                        "--emit", "msq", "--rows", "--serve-url", "http://127.0.0.1:8200", *remaps(table)],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "diff --emit msq on %s: %s" % (table, r.stderr.strip()))
    n_interval = 0
    for sql in statements(r.stdout):
        n_interval += 1
        emitted.append((sql, {"table": "ds_" + table, "col": "__time", "sig": "long",
                              "part": "PARTITIONED BY DAY", "full": False, "what": "diff " + table}))
    check(n_interval > 0, "diff emitted interval statements")

    # ---- parse every statement with druid-query-toolkit -----------------------------------
    parsed = json.loads(subprocess.run(["node", os.path.join(NODE_DIR, "parse_msq.cjs")],
                                       input=json.dumps([s for s, _ in emitted]), capture_output=True,
                                       text=True, check=True, cwd=NODE_DIR).stdout)
    for (sql, want), p in zip(emitted, parsed):
        w = want["what"]
        check(p["ok"], "druid-query-toolkit parses the statement of %s: %s" % (w, p.get("error")))
        if not p["ok"]:
            continue
        check(not p["endsWithSemicolon"], "no trailing ';' (%s)" % w)
        check(p["table"] == '"%s"' % want["table"], "REPLACE INTO the data source (%s): %s" % (w, p["table"]))
        check(p["columns"][:1] == ["__time"], "__time selected first (%s): %s" % (w, p["columns"]))
        check(p["tableFn"] == "TABLE" and p["externFn"] == "EXTERN" and len(p["extern"]) == 3,
              "FROM TABLE(EXTERN(3 literals)) (%s)" % w)
        try:
            src, fmt, sig = (json.loads(x) for x in p["extern"])
        except (ValueError, TypeError) as e:
            check(False, "EXTERN literals are JSON (%s): %s" % (w, e))
            continue
        check(isinstance(src, dict) and src.get("type") in ("iceberg", "http"), "EXTERN source (%s)" % w)
        check(isinstance(fmt, dict) and fmt.get("type"), "EXTERN input format (%s)" % w)
        types = {e["name"]: e["type"] for e in sig}
        check(types.get(want["col"]) == want["sig"],
              "timestamp column %s typed %s in the signature (%s): %s" % (want["col"], want["sig"], w, types))
        check(p["partitionedBy"] == want["part"], "%s (%s): %s" % (want["part"], w, p["partitionedBy"]))
        if want["full"]:
            check(p["overwrite"] == "ALL" and p["where"] and p["where"].endswith("IS NOT NULL"),
                  "full ingestion: OVERWRITE ALL, rows with a NULL __time left out (%s): %s"
                  % (w, p["where"]))
        else:
            ow = p["overwrite"] or ""
            bounds = [x.split("'")[1] for x in ow.split("TIMESTAMP ")[1:]]
            check(len(bounds) == 2 and all(b in (p["where"] or "") for b in bounds),
                  "OVERWRITE WHERE bounds = the WHERE bounds (%s): %s / %s" % (w, ow, p["where"]))
    print("parsed %d statements with druid-query-toolkit" % len(parsed))

print("%d checks, %d failed" % (checks, len(failures)))
print("%d passed, %d failed" % (checks - len(failures), len(failures)))
sys.exit(1 if failures else 0)
