#!/usr/bin/env python3
"""`icedruid cat` and `icedruid inspect` on every ORC file of the Impala corpus.

Checked against independent oracles:
  * every file under corpus/impala/ that starts with the "ORC" magic (data and position
    delete files) is read by `cat` without error, and its row count equals the footer's
    numberOfRows (and the sum of the stripes' row counts), both parsed here by a tiny
    protobuf reader over the postscript and the zlib-framed footer;
  * `inspect` reports the same row count and the same top-level column names and
    iceberg.id attributes as that parse;
  * for the ORC tables with expected results (corpus/expected/index.json, tag "orc"):
      - without delete files: the multiset of data-file rows, projected on the columns
        the data files hold, equals the expected rows projected the same way;
      - with position deletes: the data-file rows minus the rows named by the ORC
        position delete files (file_path basename + pos, as printed by `cat` of the delete
        files) equal the expected rows; so row positions are checked too.
Values are compared as Impala prints them: timestamps "YYYY-MM-DD HH:MM:SS[.f]" against
our "YYYY-MM-DDTHH:MM:SS.fffffffff", decimals exactly, floats with a relative tolerance.
Exit 77 (skipped) when ICD_SHARED is absent.
"""
import collections
import decimal
import json
import os
import subprocess
import sys
import zlib

SHARED = os.environ.get("ICD_SHARED", "")
ICEDRUID = os.environ.get("ICEDRUID", "")
if not SHARED or not os.path.isdir(os.path.join(SHARED, "corpus", "impala")):
    print("skipped: ICD_SHARED/corpus/impala not found")
    sys.exit(77)
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

IMPALA = os.path.join(SHARED, "corpus", "impala")
EXPECTED = os.path.join(SHARED, "corpus", "expected")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


# ---- a tiny protobuf reader ----

def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    """[(field number, value)]: ints for varints, bytes for length-delimited."""
    out, i = [], 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        out.append((num, v))
    return out


def first(fs, num, default=None):
    for n, v in fs:
        if n == num:
            return v
    return default


def unframe(b, kind):
    """ORC chunk framing; kind 0 = none, 1 = zlib (the corpus only has these)."""
    if kind == 0:
        return b
    if kind != 1:
        return None
    out, i = b"", 0
    while i < len(b):
        h = b[i] | b[i + 1] << 8 | b[i + 2] << 16
        i += 3
        n = h >> 1
        chunk = b[i:i + n]
        i += n
        out += chunk if h & 1 else zlib.decompress(chunk, -15)
    return out


def orc_footer(path):
    with open(path, "rb") as fh:
        data = fh.read()
    pslen = data[-1]
    ps = fields(data[-1 - pslen:-1])
    flen = first(ps, 1)
    comp = first(ps, 2, 0)
    assert first(ps, 8000) == b"ORC", path
    foot = unframe(data[-1 - pslen - flen:-1 - pslen], comp)
    if foot is None:
        return None
    ft = fields(foot)
    stripes = [fields(v) for n, v in ft if n == 3]
    types = [fields(v) for n, v in ft if n == 4]
    root = types[0]
    names = [v.decode() for n, v in root if n == 3]
    sub = []
    for n, v in root:
        if n == 2:  # packed subtypes
            j = 0
            while j < len(v):
                x, j = varint(v, j)
                sub.append(x)
    ids = []
    for t in sub:
        fid = None
        for n, v in types[t]:
            if n == 7:
                kv = dict(fields(v))
                if kv.get(1) == b"iceberg.id":
                    fid = int(kv[2])
        ids.append(fid)
    return {
        "rows": first(ft, 6),
        "stripe_rows": sum(first(s, 5, 0) for s in stripes),
        "names": names,
        "ids": ids,
    }


