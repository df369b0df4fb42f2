"""icedruid plan / read / rewrite-spec on corpus tables through Druid specs with a `local`
catalog (warehousePath = the corpus's hadoop_catalog, namespace `ice`), written here in a
temporary directory.

  - a table without delete files plans as v1: exactly its live data files (tables with a
    single snapshot, so every file outside metadata/ is live) in the `local` source;
    an empty table gives an empty file list;
  - a table with delete files plans as v2: one split per data file whose delete lists
    match the planner (`icedruid tasks`), and each split read alone (read --split)
    gives the same rows as reading the whole table, and so does every --stream-memory
    (whole column chunks, or windows smaller than a chunk);
  - read rows equal Impala's expected results converted by Druid's rules — the
    conversion below is written from the rules (timestamps -> epoch millis, dates as
    YYYY-MM-DD, decimals as numbers), not from icedruid's output — with __time from
    the timestampSpec (a timestamp column, a long column with format millis, or
    missingValue);
  - rewrite-spec: v1 swaps in the planned source, v2 points at the server's splits.
Skips (77) when the corpus is absent."""
import datetime
import decimal
import glob
import json
import os
import subprocess
import sys
import tempfile

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
# two corpus tables record delete-file sizes that are not the files' (see
# tests/corpus/test_scan_oracles.py SIZE_MISMATCH); this test is about Druid rows
os.environ["ICEDRUID_SIZE_MISMATCH"] = "warn"
SHARED = os.environ.get("ICD_SHARED", "../shared")
CORPUS = os.path.join(SHARED, "corpus")
IMPALA = os.path.join(CORPUS, "impala")
EXPECTED = os.path.join(CORPUS, "expected")

failures = []
checks = 0


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, file=sys.stderr)


def current_metadata(table_dir):
    """The highest vN.metadata.json of a table (the corpus README's rule)."""
    best = None
    for p in glob.glob(os.path.join(table_dir, "metadata", "v*.metadata.json")):
        n = os.path.basename(p)[1:].split(".")[0]
        if n.isdigit() and (best is None or int(n) > best[0]):
            best = (int(n), p)
    with open(best[1]) as f:
        return json.load(f)


def table_remaps(table_dir):
    loc = current_metadata(table_dir)["location"].rstrip("/")
    return ["--remap", loc + "=" + os.path.abspath(table_dir)]


