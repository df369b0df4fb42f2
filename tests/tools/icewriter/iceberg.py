"""Iceberg table writer for test fixtures: data and delete files, manifests, snapshots, metadata.

Follows apache/iceberg format/spec.md (format v1 and v2): "Manifests", "Manifest Lists",
"Snapshots", "Table Metadata", "Position Delete Files", "Equality Delete Files", Appendix A
(Avro field ids), Appendix C (JSON) and Appendix D (single-value serialisation).

A ``Table`` lives in a local directory (``root``) but every path written into its metadata is
``location + "/" + relative path``: tables are written with a fixed location prefix and readers
remap that prefix to wherever the files are (``icedruid --remap LOCATION=ROOT``).

Typical use::

    t = Table.create(root, location, Schema([...]), spec=PartitionSpec.unpartitioned())
    data = t.write_data(rows)                          # -> [DataFile]
    t.append(data)                                     # snapshot 1 (append)
    pos = t.write_position_deletes([(data[0], 1)])     # -> DataFile (content 1)
    t.row_delta(deletes=[pos])                         # snapshot 2 (delete)

Each commit writes new manifests for the files it adds, rewrites the manifests that hold
files it removes (removed entries become DELETED, the rest EXISTING, both with explicit
sequence numbers), carries every other manifest over unchanged, then writes a manifest list,
``metadata/v<N>.metadata.json`` and ``metadata/version-hint.text``.  Everything is
deterministic: ids, uuids and timestamps derive from the table uuid and a base time.
"""

import datetime as _dt
import hashlib
import json
import os
import re
import uuid as _uuid
from dataclasses import dataclass, field

from . import avro, icetypes, orc, parquet

DATA, POSITION_DELETES, EQUALITY_DELETES = 0, 1, 2
EXISTING, ADDED, DELETED = 0, 1, 2
FILE_PATH_ID, POS_ID = 2147483546, 2147483545
V1_BLOCK_SIZE = 67108864  # data_file.block_size_in_bytes: a required v1 field, "write a default"


# =========================================================================================
# Schemas and partition specs
# =========================================================================================
@dataclass
class NestedField:
    id: int
    name: str
    type: object              # icetypes.Type or type string
    required: bool = False
    doc: str | None = None
    # spec "Default values": the value of rows written before the field existed
    # (initial-default) and of rows written without it (write-default); JSON single values
    # (Appendix C) for boolean, int, long, float, double and string only
    initial_default: object = None
    write_default: object = None

    def __post_init__(self):
        self.type = icetypes.parse(self.type)

    def to_json(self):
        out = {"id": self.id, "name": self.name, "required": self.required,
               "type": icetypes.type_json(self.type)}
        if self.doc:
            out["doc"] = self.doc
        for key, v in (("initial-default", self.initial_default),
                       ("write-default", self.write_default)):
            if v is not None:
                if str(self.type) not in ("boolean", "int", "long", "float", "double", "string"):
                    raise ValueError(f"defaults of type {self.type} are not supported")
                out[key] = v
        return out


class Schema:
    def __init__(self, fields, schema_id=0, identifier_field_ids=None):
        self.fields = list(fields)
        self.schema_id = schema_id
        self.identifier_field_ids = identifier_field_ids or []
        ids = [f.id for f in self.fields]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate field ids")

    def field(self, name_or_id) -> NestedField:
        for f in self.fields:
            if f.name == name_or_id or f.id == name_or_id:
                return f
        raise KeyError(name_or_id)

    def select(self, names):
        return Schema([self.field(n) for n in names], self.schema_id)

    @property
    def highest_field_id(self):
        return max((f.id for f in self.fields), default=0)

    def to_json(self):
        out = {"type": "struct", "schema-id": self.schema_id,
               "fields": [f.to_json() for f in self.fields]}
        if self.identifier_field_ids:
            out["identifier-field-ids"] = self.identifier_field_ids
        return out

    def parquet_columns(self, dictionary=()):
        return [parquet.Column(f.name, f.type, f.id, f.required, f.name in dictionary)
                for f in self.fields]


POSITION_DELETE_SCHEMA = Schema([
    NestedField(FILE_PATH_ID, "file_path", "string", required=True),
    NestedField(POS_ID, "pos", "long", required=True),
])


@dataclass
class PartitionField:
    source_id: int
    field_id: int
    name: str
    transform: str   # identity, void, year, month, day, hour, truncate[W]

    def to_json(self):
        return {"name": self.name, "transform": self.transform,
                "source-id": self.source_id, "field-id": self.field_id}


class PartitionSpec:
    def __init__(self, fields=(), spec_id=0):
        self.fields = list(fields)
        self.spec_id = spec_id

    @staticmethod
    def unpartitioned(spec_id=0):
        return PartitionSpec([], spec_id)

    def is_unpartitioned(self) -> bool:
        """No fields, or only void transforms (spec: such a spec makes equality deletes global)."""
        return all(f.transform == "void" for f in self.fields)

    def to_json(self):
        return {"spec-id": self.spec_id, "fields": [f.to_json() for f in self.fields]}

    def fields_json(self):
        return [f.to_json() for f in self.fields]

    def result_type(self, pf: PartitionField, schema: Schema) -> icetypes.Type:
        source = schema.field(pf.source_id).type
        if pf.transform in ("identity", "void") or pf.transform.startswith("truncate"):
            return source
        if pf.transform == "day":
            return icetypes.Type("date")
        if pf.transform in ("year", "month", "hour"):
            return icetypes.Type("int")
        raise ValueError(f"unsupported transform {pf.transform}")

    def partition_of(self, row: dict, schema: Schema) -> tuple:
        """The partition tuple (one normalised value per spec field) of a normalised row."""
        return tuple(apply_transform(pf.transform, schema.field(pf.source_id).type,
                                     row.get(schema.field(pf.source_id).name))
                     for pf in self.fields)


