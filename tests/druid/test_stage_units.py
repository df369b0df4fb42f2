#!/usr/bin/env python3
"""Timestamps and times stored in a unit Druid reads differently from Iceberg's micros are
materialized, not handed to Druid raw (issue 20 / issue 13's per-file decision).

Druid's readers give some stored longs as they are, where an Iceberg timestamp becomes
something else:
  * Parquet: an INT64 without TIMESTAMP annotation is the raw long
    (ParquetGroupConverter: no OriginalType), where TIMESTAMP_MICROS becomes millis; a
    time is the raw stored number, so TIME(MILLIS) (INT32) and TIME(NANOS) give another
    scale than Iceberg's TIME(MICROS);
  * Avro: a GenericRecord without logical-type conversions, so `timestamp-millis` is the
    raw long of millis and `time-millis` the raw int of millis, where Iceberg's
    `timestamp-micros` / `time-micros` files give micros.
A table holding such a file next to ordinary ones would give Druid two scales in one
column; the file is materialized (Iceberg's micros, the form of the table's other files).
An Avro plain `long` of micros reads like `timestamp-micros` and stays raw.

Checks: `plan`'s decision and reason per file; `stage` to a local directory, then the
rows of raw + staged files read back by DuckDB / hyparquet (Parquet) and icebird (Avro)
equal `icedruid scan`; the staged Parquet columns are INT64 TIMESTAMP(MICROS) and INT64
TIME(MICROS); `read` (what
icedruid computes for Druid, e.g. __time in phase 2) gives the values Druid's reader gives
for the staged file. Tables are written here with tests/tools/icewriter. The stage
read-back skips (77) without the npm readers; the decisions are checked regardless."""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
import stage_check as sc  # noqa: E402
from icewriter import iceberg, parquet  # noqa: E402
from icewriter.iceberg import DATA, DataFile, NestedField, Schema, Table  # noqa: E402

PREFIX = "/tmp/icedruid-stage-units"
# micros: before 1970 with a sub-millisecond part, 1970, 2024 with a sub-millisecond part
TS = [-1_500_250, 0, 1_717_245_296_789_012]
TM = [0, 45_296_789_000, 86_399_999_000]  # times of day (whole millis)

failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def spec_for(tmp, wh, name, fmt):
    path = sc.write_spec(tmp, wh, name)
    with open(path) as f:
        spec = json.load(f)
    spec["spec"]["dataSchema"]["timestampSpec"] = {"column": "ts", "format": "auto"}
    spec["spec"]["ioConfig"]["inputFormat"] = {"type": fmt}
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def parquet_table(root):
    """Four Parquet files: ts as a plain INT64 of micros (no annotation); tm as INT32
    TIME(MILLIS); tm as INT64 TIME(NANOS); and both as Iceberg writes them (INT64
    TIMESTAMP(MICROS), INT64 TIME(MICROS))."""
    loc = PREFIX + "/pq_plain"
    t = Table.create(root, loc, Schema([NestedField(1, "id", "long", True),
                                        NestedField(2, "ts", "timestamp"),
                                        NestedField(3, "tm", "time")]))
    odd = []
    for n, (name, ts_col, tm_col) in enumerate((
            ("plain", parquet.Column("ts", "long", 2), parquet.Column("tm", "time", 3)),
            ("tmillis", parquet.Column("ts", "timestamp", 2),
             parquet.Column("tm", "time", 3, time_unit="millis")),
            ("tnanos", parquet.Column("ts", "timestamp", 2),
             parquet.Column("tm", "time", 3, time_unit="nanos")))):
        rel = "data/%05d-%s.parquet" % (n + 1, name)
        os.makedirs(os.path.dirname(t.local_path(rel)), exist_ok=True)
        cols = [parquet.Column("id", "long", 1, True), ts_col, tm_col]
        rows = [(10 * (n + 1) + i, v, m) for i, (v, m) in enumerate(zip(TS, TM))]
        info = parquet.write_parquet(t.local_path(rel), cols, rows)
        odd.append(DataFile(DATA, t.abs_path(rel), spec_id=0, partition=(),
                            record_count=info.num_rows, file_size_in_bytes=info.size))
    t.append(odd + t.write_data([(40 + i, v, m) for i, (v, m) in enumerate(zip(TS, TM))]))
    return t, loc


