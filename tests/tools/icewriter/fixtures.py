"""The tables icedruid ships and tests with, built with the writer in this package.

* ``write_examples``   examples/warehouse/demo/{orders,events} (committed; README's first command)
* ``write_alltypes``   one table with every primitive type, nulls, several row groups and pages,
                       dictionary pages and GZIP (for checking the Parquet writer with DuckDB
                       and hyparquet, and the readers' type handling)
* ``write_edge_cases`` delete-planning edge cases the fixed corpus lacks, each with a JSON
                       description of which delete files apply to which data files

Expected results here are written *by hand* from how each scenario is built; they are not
computed by running a planner, so they can serve as an oracle for icedruid's planner.
"""

import datetime as dt
import json
import os
from decimal import Decimal

from . import icetypes
from .iceberg import (Added, DataFile, NestedField, PartitionField, PartitionSpec, Schema,
                      Table, POSITION_DELETES)

UTC = dt.timezone.utc
EXAMPLE_PREFIX = "/tmp/icedruid-example/warehouse"
EDGE_PREFIX = "/tmp/icedruid-edge"


def _ts(text):
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def _json_rows(schema, rows):
    """Rows as icedruid `scan` prints them (design.md section 3), keys in schema order."""
    out = []
    for r in rows:
        d = dict(r) if isinstance(r, dict) else dict(zip((f.name for f in schema.fields), r))
        out.append({f.name: icetypes.to_json(f.type, icetypes.normalize(f.type, d.get(f.name)))
                    for f in schema.fields})
    return out


