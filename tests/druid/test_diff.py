"""`icedruid diff` against an independent computation on multi-snapshot tables.

For every table below and every pair of snapshots (A, B) on the current snapshot's
ancestry (every pair for short histories; consecutive pairs, first->last and a few long
jumps for long ones, and for every table under ASan/UBSan), the test

  1. scans A and B in full (`icedruid scan TABLE --snapshot-id X`, oracle-tested against
     Impala/DuckDB results elsewhere), projects A's rows onto B's schema by field id,
  2. computes rows in A not in B and rows in B not in A as multisets (a row = all its
     column values), takes each row's Druid time from the timestampSpec rules written here
     (timestamp strings -> millis, dates at midnight UTC, long/int with "posix" = seconds,
     "millis" = milliseconds, null or unparseable = not in Druid) and groups them by the
     granularity's UTC buckets (also written here),
  3. runs `icedruid diff --spec SPEC --from-snapshot A --to-snapshot B --granularity G` and
     requires: every interval with a removed row is in replaceIntervals with exactly that
     many rowsRemoved (or -1, "unknown", decided from statistics); every interval with
     added rows only is in appendIntervals with exactly that many rowsAdded; nothing else,
     except the documented conservative case: an interval in replaceIntervals with
     rowsRemoved 0 whose added rows sit next to rewritten (moved) rows.

Tables: Impala corpus tables with equality deletes, position deletes, deletion vectors and
a Spark compaction (replace); icebird tables (updates, partition-scoped deletes, schema
evolution, 30 snapshots); and fixtures written here with tests/tools/icewriter for what the
corpus lacks: overwrite removing a whole file (copy-on-write), a delete snapshot removing a
file, a replace snapshot (compaction) that must give no interval, a row deleted and re-added
identically, an equality delete that must not touch a newer data file, files decided from
column bounds. Also: error cases (unknown snapshot, A after B, A == B).
Exit 77 when the corpus is absent.
"""
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
# two corpus tables record delete-file facts that are not the files' (see
# tests/corpus/test_scan_oracles.py SIZE_MISMATCH); this test is not about that
os.environ["ICEDRUID_SIZE_MISMATCH"] = "warn"

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SHARED = os.environ.get("ICD_SHARED", "../shared")
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))

failures = []
stats = collections.Counter()
where = collections.defaultdict(set)  # conservative case -> tables where it happened


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


# ---- time arithmetic (independent of icedruid) ------------------------------------------

def days_from_civil(y, m, d):
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


TS_RE = re.compile(r"^([+-]?\d{4,})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?)?(\+00:00|Z)?$")


def text_ms(s):
    m = TS_RE.match(s)
    if not m:
        return None
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    ms = days_from_civil(y, mo, d) * 86400000
    if m.group(4):
        ms += (int(m.group(4)) * 3600 + int(m.group(5)) * 60 + int(m.group(6))) * 1000
        frac = (m.group(7) or "0")[:3].ljust(3, "0")
        ms += int(frac)  # truncation of the sub-millisecond digits = floor (positive part)
    return ms


def text_micros(s):
    """The epoch micros of a scanned timestamp text (6 or 9 fraction digits; nanos floored)."""
    m = TS_RE.match(s)
    if not m:
        return None
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    us = days_from_civil(y, mo, d) * 86400000000
    if m.group(4):
        us += (int(m.group(4)) * 3600 + int(m.group(5)) * 60 + int(m.group(6))) * 1000000
        us += int((m.group(7) or "0")[:6].ljust(6, "0"))
    return us


