#!/usr/bin/env python3
"""A small sample of bench/delete_bitflip.py (one bit flipped every 151 bytes of each
position and equality delete file of five corpus tables): no flip may give exit 0 with
rows other than the intact table's, and every failure must be one line naming the file.
Then the same for the manifests of two tables (one bit every 23 bytes): a flipped file_path
bound, referenced_data_file or file_format must be an error naming the manifest, never rows
with deletes missing. Exit 77 when the corpus is absent. The full experiment:
bench/delete_bitflip.py --stride 1 [--what manifests]."""
import os
import subprocess
import sys

src = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
shared = os.environ.get("ICD_SHARED", "")
if not shared or not os.path.isdir(os.path.join(shared, "corpus", "impala")):
    print("SKIP: no corpus at $ICD_SHARED/corpus/impala")
    sys.exit(77)
script = os.path.join(src, "bench", "delete_bitflip.py")
rc = subprocess.call([sys.executable, script, "--stride", "151"])
rc |= subprocess.call([sys.executable, script, "--what", "manifests", "--manifests-only",
                       "--stride", "23", "--tables",
                       "positional_not_all_data_files_have_delete_files,delete_equality"])
sys.exit(1 if rc else 0)
