#!/usr/bin/env python3
"""A streamed plan gives what the materialized plan gives (scan_plan.h: `tasks` and
`plan --spec` stream the data manifests against the delete index; `scan`, `read`, `serve`,
`diff` and the API collect the same stream into a materialized plan).

With tests/tools/plan_stream_tool (build/tests/plan_stream_tool):
  * every corpus table (impala, icebird): the tasks of ice_scan_plan_build and of two runs
    of the stream (and one without delete lookups) are the same, in the same order, with
    the same counts, with 1 and 3 threads (3: manifests read in windows of three);
  * tables written by build/bench/tool_gen_manifests with many manifests (linear layout,
    where every data file has deletes, and the default one): the same, and `plan --spec`
    (dr_plan_write) writes the same bytes from a materialized and from a streamed plan;
    `icedruid tasks` and `icedruid plan --spec` print the same bytes with 1 and 3 threads.
The generated part is skipped without tool_gen_manifests (it needs libavro-dev); the whole
test exits 77 when neither the corpus nor the generator is there.
"""
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
import ice_min  # noqa: E402

SHARED = os.environ.get("ICD_SHARED", "")
ICEDRUID = os.environ.get("ICEDRUID", "")
BUILD = os.environ.get("ICD_BUILD_DIR", "build")
TOOL = os.path.join(BUILD, "tests", "plan_stream_tool")
GEN = os.path.join(BUILD, "bench", "tool_gen_manifests")

failures = []
checked = 0


def fail(msg):
    failures.append(msg)
    print("FAIL", msg)


def metadata_path(table_dir):
    best = None
    for p in glob.glob(os.path.join(table_dir, "metadata", "*.metadata.json")):
        b = os.path.basename(p)
        n = b[1:].split(".")[0] if b.startswith("v") else b.split("-")[0]
        if n.isdigit() and (best is None or int(n) > best[0]):
            best = (int(n), p)
    return best[1] if best else None


def tool(args, label):
    global checked
    p = subprocess.run([TOOL] + args, capture_output=True, text=True, timeout=600)
    out = p.stdout.strip()
    if p.returncode == 2 and out.startswith("error "):
        return  # both ways fail alike before comparing (the corpus has broken tables)
    checked += 1
    if p.returncode != 0:
        fail("%s: %s %s" % (label, out, p.stderr.strip()))


def corpus_tables():
    out = []
    for sub in ("impala", "icebird"):
        root = os.path.join(SHARED, "corpus", sub)
        for dirpath, dirnames, _files in os.walk(root):
            if "metadata" in dirnames and metadata_path(dirpath):
                out.append(dirpath)
                dirnames[:] = []
    return sorted(out)


def check_corpus():
    for tdir in corpus_tables():
        try:
            w = ice_min.Walker(tdir, os.path.basename(tdir) == "iceberg_multiple_storage_locations")
            remap = w.remap_args()
        except Exception:  # noqa: BLE001 (tables the walker cannot read: remap the location)
            remap = []
        for threads in ("1", "3"):
            tool(["tasks", metadata_path(tdir), threads] + remap,
                 "%s --threads %s" % (os.path.relpath(tdir, SHARED), threads))


SPEC = """{"type":"index_parallel","spec":{"dataSchema":{"dataSource":"t",
"timestampSpec":{"column":"day","format":"auto"},"dimensionsSpec":{"dimensions":["region"]},
"granularitySpec":{"segmentGranularity":"day","rollup":false}},
"ioConfig":{"type":"index_parallel","inputSource":{"type":"iceberg","tableName":"t",
"namespace":"ns","icebergCatalog":{"type":"local","warehousePath":"%s","catalogProperties":{}},
"warehouseSource":{"type":"local"}},"inputFormat":{"type":"parquet"}},
"tuningConfig":{"type":"index_parallel"}}}"""


def same_cli_output(args, label):
    global checked
    outs = []
    for threads in ("1", "3"):
        p = subprocess.run([ICEDRUID] + args + ["--threads", threads], capture_output=True,
                           timeout=600)
        if p.returncode != 0:
            fail("%s --threads %s: exit %d: %s" % (label, threads, p.returncode,
                                                   p.stderr.decode(errors="replace").strip()))
            return
        outs.append(p.stdout)
    checked += 1
    if outs[0] != outs[1]:
        fail("%s: the output with 3 threads differs from the one with 1" % label)


def check_generated(tmp):
    # (data files, delete files, data manifests, delete manifests, layout)
    for ndata, ndel, ndm, nxm, layout in ((3000, 300, 37, 7, "linear"), (2000, 200, 23, 5, "")):
        wh = os.path.join(tmp, "wh%d" % ndata)
        table = os.path.join(wh, "ns", "t")
        os.makedirs(os.path.join(wh, "ns"))
        args = [GEN, table, str(ndata), str(ndel), str(ndm), str(nxm)] + ([layout] if layout else [])
        p = subprocess.run(args, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            fail("tool_gen_manifests %s: %s" % (" ".join(args[2:]), p.stderr.strip()))
            continue
        label = "generated %d/%d %s" % (ndata, ndel, layout or "default")
        for threads in ("1", "3"):
            tool(["tasks", metadata_path(table), threads], "%s tasks --threads %s" % (label, threads))
        same_cli_output(["tasks", table], label + " icedruid tasks")
        if layout != "linear":
            continue  # (the default layout has delete-free files, whose footers plan reads)
        spec = os.path.join(tmp, "spec%d.json" % ndata)
        with open(spec, "w") as f:
            f.write(SPEC % wh)
        for threads in ("1", "3"):
            tool(["plan", spec, threads], "%s plan --threads %s" % (label, threads))
        same_cli_output(["plan", "--spec", spec], label + " icedruid plan --spec")


def main():
    if not ICEDRUID or not os.path.exists(TOOL):
        print("ICEDRUID or %s missing" % TOOL)
        return 1
    have_corpus = SHARED and os.path.isdir(os.path.join(SHARED, "corpus", "impala"))
    have_gen = os.path.exists(GEN)
    if not have_corpus and not have_gen:
        print("skipped: no corpus (ICD_SHARED) and no tool_gen_manifests")
        return 77
    if have_corpus:
        check_corpus()
    if have_gen:
        with tempfile.TemporaryDirectory() as tmp:
            check_generated(tmp)
    else:
        print("note: build/bench/tool_gen_manifests missing (libavro-dev): generated tables skipped")
    print("%d comparisons, %d failed" % (checked, len(failures)))
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
