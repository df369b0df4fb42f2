#!/usr/bin/env python3
"""A stand-in for `icedruid scan`, used only to test test_scan_oracles.py itself.

It does not read Iceberg data. For a corpus table it looks up the oracle and prints
the expected rows converted BACK into the design.md section 3 format icedruid prints
(Impala's "2020-01-01 09:00:00" -> "2020-01-01T09:00:00.000000", decimals -> strings
with exactly S digits, FLOAT -> the shortest text of the float32 value, ...). If the
harness's normaliser turns this output back into the expected rows for every oracle,
normaliser and format contract agree. The conversion here is written independently of
the harness (inverse direction) on purpose. It also checks the --remap pairs the
harness computed (every location in the metadata must map to an existing local path).

Usage (through fake_icedruid.sh, which the harness gets as ICEDRUID):
  fake_scan.py scan TABLE [--snapshot-id ID] [--columns a,b] [--remap FROM=TO]...
               [--threads N] [--stats]
Needs ICD_SHARED. Environment switches for the harness self-test (check_harness.sh):
  FAKE_SCAN_BREAK=MODE    misbehave: drop-row, impala-format, key-order, float-off,
                          sleep, no-remap
"""

import base64
import datetime
import json
import math
import os
import random
import re
import struct
import sys
import time
from decimal import Decimal


def die(msg, code=1):
    sys.stderr.write("icedruid: scan: %s\n" % msg)
    sys.exit(code)


# --- arguments ---------------------------------------------------------------

def parse_args(argv):
    if len(argv) < 3 or argv[1] != "scan":
        die("usage: scan TABLE [--snapshot-id ID] [--columns a,b] [--remap FROM=TO]...", 2)
    opts = {"table": argv[2], "snapshot": None, "columns": None, "remaps": [], "threads": 1}
    i = 3
    while i < len(argv):
        a = argv[i]
        if a == "--stats":
            i += 1
            continue
        if i + 1 >= len(argv):
            die("option %s needs a value" % a, 2)
        v = argv[i + 1]
        if a == "--snapshot-id":
            opts["snapshot"] = int(v)
        elif a == "--columns":
            opts["columns"] = v.split(",")
        elif a == "--remap":
            if "=" not in v:
                die("--remap wants FROM=TO, got %s" % v, 2)
            opts["remaps"].append(tuple(v.split("=", 1)))
        elif a == "--threads":
            opts["threads"] = int(v)
        else:
            die("unknown option %s" % a, 2)
        i += 2
    return opts


# --- remap check ---------------------------------------------------------------

def apply_remap(path, remaps):
    """Longest matching FROM prefix wins (the fake's own rule; the harness must not
    depend on it)."""
    best = None
    for frm, to in remaps:
        if path == frm or path.startswith(frm.rstrip("/") + "/") or path.startswith(frm):
            if best is None or len(frm) > len(best[0]):
                best = (frm, to)
    if best is None:
        return path
    return best[1] + path[len(best[0]):]


def metadata_json(table):
    """Current metadata: version-hint.text when it names a version, else highest vN."""
    mdir = os.path.join(table, "metadata")
    hint = os.path.join(mdir, "version-hint.text")
    if os.path.exists(hint):
        with open(hint) as f:
            text = f.read().strip()
        if text.isdigit() and os.path.exists(os.path.join(mdir, "v%s.metadata.json" % text)):
            return os.path.join(mdir, "v%s.metadata.json" % text)
    versions = [int(m.group(1)) for m in (re.match(r"v(\d+)\.metadata\.json$", n)
                                          for n in os.listdir(mdir)) if m]
    if not versions:
        die("%s: no vN.metadata.json" % mdir)
    return os.path.join(mdir, "v%d.metadata.json" % max(versions))


def check_remaps(table, remaps):
    with open(metadata_json(table)) as f:
        meta = json.load(f)
    loc = meta["location"]
    probe = loc + "/metadata/" + os.path.basename(metadata_json(table))
    mapped = apply_remap(probe, remaps)
    if not os.path.exists(mapped):
        die("%s: No such file or directory (table location %s, check --remap)" % (mapped, loc))
    if os.path.realpath(os.path.dirname(os.path.dirname(mapped))) != os.path.realpath(table):
        die("%s: remapped location %s is not the table directory" % (loc, mapped))
    for path in sorted(os.listdir(os.path.join(table, "metadata"))):
        if not path.endswith(".metadata.json"):
            continue
        with open(os.path.join(table, "metadata", path)) as f:
            props = json.load(f).get("properties") or {}
        data_path = props.get("write.data.path")
        if data_path and not os.path.isdir(apply_remap(data_path, remaps)):
            die("%s: No such directory (write.data.path of %s, check --remap)"
                % (apply_remap(data_path, remaps), path))


# --- Iceberg types -------------------------------------------------------------

