#!/usr/bin/env python3
"""Corpus oracle test for `icedruid scan` (Python 3 standard library only).

Runs `$ICEDRUID scan` over every table of $ICD_SHARED/corpus that has an oracle and
compares the printed rows with the expected results:

* Impala oracles (corpus/expected/index.json): rows Impala printed for `select *`
  (current snapshot and `FOR SYSTEM_VERSION AS OF` time travel) plus count(*) results.
  icedruid prints design.md section 3 values; this test converts them into the form
  Impala printed (see normalise_*), never the other way round, and compares.
* icebird oracles (corpus/icebird/index.json): expected rows already in section 3 form.

Every table also runs once with `--threads 2`. Tables with ORC data or delete files
are compared like every other table.

Environment: ICEDRUID (command, split with shlex), ICD_SHARED, ICD_SCAN_TIMEOUT
(seconds per scan run, default 300), ICD_ORACLE_VERBOSE=1 (print
each command), ICD_IMPALA_DEFAULT_TZ (time zone Impala printed timestamptz in when the
oracle names none; default UTC). Optional arguments: substrings; only cases whose name
contains one of them run.

Output: one line per failing case with a compact diff, then the summary line
"N passed, N failed".
Exit 0 only when nothing failed; 77 when the corpus is absent. See README.md here.
"""

import base64
import datetime
import json
import math
import os
import re
import shlex
import signal
import subprocess
import sys
from decimal import Decimal, InvalidOperation

SKIP = 77
REL_TOL = 1e-6
MAX_SHOWN = 3  # rows shown per side in a diff line


class FormatError(Exception):
    """A value icedruid printed does not follow design.md section 3."""


# ---------------------------------------------------------------------------
# Iceberg type strings ("decimal(6, 3)", "list<struct<a:int>>", "map<string,int>")

class IType:
    def __init__(self, kind, **kw):
        self.kind = kind  # primitive name, or "struct" / "list" / "map" / "decimal" / "fixed"
        self.precision = kw.get("precision")
        self.scale = kw.get("scale")
        self.length = kw.get("length")
        self.fields = kw.get("fields")  # struct: [(name, IType)]
        self.element = kw.get("element")  # list
        self.key = kw.get("key")  # map
        self.value = kw.get("value")

    def __repr__(self):
        return "IType(%s)" % self.kind


def parse_type(text):
    pos, t = _parse_type_at(text.replace(" ", ""), 0)
    if pos != len(text.replace(" ", "")):
        raise ValueError("bad Iceberg type string: %r" % text)
    return t


def _read_ident(s, i, stops):
    j = i
    while j < len(s) and s[j] not in stops:
        j += 1
    return s[i:j], j


def _parse_type_at(s, i):
    name, j = _read_ident(s, i, "<>(),:[")
    low = name.lower()
    if low == "struct":
        assert s[j] == "<"
        j += 1
        fields = []
        while s[j] != ">":
            fname, j = _read_ident(s, j, ":")
            j += 1  # ':'
            j, ft = _parse_type_at(s, j)
            fields.append((fname, ft))
            if s[j] == ",":
                j += 1
        return j + 1, IType("struct", fields=fields)
    if low == "list":
        assert s[j] == "<"
        j, el = _parse_type_at(s, j + 1)
        assert s[j] == ">"
        return j + 1, IType("list", element=el)
    if low == "map":
        assert s[j] == "<"
        j, k = _parse_type_at(s, j + 1)
        assert s[j] == ","
        j, v = _parse_type_at(s, j + 1)
        assert s[j] == ">"
        return j + 1, IType("map", key=k, value=v)
    if low == "decimal":
        m = re.match(r"\((\d+),(\d+)\)", s[j:])
        if not m:
            raise ValueError("bad decimal type in %r" % s)
        return j + m.end(), IType("decimal", precision=int(m.group(1)), scale=int(m.group(2)))
    if low == "fixed":
        m = re.match(r"[\[(](\d+)[\])]", s[j:])
        if not m:
            raise ValueError("bad fixed type in %r" % s)
        return j + m.end(), IType("fixed", length=int(m.group(1)))
    return j, IType(low)


