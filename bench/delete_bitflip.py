#!/usr/bin/env python3
"""Bit flips in the corpus's delete files: does `icedruid scan` ever return wrong rows?

For each table (a copy in a temp dir), the intact table is scanned once (the reference);
then for every delete file the scan plan uses (position and equality, Parquet and ORC), one
bit is flipped at a time, at byte offsets 0, STRIDE, 2*STRIDE, ... (bit (offset % 8)), the
table is scanned again and the run classified:

  error    exit 1..123 with ONE stderr line naming the delete file (a clear error)
  correct  exit 0 and the same rows as the intact table (as a multiset)
  WRONG    exit 0 and other rows (deleted rows back, or live rows gone): the failure
  unclear  any other failure (more than one line, a message not naming the file, a
           signal, a timeout)

  bench/delete_bitflip.py [--stride N] [--max-per-file N] [--tables a,b] [--icedruid CMD]
                          [--what deletes|manifests]

With --what manifests the bits are flipped in the current snapshot's manifest list and
manifests instead (issue 15.14: every error must name the damaged manifest).

Env: ICD_SHARED (holds corpus/). Prints one line per WRONG/unclear case and a summary;
exit 1 when any case is WRONG or unclear. tests/corpus/test_delete_bitflip.py runs it
with a small sample.
"""
import argparse
import collections
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

TABLES = [
    "hadoop_catalog/ice/iceberg_v2_positional_not_all_data_files_have_delete_files",
    "hadoop_catalog/ice/iceberg_v2_delete_equality",
    "hadoop_catalog/ice/iceberg_v2_delete_both_eq_and_pos",
    "hadoop_catalog/ice/iceberg_v2_delete_pos_and_multi_eq_ids",
    "hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes_orc",
]


def location(table_dir):
    md = os.path.join(table_dir, "metadata")
    v = max((int(m.group(1)), f) for f in os.listdir(md)
            if (m := re.fullmatch(r"v(\d+)\.metadata\.json", f)))
    with open(os.path.join(md, v[1])) as f:
        return json.load(f)["location"]


def scan(icd, table_dir, loc, timeout=60):
    try:
        p = subprocess.run(icd + ["scan", table_dir, "--remap", f"{loc}={table_dir}"],
                           capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout"
    return p.returncode, p.stdout, p.stderr


def delete_files(icd, table_dir, loc):
    plan = json.loads(subprocess.check_output(
        icd + ["tasks", table_dir, "--remap", f"{loc}={table_dir}"]))
    out = set()
    for t in plan["tasks"]:
        for f in t["delete_files"]:
            if f["kind"] in ("position_deletes", "equality_deletes"):
                p = f["path"]
                out.add((table_dir + p[len(loc):] if p.startswith(loc) else p, f["kind"]))
    return sorted(out)


def manifest_files(icd, table_dir, loc):
    """The current snapshot's manifest list and manifests."""
    md = os.path.join(table_dir, "metadata")
    v = max((int(m.group(1)), f) for f in os.listdir(md)
            if (m := re.fullmatch(r"v(\d+)\.metadata\.json", f)))
    with open(os.path.join(md, v[1])) as f:
        meta = json.load(f)
    snap = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    local = lambda p: table_dir + p[len(loc):] if p.startswith(loc) else p
    ml = local(snap["manifest-list"])
    out = [(ml, "manifest_list")]
    for line in subprocess.check_output(icd + ["cat", ml]).splitlines():
        out.append((local(json.loads(line)["manifest_path"]), "manifest"))
    return out


def rows(out):
    return collections.Counter(out.splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--max-per-file", type=int, default=100000)
    ap.add_argument("--tables", default="")
    ap.add_argument("--what", choices=("deletes", "manifests"), default="deletes",
                    help="flip bits in the delete files (default) or in the manifest list "
                         "and manifests (errors must name the manifest)")
    ap.add_argument("--manifests-only", action="store_true",
                    help="with --what manifests: not the manifest list (a flipped sequence "
                         "number there cannot be told from a real one)")
    ap.add_argument("--icedruid", default=os.environ.get("ICEDRUID", "build/icedruid"))
    a = ap.parse_args()
    icd = shlex.split(a.icedruid)
    corpus = os.path.join(os.environ.get("ICD_SHARED", "../shared"), "corpus", "impala")
    tables = [t for t in TABLES if not a.tables or any(x in t for x in a.tables.split(","))]
    totals = collections.Counter()
    by_kind = collections.defaultdict(collections.Counter)
    with tempfile.TemporaryDirectory(prefix="icd-bitflip-") as work:
        for rel in tables:
            src = os.path.join(corpus, rel)
            if not os.path.isdir(src):
                print(f"skip {rel}: not in the corpus")
                continue
            tdir = os.path.join(work, os.path.basename(rel))
            shutil.copytree(src, tdir)
            for root, _, files in os.walk(tdir):
                for f in files:
                    os.chmod(os.path.join(root, f), 0o644)
            loc = location(tdir)
            rc, ref_out, err = scan(icd, tdir, loc)
            if rc != 0:
                print(f"FAIL {rel}: the intact table does not scan: {err[:300]!r}")
                return 1
            ref = rows(ref_out)
            targets = (delete_files if a.what == "deletes" else manifest_files)(icd, tdir, loc)
            if a.manifests_only:
                targets = [t for t in targets if t[1] != "manifest_list"]
            for path, kind in targets:
                with open(path, "rb") as f:
                    orig = f.read()
                base = os.path.basename(path).encode()
                n = 0
                for off in range(0, len(orig), a.stride):
                    if n >= a.max_per_file:
                        break
                    n += 1
                    b = bytearray(orig)
                    b[off] ^= 1 << (off % 8)
                    with open(path, "wb") as f:
                        f.write(b)
                    rc, out, err = scan(icd, tdir, loc)
                    lines = err.splitlines()
                    if rc == 0:
                        cls = "correct" if rows(out) == ref else "WRONG"
                    elif rc is not None and 1 <= rc <= 123 and len(lines) == 1 and base in lines[0]:
                        cls = "error"
                    else:
                        cls = "unclear"
                    totals[cls] += 1
                    by_kind[kind][cls] += 1
                    if cls in ("WRONG", "unclear"):
                        print(f"{cls} {os.path.basename(rel)} {os.path.basename(path)} byte {off} "
                              f"bit {off % 8}: exit {rc}; {err[:300]!r}", flush=True)
                with open(path, "wb") as f:
                    f.write(orig)
    n = sum(totals.values())
    for kind, c in sorted(by_kind.items()):
        print(f"{kind}: {sum(c.values())} cases: {c['error']} error, {c['correct']} correct, "
              f"{c['WRONG']} WRONG, {c['unclear']} unclear")
    print(f"total: {n} cases: {totals['error']} error, {totals['correct']} correct, "
          f"{totals['WRONG']} WRONG ({100.0 * totals['WRONG'] / max(n, 1):.2f}%), "
          f"{totals['unclear']} unclear")
    return 1 if totals["WRONG"] or totals["unclear"] else 0


if __name__ == "__main__":
    sys.exit(main())