def apply_transform(transform: str, source: icetypes.Type, v):
    """Partition transforms on normalised values (spec "Partition Transforms")."""
    if v is None or transform == "void":
        return None
    if transform == "identity":
        return v
    if transform in ("year", "month", "day", "hour"):
        if source.kind == "date":
            days = v
        elif source.kind in ("timestamp", "timestamptz"):
            if transform == "hour":
                return v // 3_600_000_000
            days = v // 86_400_000_000
        else:
            raise ValueError(f"{transform} needs a date or timestamp, not {source}")
        if transform == "day":
            return days
        d = icetypes.EPOCH_DATE + _dt.timedelta(days=days)
        if transform == "year":
            return d.year - 1970
        if transform == "month":
            return (d.year - 1970) * 12 + d.month - 1
        raise ValueError("hour transform needs a timestamp")
    m = re.fullmatch(r"truncate\[(\d+)\]", transform)
    if m:
        w = int(m.group(1))
        if source.kind in ("int", "long", "decimal"):
            return v - (v % w)
        if source.kind == "string":
            return v[:w]
        if source.kind == "binary":
            return v[:w]
    raise ValueError(f"unsupported transform {transform} on {source}")


def partition_path_value(t: icetypes.Type, v) -> str:
    """Human-readable partition value for directory names (not part of the spec)."""
    if v is None:
        return "null"
    if t.kind == "date":
        return icetypes.to_json(t, v)
    return str(icetypes.to_json(t, v))