# ---------------------------------------------------------------------------
# Validation of section 3 values (what icedruid prints)

RE_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
RE_TIME = re.compile(r"^\d{2}:\d{2}:\d{2}\.\d{6}$")
RE_TS = {6: re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})$"),
         9: re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{9})$")}
RE_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _fail(t, v, what):
    raise FormatError("%s value %s: %s" % (t.kind if t.kind != "decimal" else
                                            "decimal(%d,%d)" % (t.precision, t.scale),
                                            json.dumps(v, default=str)[:80], what))


def s3_float(v, t):
    """Section 3 float/double -> Python float."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        _fail(t, v, "expected a JSON number or \"NaN\"/\"Infinity\"/\"-Infinity\"")
    if isinstance(v, str):
        if v not in SPECIAL_FLOATS:
            _fail(t, v, "the only strings allowed are \"NaN\", \"Infinity\", \"-Infinity\"")
        return SPECIAL_FLOATS[v]
    return float(v)


def s3_decimal(v, t):
    """Section 3 decimal(P,S): a string with exactly S fraction digits -> Decimal."""
    if not isinstance(v, str):
        _fail(t, v, "expected a string")
    frac = r"\.\d{%d}" % t.scale if t.scale > 0 else ""
    m = re.match(r"^-?(\d+)%s$" % frac, v)
    if not m:
        _fail(t, v, "expected a string with exactly %d fraction digits" % t.scale)
    if len(m.group(1).lstrip("0")) > t.precision - t.scale:
        _fail(t, v, "more integer digits than precision %d allows" % t.precision)
    return Decimal(v)


def s3_date(v, t):
    if not isinstance(v, str) or not RE_DATE.match(v):
        _fail(t, v, "expected \"YYYY-MM-DD\"")
    try:
        datetime.date.fromisoformat(v)
    except ValueError:
        _fail(t, v, "not a valid date")
    return v


def s3_timestamp(v, t):
    """-> (date "YYYY-MM-DD", seconds-of-day string "HH:MM:SS", fraction digits)."""
    digits = 9 if t.kind.endswith("_ns") else 6
    tz = t.kind.startswith("timestamptz")
    if not isinstance(v, str):
        _fail(t, v, "expected a string")
    body = v
    if tz:
        if not v.endswith("+00:00"):
            _fail(t, v, "expected the suffix +00:00")
        body = v[:-6]
    m = RE_TS[digits].match(body)
    if not m:
        _fail(t, v, "expected YYYY-MM-DDTHH:MM:SS.%s%s" % ("f" * digits, "+00:00" if tz else ""))
    return m.group(1), "%s:%s:%s" % (m.group(2), m.group(3), m.group(4)), m.group(5)


# ---------------------------------------------------------------------------
# Section 3 -> Impala's printed form (the normaliser)

def impala_timestamp_text(date, hms, frac):
    """Impala prints a TIMESTAMP as "YYYY-MM-DD HH:MM:SS" and, only when the fraction is
    non-zero, "." + 9 digits (evidence: iceberg_v3_all_types.jsonl has
    "1969-12-31 23:59:59.123456000" and "1970-01-01 00:00:00")."""
    frac9 = (frac + "000")[:9]
    if int(frac9) == 0:
        return "%s %s" % (date, hms)
    return "%s %s.%s" % (date, hms, frac9)


def utc_to_zone(date, hms, tzname):
    """UTC wall time -> wall time in tzname (what Impala prints for timestamptz)."""
    if tzname.upper() in ("UTC", "GMT", "Z"):
        return date, hms
    import zoneinfo  # stdlib; needs the system tz database
    d = datetime.datetime.fromisoformat("%sT%s" % (date, hms)).replace(tzinfo=datetime.timezone.utc)
    local = d.astimezone(zoneinfo.ZoneInfo(tzname))
    return local.strftime("%Y-%m-%d"), local.strftime("%H:%M:%S")


def normalise_impala(v, t, tzname):
    """Convert one section 3 value of Iceberg type t into Impala's printed form (as the
    expected .jsonl holds it after parse_expected_impala). Raises FormatError."""
    if v is None:
        return None
    k = t.kind
    if k == "boolean":
        if not isinstance(v, bool):
            _fail(t, v, "expected true/false")
        return v
    if k in ("int", "long"):
        if isinstance(v, bool) or not isinstance(v, int):
            _fail(t, v, "expected a JSON integer")
        return v
    if k in ("float", "double"):
        return s3_float(v, t)
    if k == "decimal":
        return s3_decimal(v, t)
    if k == "date":
        return s3_date(v, t)
    if k == "time":
        if not isinstance(v, str) or not RE_TIME.match(v):
            _fail(t, v, "expected \"HH:MM:SS.ffffff\"")
        return v
    if k in ("timestamp", "timestamp_ns", "timestamptz", "timestamptz_ns"):
        date, hms, frac = s3_timestamp(v, t)
        if k.startswith("timestamptz"):
            date, hms = utc_to_zone(date, hms, tzname)
        return impala_timestamp_text(date, hms, frac)
    if k == "string":
        if not isinstance(v, str):
            _fail(t, v, "expected a string")
        return v
    if k == "uuid":
        if not isinstance(v, str) or not RE_UUID.match(v):
            _fail(t, v, "expected the canonical lowercase 36-character form")
        return v
    if k in ("binary", "fixed"):
        raw = s3_base64(v, t)
        # Impala prints BINARY as its bytes; compare as text.
        return raw.decode("utf-8", errors="replace")
    if k == "struct":
        if not isinstance(v, dict):
            _fail(t, v, "expected a JSON object")
        if [n for n in v] != [n for n, _ in t.fields]:
            _fail(t, v, "expected the keys %s in schema order" % [n for n, _ in t.fields])
        return {n.lower(): normalise_impala(v[n], ft, tzname) for n, ft in t.fields}
    if k == "list":
        if not isinstance(v, list):
            _fail(t, v, "expected a JSON array")
        return [normalise_impala(e, t.element, tzname) for e in v]
    if k == "map":
        if not isinstance(v, list) or any(not isinstance(e, dict) or list(e) != ["key", "value"]
                                          for e in v):
            _fail(t, v, "expected an array of {\"key\":..., \"value\":...} objects")
        return {map_key_text(normalise_impala(e["key"], t.key, tzname)):
                normalise_impala(e["value"], t.value, tzname) for e in v}
    return v  # types Impala cannot print (variant, geometry, ...): compared as they are


def s3_base64(v, t):
    if not isinstance(v, str):
        _fail(t, v, "expected a base64 string")
    try:
        raw = base64.b64decode(v, validate=True)
    except ValueError:
        _fail(t, v, "not valid base64")
    if t.kind == "fixed" and len(raw) != t.length:
        _fail(t, v, "fixed[%d] decodes to %d bytes" % (t.length, len(raw)))
    return raw


def map_key_text(k):
    """Impala prints a map as a JSON-like object; keys become their printed text."""
    if isinstance(k, bool):
        return "true" if k else "false"
    return str(k)


def parse_expected_impala(v, t):
    """Expected .jsonl value (parsed with Decimal floats) -> comparable Python value."""
    if v is None:
        return None
    k = t.kind
    if k in ("float", "double"):
        if isinstance(v, str):  # Impala prints NaN / Infinity / -Infinity as text
            low = v.lower()
            return {"nan": math.nan, "inf": math.inf, "infinity": math.inf,
                    "-inf": -math.inf, "-infinity": -math.inf}[low]
        return float(v)
    if k == "decimal":
        return Decimal(str(v))
    if k in ("struct", "list", "map"):
        if isinstance(v, str):  # Impala prints complex values as JSON text
            v = json.loads(v, parse_float=Decimal)
        return parse_expected_nested(v, t)
    return v


def parse_expected_nested(v, t):
    if v is None:
        return None
    if t.kind == "struct":
        low = {str(n).lower(): x for n, x in v.items()}
        return {n.lower(): parse_expected_nested(low.get(n.lower()), ft) for n, ft in t.fields}
    if t.kind == "list":
        return [parse_expected_nested(e, t.element) for e in v]
    if t.kind == "map":
        return {str(mk): parse_expected_nested(mv, t.value) for mk, mv in v.items()}
    return parse_expected_impala(v, t)


# ---------------------------------------------------------------------------
# Comparison

def floats_equal(a, b):
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return a == b or abs(a - b) <= REL_TOL * max(abs(a), abs(b))


def values_equal(e, a, t):
    if e is None or a is None:
        return e is None and a is None
    k = t.kind
    if k in ("float", "double"):
        return floats_equal(e, a)
    if k == "struct":
        return all(values_equal(e.get(n.lower()), a.get(n.lower()), ft) for n, ft in t.fields)
    if k == "list":
        return len(e) == len(a) and all(values_equal(x, y, t.element) for x, y in zip(e, a))
    if k == "map":
        return set(e) == set(a) and all(values_equal(e[x], a[x], t.value) for x in e)
    if k in ("int", "long", "boolean") and type(e) is not type(a):
        return False
    return e == a


def exact_key(v, t):
    """Hashable key of the parts of a value compared exactly (floats excluded)."""
    if t.kind in ("float", "double", "struct", "list", "map") or v is None:
        return None if v is None else "~"
    if isinstance(v, Decimal):
        return ("dec", v.normalize())
    return (type(v).__name__, v)


def multiset_diff(expected, actual, cols):
    """-> (missing expected rows, extra actual rows). Rows are lists of values in column
    order. Exact columns bucket the rows; float/nested columns are matched within a
    bucket with the tolerant comparison."""
    def key(row):
        return tuple(exact_key(v, t) for v, (_, t) in zip(row, cols))

    buckets = {}
    for row in actual:
        buckets.setdefault(key(row), []).append(row)
    missing = []
    for row in expected:
        cand = buckets.get(key(row), [])
        for i, other in enumerate(cand):
            if all(values_equal(x, y, t) for x, y, (_, t) in zip(row, other, cols)):
                del cand[i]
                break
        else:
            missing.append(row)
    extra = [r for b in buckets.values() for r in b]
    return missing, extra


def show_row(row, cols):
    def conv(v):
        if isinstance(v, Decimal):
            return str(v)
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            return str(v)
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    text = json.dumps({n: conv(v) for v, (n, _) in zip(row, cols)}, ensure_ascii=False)
    return text if len(text) <= 300 else text[:297] + "..."


# ---------------------------------------------------------------------------
# Running the command

# Tables of the corpus whose manifests disagree with a delete file (Impala's test data):
# icedruid must refuse them with this line (cases that read other snapshots pass as
# usual). With ICEDRUID_SIZE_MISMATCH=warn the first is read right; the second's delete
# file also has 2 records where its manifest entry says 1 (replaced): it stays an error.
SIZE_MISMATCH = {
    "iceberg_v2_delete_positional": (
        "00191-4-6e780302-527b-4911-8c6e-88d416adac57-00001.parquet: the file has 1581 bytes "
        "but its manifest entry says 1598 (truncated or replaced; ICEDRUID_SIZE_MISMATCH=warn reads it if its record count and bounds agree)", True),
    "iceberg_v2_delete_equality_nulls": (
        "delete-494fbbd4b792bdd2-aabb8e2000000000_1239775374_data.0.parq: the file has 351 "
        "bytes but its manifest entry says 1589 (truncated or replaced; ICEDRUID_SIZE_MISMATCH=warn reads it if its record count and bounds agree)", False),
}


def run_scan(cmd, timeout, env=None):
    """-> (returncode or None on timeout, stdout text, stderr text)."""
    if os.environ.get("ICD_ORACLE_VERBOSE"):
        print("  $ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the process group this call started
        out, err = proc.communicate()
        return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def parse_output_rows(out):
    """NDJSON -> list of dicts (key order kept). Raises FormatError."""
    rows = []
    for n, line in enumerate(out.split("\n"), 1):
        if line == "":
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise FormatError("output line %d is not JSON (%s): %s" % (n, e, line[:120]))
        if not isinstance(obj, dict):
            raise FormatError("output line %d is not a JSON object: %s" % (n, line[:120]))
        rows.append(obj)
    return rows


def first_line(text):
    lines = [x for x in text.splitlines() if x.strip()]
    return lines[0][:200] if lines else "(empty)"


# ---------------------------------------------------------------------------
# Corpus discovery: tables, remaps

def current_metadata_file(table_dir):
    """Highest vN.metadata.json (the corpus README: always the current one); also knows
    NNNNN-uuid.metadata.json names."""
    mdir = os.path.join(table_dir, "metadata")
    best = None
    for name in os.listdir(mdir):
        m = re.match(r"^v(\d+)\.metadata\.json$", name) or re.match(r"^(\d+)-.*\.metadata\.json$", name)
        if m and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), name)
    if best is None:
        raise RuntimeError("no metadata file in %s" % mdir)
    return os.path.join(mdir, best[1])


def all_metadata_files(table_dir):
    mdir = os.path.join(table_dir, "metadata")
    return [os.path.join(mdir, n) for n in sorted(os.listdir(mdir)) if n.endswith(".metadata.json")]


def compute_remaps(table_dir):
    """--remap pairs for a table copied from elsewhere, from its metadata alone:
    the current `location` maps to the local table directory; any storage path named in
    table properties (write.data.path, write.metadata.path, write.object-storage.path,
    write.folder-storage.path, in any metadata version) that lies outside the location
    maps to the local directory of the same name next to the table directory (the
    corpus keeps such directories as siblings, see iceberg_multiple_storage_locations).
    Each pair is a correct translation on its own, so the result is right whatever rule
    icedruid uses to pick between overlapping prefixes."""
    local = os.path.abspath(table_dir)
    with open(current_metadata_file(table_dir)) as f:
        location = json.load(f)["location"].rstrip("/")
    remaps = [(location, local)]
    extra = set()
    for path in all_metadata_files(table_dir):
        with open(path) as f:
            props = json.load(f).get("properties") or {}
        for key, val in props.items():
            if key.startswith("write.") and key.endswith(".path") and isinstance(val, str):
                val = val.rstrip("/")
                if val != location and not val.startswith(location + "/"):
                    extra.add(val)
    for val in sorted(extra):
        sibling = os.path.join(os.path.dirname(local), os.path.basename(val))
        if os.path.isdir(sibling):
            remaps.append((val, sibling))
    return remaps


class Case:
    """One scan run and what to compare its output with."""

    def __init__(self, name, table_dir, remaps, extra_args):
        self.name = name
        self.table_dir = table_dir
        self.remaps = remaps
        self.extra_args = extra_args
        self.mode = None  # "impala" / "icebird" / "count"
        self.cols = None  # [(name, IType)]
        self.expected = None  # list of rows (value lists) or a count
        self.tz = "UTC"
        self.bad_oracle = None  # a problem found while loading the oracle

    def command(self, icedruid):
        cmd = icedruid + ["scan", self.table_dir]
        for frm, to in self.remaps:
            cmd += ["--remap", "%s=%s" % (frm, to)]
        return cmd + self.extra_args

    def with_threads(self):
        c = Case(self.name + " [threads=2]", self.table_dir, self.remaps,
                 self.extra_args + ["--threads", "2"])
        c.mode, c.cols, c.expected, c.tz, c.bad_oracle = (self.mode, self.cols, self.expected,
                                                          self.tz, self.bad_oracle)
        return c


def load_jsonl(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line, parse_float=Decimal))
    return rows


def impala_cases(corpus):
    exp_dir = os.path.join(corpus, "expected")
    index_path = os.path.join(exp_dir, "index.json")
    if not os.path.exists(index_path):
        return []
    with open(index_path) as f:
        index = json.load(f)
    cases = []
    for entry in index["oracles"]:
        table_dir = os.path.join(corpus, "impala", entry["table_dir"])
        remaps = compute_remaps(table_dir)
        names = [entry["name"]] + list(entry.get("time_travel") or [])
        with open(os.path.join(exp_dir, entry["name"] + ".json")) as f:
            main = json.load(f)
        names += [n for n in main.get("time_travel_oracles") or [] if n not in names]
        covered = set()  # snapshots checked row by row
        table_cases = []
        for name in names:
            with open(os.path.join(exp_dir, name + ".json")) as f:
                side = json.load(f)
            if not side.get("rows_file"):
                continue
            case = impala_rows_case(exp_dir, name, side, table_dir, remaps)
            covered.add(side.get("snapshot_id"))
            table_cases.append(case)
        seen = set()
        for cs in main.get("count_star") or []:
            snap = cs.get("snapshot_id")
            if snap in covered or (snap, cs["count"]) in seen:
                continue
            seen.add((snap, cs["count"]))
            args = ["--snapshot-id", str(snap)] if snap is not None else []
            label = "%s count(*)%s" % (entry["name"], "" if snap is None else " @%d" % snap)
            case = Case("impala/" + label, table_dir, remaps, args)
            case.mode, case.expected = "count", cs["count"]
            table_cases.append(case)
        cases += table_cases
        current = [c for c in table_cases if "--snapshot-id" not in c.extra_args]
        if current:
            cases.append(current[0].with_threads())
    return cases


def impala_rows_case(exp_dir, name, side, table_dir, remaps):
    args = []
    if side.get("snapshot_selection") == "time_travel" or side.get("snapshot_id") is not None:
        args += ["--snapshot-id", str(side["snapshot_id"])]
    cols = [(c["name"], parse_type(c["iceberg_type"])) for c in side["columns"]]
    if side.get("complete_columns") is False or side.get("omitted_columns"):
        args += ["--columns", ",".join(n for n, _ in cols)]
    case = Case("impala/" + name, table_dir, remaps, args)
    case.mode, case.cols = "impala", cols
    opts = {k.upper(): v for k, v in (side.get("session_options") or {}).items()}
    case.tz = opts.get("TIMEZONE") or os.environ.get("ICD_IMPALA_DEFAULT_TZ", "UTC")
    dropped = (side.get("dropped_extra_columns") or {}).get("names") or []
    rows = []
    for r in load_jsonl(os.path.join(exp_dir, side["rows_file"])):
        for d in dropped:
            r.pop(d, None)
        if list(r) != [n for n, _ in cols]:
            case.bad_oracle = "expected row keys %s differ from the sidecar columns" % list(r)
            break
        rows.append([parse_expected_impala(r[n], t) for n, t in cols])
    case.expected = rows
    if side.get("row_count") is not None and side["row_count"] != len(rows):
        case.bad_oracle = "sidecar row_count %s but %d rows" % (side["row_count"], len(rows))
    return case


def icebird_cases(corpus):
    base = os.path.join(corpus, "icebird")
    index_path = os.path.join(base, "index.json")
    if not os.path.exists(index_path):
        return []
    with open(index_path) as f:
        index = json.load(f)
    cases = []
    for entry in index["oracles"]:
        table_dir = os.path.join(base, entry["table_dir"])
        with open(os.path.join(base, entry["sidecar"])) as f:
            side = json.load(f)
        args = []
        if entry.get("snapshot_id") is not None:
            args += ["--snapshot-id", str(entry["snapshot_id"])]
        remaps = [(entry["remap_from"], os.path.abspath(table_dir))]
        case = Case("icebird/" + entry["oracle"], table_dir, remaps, args)
        case.mode = "icebird"
        case.cols = [(c["name"], parse_type(c["type"])) for c in side["columns"]]
        rows = []
        for r in load_jsonl(os.path.join(base, entry["rows_file"])):
            rows.append([icebird_value(r.get(n), t) for n, t in case.cols])
            if list(r) != [n for n, _ in case.cols]:
                case.bad_oracle = "expected row keys %s differ from the sidecar columns" % list(r)
        case.expected = rows
        if entry.get("row_count") is not None and entry["row_count"] != len(rows):
            case.bad_oracle = "index row_count %s but %d rows" % (entry["row_count"], len(rows))
        cases.append(case)
        cases.append(case.with_threads())
    return cases


def icebird_value(v, t):
    """Section 3 value -> comparable value: floats numerically (Decimal-parsed numbers to
    float), everything else exactly as printed (ints exact, strings unescaped)."""
    if v is None:
        return None
    if t.kind in ("float", "double"):
        if isinstance(v, str):
            return SPECIAL_FLOATS[v]
        return float(v)
    if t.kind in ("struct", "list", "map"):
        return v  # the icebird set has no nested columns; compared exactly
    return v


# ---------------------------------------------------------------------------
# Checking one case

def check_case(case, icedruid, timeout):
    """-> ("pass" | "fail", message)."""
    if case.bad_oracle:
        return "fail", "oracle problem: " + case.bad_oracle
    rc, out, err = run_scan(case.command(icedruid), timeout)
    mismatch = SIZE_MISMATCH.get(os.path.basename(os.path.normpath(case.table_dir)))
    if mismatch and rc != 0:
        line, readable = mismatch
        if rc != 1 or line not in err or len(err.splitlines()) != 1:
            return "fail", "size mismatch not refused (exit %s): %s" % (rc, first_line(err))
        if not readable:
            return "pass", ""
        env = dict(os.environ, ICEDRUID_SIZE_MISMATCH="warn")
        rc, out, err = run_scan(case.command(icedruid), timeout, env)
    if rc is None:
        return "fail", "timed out after %ss" % timeout
    if rc != 0:
        return "fail", "exit %d: %s" % (rc, first_line(err))
    try:
        rows = parse_output_rows(out)
    except FormatError as e:
        return "fail", str(e)
    if case.mode == "count":
        if len(rows) != case.expected:
            return "fail", "expected %d rows (count(*)), got %d" % (case.expected, len(rows))
        return "pass", ""
    names = [n for n, _ in case.cols]
    actual = []
    for i, r in enumerate(rows):
        if list(r) != names:
            return "fail", "row %d has keys %s, expected %s (schema order)" % (i + 1, list(r), names)
        try:
            if case.mode == "impala":
                actual.append([normalise_impala(r[n], t, case.tz) for n, t in case.cols])
            else:
                actual.append([icebird_actual(r[n], t) for n, t in case.cols])
        except FormatError as e:
            return "fail", "row %d: %s" % (i + 1, e)
    missing, extra = multiset_diff(case.expected, actual, case.cols)
    if not missing and not extra:
        return "pass", ""
    parts = ["expected %d rows, got %d: %d missing, %d extra"
             % (len(case.expected), len(actual), len(missing), len(extra))]
    for label, lst in (("missing", missing), ("extra", extra)):
        for row in lst[:MAX_SHOWN]:
            parts.append("%s %s" % (label, show_row(row, case.cols)))
    return "fail", "; ".join(parts)


def icebird_actual(v, t):
    """Validate an icedruid value against the section 3 rule for its type, then make it
    comparable with icebird_value (exact except floats)."""
    if v is None:
        return None
    k = t.kind
    if k in ("float", "double"):
        return s3_float(v, t)
    if k in ("int", "long"):
        if isinstance(v, bool) or not isinstance(v, int):
            _fail(t, v, "expected a JSON integer")
    return v


# ---------------------------------------------------------------------------

def main(argv):
    shared = os.environ.get("ICD_SHARED", "")
    corpus = os.path.join(shared, "corpus") if shared else ""
    if not corpus or not os.path.isdir(corpus):
        print("SKIP: corpus not found (ICD_SHARED=%r has no corpus/ folder)" % shared)
        return SKIP
    if not os.environ.get("ICEDRUID"):
        print("error: ICEDRUID (the icedruid command) is not set", file=sys.stderr)
        return 2
    icedruid = shlex.split(os.environ["ICEDRUID"])
    timeout = float(os.environ.get("ICD_SCAN_TIMEOUT", "300"))
    cases = impala_cases(corpus) + icebird_cases(corpus)
    filters = argv[1:]
    if filters:
        cases = [c for c in cases if any(f in c.name for f in filters)]
    counts = {"pass": 0, "fail": 0}
    for case in cases:
        status, msg = check_case(case, icedruid, timeout)
        counts[status] += 1
        if status == "fail":
            print("FAIL %s: %s" % (case.name, msg), flush=True)
        elif os.environ.get("ICD_ORACLE_VERBOSE"):
            print("ok   %s" % case.name, flush=True)
    summary = "%d passed, %d failed" % (counts["pass"], counts["fail"])
    print(summary)
    return 0 if counts["fail"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
