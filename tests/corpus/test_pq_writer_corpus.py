#!/usr/bin/env python3
"""The Parquet writer over every table of $ICD_SHARED/corpus (impala + icebird).

For each table, bench/tool_pqwrite writes the Iceberg read of every Parquet data file of
the current snapshot (deletes applied, current names, partition / default values filled)
as a new Parquet file with "mirror the original" on, then checks, per data file:

* rows: the written file read back through the Iceberg reader gives exactly the rows
  (same JSON text) that the original task gives with its deletes;
* schema: every field id of the written file has the original node's physical type,
  length, repetition, converted and logical annotation and LIST / MAP shape, except
  where the read schema promoted the column since the file was written (int -> long,
  float -> double, decimal widening, date -> timestamp), where the written file takes
  the read type (checked: the written node is the read type's mapping).

Then the independent readers (pq_writer_oracles.mjs): DuckDB and hyparquet read every
written file and the original, and the written rows must equal the original's rows at
the positions the Iceberg read kept, value by value. The written files, the kept row
positions and the report stay in $ICD_BUILD_DIR/pq_writer_corpus/.
Exit 77 when the corpus, the tool or the npm packages are absent (after the writer's own
checks have run). Prints "N passed, N failed".
"""
import json
import os
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_scan_oracles import compute_remaps, current_metadata_file  # noqa: E402

SHARED = os.environ.get("ICD_SHARED", "")
BUILD = os.environ.get("ICD_BUILD_DIR", "build")
ICEDRUID = os.environ.get("ICEDRUID", os.path.join(BUILD, "icedruid"))
TOOL = os.path.join(BUILD, "bench", "tool_pqwrite")
OUT = os.path.join(BUILD, "pq_writer_corpus")

# (original physical / annotation prefix, read type prefix): promotions allowed to differ
PROMOTIONS = [
    ("INT32", "long"),
    ("FLOAT", "double"),
    ("INT32", "decimal"),  # decimal widening may move to INT64 / FIXED
    ("INT64", "decimal"),
    ("FIXED_LEN_BYTE_ARRAY", "decimal"),
    ("INT32", "timestamp"),  # date -> timestamp
]


def tables(corpus):
    for sub in ("impala", "icebird"):
        base = os.path.join(corpus, sub)
        for root, dirs, files in os.walk(base):
            if os.path.basename(root) == "metadata" and any(
                    f.endswith(".metadata.json") for f in files):
                yield os.path.dirname(root)
                dirs[:] = []


# Extra runs over a few tables with many types: each codec, PLAIN only, default sizes.
VARIANTS = [
    ("zstd", ["--codec", "zstd"]),
    ("gzip", ["--codec", "gzip", "--page-rows", "5"]),
    ("plain", ["--codec", "uncompressed", "--no-dict"]),
]
VARIANT_TABLES = ("iceberg_v3_all_types", "test_complex_default", "iceberg_alltypes_part",
                  "a_partitioned_mor", "airports_parquet", "iceberg_v2_delete_both_eq_and_pos")


def runs(tdir, name):
    yield "", ["--page-rows", "7", "--rg-bytes", "3000", "--dict-bytes", "200"]
    if any(name.endswith(t) or ("/" + t + "/") in name for t in VARIANT_TABLES):
        for suffix, args in VARIANTS:
            yield "@" + suffix, args


def promoted(diff):
    orig, rt = diff["original"], diff["read_type"]
    return any(orig.startswith(p) and rt.startswith(t) for p, t in PROMOTIONS)


def main():
    corpus = os.path.join(SHARED, "corpus")
    if not os.path.isdir(os.path.join(corpus, "impala")):
        print("skipped: no corpus at %s" % corpus)
        return 77
    if not os.path.exists(TOOL):
        print("skipped: %s is not built" % TOOL)
        return 77
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    passed = failed = 0
    report = []
    files = 0
    for tdir, suffix, args in [(t, s, a) for t in sorted(tables(corpus))
                               for s, a in runs(t, os.path.relpath(t, corpus))]:
        name = os.path.relpath(tdir, corpus) + suffix
        out = os.path.join(OUT, name.replace("/", "__"))
        os.makedirs(out)
        cmd = [TOOL, current_metadata_file(tdir), out]
        for frm, to in compute_remaps(tdir):
            cmd += ["--remap", "%s=%s" % (frm, to)]
        # first run: small pages / row groups / dictionaries (several of each even on
        # small files, dictionary fallback); then the variants
        cmd += args
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        problems = []
        lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
        if p.returncode != 0:
            err = (p.stderr.strip().splitlines() or ["?"])[-1]
            if "writing variant values" in err or "type variant" in err:
                print("note: %s: not written (variant columns are left out): %s" % (name, err))
                continue
            # a table `icedruid scan` refuses too is the reader's case, not the writer's
            scan = shlex.split(ICEDRUID) + ["scan", tdir]
            for frm, to in compute_remaps(tdir):
                scan += ["--remap", "%s=%s" % (frm, to)]
            sp = subprocess.run(scan, capture_output=True, text=True, timeout=300)
            if sp.returncode != 0:
                print("note: %s: the reader refuses it (scan fails too): %s" % (name, err))
                continue
            problems.append("tool failed: %s" % err)
        for x in lines:
            if "skipped" in x:
                continue
            files += 1
            x["table"] = name
            report.append(x)
            if not x.get("rows_equal"):
                problems.append("task %d (%s): rows differ" % (x["task"], x["data_file"]))
            for d in x.get("schema_diffs", []):
                if not promoted(d):
                    problems.append("task %d field %d %s: original %s, written %s (read type %s)"
                                    % (x["task"], d["field_id"], d["path"], d["original"],
                                       d["written"], d["read_type"]))
        if problems:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(problems[:4])))
        else:
            passed += 1
    with open(os.path.join(OUT, "report.json"), "w") as f:
        json.dump(report, f)
    print("%d data files rewritten" % files)
    # the independent readers: DuckDB and hyparquet, written file vs original at the kept
    # positions
    oracle = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pq_writer_oracles.mjs")
    o = subprocess.run(["node", oracle, os.path.join(OUT, "report.json")], capture_output=True,
                       text=True, timeout=600)
    sys.stdout.write(o.stdout)
    if o.returncode == 3 or (o.returncode != 0 and "Cannot find" in o.stderr):
        print("%d passed, %d failed (writer checks); oracles skipped: %s"
              % (passed, failed, o.stderr.strip()))
        return 1 if failed else 77
    if o.returncode != 0:
        failed += 1
        print("FAIL independent readers: %s" % (o.stderr.strip().splitlines() or [""])[-1])
    else:
        passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
