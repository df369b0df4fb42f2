"""Shared by tests/druid/test_stage*.py and bench/stage_corpus.py: run `icedruid stage` on a
table through a Druid spec with a `local` catalog, read the files the printed spec lists
(raw + staged) with independent readers (DuckDB read_parquet, hyparquet, icebird's Avro
decoder; tests/node/stage_readback.mjs) and compare their rows, as multisets, with
`icedruid scan` of the same table. Values are brought to one form per Iceberg type of the
read schema (the only conventions that differ: how each reader prints timestamps,
decimals, bytes, 64-bit integers and maps); nothing is compared by icedruid's own reader
except the `scan` oracle itself."""
import base64
import collections
import datetime
import decimal
import glob
import hashlib
import json
import os
import struct
import subprocess

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SOURCE = os.path.abspath(os.environ.get("ICD_SOURCE_DIR", "."))
NODE_DIR = os.path.join(SOURCE, "tests", "node")
READBACK = os.path.join(NODE_DIR, "stage_readback.mjs")


def node_ready():
    nm = os.path.join(NODE_DIR, "node_modules")
    return all(os.path.isdir(os.path.join(nm, p)) for p in ("@duckdb/node-api", "hyparquet", "icebird"))


def current_metadata_path(table_dir):
    """The newest metadata file (vN.metadata.json or NNNNN-uuid.metadata.json)."""
    best = None
    for p in glob.glob(os.path.join(table_dir, "metadata", "*.metadata.json")):
        b = os.path.basename(p)
        n = b[1:].split(".")[0] if b.startswith("v") else b.split("-")[0]
        if n.isdigit() and (best is None or int(n) > best[0]):
            best = (int(n), p)
    return best[1]


def current_metadata(table_dir):
    with open(current_metadata_path(table_dir)) as f:
        return json.load(f)


def read_schema(md):
    sid = md.get("current-schema-id", 0)
    for s in md.get("snapshots") or []:
        if s.get("snapshot-id") == md.get("current-snapshot-id") and "schema-id" in s:
            sid = s["schema-id"]
    for s in md.get("schemas") or [md.get("schema")]:
        if s.get("schema-id", 0) == sid:
            return s
    return md["schemas"][-1]


def remaps(table_dir, md=None):
    md = md or current_metadata(table_dir)
    return ["--remap", md["location"].rstrip("/") + "=" + os.path.realpath(table_dir)]