# =========================================================================================
# Avro schemas of manifests and manifest lists (spec "Manifests", "Manifest Lists")
# =========================================================================================
def avro_type(t: icetypes.Type):
    """Avro encoding of an Iceberg primitive or struct (spec Appendix A)."""
    k = t.kind
    simple = {"boolean": "boolean", "int": "int", "long": "long", "float": "float",
              "double": "double", "string": "string", "binary": "bytes"}
    if k in simple:
        return simple[k]
    if k == "date":
        return {"type": "int", "logicalType": "date"}
    if k == "time":
        return {"type": "long", "logicalType": "time-micros"}
    if k in ("timestamp", "timestamptz"):
        return {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": k == "timestamptz"}
    if k == "uuid":
        return {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}
    if k == "fixed":
        return {"type": "fixed", "name": f"fixed_{t.length}", "size": t.length}
    if k == "decimal":
        return {"type": "fixed", "name": f"decimal_{t.precision}_{t.scale}",
                "size": icetypes.decimal_bytes_needed(t.precision), "logicalType": "decimal",
                "precision": t.precision, "scale": t.scale}
    if k == "struct":  # a record named after its first field id (Java names them r<id>)
        return {"type": "record", "name": f"r{t.fields[0][0] if t.fields else 0}", "fields": [
            _required(avro_type(ft), fid, n) if req else _optional(avro_type(ft), fid, n)
            for fid, n, ft, req in t.fields]}
    raise ValueError(f"no Avro mapping for {t}")


def avro_value(t: icetypes.Type, v):
    """Normalised value -> the Python value the Avro encoder takes for ``avro_type(t)``."""
    if v is None:
        return None
    if t.kind == "decimal":
        return v.to_bytes(icetypes.decimal_bytes_needed(t.precision), "big", signed=True)
    if t.kind == "struct":
        return {n: avro_value(ft, v.get(n)) for _, n, ft, _ in t.fields}
    return v


def _optional(type_, field_id, name):
    return {"name": name, "type": ["null", type_], "default": None, "field-id": field_id}


def _required(type_, field_id, name):
    return {"name": name, "type": type_, "field-id": field_id}


def _int_map(field_id, name, key_id, value_id, value_type):
    """map<int, X> as an Avro array of key/value records with logicalType "map"."""
    return _optional({
        "type": "array", "logicalType": "map",
        "items": {"type": "record", "name": f"k{key_id}_v{value_id}", "fields": [
            {"name": "key", "type": "int", "field-id": key_id},
            {"name": "value", "type": value_type, "field-id": value_id}]},
    }, field_id, name)


def manifest_entry_schema(partition_fields, format_version: int):
    """Avro schema of ``manifest_entry``; partition_fields = [(PartitionField, Type)]."""
    partition = {"type": "record", "name": "r102", "fields": [
        _optional(avro_type(t), pf.field_id, pf.name) for pf, t in partition_fields]}
    data_file = []
    if format_version >= 2:
        data_file.append(_required("int", 134, "content"))
    data_file += [
        _required("string", 100, "file_path"),
        _required("string", 101, "file_format"),
        _required(partition, 102, "partition"),
        _required("long", 103, "record_count"),
        _required("long", 104, "file_size_in_bytes"),
    ]
    if format_version == 1:
        data_file.append(_required("long", 105, "block_size_in_bytes"))
    data_file += [
        _int_map(108, "column_sizes", 117, 118, "long"),
        _int_map(109, "value_counts", 119, 120, "long"),
        _int_map(110, "null_value_counts", 121, 122, "long"),
        _int_map(137, "nan_value_counts", 138, 139, "long"),
        _int_map(125, "lower_bounds", 126, 127, "bytes"),
        _int_map(128, "upper_bounds", 129, 130, "bytes"),
        _optional("bytes", 131, "key_metadata"),
        _optional({"type": "array", "items": "long", "element-id": 133}, 132, "split_offsets"),
    ]
    if format_version >= 2:
        data_file.append(_optional({"type": "array", "items": "int", "element-id": 136}, 135, "equality_ids"))
    data_file.append(_optional("int", 140, "sort_order_id"))
    if format_version >= 2:
        data_file.append(_optional("string", 143, "referenced_data_file"))

    fields = [_required("int", 0, "status")]
    if format_version == 1:
        fields.append(_required("long", 1, "snapshot_id"))
    else:
        fields += [_optional("long", 1, "snapshot_id"),
                   _optional("long", 3, "sequence_number"),
                   _optional("long", 4, "file_sequence_number")]
    fields.append(_required({"type": "record", "name": "r2", "fields": data_file}, 2, "data_file"))
    return {"type": "record", "name": "manifest_entry", "fields": fields}


def manifest_list_schema(format_version: int):
    summary = {"type": "record", "name": "r508", "fields": [
        _required("boolean", 509, "contains_null"),
        _optional("boolean", 518, "contains_nan"),
        _optional("bytes", 510, "lower_bound"),
        _optional("bytes", 511, "upper_bound"),
    ]}
    fields = [
        _required("string", 500, "manifest_path"),
        _required("long", 501, "manifest_length"),
        _required("int", 502, "partition_spec_id"),
    ]
    counts = [("int", 504, "added_files_count"), ("int", 505, "existing_files_count"),
              ("int", 506, "deleted_files_count"), ("long", 512, "added_rows_count"),
              ("long", 513, "existing_rows_count"), ("long", 514, "deleted_rows_count")]
    if format_version >= 2:
        fields += [_required("int", 517, "content"),
                   _required("long", 515, "sequence_number"),
                   _required("long", 516, "min_sequence_number"),
                   _required("long", 503, "added_snapshot_id")]
        fields += [_required(t, i, n) for t, i, n in counts]
    else:
        fields.append(_required("long", 503, "added_snapshot_id"))
        fields += [_optional(t, i, n) for t, i, n in counts]
    fields += [
        _optional({"type": "array", "items": summary, "element-id": 508}, 507, "partitions"),
        _optional("bytes", 519, "key_metadata"),
    ]
    return {"type": "record", "name": "manifest_file", "fields": fields}


def avro_file_schema(schema: "Schema", name: str):
    """Avro schema of an Avro data or delete file (spec "Avro" type mapping, Appendix A).

    Every field carries its "field-id"; optional fields are ``["null", T]`` unions with a
    null default.  A named type (fixed, decimal, uuid) used twice is written the second time
    as a reference to its name, since Avro forbids defining a name twice.
    """
    defined = set()
    fields = []
    for f in schema.fields:
        t = avro_type(f.type)
        if isinstance(t, dict) and "name" in t:
            if t["name"] in defined:
                t = t["name"]
            else:
                defined.add(t["name"])
        fields.append(_required(t, f.id, f.name) if f.required else _optional(t, f.id, f.name))
    return {"type": "record", "name": name, "fields": fields}


@dataclass
class AvroFileInfo:
    """What writing an Avro data/delete file produced (the Parquet writer's ParquetFile role)."""
    num_rows: int
    size: int
    metrics: dict


# =========================================================================================
# Files and manifest entries
# =========================================================================================
@dataclass
class DataFile:
    """A data or delete file as a manifest describes it (the ``data_file`` struct)."""
    content: int
    path: str                       # absolute location, as written into metadata
    record_count: int
    file_size_in_bytes: int
    spec_id: int = 0
    partition: tuple = ()           # normalised values, one per field of the spec
    file_format: str = "PARQUET"    # Java writes the enum name; readers compare case-insensitively
    column_sizes: dict = field(default_factory=dict)
    value_counts: dict = field(default_factory=dict)
    null_value_counts: dict = field(default_factory=dict)
    nan_value_counts: dict = field(default_factory=dict)
    lower_bounds: dict = field(default_factory=dict)   # field id -> bytes (Appendix D)
    upper_bounds: dict = field(default_factory=dict)
    split_offsets: list | None = None
    equality_ids: list | None = None
    sort_order_id: int | None = None
    referenced_data_file: str | None = None


@dataclass
class Added:
    """A file to add in a commit, optionally with an explicit (older) data sequence number."""
    file: DataFile
    data_sequence_number: int | None = None


@dataclass
class Entry:
    """A manifest entry with its sequence numbers *resolved* (what a reader would see)."""
    status: int
    snapshot_id: int
    data_sequence_number: int
    file_sequence_number: int
    file: DataFile
    # What is physically written for the sequence numbers (None = inherit from the manifest).
    written_data_sequence_number: int | None = None
    written_file_sequence_number: int | None = None


@dataclass
class Manifest:
    path: str                 # absolute location
    length: int
    spec_id: int
    content: int              # 0 data, 1 deletes
    sequence_number: int
    min_sequence_number: int
    added_snapshot_id: int
    entries: list             # [Entry]
    partitions: list          # field summaries (dicts) for the manifest list

    def count(self, status):
        return sum(1 for e in self.entries if e.status == status)

    def rows(self, status):
        return sum(e.file.record_count for e in self.entries if e.status == status)


@dataclass
class Snapshot:
    snapshot_id: int
    parent_id: int | None
    sequence_number: int
    timestamp_ms: int
    operation: str
    manifest_list: str
    summary: dict
    manifests: list
    schema_id: int = 0  # the current schema when the snapshot was committed


def _metrics(info: parquet.ParquetFile):
    sizes, counts, nulls, nans, lower, upper = {}, {}, {}, {}, {}, {}
    for m in info.columns:
        if m.field_id is None:
            continue
        sizes[m.field_id] = m.compressed_size
        counts[m.field_id] = m.value_count
        nulls[m.field_id] = m.null_count
        if m.type.kind in ("float", "double"):
            nans[m.field_id] = m.nan_count
        if m.min is not None:
            lower[m.field_id] = icetypes.single_value_bytes(m.type, m.min)
            upper[m.field_id] = icetypes.single_value_bytes(m.type, m.max)
    return dict(column_sizes=sizes, value_counts=counts, null_value_counts=nulls,
                nan_value_counts=nans, lower_bounds=lower, upper_bounds=upper)


def _kv_list(d):
    return [{"key": k, "value": v} for k, v in sorted(d.items())] if d else None


def _stable_id(*parts) -> int:
    """A positive 63-bit id derived from the inputs (deterministic snapshot ids)."""
    h = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "big") & 0x7FFF_FFFF_FFFF_FFFF or 1


