#!/usr/bin/env python3
"""A small sample of bench/delete_bitflip.py (one bit flipped every 151 bytes of each
position and equality delete file of five corpus tables): no flip may give exit 0 with
rows other than the intact table's, and every failure must be one line naming the file.
Exit 77 when the corpus is absent. The full experiment: bench/delete_bitflip.py --stride 1."""
import os
import subprocess
import sys

src = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
shared = os.environ.get("ICD_SHARED", "")
if not shared or not os.path.isdir(os.path.join(shared, "corpus", "impala")):
    print("SKIP: no corpus at $ICD_SHARED/corpus/impala")
    sys.exit(77)
sys.exit(subprocess.call([sys.executable, os.path.join(src, "bench", "delete_bitflip.py"),
                          "--stride", "151"]))