def _dump(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


# =========================================================================================
# Bundled examples
# =========================================================================================
ORDERS_SCHEMA = Schema([
    NestedField(1, "order_id", "long", required=True),
    NestedField(2, "event_ts", "timestamptz"),
    NestedField(3, "customer", "string"),
    NestedField(4, "product", "string"),
    NestedField(5, "amount", "decimal(10,2)"),
    NestedField(6, "quantity", "int"),
], identifier_field_ids=[1])

ORDERS_ROWS = [
    (1001, _ts("2024-06-01T09:15:00"), "alice", "widget", Decimal("19.99"), 2),
    (1002, _ts("2024-06-01T10:30:00"), "bob", "gadget", Decimal("5.49"), 1),
    (1003, _ts("2024-06-01T12:45:30"), "carol", "widget", Decimal("39.98"), 4),
    (1004, _ts("2024-06-01T15:05:00"), "alice", "gizmo", Decimal("120.00"), 1),
    (1005, _ts("2024-06-01T18:20:15"), "dave", "gadget", Decimal("10.98"), 2),
]

EVENTS_SCHEMA = Schema([
    NestedField(1, "event_id", "long", required=True),
    NestedField(2, "event_ts", "timestamptz", required=True),
    NestedField(3, "user_id", "string"),
    NestedField(4, "event_type", "string"),
    NestedField(5, "value", "double"),
])
EVENTS_SPEC = PartitionSpec([PartitionField(2, 1000, "event_ts_day", "day")])

EVENTS_DAY1 = [
    (1, _ts("2024-06-01T08:00:00"), "u1", "login", 1.0),
    (2, _ts("2024-06-01T08:05:30"), "u1", "click", 2.5),
    (3, _ts("2024-06-01T21:40:00"), "u2", "login", 1.0),
]
EVENTS_DAY2 = [
    (4, _ts("2024-06-02T07:30:00"), "u2", "purchase", 99.5),
    (5, _ts("2024-06-02T11:11:11"), "u3", "login", 1.0),
    (6, _ts("2024-06-02T23:59:59"), "u3", "logout", None),
]


def write_examples(out_dir, prefix=EXAMPLE_PREFIX):
    """Write demo/orders (v2, position + equality deletes) and demo/events (v1, no deletes).

    Everything is uncompressed so the committed bytes do not depend on the zlib build.
    """
    # --- orders: three snapshots; 1001 and 1003 survive -------------------------------------
    orders = Table.create(
        os.path.join(out_dir, "demo", "orders"), f"{prefix}/demo/orders", ORDERS_SCHEMA,
        table_uuid="5f0a8c3e-2b1d-4c6e-9a7f-0d1e2f3a4b5c", base_time_ms=1717286400000,
        properties={"write.format.default": "parquet", "write.delete.mode": "merge-on-read"})
    (data,) = orders.write_data(ORDERS_ROWS, dictionary={"customer"})
    orders.append([data])
    # Snapshot 2: position delete of rows 1 and 3 (order_id 1002 and 1004).
    orders.row_delta(deletes=[orders.write_position_deletes([(data, 1), (data, 3)])])
    # Snapshot 3: equality delete of order_id 1005.
    orders.row_delta(deletes=[orders.write_equality_deletes([{"order_id": 1005}], ["order_id"])])

    # --- events: format v1, day-partitioned, two appends, no deletes -----------------------
    events = Table.create(
        os.path.join(out_dir, "demo", "events"), f"{prefix}/demo/events", EVENTS_SCHEMA,
        EVENTS_SPEC, format_version=1, table_uuid="0b6e7c1d-3f2a-4d5b-8c9e-1a2b3c4d5e6f",
        base_time_ms=1717286400000, properties={"write.format.default": "parquet"})
    events.append(events.write_data(EVENTS_DAY1))
    events.append(events.write_data(EVENTS_DAY2))
    return orders, events


# =========================================================================================
# Every primitive type
# =========================================================================================
ALLTYPES_SCHEMA = Schema([
    NestedField(1, "id", "long", required=True),
    NestedField(2, "b", "boolean"),
    NestedField(3, "i", "int"),
    NestedField(4, "l", "long"),
    NestedField(5, "f", "float"),
    NestedField(6, "d", "double"),
    NestedField(7, "dec9", "decimal(9,2)"),
    NestedField(8, "dec18", "decimal(18,4)"),
    NestedField(9, "dec38", "decimal(38,10)"),
    NestedField(10, "dt", "date"),
    NestedField(11, "tm", "time"),
    NestedField(12, "ts", "timestamp"),
    NestedField(13, "tstz", "timestamptz"),
    NestedField(14, "s", "string"),
    NestedField(15, "s_dict", "string"),
    NestedField(16, "u", "uuid"),
    NestedField(17, "fx", "fixed[4]"),
    NestedField(18, "bin", "binary"),
])


def alltypes_rows(n=23):
    rows = []
    for k in range(n):
        null = k % 5 == 4  # every fifth row is null in every optional column
        rows.append({
            "id": k,
            "b": None if null else k % 3 == 0,
            "i": None if null else (k * 7919) % 1000 - 500,
            "l": None if null else ((k * 3 - 2 ** 62) if k % 2 else 2 ** 40 + k),
            "f": None if null else k * 0.25 - 2.0,
            "d": None if null else (k - 10) * 1.5e10,
            "dec9": None if null else Decimal(f"{(k - 11) * 123}.{k:02d}"),
            "dec18": None if null else Decimal(f"{k * 987654321}.{k:04d}"),
            "dec38": None if null else Decimal(f"-{k}12345678901234567890.{k:010d}"),
            "dt": None if null else dt.date(2024, 2, 28) + dt.timedelta(days=k),
            "tm": None if null else dt.time(k % 24, (k * 7) % 60, (k * 13) % 60, k * 1000),
            "ts": None if null else dt.datetime(2024, 6, 1, 12, 0, 0) + dt.timedelta(hours=k, microseconds=k),
            "tstz": None if null else _ts("2024-06-01T00:00:00") - dt.timedelta(days=400 * k),
            "s": None if null else f"str-{k}-\u00e9\u4e2d",
            "s_dict": None if null else ["red", "green", "blue"][k % 3],
            "u": None if null else f"00112233-4455-6677-8899-aabbccdd{k:04x}",
            "fx": None if null else bytes([k, 255 - k, 0, 7]),
            "bin": None if null else bytes(range(k % 6)),
        })
    return rows


def write_alltypes(out_dir, prefix=EDGE_PREFIX):
    """An unpartitioned v2 table 'alltypes' (GZIP pages, 3 row groups, 4-row pages)."""
    t = Table.create(os.path.join(out_dir, "alltypes"), f"{prefix}/alltypes", ALLTYPES_SCHEMA,
                     table_uuid="7a7a7a7a-1111-4222-8333-444455556666", codec="gzip",
                     manifest_codec="deflate")
    rows = alltypes_rows()
    files = t.write_data(rows, dictionary={"s_dict"}, row_group_rows=9, page_rows=4)
    t.append(files)
    _dump(os.path.join(out_dir, "alltypes.json"), {
        "name": "alltypes",
        "table": "alltypes",
        "location": t.location,
        "data_file": files[0].path,
        "expected_rows": _json_rows(ALLTYPES_SCHEMA, rows),
    })
    return t


# =========================================================================================
# Planner edge cases
# =========================================================================================
EDGE_SCHEMA = Schema([
    NestedField(1, "id", "long", required=True),
    NestedField(2, "category", "string"),
    NestedField(3, "note", "string"),
])


def _rows(ids, category="a"):
    return [{"id": i, "category": category, "note": f"row {i}"} for i in ids]


class Scenario:
    """Collects the hand-written expectations of one edge-case table and writes its JSON."""

    def __init__(self, out_dir, prefix, name, description, **table_options):
        self.name = name
        self.description = description
        self.out_dir = out_dir
        self.table = Table.create(os.path.join(out_dir, name), f"{prefix}/{name}", EDGE_SCHEMA,
                                  **table_options)
        self.data = []      # (DataFile, data seq, file seq, [delete DataFile])
        self.deletes = []   # (DataFile, data seq, note)
        self.expected_ids = []

    def expect_data(self, f: DataFile, data_seq, file_seq, deletes):
        self.data.append((f, data_seq, file_seq, list(deletes)))

    def expect_delete(self, f: DataFile, data_seq, note):
        self.deletes.append((f, data_seq, note))

    def _check_against_writer(self):
        """The writer must have produced the sequence numbers the scenario assumes."""
        live = {e.file.path: e for e in self.table.live_entries()}
        for f, dseq, fseq, _ in self.data:
            e = live[f.path]
            assert (e.data_sequence_number, e.file_sequence_number) == (dseq, fseq), (self.name, f.path)
        for f, dseq, _ in self.deletes:
            assert live[f.path].data_sequence_number == dseq, (self.name, f.path)
        expected_live = {f.path for f, *_ in self.data} | {f.path for f, *_ in self.deletes}
        assert expected_live == set(live), (self.name, sorted(set(live) ^ expected_live))

    def finish(self, all_rows):
        self._check_against_writer()
        t = self.table
        rel = lambda p: p[len(t.location) + 1:]
        spec_json = lambda f: {"spec_id": f.spec_id, "partition": [
            icetypes.to_json(t.specs[f.spec_id].result_type(pf, t.schema), v)
            for pf, v in zip(t.specs[f.spec_id].fields, f.partition)]}
        applies = {f.path: [] for f, *_ in self.deletes}
        for d, _, _, dels in self.data:
            for x in dels:
                applies[x.path].append(d.path)
        desc = {
            "name": self.name,
            "description": self.description,
            "table": self.name,
            "location": t.location,
            "remap": f"{t.location}={os.path.abspath(t.root)}",
            "format_version": t.format_version,
            "snapshot_id": t.current.snapshot_id,
            "data_files": [{
                "path": f.path, "relative_path": rel(f.path),
                "data_sequence_number": dseq, "file_sequence_number": fseq,
                **spec_json(f), "record_count": f.record_count,
                "deletes": [x.path for x in dels],
            } for f, dseq, fseq, dels in self.data],
            "delete_files": [{
                "path": f.path, "relative_path": rel(f.path),
                "content": "position" if f.content == POSITION_DELETES else "equality",
                "data_sequence_number": dseq, **spec_json(f),
                "equality_ids": f.equality_ids,
                "referenced_data_file": f.referenced_data_file,
                "applies_to": applies[f.path],
                "note": note,
            } for f, dseq, note in self.deletes],
            "expected_rows": _json_rows(EDGE_SCHEMA, sorted(
                (r for r in all_rows if r["id"] in self.expected_ids), key=lambda r: r["id"])),
        }
        _dump(os.path.join(self.out_dir, f"{self.name}.json"), desc)
        return desc


def edge_equal_seq(out_dir, prefix):
    s = Scenario(out_dir, prefix, "equal_seq",
                 "Data, a position delete and an equality delete added in ONE commit share data "
                 "sequence number 1: the position delete applies (seq(D) <= seq(P)), the equality "
                 "delete does not (needs seq(D) < seq(E)). A later equality delete (seq 2) applies.",
                 codec="gzip", manifest_codec="deflate")
    t = s.table
    rows = _rows([1, 2, 3, 4])
    (d1,) = t.write_data(rows)
    p1 = t.write_position_deletes([(d1, 0)])                        # id 1
    e1 = t.write_equality_deletes([{"id": 2}], ["id"])              # id 2, same commit
    t.commit("overwrite", add=[d1, p1, e1])
    e2 = t.write_equality_deletes([{"id": 3}], ["id"])              # id 3, next commit
    t.row_delta(deletes=[e2])
    s.expect_data(d1, 1, 1, [p1, e2])
    s.expect_delete(p1, 1, "same sequence number as its data file: applies")
    s.expect_delete(e1, 1, "same sequence number as the data file: must NOT apply")
    s.expect_delete(e2, 2, "newer than the data file: applies")
    s.expected_ids = [2, 4]
    return s.finish(rows)


def edge_void_global_eq(out_dir, prefix):
    spec0 = PartitionSpec([PartitionField(2, 1000, "category", "identity")], spec_id=0)
    spec1 = PartitionSpec([PartitionField(2, 1000, "category", "void")], spec_id=1)
    s = Scenario(out_dir, prefix, "void_global_eq",
                 "Data is identity-partitioned by category (spec 0). The spec then evolves to an "
                 "all-void spec 1, which counts as unpartitioned, so an equality delete written under "
                 "spec 1 is GLOBAL and applies to both partitions. An equality delete written under "
                 "spec 0 for partition category=a applies only to that partition.",
                 spec=spec0)
    t = s.table
    rows_a, rows_b = _rows([1, 2, 5], "a"), _rows([3, 4, 6], "b")
    d_a, d_b = t.write_data(rows_a + rows_b)
    t.append([d_a, d_b])
    t.evolve_spec(spec1)
    e_global = t.write_equality_deletes([{"id": 2}, {"id": 3}], ["id"], spec_id=1, partition=(None,))
    e_a = t.write_equality_deletes([{"id": 4}, {"id": 5}], ["id"], spec_id=0, partition=("a",))
    t.row_delta(deletes=[e_global, e_a])
    s.expect_data(d_a, 1, 1, [e_global, e_a])
    s.expect_data(d_b, 1, 1, [e_global])
    s.expect_delete(e_global, 2, "spec 1 is all-void, i.e. unpartitioned: global, applies to every partition")
    s.expect_delete(e_a, 2, "spec 0, partition category=a: applies only to category=a (id 4 in b survives)")
    s.expected_ids = [1, 4, 6]
    return s.finish(rows_a + rows_b)


def edge_pos_bounds_no_ref(out_dir, prefix):
    s = Scenario(out_dir, prefix, "pos_bounds_no_ref",
                 "A position delete file with referenced_data_file unset whose file_path lower and "
                 "upper bounds are equal (one target file) is file-scoped to that file, as Java's "
                 "ContentFileUtil.referencedDataFile decides. A second position delete spanning two "
                 "files (different bounds) is partition-scoped and applies to both.",
                 codec="gzip", manifest_codec="deflate")
    t = s.table
    rows1, rows2 = _rows([1, 2, 3, 4]), _rows([5, 6, 7, 8])
    (d1,) = t.write_data(rows1)
    (d2,) = t.write_data(rows2)
    t.append([d1, d2])
    p_single = t.write_position_deletes([(d1, 1), (d1, 2)], referenced_data_file=None)
    p_multi = t.write_position_deletes([(d2, 0), (d1, 3)])
    assert p_single.referenced_data_file is None and p_multi.referenced_data_file is None
    t.row_delta(deletes=[p_single, p_multi])
    s.expect_data(d1, 1, 1, [p_single, p_multi])
    s.expect_data(d2, 1, 1, [p_multi])
    s.expect_delete(p_single, 2, "no referenced_data_file, equal file_path bounds: file-scoped to the first data file only")
    s.expect_delete(p_multi, 2, "no referenced_data_file, bounds differ: partition-scoped, rows for both files")
    s.expected_ids = [1, 6, 7, 8]
    return s.finish(rows1 + rows2)


def edge_dangling_pos(out_dir, prefix):
    s = Scenario(out_dir, prefix, "dangling_pos",
                 "A position delete for data file 1 stays live after data file 1 is removed from the "
                 "table (snapshot 3, its entry DELETED): it is dangling and applies to nothing. An "
                 "equality delete from the same commit still applies to data file 2.",
                 manifest_codec="deflate")
    t = s.table
    rows1, rows2 = _rows([1, 2, 3]), _rows([4, 5, 6])
    (d1,) = t.write_data(rows1)
    (d2,) = t.write_data(rows2)
    t.append([d1, d2])
    p = t.write_position_deletes([(d1, 0)])
    e = t.write_equality_deletes([{"id": 2}, {"id": 5}], ["id"])
    t.row_delta(deletes=[p, e])
    t.delete_files([d1])
    s.expect_data(d2, 1, 1, [e])
    s.expect_delete(p, 2, "its only target was removed in snapshot 3: dangling, applies to nothing")
    s.expect_delete(e, 2, "applies to the remaining data file (id 5 removed)")
    s.expected_ids = [4, 6]
    return s.finish(rows2)


def edge_explicit_older_seq(out_dir, prefix):
    s = Scenario(out_dir, prefix, "explicit_older_seq",
                 "Snapshot 3 ADDs two data files: one with an explicit data sequence number 1 in "
                 "its manifest entry (older than the equality delete at 2, so the delete applies), "
                 "one with a null sequence number that inherits 3 (the delete does not apply). "
                 "A reader that overwrites the explicit value with the manifest's gets this wrong.",
                 codec="gzip")
    t = s.table
    rows1, rows2, rows3 = _rows([1, 2, 3]), _rows([4, 5, 6]), _rows([7, 8, 9])
    (d1,) = t.write_data(rows1)
    t.append([d1])
    e = t.write_equality_deletes([{"id": 2}, {"id": 5}, {"id": 8}], ["id"])
    t.row_delta(deletes=[e])
    (d2,) = t.write_data(rows2)
    (d3,) = t.write_data(rows3)
    t.append([Added(d2, data_sequence_number=1), d3])
    s.expect_data(d1, 1, 1, [e])
    s.expect_data(d2, 1, 3, [e])
    s.expect_data(d3, 3, 3, [])
    s.expect_delete(e, 2, "applies to the files with data sequence number 1, not to the one with 3")
    s.expected_ids = [1, 3, 4, 6, 7, 8, 9]
    return s.finish(rows1 + rows2 + rows3)


EDGE_CASES = {
    "equal_seq": edge_equal_seq,
    "void_global_eq": edge_void_global_eq,
    "pos_bounds_no_ref": edge_pos_bounds_no_ref,
    "dangling_pos": edge_dangling_pos,
    "explicit_older_seq": edge_explicit_older_seq,
}


def write_edge_cases(out_dir, prefix=EDGE_PREFIX, only=None):
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, build in EDGE_CASES.items():
        if only and name not in only:
            continue
        written.append(build(out_dir, prefix))
    _dump(os.path.join(out_dir, "index.json"), {
        "tables": [d["name"] for d in written],
        "note": "Each <name>.json lists which delete files apply to which data files "
                "(worked out by construction) and the surviving rows.",
    })
    return written