def write_spec(tmp, warehouse, table, ws=None):
    spec = {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": table,
                       "timestampSpec": {"column": "__none", "missingValue": "2020-01-01T00:00:00Z"},
                       "dimensionsSpec": {"dimensions": []},
                       "granularitySpec": {"segmentGranularity": "day", "rollup": False}},
        "ioConfig": {"type": "index_parallel",
                     "inputSource": {"type": "iceberg", "tableName": table, "namespace": "ns",
                                     "icebergCatalog": {"type": "local", "warehousePath": warehouse},
                                     "warehouseSource": ws or {"type": "local"}},
                     "inputFormat": {"type": "parquet"}},
        "tuningConfig": {"type": "index_parallel", "maxNumConcurrentSubTasks": 2}}}
    path = os.path.join(tmp, table + ".spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def link_table(tmp, table_dir, name):
    """A warehouse WAREHOUSE/ns/NAME -> table_dir for the local catalog."""
    wh = os.path.join(tmp, "wh")
    os.makedirs(os.path.join(wh, "ns"), exist_ok=True)
    link = os.path.join(wh, "ns", name)
    if not os.path.islink(link):
        os.symlink(os.path.realpath(table_dir), link)
    return wh


def run(args, env=None, ok=True):
    r = subprocess.run([ICEDRUID] + args, capture_output=True, text=True, env=env)
    if ok and r.returncode != 0:
        raise RuntimeError("icedruid %s failed (%d): %s" % (" ".join(args[:1]), r.returncode, r.stderr.strip()))
    return r


def stage(spec, to, table_remaps, extra=(), env=None, ok=True):
    r = run(["stage", "--spec", spec, "--to", to] + list(extra) + table_remaps, env=env, ok=ok)
    if r.returncode != 0:
        return None, None, r
    summary = json.loads([l for l in r.stderr.splitlines() if l.startswith("{") and "\"rawFiles\"" in l][-1])
    return json.loads(r.stdout), summary, r


def listed_files(doc):
    return doc["spec"]["ioConfig"]["inputSource"]["files"]


# ---- value normalisation --------------------------------------------------------------

def _ts_to_ns(s):
    s = s.strip().replace("T", " ").replace("Z", "")
    for tz in ("+00:00", "+00"):
        if s.endswith(tz):
            s = s[: -len(tz)]
    date, _, clock = s.partition(" ")
    hms, _, frac = clock.partition(".")
    d = datetime.datetime.strptime(date + " " + (hms or "00:00:00"), "%Y-%m-%d %H:%M:%S")
    secs = (d - datetime.datetime(1970, 1, 1)).days * 86400 + (d - datetime.datetime(1970, 1, 1)).seconds
    return secs * 10**9 + int((frac + "000000000")[:9])


def _bytes(v):
    if isinstance(v, dict) and "$bytes" in v:
        return base64.b64decode(v["$bytes"])
    if isinstance(v, str):  # DuckDB's BLOB text: printable bytes as is, others as \\xHH
        out = bytearray()
        i = 0
        while i < len(v):
            if v.startswith("\\x", i):
                out.append(int(v[i + 2:i + 4], 16))
                i += 4
            else:
                out.append(ord(v[i]))
                i += 1
        return bytes(out)
    if isinstance(v, list):
        return bytes(v)
    return v


def canon(v, t, src, ts_digits):
    if v is None:
        return None
    if isinstance(t, dict):
        kind = t["type"]
        if kind == "struct":
            return {f["name"]: canon(v.get(f["name"]), f["type"], src, ts_digits) for f in t["fields"]}
        if kind == "list":
            return [canon(x, t["element"], src, ts_digits) for x in v]
        if kind == "map":
            items = v.items() if isinstance(v, dict) else [(e["key"], e["value"]) for e in v]
            return sorted(json.dumps([canon(k, t["key"], src, ts_digits), canon(x, t["value"], src, ts_digits)],
                                     sort_keys=True, default=str) for k, x in items)
        raise ValueError("type " + str(t))
    if t in ("int", "long"):
        return int(v)
    if t == "boolean":
        return bool(v)
    if t in ("float", "double"):
        if isinstance(v, str) and v in ("NaN", "Infinity", "-Infinity"):
            return v
        x = float(v)
        return struct.unpack("f", struct.pack("f", x))[0] if t == "float" else x
    if t.startswith("decimal"):
        scale = int(t.split(",")[1].rstrip(") "))
        if isinstance(v, dict) or isinstance(v, list):  # raw two's-complement bytes
            v = decimal.Decimal(int.from_bytes(_bytes(v), "big", signed=True)).scaleb(-scale)
        return str(decimal.Decimal(str(v)).quantize(decimal.Decimal(1).scaleb(-scale)))
    if t == "date":
        if isinstance(v, (int, float)):
            return str(datetime.date(1970, 1, 1) + datetime.timedelta(days=int(v)))
        return str(v)[:10]
    if t == "time":
        if isinstance(v, (int, float)) or (isinstance(v, str) and v.isdigit()):
            return int(v)
        hms, _, frac = str(v).partition(".")
        h, m, s = (int(x) for x in hms.split(":"))
        return ((h * 60 + m) * 60 + s) * 10**6 + int((frac + "000000")[:6])
    if t.startswith("timestamp"):
        unit = 9 if t.endswith("_ns") else 6
        if isinstance(v, (int, float)) or (isinstance(v, str) and v.lstrip("-").isdigit()):
            ns = int(v) * 10 ** (9 - unit)
        else:
            ns = _ts_to_ns(str(v))
        # toward zero: hyparquet's Date (milliseconds) truncates pre-1970 instants so
        q = 10 ** (9 - ts_digits)
        return -((-ns) // q) if ns < 0 else ns // q
    if t == "uuid":
        if not isinstance(v, str):
            return _bytes(v).hex()
        return v.replace("-", "").lower()
    if t == "binary" or t.startswith("fixed"):
        b = base64.b64decode(v) if src == "scan" else _bytes(v)
        return base64.b64encode(b).decode()
    return v  # string


def canon_row(row, fields, src, ts_digits):
    return json.dumps({f["name"]: canon(row.get(f["name"]), f["type"], src, ts_digits) for f in fields},
                      sort_keys=True, default=str)


class Digest:
    """An order-independent digest of a multiset of rows: count and the sum (mod 2^64) of
    each row's 64-bit BLAKE2 hash; small inputs also keep the rows, to show a difference."""

    KEEP = 50000

    def __init__(self):
        self.count = 0
        self.total = 0
        self.rows = collections.Counter()

    def add(self, text):
        self.count += 1
        self.total = (self.total + int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")) % 2**64
        if self.count <= self.KEEP:
            self.rows[text] += 1

    def same(self, other):
        return self.count == other.count and self.total == other.total

    def diff(self, have):
        if self.count > self.KEEP or have.count > self.KEEP:
            return "%d rows vs %d (digests differ)" % (have.count, self.count)
        missing = list((self.rows - have.rows).elements())[:2]
        extra = list((have.rows - self.rows).elements())[:2]
        return "%d rows vs scan %d; missing %s; extra %s" % (have.count, self.count, missing, extra)


def _stream(cmd, cwd=None):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    for line in p.stdout:
        if line.strip():
            yield json.loads(line)
    err = p.stderr.read()
    if p.wait() != 0:
        raise RuntimeError("%s failed: %s" % (os.path.basename(cmd[1] if cmd[0] == "node" else cmd[0]), err.strip()[-600:]))


def readback(reader, files, names, digest, fields, digits):
    """Adds the rows of `files` (as `reader` reads them) to `digest`."""
    # a bounded command line: files in groups
    for i in range(0, len(files), 64):
        for row in _stream(["node", READBACK, reader, json.dumps(names)] + files[i:i + 64], cwd=NODE_DIR):
            digest.add(canon_row(row, fields, reader, digits))


def _magic(path):
    with open(path, "rb") as f:
        return f.read(4)


def compare_table(table_dir, spec, files, table_remaps, scan_rows=None, columns=None):
    """Returns a list of problems (empty = equal) and the row counts each reader gave.
    scan_rows: a predicate on scan's rows (as scan prints them) to compare with only those
    (the rows of some intervals); None compares with every row. columns: compare only
    these top-level columns (staged files projected with --project); None: all."""
    md = current_metadata(table_dir)
    fields = [f for f in read_schema(md)["fields"] if columns is None or f["name"] in columns]
    names = [f["name"] for f in fields]
    pq = [f for f in files if _magic(f) == b"PAR1"]
    av = [f for f in files if f not in pq and _magic(f) == b"Obj\x01"]
    other = [f for f in files if f not in pq and f not in av]
    if other:
        return ["not compared: %d listed file(s) are neither Parquet nor Avro (ORC)" % len(other)], {}
    problems, checked = [], {}
    # per pass: the Parquet reader and its fraction digits; the Avro files go through
    # icebird in every pass. An Avro-only table is one pass at icebird's millis (it gives
    # timestamps as JS Dates)
    for reader, digits in (("duckdb", 6), ("hyparquet", 3)) if pq else ((None, 3),):
        want = Digest()
        for row in _stream([ICEDRUID, "scan", table_dir] + table_remaps):
            if scan_rows is None or scan_rows(row):
                want.add(canon_row(row, fields, "scan", digits))
        have = Digest()
        readback(reader, pq, names, have, fields, digits)
        readback("avro", av, names, have, fields, digits)
        checked[reader or "icebird-avro"] = have.count
        if not want.same(have):
            problems.append("%s: %s" % (reader or "icebird-avro", want.diff(have)))
    return problems, checked


# ---- Parquet schemas of staged files vs their originals, per field id ----------------

PROMOTED_FROM = {"long": {"INT32"}, "double": {"FLOAT"}}


def _schema_nodes(path):
    """field id (or dotted name without ids) -> (physical, logical, converted, repetition)."""
    j = json.loads(run(["inspect", path]).stdout)
    out = {}

    def walk(n, prefix):
        for c in n.get("children") or []:
            key = c["field_id"] if c.get("field_id") is not None else prefix + c["name"]
            out[key] = (c.get("physical_type"), json.dumps(c.get("logical_type"), sort_keys=True),
                        c.get("converted_type"), c.get("repetition"), c["name"])
            walk(c, prefix + c["name"] + ".")
    walk(j["schema"], "")
    return out


def compare_schemas(original, staged, md):
    """Differences per field id (physical type, logical type, converted type, repetition)
    between an original data file and its staged file, except fields promoted since the
    file was written (those take the read schema's type by design)."""
    types = {}

    def walk(fields):
        for f in fields:
            t = f["type"]
            types[f["id"]] = t if isinstance(t, str) else t["type"]
            if isinstance(t, dict):
                walk(t.get("fields") or [])
    walk(read_schema(md)["fields"])
    a, b = _schema_nodes(original), _schema_nodes(staged)
    diffs = []
    for key, va in a.items():
        if key not in b:
            continue  # a column the read schema no longer has
        vb = b[key]
        if va[:4] != vb[:4]:
            t = types.get(key, "")
            if va[0] in PROMOTED_FROM.get(t, ()) or (t.startswith("decimal") and va[0] != vb[0]):
                continue
            diffs.append("%s: %s -> %s" % (va[4], va[:4], vb[:4]))
    return diffs


def staged_schema_problems(spec, files, table_remaps, table_dir):
    """compare_schemas for every staged Parquet file of a `stage` run (the plan's files and
    the spec's list are both in task order). Returns (problems, files compared)."""
    pfiles = json.loads(run(["plan", "--spec", spec] + table_remaps).stdout)["files"]
    md = current_metadata(table_dir)
    problems, n = [], 0
    for pf, listed in zip(pfiles, files):
        if pf["decision"] == "raw" or not listed.endswith(".parquet"):
            continue
        orig = pf["path"]
        for i in range(0, len(table_remaps), 2):
            frm, dst = table_remaps[i + 1].split("=", 1)
            if orig.startswith(frm):
                orig = dst + orig[len(frm):]
                break
        orig = orig[5:] if orig.startswith("file:") else orig
        d = compare_schemas(orig, listed, md)
        n += 1
        if d:
            problems.append("schema differs from %s: %s" % (os.path.basename(orig), d[:3]))
    return problems, n