def split_top(s, sep=","):
    """Split at sep where not nested in <> or ()."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def type_of(text):
    """-> tuple: ("struct", [(name, t)]), ("list", t), ("map", k, v), ("decimal", p, s),
    or (primitive,)."""
    s = text.replace(" ", "")
    low = s.lower()
    if low.startswith("struct<"):
        fields = []
        for part in split_top(s[7:-1]):
            name, ftype = part.split(":", 1)
            fields.append((name, type_of(ftype)))
        return ("struct", fields)
    if low.startswith("list<"):
        return ("list", type_of(s[5:-1]))
    if low.startswith("map<"):
        k, v = split_top(s[4:-1])
        return ("map", type_of(k), type_of(v))
    m = re.match(r"decimal\((\d+),(\d+)\)$", low)
    if m:
        return ("decimal", int(m.group(1)), int(m.group(2)))
    return (low,)


# --- Impala printed value -> section 3 -----------------------------------------------

def to_f32(x):
    """Round a double to float32 (round to nearest even, like a C cast)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:  # beyond FLT_MAX: still FLT_MAX below the half-way point
        flt_max = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
        return math.copysign(flt_max if abs(x) < 2.0 ** 128 - 2.0 ** 103 else math.inf, x)


def float32_text(x):
    """Shortest decimal text that reads back as the same float32 (what a C reader that
    prints floats with %.9g-and-shorten does)."""
    f32 = to_f32(x)
    for prec in range(1, 10):
        text = "%.*g" % (prec, f32)
        if to_f32(float(text)) == f32:
            return text
    return repr(f32)


class Raw:
    """A number to print as given text (json.dumps would print a float repr)."""

    def __init__(self, text):
        self.text = text


def special(x):
    if math.isnan(x):
        return "NaN"
    return "Infinity" if x > 0 else "-Infinity"


def impala_ts_to_s3(text, digits):
    m = re.match(r"^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?$", text)
    if not m:
        die("fake: cannot read Impala timestamp %r" % text)
    frac = (m.group(3) or "").ljust(9, "0")
    if digits == 6 and frac[6:] != "000":
        die("fake: sub-microsecond Impala timestamp %r" % text)
    return "%sT%s.%s" % (m.group(1), m.group(2), frac[:digits])


def impala_to_s3(v, t, tz):
    if v is None:
        return None
    k = t[0]
    if k == "float":
        x = float(v) if not isinstance(v, str) else float(v.replace("Infinity", "inf"))
        return special(x) if math.isnan(x) or math.isinf(x) else Raw(float32_text(x))
    if k == "double":
        x = float(v) if not isinstance(v, str) else float(v.replace("Infinity", "inf"))
        return special(x) if math.isnan(x) or math.isinf(x) else Raw(repr(x))
    if k == "decimal":
        q = Decimal(str(v)).quantize(Decimal(1).scaleb(-t[2]))
        return format(q, "f")
    if k in ("timestamp", "timestamp_ns"):
        return impala_ts_to_s3(v, 9 if k.endswith("_ns") else 6)
    if k in ("timestamptz", "timestamptz_ns"):
        digits = 9 if k.endswith("_ns") else 6
        local = impala_ts_to_s3(v, digits)
        if tz.upper() != "UTC":
            import zoneinfo
            whole, frac = local.split(".")
            d = datetime.datetime.fromisoformat(whole).replace(tzinfo=zoneinfo.ZoneInfo(tz))
            local = d.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + "." + frac
        return local + "+00:00"
    if k in ("binary",) or k.startswith("fixed"):
        return base64.b64encode(v.encode("utf-8")).decode("ascii")
    if k in ("struct", "list", "map"):
        return nested_to_s3(json.loads(v, parse_float=Decimal) if isinstance(v, str) else v, t, tz)
    return v


def nested_to_s3(v, t, tz):
    if v is None:
        return None
    if t[0] == "struct":
        by_lower = {n.lower(): x for n, x in v.items()}
        return {n: nested_to_s3(by_lower.get(n.lower()), ft, tz) for n, ft in t[1]}
    if t[0] == "list":
        return [nested_to_s3(e, t[1], tz) for e in v]
    if t[0] == "map":
        return [{"key": key_from_text(mk, t[1]), "value": nested_to_s3(mv, t[2], tz)}
                for mk, mv in v.items()]
    return impala_to_s3(v, t, tz)


def key_from_text(text, t):
    if t[0] in ("int", "long"):
        return int(text)
    return text


def dumps(obj):
    """JSON with Raw numbers kept as their text."""
    if isinstance(obj, Raw):
        return obj.text
    if isinstance(obj, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dumps(v) for k, v in obj.items()) + "}"
    if isinstance(obj, list):
        return "[" + ",".join(dumps(v) for v in obj) + "]"
    return json.dumps(obj)


# --- oracle lookup ---------------------------------------------------------------

