"""`icedruid inspect` on Iceberg manifest lists and manifests prints their entries.

For every Avro file under the corpus' metadata folders: the file is recognised as a manifest
list or a manifest (by its record schema, since Impala-written files carry no Iceberg header
keys), and the number of entries equals the record count inspect reports from the block
headers. Manifest entries carry status and data_file; manifest-list entries manifest_path.
"""
import glob
import json
import os
import subprocess
import sys

shared = os.environ.get("ICD_SHARED", "")
exe = os.environ.get("ICEDRUID", "icedruid")
root = os.path.join(shared, "corpus")
if not os.path.isdir(root):
    print(f"SKIP: corpus not found at {root}")
    sys.exit(77)

passed = failed = 0
for path in sorted(glob.glob(os.path.join(root, "**", "metadata", "*.avro"), recursive=True)):
    p = subprocess.run([exe, "inspect", path], capture_output=True, text=True)
    try:
        assert p.returncode == 0, p.stderr.strip()
        d = json.loads(p.stdout)
        kind = d.get("iceberg_file")
        assert kind in ("manifest", "manifest_list"), f"not recognised: {kind}"
        assert len(d["entries"]) == d["records"], "entries != records"
        if kind == "manifest":
            assert all("status" in e and "data_file" in e for e in d["entries"])
        else:
            assert all("manifest_path" in e for e in d["entries"])
        if os.path.basename(path).startswith("snap-"):
            assert kind == "manifest_list", "snap-*.avro must be a manifest list"
        passed += 1
    except (AssertionError, ValueError, KeyError) as e:
        failed += 1
        print(f"FAIL {os.path.relpath(path, root)}: {e}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or not passed else 0)
