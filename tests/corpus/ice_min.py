"""Independent Iceberg metadata walk for the planner tests (standard library only).

Reads a table's metadata JSON, manifest list and manifests with avro_min (never with
icedruid) and returns the raw facts a person needs to work out a scan plan by hand:
every manifest-list entry and every manifest entry with its status, its sequence numbers
(inherited from the manifest-list entry when null on an ADDED entry: spec "Sequence
Number Inheritance"), partition tuple, equality ids, referenced data file and file_path
bounds. It deliberately does NOT decide which deletes apply to which data file; the
tests write that down by hand.

Fields are read by Iceberg field id (spec "Manifests" / "Manifest Lists"), not by name.
"""
import json
import os
import re

import avro_min

# manifest list (spec "Manifest Lists")
ML_PATH, ML_LENGTH, ML_SPEC, ML_CONTENT = 500, 501, 502, 517
ML_SEQ, ML_MIN_SEQ, ML_SNAP = 515, 516, 503
ML_ADDED, ML_EXISTING, ML_DELETED = 504, 505, 506
# manifest entry (spec "Manifest Entry Fields")
E_STATUS, E_SNAP, E_SEQ, E_FSEQ, E_FILE = 0, 1, 3, 4, 2
# data_file struct (spec "Data File Fields")
F_CONTENT, F_PATH, F_FORMAT, F_PARTITION, F_RECORDS, F_SIZE = 134, 100, 101, 102, 103, 104
F_LOWER, F_UPPER, F_EQ_IDS, F_REF, F_OFFSET, F_CSIZE = 125, 128, 135, 143, 144, 145
FILE_PATH_COL = 2147483546  # position delete column file_path

STATUS = {0: "EXISTING", 1: "ADDED", 2: "DELETED"}
CONTENT = {0: "data", 1: "position_deletes", 2: "equality_deletes"}


def current_metadata_path(table_dir):
    """The highest v<N>.metadata.json (corpus README: always the current one)."""
    md = os.path.join(table_dir, "metadata")
    best = None
    for name in os.listdir(md):
        m = re.fullmatch(r"v(\d+)\.metadata\.json", name)
        if m and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), name)
    if best is None:
        raise RuntimeError("no v<N>.metadata.json in " + md)
    return os.path.join(md, best[1])


def load_metadata(table_dir):
    with open(current_metadata_path(table_dir)) as fh:
        return json.load(fh)


def remaps(table_dir, md, sibling_dirs=False):
    """[(from, to)] as the task brief defines: location -> table dir (and parent -> parent
    for tables whose files live in sibling directories)."""
    loc = md["location"].rstrip("/")
    table_dir = os.path.abspath(table_dir).rstrip("/")
    out = [(loc, table_dir)]
    if sibling_dirs:
        out.append((os.path.dirname(loc), os.path.dirname(table_dir)))
    return out


