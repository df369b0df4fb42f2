"""icewriter: a small, dependency-free writer of Iceberg tables for icedruid's tests.

Modules, bottom-up:
  thrift    thrift compact protocol encoder (Parquet footers and page headers)
  icetypes  Iceberg primitive types: parsing, value normalisation, ordering, serialisation
  parquet   Parquet file writer (flat schemas)
  avro      Avro object container file writer
  iceberg   tables: data/delete files, manifests, manifest lists, snapshots, metadata JSON
  fixtures  the bundled example tables, the all-types table and the planner edge cases

Python 3.11 standard library only.  See tests/tools/README.md.
"""