def avro_table(root, name, ts_type, tm_type):
    """Two Avro files: the first with ts / tm in the given Avro types (values in their
    units), the second as Iceberg writes them (timestamp-micros, time-micros)."""
    loc = PREFIX + "/" + name
    t = Table.create(root, loc, Schema([NestedField(1, "id", "long", True),
                                        NestedField(2, "ts", "timestamp"),
                                        NestedField(3, "tm", "time")]))
    real_type, real_value = iceberg.avro_type, iceberg.avro_value
    odd = {"timestamp": ts_type, "time": tm_type}

    def odd_type(ty):
        return odd.get(ty.kind) or real_type(ty)

    def odd_value(ty, v):
        if v is None or ty.kind not in odd:
            return real_value(ty, v)
        millis = isinstance(odd[ty.kind], dict) and odd[ty.kind]["logicalType"].endswith("-millis")
        return v // 1000 if millis else v  # millis floored (TS has sub-millisecond parts)

    iceberg.avro_type, iceberg.avro_value = odd_type, odd_value
    try:
        files = t.write_data([(i + 1, v, m) for i, (v, m) in enumerate(zip(TS, TM))],
                             file_format="AVRO", name="odd")
    finally:
        iceberg.avro_type, iceberg.avro_value = real_type, real_value
    t.append(files + t.write_data([(10 + i, v, m) for i, (v, m) in enumerate(zip(TS, TM))],
                                file_format="AVRO"))
    return t, loc


def decisions(spec, rm):
    files = json.loads(sc.run(["plan", "--spec", spec] + rm).stdout)["files"]
    return {os.path.basename(f["path"]): f for f in files}


def read_rows(spec, rm):
    r = sc.run(["read", "--spec", spec] + rm)
    return {row["id"]: row for row in (json.loads(x) for x in r.stdout.splitlines() if x.strip())}


def java_div(a, b):
    q = abs(a) // b
    return q if a >= 0 else -q