def run(args):
    p = subprocess.run([ICEDRUID] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# ---- every ORC file ----

orc_files = []
for dirpath, _, files in os.walk(IMPALA):
    for name in files:
        path = os.path.join(dirpath, name)
        with open(path, "rb") as fh:
            if fh.read(3) == b"ORC":
                orc_files.append(path)
orc_files.sort()
if len(orc_files) < 40:
    fail("expected the corpus to hold at least 40 ORC files, found %d" % len(orc_files))

rows_of = {}    # path -> list of row dicts
footer_of = {}
for path in orc_files:
    rel = os.path.relpath(path, IMPALA)
    ft = orc_footer(path)
    rc, out, err = run(["cat", path])
    if rc != 0:
        fail("cat %s: exit %d: %s" % (rel, rc, err.strip()))
        continue
    rows = [json.loads(line) for line in out.splitlines()]
    rows_of[path] = rows
    footer_of[path] = ft
    if ft is None:
        print("note: %s uses a codec this test cannot decode; row count not cross-checked" % rel)
        continue
    if ft["rows"] != ft["stripe_rows"]:
        fail("%s: footer numberOfRows %s != sum of stripe rows %s" % (rel, ft["rows"], ft["stripe_rows"]))
    if len(rows) != ft["rows"]:
        fail("%s: cat printed %d rows, footer says %d" % (rel, len(rows), ft["rows"]))
    if rows and list(rows[0].keys()) != ft["names"]:
        fail("%s: cat keys %s != footer field names %s" % (rel, list(rows[0].keys()), ft["names"]))
    rc, out, err = run(["inspect", path])
    if rc != 0:
        fail("inspect %s: exit %d: %s" % (rel, rc, err.strip()))
        continue
    ins = json.loads(out)
    if ins["rows"] != ft["rows"]:
        fail("%s: inspect rows %s != %s" % (rel, ins["rows"], ft["rows"]))
    kids = ins["schema"].get("children", [])
    if [k["name"] for k in kids] != ft["names"]:
        fail("%s: inspect column names differ from the footer" % rel)
    if [k.get("field_id") for k in kids] != ft["ids"]:
        fail("%s: inspect field ids %s != iceberg.id attributes %s"
             % (rel, [k.get("field_id") for k in kids], ft["ids"]))
print("cat/inspect: %d ORC files, %d rows" % (len(rows_of), sum(len(r) for r in rows_of.values())))


# ---- expected results ----

def norm_ts(s):
    """'2020-01-01 09:00:00[.123]' or '2020-01-01T09:00:00.123000000' -> (text, nanos)."""
    s = s.replace("T", " ")
    if "." in s:
        head, frac = s.split(".", 1)
        return head, int((frac + "000000000")[:9])
    return s, 0


def same(ours, exp):
    if exp is None or ours is None:
        return ours is exp
    if isinstance(exp, bool) or isinstance(ours, bool):
        return ours == exp
    if isinstance(exp, (int, float)) and isinstance(ours, str):  # decimal
        try:
            return decimal.Decimal(ours) == decimal.Decimal(repr(exp))
        except decimal.InvalidOperation:
            return False
    if isinstance(exp, float) or isinstance(ours, float):
        if not isinstance(ours, (int, float)):
            return False
        return abs(ours - exp) <= 1e-6 * max(1.0, abs(exp))
    if isinstance(exp, str) and isinstance(ours, str) and len(exp) >= 19 and exp[4] == "-" \
            and exp[10] == " " and len(ours) >= 19 and ours[10] == "T":
        return norm_ts(ours) == norm_ts(exp)
    return ours == exp


def match_multiset(ours, exp, what, exact):
    """Each expected row matched to a distinct row of ours; `exact`: no rows left over."""
    left = list(ours)
    for e in exp:
        for i, o in enumerate(left):
            if all(same(o.get(k), v) for k, v in e.items()):
                del left[i]
                break
        else:
            fail("%s: expected row %s not found" % (what, json.dumps(e)))
            return
    if exact and left:
        fail("%s: %d rows beyond the expected ones, e.g. %s" % (what, len(left), json.dumps(left[0])))


index = json.load(open(os.path.join(EXPECTED, "index.json")))
checked = 0
for oracle in index["oracles"]:
    if "orc" not in oracle.get("tags", []) or oracle.get("kind") != "rows":
        continue
    side = json.load(open(os.path.join(EXPECTED, oracle["name"] + ".json")))
    if not side.get("rows_file"):
        continue
    exp_rows = [json.loads(l) for l in open(os.path.join(EXPECTED, side["rows_file"])) if l.strip()]
    tdir = os.path.join(IMPALA, oracle["table_dir"])
    data, deletes = [], []
    for path in orc_files:
        if not path.startswith(tdir + os.sep):
            continue
        ft = footer_of.get(path)
        if ft and ft["names"][:2] == ["file_path", "pos"]:
            deletes.append(path)
        else:
            data.append(path)
    if not data:
        fail("%s: no ORC data files under %s" % (oracle["name"], oracle["table_dir"]))
        continue
    cols = set(rows_of[data[0]][0].keys()) if rows_of.get(data[0]) else set()
    proj_exp = [{k: v for k, v in r.items() if k in cols} for r in exp_rows]
    if deletes:
        deleted = collections.defaultdict(set)
        for d in deletes:
            for row in rows_of[d]:
                deleted[os.path.basename(row["file_path"])].add(row["pos"])
        surviving = []
        for path in data:
            gone = deleted.get(os.path.basename(path), set())
            for pos in gone:
                if pos >= len(rows_of[path]):
                    fail("%s: delete position %d beyond %s's %d rows"
                         % (oracle["name"], pos, os.path.basename(path), len(rows_of[path])))
            surviving += [r for i, r in enumerate(rows_of[path]) if i not in gone]
        all_rows = [r for p in data for r in rows_of[p]]
        match_multiset(all_rows, proj_exp, oracle["name"] + " (data files contain expected)", False)
        match_multiset(surviving, proj_exp, oracle["name"] + " (after position deletes)", True)
    else:
        all_rows = [{k: v for k, v in r.items() if k in cols} for p in data for r in rows_of[p]]
        match_multiset(all_rows, proj_exp, oracle["name"], True)
    checked += 1
    print("%s: %d data files, %d delete files, %d expected rows, columns compared %s"
          % (oracle["name"], len(data), len(deletes), len(exp_rows), sorted(cols & set(exp_rows[0]) if exp_rows else cols)))

if checked < 4:
    fail("expected at least 4 ORC oracles, checked %d" % checked)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