class Walker:
    def __init__(self, table_dir, sibling_dirs=False):
        self.table_dir = os.path.abspath(table_dir)
        self.md = load_metadata(table_dir)
        self.maps = remaps(table_dir, self.md, sibling_dirs)

    def local(self, path):
        """Applies the longest matching remap prefix (a prefix must end at a '/')."""
        for frm, to in sorted(self.maps, key=lambda m: -len(m[0])):
            if path == frm or path.startswith(frm + "/"):
                return to + path[len(frm):]
        return path

    def snapshot(self, snapshot_id=None):
        sid = self.md.get("current-snapshot-id") if snapshot_id is None else snapshot_id
        if sid is None or sid == -1:
            return None
        for s in self.md.get("snapshots", []):
            if s["snapshot-id"] == sid:
                return s
        raise KeyError("snapshot %s not in metadata" % sid)

    def manifest_list(self, snap):
        """Manifest-list entries as dicts (v1 inline manifests are not used in the corpus)."""
        c = avro_min.read(self.local(snap["manifest-list"]))
        out = []
        for r in c.records:
            out.append({
                "path": r.by_id(ML_PATH),
                "spec_id": r.by_id(ML_SPEC),
                "content": r.by_id(ML_CONTENT, 0) or 0,  # v1: data
                "sequence_number": r.by_id(ML_SEQ, 0) or 0,  # v1: 0
                "min_sequence_number": r.by_id(ML_MIN_SEQ, 0) or 0,
                "added_snapshot_id": r.by_id(ML_SNAP),
                "added_files": r.by_id(ML_ADDED),
                "existing_files": r.by_id(ML_EXISTING),
                "deleted_files": r.by_id(ML_DELETED),
            })
        return out

    def manifest(self, ml_entry):
        """All entries (DELETED ones included) of one manifest, inheritance applied."""
        c = avro_min.read(self.local(ml_entry["path"]))
        out = []
        for r in c.records:
            status = r.by_id(E_STATUS)
            df = r.by_id(E_FILE)
            seq = r.by_id(E_SEQ)
            fseq = r.by_id(E_FSEQ)
            # Inheritance: a null sequence number of an ADDED entry is the manifest's
            # sequence number; v1 manifests have no sequence numbers at all (0).
            if seq is None:
                seq = ml_entry["sequence_number"] if (status == 1 or ml_entry["sequence_number"] == 0) else None
            if fseq is None:
                fseq = ml_entry["sequence_number"] if (status == 1 or ml_entry["sequence_number"] == 0) else None
            snap = r.by_id(E_SNAP)
            if snap is None:
                snap = ml_entry["added_snapshot_id"]
            part = df.by_id(F_PARTITION)
            bounds = {}
            for fid, key in ((F_LOWER, "lower"), (F_UPPER, "upper")):
                for kv in df.by_id(fid) or []:
                    if kv["key"] == FILE_PATH_COL:
                        bounds[key] = kv["value"]
            out.append({
                "status": STATUS[status],
                "snapshot_id": snap,
                "sequence_number": seq,
                "file_sequence_number": fseq,
                "content": CONTENT[df.by_id(F_CONTENT, 0) or 0],
                "path": df.by_id(F_PATH),
                "name": os.path.basename(df.by_id(F_PATH)),
                "format": df.by_id(F_FORMAT),
                "spec_id": ml_entry["spec_id"],
                "partition": dict(part) if part is not None else {},
                "record_count": df.by_id(F_RECORDS),
                "file_size_in_bytes": df.by_id(F_SIZE),
                "equality_ids": df.by_id(F_EQ_IDS),
                "referenced_data_file": df.by_id(F_REF),
                "content_offset": df.by_id(F_OFFSET),
                "content_size_in_bytes": df.by_id(F_CSIZE),
                "file_path_bounds": bounds,
            })
        return out

    def entries(self, snap):
        """(manifest-list entry, manifest entries) for every manifest of the snapshot."""
        return [(m, self.manifest(m)) for m in self.manifest_list(snap)]

    def live_files(self, snap):
        """Live (ADDED/EXISTING) entries: (data, deletes)."""
        data, deletes = [], []
        if snap is None:
            return data, deletes
        for _m, ents in self.entries(snap):
            for e in ents:
                if e["status"] == "DELETED":
                    continue
                (data if e["content"] == "data" else deletes).append(e)
        return data, deletes

    def remap_args(self):
        out = []
        for frm, to in self.maps:
            out += ["--remap", "%s=%s" % (frm, to)]
        return out


def dump(table_dir, snapshot_id=None, sibling_dirs=False):
    """Human-readable listing of a snapshot's manifests (used while working out tests)."""
    w = Walker(table_dir, sibling_dirs)
    snap = w.snapshot(snapshot_id)
    print("table", table_dir)
    print("format", w.md.get("format-version"), "location", w.md["location"])
    print("specs", json.dumps(w.md.get("partition-specs")))
    for s in w.md.get("snapshots", []):
        print("snapshot", s["snapshot-id"], "seq", s.get("sequence-number"), "ts", s["timestamp-ms"],
              s.get("summary", {}).get("operation"), "parent", s.get("parent-snapshot-id"))
    print("snapshot-log", w.md.get("snapshot-log"))
    if snap is None:
        print("no snapshot")
        return
    print("selected", snap["snapshot-id"])
    for m, ents in w.entries(snap):
        print(" manifest", os.path.basename(m["path"]), "content", m["content"], "seq", m["sequence_number"],
              "minseq", m["min_sequence_number"], "spec", m["spec_id"], "added", m["added_files"],
              "existing", m["existing_files"], "deleted", m["deleted_files"])
        for e in ents:
            extra = ""
            if e["equality_ids"]:
                extra += " eq=%s" % e["equality_ids"]
            if e["referenced_data_file"]:
                extra += " ref=%s" % os.path.basename(e["referenced_data_file"])
            if e["file_path_bounds"]:
                b = e["file_path_bounds"]
                extra += " bounds=%s..%s" % (os.path.basename(b.get("lower", b"").decode()),
                                             os.path.basename(b.get("upper", b"").decode()))
            if e["content_offset"] is not None:
                extra += " off=%s len=%s" % (e["content_offset"], e["content_size_in_bytes"])
            print("   %-8s %-16s seq=%s fseq=%s part=%s rc=%s %s%s" % (
                e["status"], e["content"], e["sequence_number"], e["file_sequence_number"],
                e["partition"], e["record_count"], e["name"], extra))


if __name__ == "__main__":
    import sys
    dump(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "-" else None,
         len(sys.argv) > 3)
