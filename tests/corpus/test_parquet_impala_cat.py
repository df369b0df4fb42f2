#!/usr/bin/env python3
"""Every Parquet file of the Impala corpus ($ICD_SHARED/corpus/impala/, data and delete
files, found by their PAR1 magic whatever their name) is read by `icedruid cat` without
error, and the number of rows printed equals the footer's num_rows.

The footer num_rows is taken from `icedruid inspect` and cross-checked independently: a
small Thrift compact-protocol reader below decodes FileMetaData.num_rows (field 3) and the
row groups' num_rows (RowGroup field 3) straight from the file bytes.
Python 3 standard library only. Exit 77 (skipped) when the corpus is absent.
"""
import json
import os
import struct
import subprocess
import sys

ICEDRUID = os.environ.get("ICEDRUID", "icedruid")
SHARED = os.environ.get("ICD_SHARED", "")
ROOT = os.path.join(SHARED, "corpus", "impala")


class Compact:
    """Just enough of the Thrift compact protocol to walk FileMetaData."""

    def __init__(self, data):
        self.d = data
        self.p = 0

    def byte(self):
        b = self.d[self.p]
        self.p += 1
        return b

    def varint(self):
        shift = v = 0
        while True:
            b = self.byte()
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    def zigzag(self):
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def skip(self, t):
        if t in (1, 2):  # bool in a field header: nothing follows
            return
        if t == 3:
            self.p += 1
        elif t in (4, 5, 6):
            self.varint()
        elif t == 7:
            self.p += 8
        elif t == 8:
            n = self.varint()
            self.p += n
        elif t in (9, 10):
            et, n = self.list_header()
            for _ in range(n):
                if et in (1, 2):
                    self.p += 1
                else:
                    self.skip(et)
        elif t == 11:
            n = self.varint()
            if n:
                kv = self.byte()
                for _ in range(n):
                    for et in (kv >> 4, kv & 15):
                        if et in (1, 2):
                            self.p += 1
                        else:
                            self.skip(et)
        elif t == 12:
            for _ in self.fields():
                pass
        else:
            raise ValueError(f"unknown thrift type {t}")

    def list_header(self):
        b = self.byte()
        n = b >> 4
        if n == 15:
            n = self.varint()
        return b & 15, n

    def fields(self):
        """Yields (id, type) of each field of a struct; the caller reads or skips the value
        (values it ignores are skipped here)."""
        last = 0
        while True:
            b = self.byte()
            if b == 0:
                return
            t = b & 15
            delta = b >> 4
            fid = last + delta if delta else self.zigzag()
            last = fid
            start = self.p
            yield fid, t
            if self.p == start:
                self.skip(t)


def footer_rows(path):
    with open(path, "rb") as f:
        f.seek(-8, 2)
        tail = f.read(8)
        (n,) = struct.unpack("<I", tail[:4])
        f.seek(-8 - n, 2)
        r = Compact(f.read(n))
    num_rows, rg_rows = None, []
    for fid, t in r.fields():
        if fid == 3 and t == 6:
            num_rows = r.zigzag()
        elif fid == 4 and t == 9:
            _, count = r.list_header()
            for _ in range(count):
                for gid, gt in r.fields():
                    if gid == 3 and gt == 6:
                        rg_rows.append(r.zigzag())
    return num_rows, rg_rows


def parquet_files():
    for dirpath, _, files in os.walk(ROOT):
        for name in sorted(files):
            p = os.path.join(dirpath, name)
            try:
                with open(p, "rb") as f:
                    if f.read(4) == b"PAR1":
                        yield p
            except OSError:
                pass


def main():
    if not os.path.isdir(ROOT):
        print(f"skipped: no Impala corpus at {ROOT} (set ICD_SHARED)")
        return 77
    passed = failed = 0
    for path in sorted(parquet_files()):
        rel = os.path.relpath(path, ROOT)
        problem = None
        ins = subprocess.run([ICEDRUID, "inspect", path], capture_output=True, text=True)
        cat = subprocess.run([ICEDRUID, "cat", path], capture_output=True, text=True,
                             errors="replace")
        try:
            own_rows, rg_rows = footer_rows(path)
        except (ValueError, IndexError, struct.error) as ex:
            own_rows, rg_rows = None, []
            problem = f"test's own footer reader failed: {ex}"
        if ins.returncode != 0:
            problem = f"inspect failed: {ins.stderr.strip()[:300]}"
        elif cat.returncode != 0:
            problem = f"cat failed: {cat.stderr.strip()[:300]}"
        if not problem:
            meta = json.loads(ins.stdout)
            printed = sum(1 for l in cat.stdout.split("\n") if l.strip())
            rg_sum = sum(g["num_rows"] for g in meta["row_groups"])
            if meta["num_rows"] != own_rows:
                problem = f"inspect num_rows {meta['num_rows']} != footer {own_rows}"
            elif rg_sum != sum(rg_rows):
                problem = f"inspect row groups sum {rg_sum} != footer {sum(rg_rows)}"
            elif printed != own_rows:
                problem = f"cat printed {printed} rows, footer num_rows is {own_rows}"
            elif own_rows != sum(rg_rows):
                problem = f"footer num_rows {own_rows} != row groups {sum(rg_rows)}"
            else:
                for i, line in enumerate(l for l in cat.stdout.split("\n") if l.strip()):
                    try:
                        if not isinstance(json.loads(line), dict):
                            raise ValueError("not an object")
                    except ValueError as ex:
                        problem = f"row {i + 1} is not a JSON object: {ex}"
                        break
        if problem:
            print(f"FAIL {rel}: {problem}")
            failed += 1
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