def main():
    tmp = tempfile.mkdtemp(prefix="icd-test-stage-units-")
    try:
        wh = os.path.join(tmp, "wh")
        tables = {}
        # ---- Parquet: plain INT64 timestamp, TIME(MILLIS), TIME(NANOS) materialized;
        # TIMESTAMP(MICROS) + TIME(MICROS) raw
        root = os.path.join(wh, "ns", "pq_plain")
        _, loc = parquet_table(root)
        spec, rm = spec_for(tmp, wh, "pq_plain", "parquet"), ["--remap", loc + "=" + root]
        d = decisions(spec, rm)
        for name, why in (("plain", "'ts' (id 2) is stored as a long without timestamp annotation"),
                          ("tmillis", "'tm' (id 3) is stored as Parquet TIME(MILLIS) (Druid "
                                      "reads the raw int of millis"),
                          ("tnanos", "'tm' (id 3) is stored as Parquet TIME(NANOS) (Druid "
                                     "reads the raw long of nanoseconds")):
            f = [v for k, v in d.items() if name in k]
            f = f[0] if len(f) == 1 else {}
            check(f.get("decision") == "materialized" and why in f.get("reason", "")
                  and f.get("decidedBy") == "footer",
                  "parquet %s: materialized, why: %s" % (name, f.get("reason")))
        normal = [v for k, v in d.items() if not any(x in k for x in ("plain", "tmillis", "tnanos"))]
        check(len(normal) == 1 and normal[0]["decision"] == "raw",
              "parquet TIMESTAMP(MICROS) + TIME(MICROS): raw: %s" % [x["decision"] for x in normal])
        rows = read_rows(spec, rm)
        ids = [10 * n + i for n in (1, 2, 3, 4) for i in range(3)]
        want = {i: (java_div(v, 1000), m) for i, v, m in zip(ids, TS * 4, TM * 4)}
        got = {i: ((rows.get(i) or {}).get("ts"), (rows.get(i) or {}).get("tm")) for i in want}
        check(got == want and all(rows[i]["__time"] == want[i][0] for i in want),
              "parquet read: ts and __time are the millis Druid gives for TIMESTAMP(MICROS), "
              "truncated toward zero, tm the raw long of micros of TIME(MICROS), for every "
              "file: %s" % got)
        tables["pq_plain"] = (root, spec, rm, 4, 3)  # ..., files, of them staged

        # ---- Avro: timestamp-millis / time-millis materialized; plain longs raw
        # (name, ts's Avro type, tm's Avro type, the reason of the odd file, None: raw)
        for name, ts_type, tm_type, why in (
                ("av_millis", {"type": "long", "logicalType": "timestamp-millis"},
                 {"type": "long", "logicalType": "time-micros"}, "stored as Avro timestamp-millis"),
                ("av_time_millis", {"type": "long", "logicalType": "timestamp-micros"},
                 {"type": "int", "logicalType": "time-millis"}, "stored as Avro time-millis"),
                ("av_plain", "long", "long", None)):
            root = os.path.join(wh, "ns", name)
            _, loc = avro_table(root, name, ts_type, tm_type)
            spec, rm = spec_for(tmp, wh, name, "avro_ocf"), ["--remap", loc + "=" + root]
            d = decisions(spec, rm)
            odd = [v for k, v in d.items() if "odd" in k]
            other = [v for k, v in d.items() if "odd" not in k]
            if why is None:
                check(len(odd) == 1 and odd[0]["decision"] == "raw",
                      "%s: an Avro plain long of micros reads the same: raw: %s" % (name, odd))
            else:
                check(len(odd) == 1 and odd[0]["decision"] == "materialized" and
                      why in odd[0].get("reason", ""),
                      "%s: materialized, why: %s" % (name, odd[0].get("reason") if odd else None))
            check(len(other) == 1 and other[0]["decision"] == "raw",
                  "%s: the timestamp-micros file is raw" % name)
            rows = read_rows(spec, rm)
            ids = (1, 2, 3, 10, 11, 12)
            want = {i: (v, m) for i, v, m in zip(ids, TS + TS, TM + TM)}
            got = {i: ((rows.get(i) or {}).get("ts"), (rows.get(i) or {}).get("tm")) for i in ids}
            if isinstance(ts_type, dict) and ts_type["logicalType"] == "timestamp-millis":
                for i, v in zip(ids, TS):  # the odd file holds floor(micros / 1000)
                    want[i] = (v // 1000 * 1000, want[i][1])
            check(got == want, "%s read: ts and tm are the Avro longs of micros Druid gives for "
                  "the staged (timestamp-micros, time-micros) file: %s" % (name, got))
            tables[name] = (root, spec, rm, 2, 0 if why is None else 1)

        # ---- stage: raw + staged files read back equal scan; staged Parquet column typed
        if not sc.node_ready():
            print("skip: stage read-back: npm readers missing (bash scripts/node-deps.sh)")
            return 77 if not failures else 1
        for name, (root, spec, rm, nfiles, want_staged) in tables.items():
            to = os.path.join(tmp, "staged-" + name)
            doc, summary, _ = sc.stage(spec, to, rm)
            files = sc.listed_files(doc)
            check(summary["stagedFiles"] == want_staged and summary["rawFiles"] == nfiles - want_staged
                  and len([f for f in files if f.startswith(to)]) == want_staged,
                  "%s: %d file(s) staged, listed in the spec: %s" % (name, want_staged, summary))
            problems, counts = sc.compare_table(root, spec, files, rm)
            check(not problems, "%s: raw + staged files read back equal scan %s %s"
                  % (name, counts, problems))
            if name == "pq_plain":
                staged = [f for f in files if f.startswith(to)]
                for f in staged:
                    nodes = sc._schema_nodes(f)
                    ts, tm = nodes.get(2, ()), nodes.get(3, ())
                    check(ts[:1] == ("INT64",) and "TIMESTAMP" in ts[1] and "MICROS" in ts[1] and
                          tm[:1] == ("INT64",) and "TIME" in tm[1] and "MICROS" in tm[1],
                          "pq_plain: staged %s: ts is INT64 TIMESTAMP(MICROS), tm INT64 "
                          "TIME(MICROS): %s %s" % (os.path.basename(f), ts, tm))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok: stored units Druid reads differently are materialized")
    return 0


if __name__ == "__main__":
    sys.exit(main())