def impala_rows(corpus, table, opts):
    exp = os.path.join(corpus, "expected")
    with open(os.path.join(exp, "index.json")) as f:
        index = json.load(f)
    for entry in index["oracles"]:
        if os.path.realpath(os.path.join(corpus, "impala", entry["table_dir"])) != table:
            continue
        with open(os.path.join(exp, entry["name"] + ".json")) as f:
            main = json.load(f)
        sides = [main]
        for name in main.get("time_travel_oracles") or []:
            with open(os.path.join(exp, name + ".json")) as f:
                sides.append(json.load(f))
        for side in sides:
            if side.get("rows_file") and side.get("snapshot_id") == opts["snapshot"]:
                return side_rows(exp, side, opts)
        for cs in main.get("count_star") or []:
            if cs.get("snapshot_id") == opts["snapshot"]:
                names = [c["name"] for c in main["columns"]]
                return [{n: None for n in names} for _ in range(cs["count"])]
        die("snapshot %s: no such snapshot in the fake's oracles" % opts["snapshot"])
    return None


def side_rows(exp, side, opts):
    cols = [(c["name"], type_of(c["iceberg_type"])) for c in side["columns"]]
    names = [n for n, _ in cols]
    complete = side.get("complete_columns") is not False and not side.get("omitted_columns")
    if (opts["columns"] or names) != names or (not complete and opts["columns"] is None):
        die("fake: --columns %s does not match the oracle's columns %s" % (opts["columns"], names))
    tz = (side.get("session_options") or {}).get("TIMEZONE", "UTC")
    rows = []
    with open(os.path.join(exp, side["rows_file"]), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line, parse_float=Decimal)
                rows.append({n: impala_to_s3(r[n], t, tz) for n, t in cols})
    return rows


def icebird_rows(corpus, table, opts):
    base = os.path.join(corpus, "icebird")
    with open(os.path.join(base, "index.json")) as f:
        index = json.load(f)
    for entry in index["oracles"]:
        if os.path.realpath(os.path.join(base, entry["table_dir"])) != table:
            continue
        with open(os.path.join(base, entry["sidecar"])) as f:
            floats = {c["name"] for c in json.load(f)["columns"] if c["type"] == "float"}
        rows = []
        with open(os.path.join(base, entry["rows_file"]), encoding="utf-8") as f:
            for line in f:
                r = json.loads(line, parse_float=Decimal)
                for n in floats:  # print floats as float32 shortest text, like C would
                    if isinstance(r[n], (int, Decimal)):
                        r[n] = Raw(float32_text(float(r[n])))
                rows.append({k: (Raw(str(v)) if isinstance(v, Decimal) else v)
                             for k, v in r.items()})
        return rows
    return None


# --- main ------------------------------------------------------------------------

def breakage(rows, mode):
    if mode == "drop-row" and rows:
        rows.pop()
    elif mode == "key-order":
        rows[:] = [dict(reversed(list(r.items()))) for r in rows]
    elif mode == "float-off":
        for r in rows:
            for k, v in r.items():
                if isinstance(v, Raw) and re.search(r"[.eE]", v.text):
                    x = float(v.text) * 1.001
                    r[k] = Raw(repr(x)) if math.isfinite(x) else v


def main(argv):
    opts = parse_args(argv)
    mode = os.environ.get("FAKE_SCAN_BREAK", "")
    if mode == "sleep":
        time.sleep(3600)
    corpus = os.path.join(os.environ["ICD_SHARED"], "corpus")
    table = os.path.realpath(opts["table"])
    if not os.path.isdir(os.path.join(table, "metadata")):
        die("%s: not a table directory" % opts["table"])
    # no-remap: behave like a reader that ignores --remap (the check must then fail)
    check_remaps(table, [] if mode == "no-remap" else opts["remaps"])
    rows = impala_raw_rows(corpus, table, opts) if mode == "impala-format" else None
    if rows is None:
        rows = impala_rows(corpus, table, opts)
    if rows is None:
        rows = icebird_rows(corpus, table, opts)
    if rows is None:
        die("fake: no oracle for %s" % table)
    breakage(rows, mode)
    random.Random("%s %s" % (opts["snapshot"], opts["threads"])).shuffle(rows)
    sys.stdout.write("".join(dumps(r) + "\n" for r in rows))
    return 0


def impala_raw_rows(corpus, table, opts):
    exp = os.path.join(corpus, "expected")
    with open(os.path.join(exp, "index.json")) as f:
        for entry in json.load(f)["oracles"]:
            if os.path.realpath(os.path.join(corpus, "impala", entry["table_dir"])) == table \
                    and entry["kind"] == "rows" and opts["snapshot"] is None:
                with open(os.path.join(exp, entry["name"] + ".json")) as g:
                    side = json.load(g)
                with open(os.path.join(exp, side["rows_file"])) as g:
                    return [json.loads(x) for x in g if x.strip()]
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv))