def reader_value(micros, file_format):
    """What Druid's reader for the data file's format gives for a timestamp (micros) column:
    ParquetGroupConverter (TIMESTAMP_MICROS) millis truncated toward zero, OrcStructConverter
    (OrcTimestamp.getTime) millis floored, Avro (a GenericRecord without logical-type
    conversion) the raw long of micros."""
    if file_format == "PARQUET":
        return -(-micros // 1000) if micros < 0 else micros // 1000
    if file_format == "ORC":
        return micros // 1000
    if file_format == "AVRO":
        return micros
    raise ValueError(file_format)


def druid_ms(value, itype, fmt, file_format="PARQUET"):
    """The Druid time of a scanned value, or None (null / unparseable: not in Druid)."""
    if value is None:
        return None
    if itype in ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        if itype.endswith("_ns"):
            return text_ms(value)
        us = text_micros(value)
        if us is None:
            return None
        v = reader_value(us, file_format)
        return {"millis": v, "auto": v, "posix": v * 1000, "micro": -(-v // 1000) if v < 0 else v // 1000}[fmt]
    if itype == "date":
        return text_ms(value) if fmt == "auto" else None
    if itype in ("int", "long"):
        v = int(value)
        return {"millis": v, "auto": v, "posix": v * 1000}[fmt]
    raise ValueError("no Druid time rule for type " + itype)


def data_format(table_dir):
    """The one format of a table's data files, from their magic bytes (Druid reads a table
    with one inputFormat)."""
    found = set()
    for p in glob.glob(os.path.join(table_dir, "data", "**", "*"), recursive=True):
        if not os.path.isfile(p):
            continue
        head = open(p, "rb").read(4)
        found.add("PARQUET" if head == b"PAR1" else "ORC" if head[:3] == b"ORC"
                  else "AVRO" if head == b"Obj\x01" else "PUFFIN" if head == b"PFA1" else "?")
    found.discard("PUFFIN")
    if len(found) != 1:
        raise ValueError("%s: data files in %s" % (table_dir, sorted(found)))
    return found.pop()


def bucket(ms, gran):
    fixed = {"SECOND": 1000, "MINUTE": 60000, "HOUR": 3600000, "DAY": 86400000}
    if gran in fixed:
        step = fixed[gran]
        s = ms // step * step
        return s, s + step
    days = ms // 86400000
    y, m, _ = civil_from_days(days)
    if gran == "MONTH":
        ny, nm = (y + 1, 1) if m == 12 else (y, m + 1)
        return days_from_civil(y, m, 1) * 86400000, days_from_civil(ny, nm, 1) * 86400000
    if gran == "YEAR":
        return days_from_civil(y, 1, 1) * 86400000, days_from_civil(y + 1, 1, 1) * 86400000
    raise ValueError(gran)


def instant_text(ms):
    days, rem = divmod(ms, 86400000)
    y, m, d = civil_from_days(days)
    year = ("-%04d" % -y) if y < 0 else ("%04d" % y)  # Joda: no '+' past 9999
    return "%s-%02d-%02dT%02d:%02d:%02d.%03dZ" % (year, m, d, rem // 3600000, rem // 60000 % 60,
                                                rem // 1000 % 60, rem % 1000)


def interval_text(b):
    return instant_text(b[0]) + "/" + instant_text(b[1])


# ---- tables --------------------------------------------------------------------------

def current_metadata(table_dir):
    md = os.path.join(table_dir, "metadata")
    hint = os.path.join(md, "version-hint.text")
    if os.path.exists(hint):
        v = open(hint).read().strip()
        for name in ("v%s.metadata.json" % v, "%s.metadata.json" % v):
            if os.path.exists(os.path.join(md, name)):
                return json.load(open(os.path.join(md, name)))
    files = glob.glob(os.path.join(md, "*.metadata.json"))

    def version(p):
        m = re.match(r"v?(\d+)", os.path.basename(p))
        return int(m.group(1)) if m else -1
    return json.load(open(max(files, key=version)))


def snapshot_chain(md):
    by_id = {s["snapshot-id"]: s for s in md.get("snapshots", [])}
    chain, cur = [], md.get("current-snapshot-id")
    while cur is not None and cur in by_id and cur != -1:
        chain.append(by_id[cur])
        cur = by_id[cur].get("parent-snapshot-id")
    return list(reversed(chain))


def snapshot_schema(md, snap):
    schemas = {s["schema-id"]: s for s in md.get("schemas", [])}
    sid = snap.get("schema-id", md.get("current-schema-id"))
    return schemas.get(sid) or schemas[md["current-schema-id"]]


def run(args, check=True):
    p = subprocess.run(args, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p


class Case:
    def __init__(self, name, table_dir, columns, remap=None, pairs="all", threads_check=False):
        self.name = name
        self.file_format = data_format(table_dir)
        self.threads_check = threads_check  # also run --threads 2: same output
        self.table_dir = table_dir
        self.columns = columns  # [(ts column, format, [granularities])]
        self.md = current_metadata(table_dir)
        self.remap = remap if remap is not None else "%s=%s" % (self.md["location"], table_dir)
        self.pairs = pairs
        self.scans = {}
        self.specs = {}

    def scan(self, snap_id):
        if snap_id not in self.scans:
            out = run([ICEDRUID, "scan", self.table_dir, "--snapshot-id", str(snap_id),
                       "--remap", self.remap]).stdout
            self.scans[snap_id] = [json.loads(line) for line in out.splitlines() if line]
        return self.scans[snap_id]

    def spec(self, tmp, column, fmt):
        key = (column, fmt)
        if key not in self.specs:
            wh = os.path.dirname(os.path.dirname(self.table_dir))
            doc = {"type": "index_parallel", "spec": {
                "dataSchema": {"dataSource": self.name,
                               "timestampSpec": {"column": column, "format": fmt},
                               "dimensionsSpec": {"dimensions": []},
                               "granularitySpec": {"segmentGranularity": "DAY", "rollup": False}},
                "ioConfig": {"type": "index_parallel", "inputSource": {
                    "type": "iceberg", "tableName": os.path.basename(self.table_dir),
                    "namespace": os.path.basename(os.path.dirname(self.table_dir)),
                    "icebergCatalog": {"type": "local", "warehousePath": wh},
                    "warehouseSource": {"type": "local"}},
                    "inputFormat": {"type": "parquet"}}}}
            path = os.path.join(tmp, "%s-%s-%s.spec.json" % (self.name, column, fmt))
            with open(path, "w") as f:
                json.dump(doc, f)
            self.specs[key] = path
        return self.specs[key]


def project(rows, schema_from, schema_to):
    """Rows of snapshot A in B's schema: by field id, B's names; columns B lacks dropped;
    columns only B has are left out on both sides (compare with project_self)."""
    ids_to = {f["id"]: f["name"] for f in schema_to["fields"]}
    names = [(f["name"], ids_to[f["id"]]) for f in schema_from["fields"] if f["id"] in ids_to]
    return [{bn: r.get(an) for an, bn in names} for r in rows]


def common_names(schema_a, schema_b):
    ids_a = {f["id"] for f in schema_a["fields"]}
    return [f["name"] for f in schema_b["fields"] if f["id"] in ids_a]


def row_key(r, names):
    return json.dumps([r.get(n) for n in names], sort_keys=True)


def oracle(case, a, b, column, fmt, gran):
    sa, sb = snapshot_schema(case.md, a), snapshot_schema(case.md, b)
    names = common_names(sa, sb)
    itype = next(f["type"] for f in sb["fields"] if f["name"] == column)
    rows_a = project(case.scan(a["snapshot-id"]), sa, sb)
    rows_b = case.scan(b["snapshot-id"])
    ca = collections.Counter(row_key(r, names) for r in rows_a)
    cb = collections.Counter(row_key(r, names) for r in rows_b)
    idx = names.index(column) if column in names else None

    def grouped(counter):
        out = collections.Counter()
        for key, n in counter.items():
            if idx is None:
                continue
            ms = druid_ms(json.loads(key)[idx], itype, fmt, case.file_format)
            if ms is not None:
                out[interval_text(bucket(ms, gran))] += n
        return out
    return grouped(ca - cb), grouped(cb - ca)


def compare(case, a, b, column, fmt, gran, tmp):
    label = "%s %s->%s %s/%s/%s" % (case.name, a["snapshot-id"], b["snapshot-id"], column, fmt, gran)
    removed, added = oracle(case, a, b, column, fmt, gran)
    args = [ICEDRUID, "diff", "--spec", case.spec(tmp, column, fmt), "--remap", case.remap,
            "--from-snapshot", str(a["snapshot-id"]), "--to-snapshot", str(b["snapshot-id"]),
            "--granularity", gran]
    out = run(args).stdout
    d = json.loads(out)
    if case.threads_check:
        stats["--threads 2 runs"] += 1
        if run(args + ["--threads", "2"]).stdout != out:
            fail(label + ": --threads 2 gives a different output")
    stats["diffs"] += 1
    if d["fromSnapshot"] != a["snapshot-id"] or d["toSnapshot"] != b["snapshot-id"]:
        fail(label + ": snapshot ids in the output")
    rep, app = d["replaceIntervals"], d["appendIntervals"]
    if rep != sorted(rep) or app != sorted(app) or set(rep) & set(app):
        fail(label + ": lists not sorted or not disjoint")

    def conservative(kind, iv):
        stats["conservative: " + kind] += 1
        where[kind].add(case.name)
        if os.environ.get("ICD_DIFF_VERBOSE"):
            print("conservative (%s): %s %s" % (kind, label, iv))

    for iv in sorted(set(removed) | set(added) | set(rep) | set(app)):
        o_rem, o_add = removed.get(iv, 0), added.get(iv, 0)
        d_rem, d_add = d["rowsRemoved"].get(iv), d["rowsAdded"].get(iv, 0)
        if iv in rep:
            if d_rem == -1:  # decided from statistics: the count is unknown
                stats["rowsRemoved unknown (statistics)"] += 1
                if o_rem == 0:
                    conservative("statistics, no live row removed", iv)
                continue
            if d_rem == o_rem and d_add in (o_add, -1):
                if o_rem:
                    stats["replace intervals matched"] += 1
                else:
                    conservative("added rows beside rewritten rows", iv)
                    if not o_add:
                        fail("%s: EXTRA replace %s with nothing added or removed" % (label, iv))
                continue
            # both counts larger by the same amount: rows deleted and identical rows added
            # again, not matched (removals by delete files are not hashed)
            if d_rem > o_rem and d_rem - o_rem == d_add - o_add:
                conservative("identical rows deleted and added again", iv)
                continue
            fail("%s: %s rowsRemoved %s rowsAdded %s, expected %d / %d"
                 % (label, iv, d_rem, d_add, o_rem, o_add))
        elif o_rem:
            fail("%s: MISSED %s (%d rows removed)" % (label, iv, o_rem))
        elif iv in app:
            if d_add in (o_add, -1) and o_add:
                stats["append intervals matched"] += 1
            else:
                fail("%s: append %s rowsAdded %s, expected %d" % (label, iv, d_add, o_add))
        else:
            fail("%s: added interval %s (%d rows) not reported" % (label, iv, o_add))
    return d


def pairs_of(case, chain):
    n = len(chain)
    # Under ASan/UBSan (about 8x slower) every case takes the reduced set below, which still
    # holds every consecutive pair and first->last; the release build checks all pairs.
    if case.pairs == "all" and os.environ.get("ICD_SANITIZE") not in ("1", "ON", "TRUE"):
        return [(i, j) for i in range(n) for j in range(i + 1, n)]
    out = {(i, i + 1) for i in range(n - 1)} | {(0, n - 1)}
    out |= {(i, min(i + 5, n - 1)) for i in range(0, n - 1, 4)}
    return sorted(out)


def run_case(case, tmp):
    chain = snapshot_chain(case.md)
    for i, j in pairs_of(case, chain):
        for column, fmt, grans in case.columns:
            for gran in grans:
                try:
                    compare(case, chain[i], chain[j], column, fmt, gran, tmp)
                except RuntimeError as e:
                    fail("%s: %s" % (case.name, e))
    stats["tables"] += 1


# ---- fixtures (icewriter) ---------------------------------------------------------------

def build_fixture(root):
    from icewriter.iceberg import Added, NestedField, PartitionSpec, Schema, Table
    loc = "/tmp/icedruid-diff-fixture/db/ops"
    path = os.path.join(root, "db", "ops")
    schema = Schema([NestedField(1, "id", "long", True), NestedField(2, "ts", "timestamptz", False),
                     NestedField(3, "cat", "string", False), NestedField(4, "v", "long", False)])
    t = Table.create(path, loc, schema, PartitionSpec.unpartitioned())
    H = 3600 * 1000000
    day = 1717200000000000  # 2024-06-01T00:00:00Z in micros

    def rows(ids, start_us, step_us, v=0):
        return [{"id": i, "ts": start_us + k * step_us, "cat": "c%d" % (i % 3), "v": v}
                for k, i in enumerate(ids)]
    f1 = t.write_data(rows(range(0, 100), day, H // 10), name="f1")        # 06-01 hours 0..9
    t.append(f1)
    f2 = t.write_data(rows(range(100, 200), day + 24 * H, H // 10), name="f2")  # 06-02 0..9
    t.append(f2)
    f3 = t.write_data(rows(range(200, 300), day + 48 * H + 5 * H, H // 200), name="f3")  # 06-03T05 only
    t.append(f3)
    pos = t.write_position_deletes([(f1[0], 5), (f1[0], 15)])
    t.row_delta(deletes=[pos])                                           # delete: 2 rows of f1
    eq = t.write_equality_deletes([{"id": 150}, {"id": 250}], ["id"])
    t.row_delta(deletes=[eq])                                            # delete: ids 150, 250
    f4 = t.write_data(rows([150, 250], day + 72 * H, H, v=2), name="f4")    # newer than eq: kept
    t.append(f4)
    # copy-on-write delete of ids 100..109 (06-02 hour 0): f2 replaced by f5
    keep = [r for r in rows(range(100, 200), day + 24 * H, H // 10) if r["id"] >= 110 and r["id"] != 150]
    f5 = t.write_data(keep, name="f5")
    t.commit("overwrite", add=f5, remove=f2)
    t.delete_files(f3)                                                   # delete: all of f3
    # compaction: f1 (with its position deletes) and f4 rewritten into f6, deletes dropped
    live1 = [r for r in rows(range(0, 100), day, H // 10) if r["id"] not in (5, 15)]
    f6 = t.write_data(live1 + rows([150, 250], day + 72 * H, H, v=2), name="f6")
    t.commit("replace", add=[Added(f, data_sequence_number=t.last_sequence_number) for f in f6],
             remove=f1 + f4 + [pos])
    # a row deleted and the identical row re-inserted
    pos2 = t.write_position_deletes([(f6[0], 20)])
    t.row_delta(deletes=[pos2])
    f7 = t.write_data([live1[20]], name="f7")                            # the same row again
    t.append(f7)
    # appended rows only (a new day), then an equality delete removing rows of two files
    f8 = t.write_data(rows(range(300, 310), day + 96 * H, H), name="f8")
    t.append(f8)
    eq2 = t.write_equality_deletes([{"id": 301}, {"id": 21}], ["id"])
    t.row_delta(deletes=[eq2])
    return path, "%s=%s" % (loc, path)


def error_cases(tmp, case):
    chain = snapshot_chain(case.md)
    spec = case.spec(tmp, "ts", "auto")
    base = [ICEDRUID, "diff", "--spec", spec, "--remap", case.remap]
    a, b = str(chain[1]["snapshot-id"]), str(chain[3]["snapshot-id"])
    for args, want in [(["--from-snapshot", "12345"], "no such snapshot"),
                       (["--from-snapshot", a, "--to-snapshot", "999"], "no such snapshot"),
                       (["--from-snapshot", b, "--to-snapshot", a], "comes after"),
                       (["--from-snapshot", "x1"], "snapshot id")]:
        p = run(base + args, check=False)
        lines = p.stderr.strip().splitlines()
        stats["error cases"] += 1
        if p.returncode == 0 or len(lines) != 1 or want not in lines[0]:
            fail("error case %s: rc %d, stderr %r" % (args, p.returncode, p.stderr))
    d = json.loads(run(base + ["--from-snapshot", b, "--to-snapshot", b]).stdout)
    if d["replaceIntervals"] or d["appendIntervals"] or d["filesRead"]:
        fail("A == B must give an empty diff: %s" % d)
    # B defaults to the current snapshot; the spec's granularity (DAY) is the default
    d = json.loads(run(base + ["--from-snapshot", a]).stdout)
    if d["toSnapshot"] != chain[-1]["snapshot-id"] or d["granularity"] != "DAY":
        fail("defaults: %s" % d)
    # the fixture's overwrite and compaction: specific expectations written by hand
    i_over = next(i for i, s in enumerate(chain) if s["summary"]["operation"] == "overwrite")
    d = json.loads(run(base + ["--from-snapshot", str(chain[i_over - 1]["snapshot-id"]),
                               "--to-snapshot", str(chain[i_over]["snapshot-id"]),
                               "--granularity", "HOUR"]).stdout)
    if d["replaceIntervals"] != ["2024-06-02T00:00:00.000Z/2024-06-02T01:00:00.000Z"] or \
            d["rowsRemoved"] != {"2024-06-02T00:00:00.000Z/2024-06-02T01:00:00.000Z": 10} or \
            d["appendIntervals"]:
        fail("copy-on-write overwrite: %s" % d)
    i_rep = next(i for i, s in enumerate(chain) if s["summary"]["operation"] == "replace")
    d = json.loads(run(base + ["--from-snapshot", str(chain[i_rep - 1]["snapshot-id"]),
                               "--to-snapshot", str(chain[i_rep]["snapshot-id"])]).stdout)
    if d["replaceIntervals"] or d["appendIntervals"]:
        fail("compaction must change nothing: %s" % d)
    # the delete snapshot removing f3 (one hour, with an equality delete applied): decided
    # from its timestamp bounds without reading it
    i_del = next(i for i, s in enumerate(chain) if i > i_over and s["summary"]["operation"] == "delete")
    d = json.loads(run(base + ["--from-snapshot", str(chain[i_del - 1]["snapshot-id"]),
                               "--to-snapshot", str(chain[i_del]["snapshot-id"]),
                               "--granularity", "HOUR"]).stdout)
    if d["replaceIntervals"] != ["2024-06-03T05:00:00.000Z/2024-06-03T06:00:00.000Z"] or \
            d["filesDecidedByStatistics"] != 1 or d["filesRead"] != 0:
        fail("whole-file delete decided from statistics: %s" % d)
    stats["hand-checked cases"] += 4


def projection_cases(tmp):
    """Phase 2 hashes only the columns Druid's reader keeps (the spec's ColumnsFilter): an
    overwrite that rewrites a file changing only a column the spec does not ingest moves
    rows that are the same rows to Druid - no interval; the same rewrite under a spec that
    ingests the column (schemaless, or a metric on it) replaces the hour it touched."""
    from icewriter.iceberg import NestedField, PartitionSpec, Schema, Table
    loc = "/tmp/icedruid-diff-projection/db/proj"
    path = os.path.join(tmp, "whp", "db", "proj")
    schema = Schema([NestedField(1, "id", "long", True), NestedField(2, "ts", "timestamptz", False),
                     NestedField(3, "cat", "string", False), NestedField(4, "v", "long", False)])
    t = Table.create(path, loc, schema, PartitionSpec.unpartitioned())
    day = 1717200000000000  # 2024-06-01T00:00:00Z in micros
    rows = [{"id": i, "ts": day + i * 60000000, "cat": "c%d" % (i % 3), "v": 1} for i in range(30)]
    f1 = t.write_data(rows, name="f1")
    t.append(f1)
    f2 = t.write_data([dict(r, v=2) if r["id"] == 7 else r for r in rows], name="f2")
    t.commit("overwrite", add=f2, remove=f1)
    md = current_metadata(path)
    chain = snapshot_chain(md)
    a, b = str(chain[0]["snapshot-id"]), str(chain[1]["snapshot-id"])
    hour = "2024-06-01T00:00:00.000Z/2024-06-01T01:00:00.000Z"
    for name, dims, metrics, want in [
            ("dims cat", ["cat"], [], []),
            ("dims cat, metric on v", ["cat"], [{"type": "longSum", "name": "s", "fieldName": "v"}], [hour]),
            ("schemaless", [], [], [hour]),
            ("exclusion of v", {"dimensionExclusions": ["v"]}, [], [])]:
        dspec = dims if isinstance(dims, dict) else {"dimensions": dims}
        doc = {"type": "index_parallel", "spec": {
            "dataSchema": {"dataSource": "proj", "timestampSpec": {"column": "ts", "format": "auto"},
                           "dimensionsSpec": dspec, "metricsSpec": metrics,
                           "granularitySpec": {"segmentGranularity": "HOUR", "rollup": False}},
            "ioConfig": {"type": "index_parallel", "inputSource": {
                "type": "iceberg", "tableName": "proj", "namespace": "db",
                "icebergCatalog": {"type": "local", "warehousePath": os.path.join(tmp, "whp")},
                "warehouseSource": {"type": "local"}},
                "inputFormat": {"type": "parquet"}}}}
        sp = os.path.join(tmp, "proj-%d.spec.json" % len(name))
        with open(sp, "w") as f:
            json.dump(doc, f)
        d = json.loads(run([ICEDRUID, "diff", "--spec", sp, "--remap", "%s=%s" % (loc, path),
                            "--from-snapshot", a, "--to-snapshot", b]).stdout)
        stats["projection cases"] += 1
        if d["replaceIntervals"] != want or d["appendIntervals"]:
            fail("diff projection (%s): want replace %s, got %s" % (name, want, d))
        elif want and d["rowsRemoved"] != {hour: 1}:
            fail("diff projection (%s): rowsRemoved %s, want 1" % (name, d["rowsRemoved"]))


def main():
    if not os.path.isdir(os.path.join(SHARED, "corpus")):
        print("skipped: corpus not found under %s" % SHARED)
        return 77
    impala = os.path.join(SHARED, "corpus", "impala")
    ice = os.path.join(impala, "hadoop_catalog", "ice")
    icebird = os.path.join(SHARED, "corpus", "icebird")
    sec = [("i", "posix", ["SECOND", "MINUTE"])]
    cases = [
        Case("eq", os.path.join(ice, "iceberg_v2_delete_equality"), [("id", "posix", ["SECOND", "MINUTE"])]),
        Case("eq_part", os.path.join(ice, "iceberg_v2_delete_equality_partitioned"),
             [("d", "auto", ["DAY", "MONTH"])] + sec),
        Case("eq_multi", os.path.join(ice, "iceberg_v2_delete_equality_multi_eq_ids"), sec),
        # iceberg_v2_delete_equality_nulls is refused: its delete file has 2 records where
        # its manifest entry says 1 (tests/corpus/test_scan_oracles.py SIZE_MISMATCH)
        Case("eq_schema_evo", os.path.join(ice, "iceberg_v2_equality_delete_schema_evolution"),
             [("d", "auto", ["DAY"])] + sec),
        Case("pos", os.path.join(ice, "iceberg_v2_delete_positional"), [("id", "millis", ["SECOND"])]),
        Case("pos_part", os.path.join(ice, "iceberg_v2_partitioned_position_deletes"),
             [("event_time", "auto", ["HOUR", "DAY"]), ("id", "posix", ["SECOND"])]),
        Case("pos_multi_eq", os.path.join(ice, "iceberg_v2_delete_pos_and_multi_eq_ids"),
             [("d", "auto", ["DAY"])] + sec),
        Case("both", os.path.join(ice, "iceberg_v2_delete_both_eq_and_pos"), [("d", "auto", ["DAY"])] + sec),
        Case("pos_not_all", os.path.join(ice, "iceberg_v2_positional_not_all_data_files_have_delete_files"), sec),
        Case("pos_update_all", os.path.join(ice, "iceberg_v2_positional_update_all_rows"), sec),
        Case("pos_delete_all", os.path.join(ice, "iceberg_v2_positional_delete_all_rows"), sec),
        Case("spark_compaction", os.path.join(ice, "iceberg_spark_compaction_with_dangling_delete"),
             [("id", "posix", ["SECOND", "YEAR"]), ("j", "posix", ["SECOND"])]),
        Case("v3_dv", os.path.join(impala, "iceberg_v3", "iceberg_v3_deletion_vectors"), sec),
        Case("a_partitioned_mor", os.path.join(icebird, "a_partitioned_mor", "table"),
             [("ts", "auto", ["HOUR"]), ("tsl", "auto", ["YEAR"]), ("dt", "auto", ["MONTH"])]),
        Case("c_update_tx", os.path.join(icebird, "c_update_tx", "table"),
             [("updated_at", "auto", ["SECOND", "HOUR"])]),
        Case("e_schema_evolution", os.path.join(icebird, "e_schema_evolution", "table"),
             [("id", "posix", ["MINUTE"])]),
        Case("g_many_small_files", os.path.join(icebird, "g_many_small_files", "table"),
             [("id", "millis", ["SECOND"]), ("x", "posix", ["HOUR"])], pairs="some"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        fx_path, fx_remap = build_fixture(os.path.join(tmp, "wh"))
        fixture = Case("fixture_ops", fx_path, [("ts", "auto", ["HOUR", "DAY"]), ("id", "posix", ["MINUTE"])],
                       remap=fx_remap, threads_check=True)
        only = sys.argv[1:]  # optional: substrings of case names to run
        for case in cases + [fixture]:
            if only and not any(o in case.name for o in only):
                continue
            if not os.path.isdir(case.table_dir):
                fail("missing table " + case.table_dir)
                continue
            run_case(case, tmp)
        error_cases(tmp, fixture)
        projection_cases(tmp)
    for k, v in sorted(stats.items()):
        print("%s: %d" % (k, v))
    for k, v in sorted(where.items()):
        print("conservative '%s' in: %s" % (k, ", ".join(sorted(v))))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
