"""`icedruid read --prune-row-groups`: Parquet row-group pruning by the icebergFilter.

A table with one Parquet data file of 1,000 rows sorted by `event_ts` (one minute apart) in
N = 10 row groups of 100 rows (tests/tools/icewriter, with column statistics). A Druid
`interval` filter covering rows 300..399 (exactly row group 3):
  - DuckDB (parquet_metadata) sees 10 row groups in the file and, by SQL on the same file,
    the 100 ids whose event_ts lies in the interval;
  - `read --stats --prune-row-groups` reads <= 1/N of the row groups (1 read, 9 skipped in
    --stats) and emits exactly DuckDB's 100 rows;
  - without --prune-row-groups, `read` keeps Druid's behaviour: the whole file (1,000 rows,
    10 row groups read, 0 skipped);
  - an interval straddling row groups 5 and 6 reads exactly those two.
Skips (77) when the npm packages (DuckDB) are absent."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
NODE_DIR = os.path.join(ROOT, "tests", "node")
BASE_US = 1_717_200_000_000_000  # 2024-06-01T00:00:00Z
MIN_US = 60_000_000

failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def iso(us):
    import datetime
    return datetime.datetime.fromtimestamp(us / 1e6, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def duckdb(sql):
    js = ("const { DuckDBInstance } = await import('@duckdb/node-api');"
          "const i = await DuckDBInstance.create(':memory:'); const c = await i.connect();"
          "const r = await c.runAndReadAll(process.argv[1]);"
          "console.log(JSON.stringify(r.getRowObjectsJson()));")
    out = subprocess.run(["node", "--input-type=module", "-e", js, sql], cwd=NODE_DIR,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def read(spec, *extra):
    r = subprocess.run([ICEDRUID, "read", "--spec", spec, "--stats", *extra], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError("icedruid read failed: " + r.stderr.strip())
    rows = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    stats = json.loads([l for l in r.stderr.splitlines() if l.startswith("{")][-1])
    return rows, stats


def write_spec(tmp, warehouse, start_us, end_us):
    spec = {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": "t", "timestampSpec": {"column": "event_ts", "format": "auto"},
                       "dimensionsSpec": {"dimensions": [{"type": "long", "name": "id"}, "v"]},
                       "granularitySpec": {"segmentGranularity": "day", "queryGranularity": "none",
                                           "rollup": False}},
        "ioConfig": {"type": "index_parallel", "inputSource": {
            "type": "iceberg", "tableName": "t", "namespace": "db",
            "icebergCatalog": {"type": "local", "warehousePath": warehouse, "catalogProperties": {}},
            "icebergFilter": {"type": "interval", "filterColumn": "event_ts",
                              "intervals": ["%s/%s" % (iso(start_us), iso(end_us))]},
            "warehouseSource": {"type": "local"}}, "inputFormat": {"type": "parquet"}},
        "tuningConfig": {"type": "index_parallel", "maxParseExceptions": 0}}}
    path = os.path.join(tmp, "spec-%d.json" % start_us)
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def main():
    nm = os.path.join(NODE_DIR, "node_modules", "@duckdb", "node-api")
    if not os.path.isdir(nm):
        print("SKIP: tests/node/node_modules lacks @duckdb/node-api (scripts/node-deps.sh)")
        return 77
    tmp = tempfile.mkdtemp(prefix="icd-prune-")
    warehouse = os.path.join(tmp, "warehouse")
    root = os.path.join(warehouse, "db", "t")
    schema = Schema([NestedField(1, "id", "long", True), NestedField(2, "event_ts", "timestamptz"),
                     NestedField(3, "v", "string")])
    t = Table.create(root, root, schema)
    rows = [{"id": i, "event_ts": BASE_US + i * MIN_US, "v": "v%04d" % i} for i in range(1000)]
    t.append(t.write_data(rows, row_group_rows=100))
    data = [os.path.join(root, "data", f) for f in os.listdir(os.path.join(root, "data"))]
    check(len(data) == 1, "one data file")
    q = data[0].replace("'", "''")
    ngroups = duckdb("SELECT count(DISTINCT row_group_id)::INT n FROM parquet_metadata('%s')" % q)[0]["n"]
    check(ngroups == 10, "DuckDB sees 10 row groups (%s)" % ngroups)

    lo, hi = BASE_US + 300 * MIN_US, BASE_US + 400 * MIN_US
    spec = write_spec(tmp, warehouse, lo, hi)
    want = sorted(r["id"] for r in duckdb(
        "SELECT id::INT id FROM read_parquet('%s') WHERE event_ts >= to_timestamp(%d) AND "
        "event_ts < to_timestamp(%d)" % (q, lo // 1_000_000, hi // 1_000_000)))
    check(want == list(range(300, 400)), "DuckDB: ids 300..399 in the interval")

    got, st = read(spec, "--prune-row-groups")
    check(st["row_groups_read"] <= ngroups // 10, "pruned read: %d row group(s) read <= 1/10 of %d"
          % (st["row_groups_read"], ngroups))
    check(st["row_groups_read"] + st["row_groups_skipped"] == ngroups,
          "pruned read: read + skipped = %d" % ngroups)
    check(sorted(r["id"] for r in got) == want, "pruned read emits DuckDB's rows (%d)" % len(got))
    check(st["rows_read"] == 100 and st["rows_emitted"] == 100, "pruned read: 100 rows read and emitted")

    got, st = read(spec)
    check(len(got) == 1000 and st["row_groups_read"] == 10 and st["row_groups_skipped"] == 0,
          "without --prune-row-groups the whole file is read (Druid's behaviour)")

    spec2 = write_spec(tmp, warehouse, BASE_US + 550 * MIN_US, BASE_US + 650 * MIN_US)
    got, st = read(spec2, "--prune-row-groups")
    check(st["row_groups_read"] == 2 and st["row_groups_skipped"] == 8,
          "a straddling interval reads row groups 5 and 6 only (%d read)" % st["row_groups_read"])
    check(sorted(r["id"] for r in got) == list(range(500, 700)), "... and their 200 rows")

    import shutil
    shutil.rmtree(tmp)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