# =========================================================================================
# The table
# =========================================================================================
def _value_metrics(schema, rows):
    """Value, null and NaN counts and full (untruncated) bounds of normalised dict rows: what
    Java records for Avro files (and, here, ORC files); no column sizes."""
    counts, nulls, nans, lower, upper = {}, {}, {}, {}, {}
    for f in schema.fields:
        if isinstance(f.type, icetypes.NESTED):
            continue  # (Java keeps metrics of leaf fields only; not written here)
        values = [r.get(f.name) for r in rows]
        counts[f.id] = len(values)
        nulls[f.id] = sum(1 for v in values if v is None)
        if f.type.kind in ("float", "double"):
            nans[f.id] = sum(1 for v in values if icetypes.is_nan(f.type, v))
        lo, hi = icetypes.min_max(f.type, values)
        if lo is not None:
            lower[f.id] = icetypes.single_value_bytes(f.type, lo)
            upper[f.id] = icetypes.single_value_bytes(f.type, hi)
    return dict(value_counts=counts, null_value_counts=nulls, nan_value_counts=nans,
                lower_bounds=lower, upper_bounds=upper)


class Table:
    def __init__(self, root, location, schema, spec=None, *, format_version=2, table_uuid=None,
                 properties=None, base_time_ms=1717200000000, codec="uncompressed",
                 manifest_codec="null"):
        if format_version not in (1, 2):
            raise ValueError("format_version must be 1 or 2")
        self.root = os.fspath(root)
        self.location = location.rstrip("/")
        self.schema = schema
        self.schemas = {schema.schema_id: schema}  # every schema the table has had
        self.refs = {}  # branches and tags other than main: name -> (snapshot id, type)
        self.specs = {}
        self.add_spec(spec or PartitionSpec.unpartitioned())
        self.default_spec_id = (spec.spec_id if spec else 0)
        self.format_version = format_version
        self.table_uuid = str(table_uuid or _uuid.uuid5(_uuid.NAMESPACE_URL, self.location))
        self.properties = dict(properties or {})
        self.time_ms = base_time_ms
        self.codec = codec                      # Parquet codec for files this table writes
        self.manifest_codec = manifest_codec    # Avro codec for manifests and manifest lists
        self.orc_field_ids = True               # ORC files: iceberg.id attributes (False: none)
        self.orc_metrics = False                # ORC files: value counts and bounds in the manifest
        self.file_exts = {}                     # file names: {"orc": "parquet", "avro": ""} misnames
        self.snapshots = []
        self.snapshot_log = []
        self.metadata_log = []
        self.last_sequence_number = 0
        self.version = 0
        self._file_counter = 0
        self._manifest_counter = 0

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def create(cls, root, location, schema, spec=None, **options):
        t = cls(root, location, schema, spec, **options)
        os.makedirs(os.path.join(t.root, "metadata"), exist_ok=True)
        os.makedirs(os.path.join(t.root, "data"), exist_ok=True)
        t._write_metadata()
        return t

    def add_spec(self, spec: PartitionSpec):
        if spec.spec_id in self.specs:
            raise ValueError(f"partition spec {spec.spec_id} exists")
        self.specs[spec.spec_id] = spec

    def evolve_spec(self, spec: PartitionSpec):
        """Add a spec and make it the default (writes a new metadata version, no snapshot)."""
        self.add_spec(spec)
        self.default_spec_id = spec.spec_id
        self._tick()
        self._write_metadata()

    def evolve_schema(self, fields):
        """ALTER TABLE: a new schema (the next schema-id) with these fields becomes current.

        Writes a new metadata version and no snapshot; files written later use it. Field ids
        say which columns are kept (same id: same column, whatever its name or promoted
        type) and which are new (an unused id) or dropped (absent).
        """
        sid = max(self.schemas) + 1
        self.schema = Schema(fields, sid)
        self.schemas[sid] = self.schema
        self._tick()
        self._write_metadata()
        return self.schema

    def set_ref(self, name, snapshot_id, ref_type="branch"):
        """Create or move a branch or tag (writes a new metadata version)."""
        if name == "main" or ref_type not in ("branch", "tag"):
            raise ValueError("set_ref: not main; type branch or tag")
        if not any(s.snapshot_id == snapshot_id for s in self.snapshots):
            raise ValueError(f"no snapshot {snapshot_id}")
        self.refs[name] = (snapshot_id, ref_type)
        self._tick()
        self._write_metadata()

    @property
    def current(self) -> Snapshot | None:
        return self.snapshots[-1] if self.snapshots else None

    def abs_path(self, rel: str) -> str:
        return f"{self.location}/{rel}"

    def local_path(self, rel: str) -> str:
        return os.path.join(self.root, *rel.split("/"))

    def _tick(self):
        self.time_ms += 60_000  # one minute per metadata change: readable, ordered, fixed

    def _data_rel(self, spec, partition, stem, ext="parquet"):
        """Relative path of a new data or delete file: data/[k=v/...]NNNNN-stem.<ext>."""
        self._file_counter += 1
        dirs = "".join(f"{pf.name}={partition_path_value(spec.result_type(pf, self.schema), v)}/"
                       for pf, v in zip(spec.fields, partition) if pf.transform != "void")
        ext = self.file_exts.get(ext, ext)
        return f"data/{dirs}{self._file_counter:05d}-{stem}" + (f".{ext}" if ext else "")

    # -- writing data and delete files ------------------------------------------------------------
    def _parquet(self, rel, schema, rows, *, dictionary=(), row_group_rows=None, page_rows=None, codec=None):
        path = self.local_path(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return parquet.write_parquet(
            path, schema.parquet_columns(dictionary), rows, codec=codec or self.codec,
            row_group_rows=row_group_rows, page_rows=page_rows,
            key_value_metadata={"iceberg.schema": json.dumps(schema.to_json(), separators=(",", ":"))})

    def _avro(self, rel, schema, rows, *, codec=None, record_name="table"):
        """Write normalised dict rows as an Avro object container file with their metrics.

        ``codec`` is an Avro codec ("null" or "deflate"); the default follows the table's
        Parquet codec (GZIP -> deflate, else null).  Metrics are what Java records for Avro:
        value, null and NaN counts and full (untruncated) bounds; no column sizes.
        """
        path = self.local_path(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if codec is None:
            codec = "deflate" if self.codec == "gzip" else "null"
        records = [{f.name: avro_value(f.type, r.get(f.name)) for f in schema.fields} for r in rows]
        size = avro.write_container(
            path, avro_file_schema(schema, record_name), records, codec=codec,
            metadata={"iceberg.schema": json.dumps(schema.to_json(), separators=(",", ":"))})
        return AvroFileInfo(len(rows), size, _value_metrics(schema, rows))

    def _write_file(self, rel_args, schema, rows, file_format, *, codec=None, record_name="table",
                    **parquet_options):
        """Write one data/delete file in ``file_format``; returns (rel, DataFile keyword args)."""
        if file_format == "PARQUET":
            rel = self._data_rel(*rel_args)
            info = self._parquet(rel, schema, rows, codec=codec, **parquet_options)
            return rel, dict(record_count=info.num_rows, file_size_in_bytes=info.size,
                             split_offsets=info.row_group_offsets, **_metrics(info))
        if file_format == "AVRO":
            rel = self._data_rel(*rel_args, ext="avro")
            info = self._avro(rel, schema, rows, codec=codec, record_name=record_name)
            return rel, dict(record_count=info.num_rows, file_size_in_bytes=info.size,
                             file_format="AVRO", **info.metrics)
        if file_format == "ORC":
            rel = self._data_rel(*rel_args, ext="orc")
            path = self.local_path(rel)
            cols = [orc.OrcColumn(f.name, f.type, f.id if self.orc_field_ids else None, f.required)
                    for f in schema.fields]
            info = orc.write_orc(path, cols, rows,
                                 stripe_rows=parquet_options.get("row_group_rows"))
            metrics = _value_metrics(schema, rows) if self.orc_metrics else {}
            return rel, dict(record_count=info.num_rows, file_size_in_bytes=info.size,
                             file_format="ORC", **metrics)
        raise ValueError(f"unsupported file_format {file_format!r} (PARQUET, AVRO or ORC)")

    def _rows_as_dicts(self, schema, rows):
        out = []
        for r in rows:
            d = dict(r) if isinstance(r, dict) else dict(zip((f.name for f in schema.fields), r))
            out.append({f.name: icetypes.normalize(f.type, d.get(f.name)) for f in schema.fields})
        return out

    def write_data(self, rows, *, spec_id=None, name="data", dictionary=(), row_group_rows=None,
                   page_rows=None, codec=None, file_format="PARQUET"):
        """Write rows (dicts or tuples in schema order) as one file per partition.

        ``file_format`` is "PARQUET" (``codec``: a Parquet codec) or "AVRO" (``codec``: "null"
        or "deflate"; the Parquet-only options are ignored).
        """
        spec = self.specs[self.default_spec_id if spec_id is None else spec_id]
        groups = {}
        for row in self._rows_as_dicts(self.schema, rows):
            groups.setdefault(spec.partition_of(row, self.schema), []).append(row)
        files = []
        for part, part_rows in groups.items():
            rel, kw = self._write_file((spec, part, name), self.schema, part_rows, file_format,
                                       codec=codec, dictionary=dictionary,
                                       row_group_rows=row_group_rows, page_rows=page_rows)
            files.append(DataFile(DATA, self.abs_path(rel), spec_id=spec.spec_id, partition=part,
                                  sort_order_id=0, **kw))
        return files

    def write_position_deletes(self, deletes, *, spec_id=None, partition=None, name="pos-deletes",
                               referenced_data_file="auto", codec=None, file_format="PARQUET",
                               row_group_rows=None, sort=True):
        """Write a position delete file from (DataFile or path, position) pairs.

        Rows are sorted by file_path then pos, as the spec requires (``sort=False`` keeps the
        given order, for files that break it); the file_path and pos bounds are full values
        (never truncated).  ``row_group_rows`` cuts a Parquet file into row groups, an ORC
        file into stripes.  ``referenced_data_file``: "auto" sets it when
        every row targets one file (as Java does), None leaves it unset, a string sets it.
        The partition defaults to that of the targeted DataFiles (they must agree).
        """
        rows, targets = [], []
        for target, pos in deletes:
            path = target.path if isinstance(target, DataFile) else target
            rows.append((path, int(pos)))
            if isinstance(target, DataFile):
                targets.append(target)
        if sort:
            rows.sort(key=lambda r: (r[0].encode("utf-8"), r[1]))
        if spec_id is None or partition is None:
            keys = {(f.spec_id, f.partition) for f in targets}
            if len(keys) > 1:
                raise ValueError("targets span partitions: pass spec_id and partition")
            k = keys.pop() if keys else (self.default_spec_id, ())
            spec_id = k[0] if spec_id is None else spec_id
            partition = k[1] if partition is None else partition
        if file_format == "AVRO":
            rows = [{"file_path": p, "pos": q} for p, q in rows]
        rel, kw = self._write_file((self.specs[spec_id], partition, name), POSITION_DELETE_SCHEMA,
                                   rows, file_format, codec=codec, record_name="position_delete",
                                   row_group_rows=row_group_rows)
        if referenced_data_file == "auto":
            paths = {r[0] if isinstance(r, tuple) else r["file_path"] for r in rows}
            referenced_data_file = paths.pop() if len(paths) == 1 else None
        return DataFile(POSITION_DELETES, self.abs_path(rel), spec_id=spec_id,
                        partition=tuple(partition), referenced_data_file=referenced_data_file, **kw)

    def write_equality_deletes(self, rows, equality_columns, *, columns=None, spec_id=None,
                               partition=None, name="eq-deletes", codec=None, file_format="PARQUET",
                               row_group_rows=None):
        """Write an equality delete file.

        ``equality_columns`` name the key columns (their ids become equality_ids); ``columns``
        (default: the key columns) are the columns stored in the file, in table order.
        ``row_group_rows`` cuts a Parquet file into row groups, an ORC file into stripes.
        The partition defaults to the one computed from the rows (they must agree).
        """
        stored = columns or equality_columns
        delete_schema = Schema([f for f in self.schema.fields if f.name in stored], self.schema.schema_id)
        dict_rows = self._rows_as_dicts(delete_schema, rows)
        spec = self.specs[self.default_spec_id if spec_id is None else spec_id]
        if partition is None:
            parts = {spec.partition_of(r, self.schema) for r in dict_rows}
            if len(parts) != 1:
                raise ValueError("delete rows span partitions (or none): pass partition")
            partition = parts.pop()
        rel, kw = self._write_file((spec, partition, name), delete_schema, dict_rows, file_format,
                                   codec=codec, row_group_rows=row_group_rows)
        ids = [self.schema.field(n).id for n in equality_columns]
        return DataFile(EQUALITY_DELETES, self.abs_path(rel), spec_id=spec.spec_id,
                        partition=tuple(partition), equality_ids=ids, sort_order_id=0, **kw)

    # -- commits ---------------------------------------------------------------------------------
    def append(self, files, **kw):
        return self.commit("append", add=files, **kw)

    def row_delta(self, deletes=(), data=(), **kw):
        """Add delete files (and optionally data files) in one commit."""
        return self.commit("overwrite" if data else "delete", add=list(data) + list(deletes), **kw)

    def delete_files(self, files, **kw):
        """Remove data or delete files from the table (their entries become DELETED)."""
        return self.commit("delete", remove=files, **kw)

    def commit(self, operation, add=(), remove=(), summary_extra=None) -> Snapshot:
        added = [a if isinstance(a, Added) else Added(a) for a in add]
        removed_paths = {f.path if isinstance(f, DataFile) else f for f in remove}
        if self.format_version == 1 and any(a.file.content != DATA for a in added):
            raise ValueError("format v1 tables have no delete files")
        if self.format_version == 1 and any(a.data_sequence_number is not None for a in added):
            raise ValueError("format v1 tables have no sequence numbers")

        self._tick()
        parent = self.current
        snapshot_id = _stable_id(self.table_uuid, "snapshot", len(self.snapshots) + 1)
        seq = self.last_sequence_number + 1 if self.format_version >= 2 else 0

        new_manifests = []
        # 1. New manifests for added files: one per (data|deletes, spec).
        groups = {}
        for a in added:
            groups.setdefault((0 if a.file.content == DATA else 1, a.file.spec_id), []).append(a)
        for (content, spec_id), items in sorted(groups.items()):
            entries = [Entry(ADDED, snapshot_id,
                             a.data_sequence_number if a.data_sequence_number is not None else seq,
                             seq, a.file, written_data_sequence_number=a.data_sequence_number)
                       for a in items]
            new_manifests.append(self._write_manifest(entries, spec_id, content, snapshot_id, seq))

        # 2. Carry over the parent's manifests; rewrite the ones holding removed files.
        found = set()
        for m in (parent.manifests if parent else []):
            hit = [e for e in m.entries if e.status != DELETED and e.file.path in removed_paths]
            if not hit:
                new_manifests.append(m)
                continue
            entries = []
            for e in m.entries:
                if e.status == DELETED:
                    continue  # deletions recorded by older snapshots are not carried forward
                status = DELETED if e.file.path in removed_paths else EXISTING
                if status == DELETED:
                    found.add(e.file.path)
                entries.append(Entry(status, snapshot_id if status == DELETED else e.snapshot_id,
                                     e.data_sequence_number, e.file_sequence_number, e.file,
                                     e.data_sequence_number, e.file_sequence_number))
            new_manifests.append(self._write_manifest(entries, m.spec_id, m.content, snapshot_id, seq))
        missing = removed_paths - found
        if missing:
            raise ValueError(f"cannot remove files not in the table: {sorted(missing)}")

        summary = self._summary(operation, added, [e for m in new_manifests for e in m.entries
                                                   if e.status == DELETED and e.snapshot_id == snapshot_id],
                                new_manifests)
        summary.update(summary_extra or {})
        list_rel = f"metadata/snap-{snapshot_id}-1-{self._uuid('list', snapshot_id)}.avro"
        self._write_manifest_list(list_rel, new_manifests, snapshot_id, parent, seq)
        snap = Snapshot(snapshot_id, parent.snapshot_id if parent else None, seq, self.time_ms,
                        operation, self.abs_path(list_rel), summary, new_manifests,
                        self.schema.schema_id)
        self.snapshots.append(snap)
        self.snapshot_log.append({"timestamp-ms": self.time_ms, "snapshot-id": snapshot_id})
        if self.format_version >= 2:
            self.last_sequence_number = seq
        self._write_metadata()
        return snap

    # -- manifests -------------------------------------------------------------------------------
    def _uuid(self, *parts):
        return str(_uuid.uuid5(_uuid.UUID(self.table_uuid), "/".join(str(p) for p in parts)))

    def _partition_type(self, spec_id):
        spec = self.specs[spec_id]
        return [(pf, spec.result_type(pf, self.schema)) for pf in spec.fields]

    def _write_manifest(self, entries, spec_id, content, snapshot_id, seq) -> Manifest:
        self._manifest_counter += 1
        rel = f"metadata/{self._uuid('manifest', self._manifest_counter)}-m{self._manifest_counter - 1}.avro"
        ptype = self._partition_type(spec_id)
        schema = manifest_entry_schema(ptype, self.format_version)
        spec = self.specs[spec_id]
        meta = {
            "schema": json.dumps(self.schema.to_json(), separators=(",", ":")),
            "schema-id": str(self.schema.schema_id),
            "partition-spec": json.dumps(spec.fields_json(), separators=(",", ":")),
            "partition-spec-id": str(spec_id),
            "format-version": str(self.format_version),
        }
        if self.format_version >= 2:
            meta["content"] = "data" if content == 0 else "deletes"
        records = [self._entry_record(e, ptype) for e in entries]
        length = avro.write_container(self.local_path(rel), schema, records, metadata=meta,
                                      codec=self.manifest_codec)
        live = [e.data_sequence_number for e in entries if e.status != DELETED]
        return Manifest(self.abs_path(rel), length, spec_id, content, seq,
                        min(live) if live else seq, snapshot_id, entries,
                        self._field_summaries(entries, ptype))

    def _entry_record(self, e: Entry, ptype):
        f = e.file
        data_file = {
            "content": f.content,
            "file_path": f.path,
            "file_format": f.file_format,
            "partition": {pf.name: avro_value(t, v) for (pf, t), v in zip(ptype, f.partition)},
            "record_count": f.record_count,
            "file_size_in_bytes": f.file_size_in_bytes,
            "column_sizes": _kv_list(f.column_sizes),
            "value_counts": _kv_list(f.value_counts),
            "null_value_counts": _kv_list(f.null_value_counts),
            "nan_value_counts": _kv_list(f.nan_value_counts),
            "lower_bounds": _kv_list(f.lower_bounds),
            "upper_bounds": _kv_list(f.upper_bounds),
            "split_offsets": f.split_offsets,
            "equality_ids": f.equality_ids,
            "sort_order_id": f.sort_order_id,
            "referenced_data_file": f.referenced_data_file,
        }
        if self.format_version == 1:
            del data_file["content"], data_file["equality_ids"], data_file["referenced_data_file"]
            data_file["block_size_in_bytes"] = V1_BLOCK_SIZE
            return {"status": e.status, "snapshot_id": e.snapshot_id, "data_file": data_file}
        return {"status": e.status, "snapshot_id": e.snapshot_id,
                "sequence_number": e.written_data_sequence_number,
                "file_sequence_number": e.written_file_sequence_number,
                "data_file": data_file}

    @staticmethod
    def _field_summaries(entries, ptype):
        out = []
        for i, (pf, t) in enumerate(ptype):
            values = [e.file.partition[i] for e in entries]
            lo, hi = icetypes.min_max(t, values)
            out.append({
                "contains_null": any(v is None for v in values),
                "contains_nan": any(icetypes.is_nan(t, v) for v in values) if t.kind in ("float", "double") else None,
                "lower_bound": None if lo is None else icetypes.single_value_bytes(t, lo),
                "upper_bound": None if hi is None else icetypes.single_value_bytes(t, hi),
            })
        return out

    def _write_manifest_list(self, rel, manifests, snapshot_id, parent, seq):
        records = []
        for m in manifests:
            r = {
                "manifest_path": m.path, "manifest_length": m.length,
                "partition_spec_id": m.spec_id, "added_snapshot_id": m.added_snapshot_id,
                "added_files_count": m.count(ADDED), "existing_files_count": m.count(EXISTING),
                "deleted_files_count": m.count(DELETED), "added_rows_count": m.rows(ADDED),
                "existing_rows_count": m.rows(EXISTING), "deleted_rows_count": m.rows(DELETED),
                "partitions": m.partitions if m.partitions else None,
            }
            if self.format_version >= 2:
                r.update(content=m.content, sequence_number=m.sequence_number,
                         min_sequence_number=m.min_sequence_number)
            records.append(r)
        meta = {"snapshot-id": str(snapshot_id),
                "parent-snapshot-id": str(parent.snapshot_id) if parent else "null",
                "format-version": str(self.format_version)}
        if self.format_version >= 2:
            meta["sequence-number"] = str(seq)
        avro.write_container(self.local_path(rel), manifest_list_schema(self.format_version),
                             records, metadata=meta, codec=self.manifest_codec)

    # -- snapshot summaries and table metadata ---------------------------------------------------------
    def _summary(self, operation, added, deleted_entries, manifests):
        def kind_counts(files, prefix, out):
            data = [f for f in files if f.content == DATA]
            pos = [f for f in files if f.content == POSITION_DELETES]
            eq = [f for f in files if f.content == EQUALITY_DELETES]
            pairs = {
                f"{prefix}-data-files": len(data),
                f"{prefix}-delete-files": len(pos) + len(eq),
                f"{prefix}-position-delete-files": len(pos),
                f"{prefix}-equality-delete-files": len(eq),
                f"{prefix}-records": sum(f.record_count for f in data),
                f"{prefix}-files-size": sum(f.file_size_in_bytes for f in files),
                f"{prefix}-position-deletes": sum(f.record_count for f in pos),
                f"{prefix}-equality-deletes": sum(f.record_count for f in eq),
            }
            out.update({k: str(v) for k, v in pairs.items() if v})

        s = {"operation": operation}
        kind_counts([a.file for a in added], "added", s)
        removed = {}
        kind_counts([e.file for e in deleted_entries], "deleted", removed)
        # Java's names for removals: deleted-data-files, deleted-records, removed-*.
        for k, v in removed.items():
            if k in ("deleted-data-files", "deleted-records"):
                s[k] = v
            else:
                s[k.replace("deleted-", "removed-", 1)] = v
        live = [e.file for m in manifests for e in m.entries if e.status != DELETED]
        data = [f for f in live if f.content == DATA]
        s.update({
            "total-records": str(sum(f.record_count for f in data)),
            "total-files-size": str(sum(f.file_size_in_bytes for f in live)),
            "total-data-files": str(len(data)),
            "total-delete-files": str(len(live) - len(data)),
            "total-position-deletes": str(sum(f.record_count for f in live if f.content == POSITION_DELETES)),
            "total-equality-deletes": str(sum(f.record_count for f in live if f.content == EQUALITY_DELETES)),
        })
        return s

    def _metadata_json(self):
        v2 = self.format_version >= 2
        spec = self.specs[self.default_spec_id]
        last_pid = max((pf.field_id for s in self.specs.values() for pf in s.fields), default=999)
        md = {"format-version": self.format_version, "table-uuid": self.table_uuid,
              "location": self.location}
        if v2:
            md["last-sequence-number"] = self.last_sequence_number
        md["last-updated-ms"] = self.time_ms
        md["last-column-id"] = max(s.highest_field_id for s in self.schemas.values())
        if not v2:
            md["schema"] = self.schema.to_json()        # deprecated v1 fields, still required
            md["partition-spec"] = spec.fields_json()
        md["current-schema-id"] = self.schema.schema_id
        md["schemas"] = [s.to_json() for _, s in sorted(self.schemas.items())]
        md["default-spec-id"] = self.default_spec_id
        md["partition-specs"] = [s.to_json() for _, s in sorted(self.specs.items())]
        md["last-partition-id"] = last_pid
        md["default-sort-order-id"] = 0
        md["sort-orders"] = [{"order-id": 0, "fields": []}]
        md["properties"] = self.properties
        cur = self.current
        md["current-snapshot-id"] = cur.snapshot_id if cur else -1
        md["refs"] = {"main": {"snapshot-id": cur.snapshot_id, "type": "branch"}} if cur else {}
        for name, (sid, rtype) in sorted(self.refs.items()):
            md["refs"][name] = {"snapshot-id": sid, "type": rtype}
        snaps = []
        for s in self.snapshots:
            j = {"snapshot-id": s.snapshot_id}
            if s.parent_id is not None:
                j["parent-snapshot-id"] = s.parent_id
            if v2:
                j["sequence-number"] = s.sequence_number
            j.update({"timestamp-ms": s.timestamp_ms, "summary": s.summary,
                      "manifest-list": s.manifest_list, "schema-id": s.schema_id})
            snaps.append(j)
        md["snapshots"] = snaps
        md["statistics"] = []
        md["snapshot-log"] = list(self.snapshot_log)
        md["metadata-log"] = list(self.metadata_log)
        return md

    def set_properties(self, props):
        """Set (value None: remove) table properties: a new metadata version, no snapshot
        (what Java's UpdateProperties commits)."""
        for k, v in props.items():
            if v is None:
                self.properties.pop(k, None)
            else:
                self.properties[k] = v
        self._tick()
        self._write_metadata()

    def _write_metadata(self):
        self.version += 1
        rel = f"metadata/v{self.version}.metadata.json"
        with open(self.local_path(rel), "w", encoding="utf-8") as f:
            json.dump(self._metadata_json(), f, indent=2)
            f.write("\n")
        with open(self.local_path("metadata/version-hint.text"), "w", encoding="utf-8") as f:
            f.write(str(self.version))
        self.metadata_log.append({"timestamp-ms": self.time_ms, "metadata-file": self.abs_path(rel)})

    # -- introspection for fixture descriptions ------------------------------------------------------
    def live_entries(self):
        """Live (ADDED/EXISTING) entries of the current snapshot, sequence numbers resolved."""
        cur = self.current
        return [e for m in (cur.manifests if cur else []) for e in m.entries if e.status != DELETED]
