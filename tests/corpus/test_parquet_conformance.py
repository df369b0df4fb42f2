#!/usr/bin/env python3
"""Parquet conformance: `icedruid cat` over every file of $ICD_SHARED/corpus/parquet/.

Applies the comparison rules of corpus/parquet/README.md ("Comparison rules"):
line by line, structural JSON comparison with object key order, FLOAT/DOUBLE/FLOAT16
numbers equal within a relative 1e-6, every other value exact (integers are parsed as
arbitrary precision, never as doubles); "expect": "error" means a non-zero exit, one clear
line on stderr and no rows on stdout; "error_or_rows" accepts either outcome.
Python 3 standard library only. Exit 77 (skipped) when the corpus is absent.
"""
import json
import os
import subprocess
import sys
from decimal import Decimal

ICEDRUID = os.environ.get("ICEDRUID", "icedruid")
SHARED = os.environ.get("ICD_SHARED", "")
ROOT = os.path.join(SHARED, "corpus", "parquet")
TIMEOUT = 300


def parse_line(line):
    # object_pairs_hook keeps the key order (and duplicate keys) for the comparison
    return json.loads(line, parse_int=int, parse_float=Decimal,
                      object_pairs_hook=lambda pairs: ("__obj__", pairs))


def is_obj(v):
    return isinstance(v, tuple) and len(v) == 2 and v[0] == "__obj__"


def same(a, b, path):
    """Returns None when equal, else a description of the first difference."""
    if is_obj(a) or is_obj(b):
        if not (is_obj(a) and is_obj(b)):
            return f"{path}: object vs non-object"
        ka = [k for k, _ in a[1]]
        kb = [k for k, _ in b[1]]
        if ka != kb:
            return f"{path}: keys {ka} != expected {kb}"
        for (k, va), (_, vb) in zip(a[1], b[1]):
            d = same(va, vb, f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)):
            return f"{path}: array vs non-array"
        if len(a) != len(b):
            return f"{path}: {len(a)} elements != expected {len(b)}"
        for i, (va, vb) in enumerate(zip(a, b)):
            d = same(va, vb, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return None if (a is b or (type(a) == type(b) and a == b)) else f"{path}: {a!r} != expected {b!r}"
    if isinstance(a, str) or isinstance(b, str):
        return None if a == b else f"{path}: {a!r} != expected {b!r}"
    # numbers: a Decimal on either side stands for a float/double value
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        da, db = Decimal(a), Decimal(b)
        if da == db or (da == 0 and db == 0):
            return None
        if db != 0 and abs(da - db) <= abs(db) * Decimal("1e-6"):
            return None
        if da != 0 and abs(da - db) <= abs(da) * Decimal("1e-6"):
            return None
        return f"{path}: {a} != expected {b}"
    return None if a == b else f"{path}: {a} != expected {b}"


def check_rows(out_lines, exp_lines):
    if len(out_lines) != len(exp_lines):
        return f"{len(out_lines)} rows != expected {len(exp_lines)}"
    for i, (o, e) in enumerate(zip(out_lines, exp_lines)):
        try:
            ov = parse_line(o)
        except ValueError as ex:
            return f"row {i + 1}: invalid JSON ({ex}): {o[:200]}"
        d = same(ov, parse_line(e), f"row {i + 1}")
        if d:
            return d
    return None


def check_error(proc):
    if proc.returncode == 0:
        return "expected an error, got exit status 0"
    if proc.returncode < 0 or proc.returncode > 125:
        return f"crashed (status {proc.returncode})"
    if any(l.strip().startswith("{") for l in proc.stdout.splitlines()):
        return "printed rows before failing"
    err = [l for l in proc.stderr.splitlines() if l.strip()]
    if len(err) != 1:
        return f"expected one stderr line, got {len(err)}: {proc.stderr[:300]!r}"
    return None


def run(path):
    return subprocess.run([ICEDRUID, "cat", path], capture_output=True, text=True,
                          timeout=TIMEOUT, errors="replace")


def main():
    if not os.path.isdir(ROOT):
        print(f"skipped: no Parquet corpus at {ROOT} (set ICD_SHARED)")
        return 77
    passed = failed = 0
    for dirpath, _, files in sorted(os.walk(ROOT)):
        for name in sorted(files):
            if not name.endswith(".json") or name.endswith(".expected.jsonl"):
                continue
            data = os.path.join(dirpath, name[:-5])
            if not os.path.isfile(data):
                continue
            with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                side = json.load(f)
            expect = side.get("expect", "rows")
            rel = os.path.relpath(data, ROOT)
            try:
                proc = run(data)
            except subprocess.TimeoutExpired:
                print(f"FAIL {rel}: timed out")
                failed += 1
                continue
            problem = None
            if expect == "error":
                problem = check_error(proc)
            else:
                with open(data + ".expected.jsonl", encoding="utf-8") as f:
                    exp_lines = [l for l in f.read().split("\n") if l.strip()]
                out_lines = [l for l in proc.stdout.split("\n") if l.strip()]
                if proc.returncode != 0:
                    if expect == "error_or_rows":
                        problem = check_error(proc)
                    else:
                        problem = f"exit status {proc.returncode}: {proc.stderr.strip()[:300]}"
                else:
                    problem = check_rows(out_lines, exp_lines)
            if problem:
                print(f"FAIL {rel}: {problem}")
                failed += 1
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