def write_spec(tmp, name, warehouse, namespace, table, ts_spec, extra_is=None, tuning=None):
    inputsource = {
        "type": "iceberg",
        "tableName": table,
        "namespace": namespace,
        "icebergCatalog": {"type": "local", "warehousePath": warehouse},
        "warehouseSource": {"type": "local"},
    }
    inputsource.update(extra_is or {})
    spec = {
        "type": "index_parallel",
        "spec": {
            "dataSchema": {
                "dataSource": table,
                "timestampSpec": ts_spec,
                "dimensionsSpec": {"dimensions": []},
                "granularitySpec": {"segmentGranularity": "day", "rollup": False},
            },
            "ioConfig": {"type": "index_parallel", "inputSource": inputsource,
                         "inputFormat": {"type": "parquet"}},
            "tuningConfig": tuning or {"type": "index_parallel"},
        },
    }
    path = os.path.join(tmp, name + ".spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def run(*args, ok=True):
    p = subprocess.run([ICEDRUID, *args], capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise AssertionError("icedruid %s failed (%d): %s" % (" ".join(args), p.returncode,
                                                              p.stderr))
    return p


def rows_of(text):
    return [json.loads(line, parse_float=decimal.Decimal) for line in text.splitlines() if line]


# ---- Druid's conversion of Impala's printed values (independent of icedruid) ---------

EPOCH = datetime.datetime(1970, 1, 1)


def impala_ts_to_millis(s):
    """'2021-10-31 02:15:00[.fffffffff]' (UTC, no zone) -> epoch millis, floored."""
    date, _, time = s.partition(" ")
    hms, _, frac = time.partition(".")
    dt = datetime.datetime.strptime(date + " " + hms, "%Y-%m-%d %H:%M:%S")
    micros = int((frac + "000000")[:6]) if frac else 0
    delta = dt - EPOCH
    total_micros = (delta.days * 86400 + delta.seconds) * 1000000 + micros
    return total_micros // 1000


def druid_value(v, iceberg_type, parquet=False):
    """Druid's value of an Impala-printed value; `parquet`: the data files are Parquet, which
    Druid's Parquet reader (ParquetGroupConverter) reads with its own quirks: a date is
    epoch millis (days * 86400000), not "YYYY-MM-DD"."""
    if v is None:
        return None
    if iceberg_type in ("timestamp", "timestamp_ns"):
        return impala_ts_to_millis(v)
    if iceberg_type.startswith("decimal") or iceberg_type in ("float", "double"):
        return decimal.Decimal(str(v))
    if iceberg_type == "date" and parquet:
        return (datetime.date.fromisoformat(v) - datetime.date(1970, 1, 1)).days * 86400000
    return v  # int, long, boolean, string, date ("YYYY-MM-DD")


def data_formats(table_dir):
    """The data file formats of a table directory (by extension, outside metadata/); a file
    whose name tells no format (Impala's "000000_0") is read the way Druid reads it, with
    the spec's inputFormat - parquet in these specs."""
    out = set()
    for root, _, files in os.walk(table_dir):
        if os.sep + "metadata" in root:
            continue
        for f in files:
            ext = f.rsplit(".", 1)[-1].lower() if "." in f else ""
            if "delete" in f:
                continue
            if ext in ("parquet", "orc", "avro"):
                out.add(ext)
            elif ext == "parq" or ext == "":
                out.add("parquet")
    return out


def normalize(row, float_cols):
    out = {}
    for k, v in row.items():
        if k in float_cols and v is not None:
            v = round(float(v), 5)
        elif isinstance(v, decimal.Decimal):
            v = decimal.Decimal(v).normalize()
        out[k] = v
    return json.dumps(out, sort_keys=True, default=str)


# ---- the tests ---------------------------------------------------------------------

HC = os.path.join(IMPALA, "hadoop_catalog")
ICE = os.path.join(HC, "ice")


def test_v1_tables(tmp):
    for table in ["iceberg_v2_no_deletes", "iceberg_timestamp_part", "iceberg_alltypes_part"]:
        tdir = os.path.join(ICE, table)
        spec = write_spec(tmp, table, HC, "ice", table, {"column": "x", "missingValue": "2000"})
        plan = json.loads(run("plan", "--spec", spec, *table_remaps(tdir)).stdout)
        on_disk = sorted(os.path.abspath(os.path.join(d, f))
                         for d, _, fs in os.walk(tdir) for f in fs
                         if os.sep + "metadata" not in d[len(tdir):] and
                         not f.startswith(".") and not f.endswith(".crc"))
        check(plan["mode"] == "v1", "%s: mode %s" % (table, plan["mode"]))
        src = plan.get("inputSource", {})
        check(src.get("type") == "local", "%s: source type %s" % (table, src.get("type")))
        check(sorted(src.get("files", [])) == on_disk,
              "%s: v1 files %s != live files %s" % (table, src.get("files"), on_disk))
        check(plan["deleteFiles"] == 0, "%s: delete files in a v1 plan" % table)
        if any(f["decision"] != "raw" for f in plan.get("files", [])):
            # identity-partition-only columns (Impala): a raw read would miss them, so
            # without --serve-url rewrite-spec refuses (test_stage.py checks the message)
            r = run("rewrite-spec", "--spec", spec, *table_remaps(tdir), ok=False)
            check(r.returncode == 1 and "cannot be read raw" in r.stderr and r.stdout == "",
                  "%s: files to materialize, no --serve-url: refused (%s)" % (table, r.stderr.strip()[-120:]))
            continue
        # rewrite-spec v1: the user's spec with the planned source, inputFormat kept
        out = json.loads(run("rewrite-spec", "--spec", spec, *table_remaps(tdir)).stdout)
        io = out["spec"]["ioConfig"]
        check(io["inputSource"] == src, "%s: rewrite-spec v1 source" % table)
        check(io["inputFormat"] == {"type": "parquet"}, "%s: v1 inputFormat changed" % table)
        check(out["spec"]["dataSchema"]["timestampSpec"] == {"column": "x", "missingValue": "2000"},
              "%s: v1 timestampSpec changed" % table)
    # an empty table (no snapshot): an empty source
    table = "iceberg_uppercase_col"
    spec = write_spec(tmp, table, HC, "ice", table, {"column": "x", "missingValue": "2000"})
    plan = json.loads(run("plan", "--spec", spec, *table_remaps(os.path.join(ICE, table))).stdout)
    check(plan["mode"] == "v1" and plan["inputSource"]["files"] == [] and plan["dataFiles"] == 0,
          "empty table: %s" % plan)
    r = run("read", "--spec", spec, *table_remaps(os.path.join(ICE, table)))
    check(r.stdout == "", "empty table read gives rows")


def tasks_deletes(tdir):
    """The planner's view: data path -> sorted delete descriptions."""
    t = json.loads(run("tasks", tdir, *table_remaps(tdir)).stdout)
    out = {}
    for task in t["tasks"]:
        out[task["data_file"]["path"]] = sorted(
            (d["path"], d["kind"], d["sequence_number"], tuple(d.get("equality_ids", [])))
            for d in task["delete_files"])
    return out


KIND = {"POSITION_DELETES": "position_deletes", "EQUALITY_DELETES": "equality_deletes"}

# iceberg_v2_delete_equality_nulls is not here: its delete file has 2 records where its
# manifest entry says 1 (corpus/test_scan_oracles.py SIZE_MISMATCH), a read error.
V2_TABLES = ["iceberg_v2_delete_positional", "iceberg_v2_delete_equality",
             "iceberg_v2_delete_equality_partitioned",
             "iceberg_v2_delete_pos_and_multi_eq_ids", "iceberg_v2_delete_both_eq_and_pos",
             "iceberg_v2_positional_not_all_data_files_have_delete_files",
             "iceberg_v2_equality_delete_schema_evolution",
             "iceberg_v2_positional_update_all_rows"]


def test_v2_tables(tmp):
    for table in V2_TABLES:
        tdir = os.path.join(ICE, table)
        remaps = table_remaps(tdir)
        spec = write_spec(tmp, table, HC, "ice", table, {"column": "x", "missingValue": "2000"})
        plan = json.loads(run("plan", "--spec", spec, *remaps).stdout)
        check(plan["mode"] == "v2", "%s: mode %s" % (table, plan["mode"]))
        planner = tasks_deletes(tdir)
        common = plan.get("splitCommon", {})
        check("tableSchemaJson" not in json.dumps(plan.get("splits", [])),
              "%s: the schema is in splitCommon only, not repeated per split" % table)
        splits = [dict(common, **s) for s in plan.get("splits", [])]
        check(sorted(s["dataFilePath"] for s in splits) == sorted(planner),
              "%s: split data files differ from the planner's" % table)
        for s in splits:
            check(s["type"] == "icebergFileTask" and s["tableName"] == table and
                  s["tableNamespace"] == "ice" and s["fileFormat"] == "PARQUET",
                  "%s: split header %s" % (table, s["dataFilePath"]))
            mine = sorted((d["path"], KIND[d["content"]], d["sequenceNumber"],
                           tuple(d["equalityFieldIds"])) for d in s["deleteFiles"])
            check(mine == planner.get(s["dataFilePath"]),
                  "%s: deletes of %s: %s != %s" % (table, s["dataFilePath"], mine,
                                                   planner.get(s["dataFilePath"])))
            schema = json.loads(s["tableSchemaJson"])
            check(schema.get("type") == "struct", "%s: tableSchemaJson" % table)
        # every split read alone == the whole read
        whole_text = run("read", "--spec", spec, *remaps).stdout
        whole = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows_of(whole_text))
        # the same bytes whatever the read budget (whole chunks, or windows below a chunk)
        for mem in ("0", "4K", "64K"):
            check(run("read", "--spec", spec, "--stream-memory", mem, *remaps).stdout == whole_text,
                  "%s: read --stream-memory %s differs from the default" % (table, mem))
        parts = []
        for i, s in enumerate(splits):
            sp = os.path.join(tmp, "%s.split%d.json" % (table, i))
            with open(sp, "w") as f:
                json.dump(s, f)
            parts += rows_of(run("read", "--spec", spec, "--split", sp, *remaps).stdout)
        check(sorted(json.dumps(r, sort_keys=True, default=str) for r in parts) == whole,
              "%s: split-by-split rows differ from the whole read" % table)
        # rewrite-spec v2
        out = json.loads(run("rewrite-spec", "--spec", spec, "--rows", "--serve-url",
                             "http://127.0.0.1:9/", *remaps).stdout)
        io = out["spec"]["ioConfig"]
        check(io["inputSource"] == {"type": "http", "uris": ["http://127.0.0.1:9/splits/%d" % i
                                                           for i in range(len(splits))]},
              "%s: v2 http source %s" % (table, io["inputSource"]))
        check(io["inputFormat"] == {"type": "json", "keepNullColumns": True,
                                    "featureSpec": {"ALLOW_NON_NUMERIC_NUMBERS": True}},
              "%s: v2 inputFormat %s" % (table, io["inputFormat"]))
        ds = out["spec"]["dataSchema"]
        check(ds["timestampSpec"] == {"column": "__time", "format": "millis"},
              "%s: v2 timestampSpec" % table)
        check(ds["dimensionsSpec"].get("dimensionExclusions") == ["x"],
              "%s: v2 exclusions %s" % (table, ds["dimensionsSpec"]))
    # v2 without --serve-url is a clear error
    table = V2_TABLES[0]
    spec = os.path.join(tmp, table + ".spec.json")
    r = run("rewrite-spec", "--spec", spec, *table_remaps(os.path.join(ICE, table)), ok=False)
    check(r.returncode == 1 and "--serve-url" in r.stderr, "v2 rewrite without --serve-url")


def snapshot_time_iso(tdir, snapshot_id):
    for s in current_metadata(tdir).get("snapshots", []):
        if s["snapshot-id"] == snapshot_id:
            t = datetime.datetime.fromtimestamp(s["timestamp-ms"] / 1000, datetime.timezone.utc)
            return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (s["timestamp-ms"] % 1000)
    return None


def test_rows_vs_expected(tmp):
    missing_ms = 981173106000  # 2001-02-03T04:05:06Z
    done = 0
    for side in sorted(glob.glob(os.path.join(EXPECTED, "*.json"))):
        if side.endswith("index.json"):
            continue
        with open(side) as f:
            meta = json.load(f)
        tdir_rel = meta.get("table_dir", "")
        if not meta.get("rows_file") or not meta.get("complete_columns", True):
            continue
        if not tdir_rel.startswith("hadoop_catalog/ice/") and not tdir_rel.startswith("iceberg_v3/"):
            continue
        if "orc" in tdir_rel or "avro" in tdir_rel:
            continue  # the v2 reader reads Parquet data files
        if tdir_rel.endswith("iceberg_v2_delete_equality_nulls"):
            continue  # refused: a delete file disagrees with its manifest (see V2_TABLES)
        tdir = os.path.join(IMPALA, tdir_rel)
        table = os.path.basename(tdir_rel)
        warehouse, ns = (HC, "ice") if tdir_rel.startswith("hadoop_catalog/") else (IMPALA, "iceberg_v3")
        cols = {c["name"]: c["iceberg_type"] for c in meta["columns"]}
        ts_col = next((n for n, t in cols.items() if t == "timestamp"), None)
        long_col = next((n for n, t in cols.items() if t == "long"), None)
        if ts_col:
            ts_spec = {"column": ts_col, "format": "auto", "missingValue": "2001-02-03T04:05:06Z"}
        elif long_col:
            ts_spec = {"column": long_col, "format": "millis",
                       "missingValue": "2001-02-03T04:05:06Z"}
        else:
            ts_spec = {"column": "no_such_column", "missingValue": "2001-02-03T04:05:06Z"}
        extra = {}
        if meta.get("snapshot_selection") == "time_travel":
            iso = snapshot_time_iso(tdir, meta["snapshot_id"])
            if not iso:
                continue
            extra["snapshotTime"] = iso
        spec = write_spec(tmp, os.path.basename(side)[:-5], warehouse, ns, table, ts_spec, extra)
        got = rows_of(run("read", "--spec", spec, *table_remaps(tdir)).stdout)
        with open(os.path.join(EXPECTED, meta["rows_file"])) as f:
            expected_rows = [json.loads(l, parse_float=decimal.Decimal) for l in f if l.strip()]
        fmts = data_formats(tdir)
        if "date" in cols.values() and len(fmts) > 1:
            continue  # a date's value depends on each row's file format: not comparable here
        parquet = fmts == {"parquet"}
        want = []
        for r in expected_rows:
            d = {k: druid_value(v, cols[k], parquet) for k, v in r.items()}
            t = d.get(ts_spec["column"])
            d["__time"] = t if t is not None else missing_ms
            want.append(d)
        floats = {n for n, t in cols.items() if t in ("float", "double")}
        g = sorted(normalize(r, floats) for r in got)
        w = sorted(normalize(r, floats) for r in want)
        check(g == w, "%s: rows differ:\n got  %s\n want %s" % (os.path.basename(side), g[:5], w[:5]))
        done += 1
    check(done >= 12, "only %d oracles compared" % done)
    print("compared %d oracles" % done)


def iso_to_millis(s):
    """'2024-12-26T02:30:45.123456+00:00' -> epoch millis (floor)."""
    return impala_ts_to_millis(s.replace("T", " ").split("+")[0])


def test_nested_table(tmp):
    """A v3 table with a struct column (in the newer file, from the Parquet file; in the
    older one, the struct's initial-default) and a timestamptz column with a default:
    read gives the `scan` rows with Druid's conversions applied."""
    tdir = os.path.join(IMPALA, "iceberg_v3", "test_complex_default")
    if not os.path.isdir(tdir):
        return
    spec = write_spec(tmp, "complex", IMPALA, "iceberg_v3", "test_complex_default",
                      {"column": "ts_tz", "format": "millis"})
    got = rows_of(run("read", "--spec", spec, *table_remaps(tdir)).stdout)
    scan = rows_of(run("scan", tdir, *table_remaps(tdir)).stdout)
    want = []
    for r in scan:
        d = dict(r)
        d["ts_tz"] = iso_to_millis(r["ts_tz"]) if r["ts_tz"] else None
        d["__time"] = d["ts_tz"]
        want.append(d)
    key = lambda r: json.dumps(r, sort_keys=True, default=str)
    check(sorted(map(key, got)) == sorted(map(key, want)) and len(got) == 2,
          "nested table: %s != %s" % (got, want))


def main():
    if not os.path.isdir(ICE):
        print("skipped: the corpus is not at %s" % CORPUS)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        for t in (test_v1_tables, test_v2_tables, test_rows_vs_expected, test_nested_table):
            try:
                t(tmp)
            except AssertionError as e:
                check(False, "%s: %s" % (t.__name__, e))
    print("%d checks, %d failed" % (checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
