#!/usr/bin/env python3
"""`icedruid stage` over every corpus table (Impala tables with their --remap rules, the
icebird tables, ../shared/bench/bench2m) to a local directory; for each table:

  - the rows of the files the printed spec lists (raw + staged), read by DuckDB
    read_parquet and by hyparquet (Avro files: icebird's decoder), equal `icedruid scan`
    as multisets (tests/druid/stage_check.py normalises the readers' value forms);
  - a second run writes nothing (every staged file is found by its name);
  - staging again into another directory gives byte-identical files (determinism);
  - figures: files raw / staged, bytes written vs table bytes, stage time vs scan time.

  ICD_SHARED=../shared ICEDRUID=build/icedruid python3 bench/stage_corpus.py [NAME-SUBSTRING...]

Exit 0 when every compared table matched. Tables that cannot be staged (ORC data files
that need materializing: no ORC writer) are listed as such, with the error."""
import filecmp
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SOURCE, "tests", "druid"))
sys.path.insert(0, os.path.join(SOURCE, "tests", "corpus"))
os.environ.setdefault("ICD_SOURCE_DIR", SOURCE)
import stage_check as sc  # noqa: E402
from test_scan_oracles import compute_remaps  # noqa: E402

SHARED = os.environ.get("ICD_SHARED", os.path.join(SOURCE, "..", "shared"))


def corpus_tables():
    out = []
    imp = os.path.join(SHARED, "corpus", "impala")
    for root, dirs, files in os.walk(imp):
        if os.path.isdir(os.path.join(root, "metadata")) and any(
                f.endswith(".metadata.json") for f in os.listdir(os.path.join(root, "metadata"))):
            out.append(("impala/" + os.path.relpath(root, imp), root))
            dirs[:] = []
    for d in sorted(os.listdir(os.path.join(SHARED, "corpus", "icebird"))):
        t = os.path.join(SHARED, "corpus", "icebird", d, "table")
        if os.path.isdir(t):
            out.append(("icebird/" + d, t))
    b = os.path.join(SHARED, "bench", "bench2m", "table")
    if os.path.isdir(b):
        out.append(("bench2m", b))
    return sorted(out)


def remap_args(tdir):
    args = []
    for frm, to in compute_remaps(tdir):
        args += ["--remap", frm + "=" + to]
    return args


def main():
    want = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="icd-stage-corpus-")
    ok = bad = skipped = 0
    try:
        for label, tdir in corpus_tables():
            if want and not any(w in label for w in want):
                continue
            name = label.replace("/", "__")
            wh = sc.link_table(tmp, tdir, name)
            spec = sc.write_spec(tmp, wh, name)
            rm = remap_args(tdir)
            to = os.path.join(tmp, "out", name)
            t0 = time.monotonic()
            doc, summ, r = sc.stage(spec, to, rm, ["--threads", "2"], ok=False)
            t_stage = time.monotonic() - t0
            if doc is None:
                print("SKIP %-60s stage failed: %s" % (label, r.stderr.strip()[:160]))
                skipped += 1
                continue
            t0 = time.monotonic()
            sc.run(["scan", tdir, "--threads", "2"] + rm)
            t_scan = time.monotonic() - t0
            files = sc.listed_files(doc) if doc["spec"]["ioConfig"]["inputSource"]["type"] == "local" else []
            try:
                problems, checked = sc.compare_table(tdir, spec, files, rm)
            except Exception as e:  # a reader failed: a finding, not a pass
                problems, checked = ["readback: %s" % e], {}
            # staged Parquet files: same physical / logical type and repetition per field id
            # as the data file they replace
            sp, nschema = sc.staged_schema_problems(spec, files, rm, tdir)
            problems += sp
            checked["schemas"] = nschema
            _, again, _ = sc.stage(spec, to, rm)
            if again["writtenFiles"] != 0:
                problems.append("rerun wrote %d files" % again["writtenFiles"])
            to2 = os.path.join(tmp, "out2", name)
            sc.stage(spec, to2, rm)
            for f in os.listdir(to):
                if not filecmp.cmp(os.path.join(to, f), os.path.join(to2, f), shallow=False):
                    problems.append("not deterministic: " + f)
            shutil.rmtree(to2)
            frac = summ["bytesWritten"] / summ["tableBytes"] if summ["tableBytes"] else 0
            line = ("%-60s raw %3d staged %3d  written %9d B = %5.1f%% of table %10d B  "
                    "stage %.2fs scan %.2fs  rows checked %s") % (
                label, summ["rawFiles"], summ["stagedFiles"], summ["bytesWritten"], 100 * frac,
                summ["tableBytes"], t_stage, t_scan, checked)
            if problems and not problems[0].startswith("not compared"):
                bad += 1
                print("FAIL " + line)
                for p in problems:
                    print("     " + p[:400])
            elif problems:
                skipped += 1
                print("SKIP " + line + "  (" + problems[0] + ")")
            else:
                ok += 1
                print("OK   " + line)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d ok, %d failed, %d not compared" % (ok, bad, skipped))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
