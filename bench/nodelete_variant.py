#!/usr/bin/env python3
"""The no-delete baseline of bench/bench_scan.sh: a copy of a table's current metadata
whose current snapshot lists only the DATA manifests, so `icedruid scan` of it reads
exactly the same data files as the real scan, without any delete file.

Usage: nodelete_variant.py ICEDRUID TABLE_DIR FROM_PREFIX OUT_DIR
  writes OUT_DIR/nodeletes.metadata.json (read it with the same --remap FROM=TABLE_DIR)
  and OUT_DIR/nodeletes-manifest-list.avro (referenced by its real absolute path).

The manifest list is read with `icedruid cat` (records as JSON), filtered to content 0,
and written back with the repository's own Avro writer (tests/tools/icewriter) under the
original file's Avro schema and key/value metadata. Only this one snapshot changes.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
from icewriter import avro  # noqa: E402


def local(path, prefix, table):
    return table + path[len(prefix):] if path.startswith(prefix) else path


def avro_records(schema, recs):
    """JSON records from `icedruid cat` -> icewriter values (bytes fields are base64)."""
    import base64
    out = []
    for r in recs:
        parts = r.get("partitions")
        if parts:
            for p in parts:
                for k in ("lower_bound", "upper_bound"):
                    if p.get(k) is not None:
                        p[k] = base64.b64decode(p[k])
        if r.get("key_metadata") is not None:
            r["key_metadata"] = base64.b64decode(r["key_metadata"])
        out.append(r)
    return out


def main():
    icedruid, table, prefix, out_dir = sys.argv[1:5]
    md_dir = os.path.join(table, "metadata")
    hint = open(os.path.join(md_dir, "version-hint.text")).read().strip()
    md_path = os.path.join(md_dir, f"v{hint}.metadata.json")
    md = json.load(open(md_path))
    snap = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    ml = local(snap["manifest-list"], prefix, table)
    info = json.loads(subprocess.check_output([icedruid, "inspect", ml]))
    recs = [json.loads(line) for line in subprocess.check_output([icedruid, "cat", ml]).splitlines()]
    data = [r for r in recs if r.get("content", 0) == 0]
    if len(data) == len(recs):
        sys.exit("nodelete_variant: the current snapshot has no delete manifests")
    meta = {k: v for k, v in info["metadata"].items() if not k.startswith("avro.")}
    new_ml = os.path.join(os.path.abspath(out_dir), "nodeletes-manifest-list.avro")
    avro.write_container(new_ml, info["schema"], avro_records(info["schema"], data), metadata=meta)
    snap["manifest-list"] = new_ml
    for k in list(snap.get("summary", {})):
        if "delete" in k:
            del snap["summary"][k]
    out_md = os.path.join(out_dir, "nodeletes.metadata.json")
    with open(out_md, "w") as f:
        json.dump(md, f)
    print(out_md)


if __name__ == "__main__":
    main()
