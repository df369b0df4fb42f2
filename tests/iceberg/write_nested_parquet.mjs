// Writes the Parquet data file of test_nested_scan.py with DuckDB (a third-party writer):
// structs, lists of structs, maps with int keys, lists of lists, nulls at every level,
// TIMESTAMP(MILLIS) inside a struct. Usage: node write_nested_parquet.mjs OUT.parquet [--no-ids]
// With --variant / --shredded: a `v` column holding Variant metadata/value byte strings (the
// second row's value is truncated), or a shredded variant group (with typed_value).
// With --range: s STRUCT(d DATE), the second row's date 200,000,000 days after 1970.
import { importPackage } from '../fixtures/node_resolve.mjs'

const [out, flag] = process.argv.slice(2)
const duck = await importPackage('@duckdb/node-api')
const db = await duck.DuckDBInstance.create(':memory:')
const c = await db.connect()
if (flag === '--variant' || flag === '--shredded') {
  const typed = flag === '--shredded' ? ", 'typed_value': 5" : ''
  await c.run(`COPY (SELECT * FROM (VALUES
      (1, {'metadata': '\\x01\\x01\\x00\\x01k'::BLOB, 'value': '\\x02\\x01\\x00\\x00\\x02\\x0C\\x07'::BLOB${typed}}),
      (2, {'metadata': '\\x01\\x00\\x00'::BLOB, 'value': '\\x14\\x01\\x02'::BLOB${typed}})) t(id, v))
    TO '${out}' (FORMAT parquet, FIELD_IDS {id: 1, v: 2})`)
  process.exit(0)
}
if (flag === '--range') { // a date inside a struct, far beyond int64 micros as a timestamp
  await c.run(`COPY (SELECT * FROM (VALUES (1, {'d': DATE '2022-01-08'}),
      (2, {'d': DATE '1970-01-01' + 200000000})) t(id, s))
    TO '${out}' (FORMAT parquet, FIELD_IDS {id: 1, s: {__duckdb_field_id: 2, d: 10}})`)
  process.exit(0)
}
const ids = `, FIELD_IDS {id: 1, s: {__duckdb_field_id: 2, x: 10, y: 11, ts: 12, gone: 23},
  l: {__duckdb_field_id: 3, element: {__duckdb_field_id: 13, k: 14, w: 15}},
  m: {__duckdb_field_id: 4, key: 16, value: 17},
  ll: {__duckdb_field_id: 5, element: {__duckdb_field_id: 18, element: 19}},
  g: {__duckdb_field_id: 6, q: 22}}`
await c.run(`CREATE TABLE t (id INT,
  s STRUCT(x INT, y VARCHAR, ts TIMESTAMP_MS, gone INT),
  l STRUCT(k INT, w FLOAT)[], m MAP(INT, VARCHAR), ll INT[][], g STRUCT(q INT))`)
await c.run(`INSERT INTO t VALUES
  (1, {'x': 1, 'y': 'a', 'ts': '2024-01-02 03:04:05.678', 'gone': 5},
      [{'k': 1, 'w': 1.5}, NULL, {'k': NULL, 'w': NULL}], MAP {1: 'one', 2: NULL},
      [[1, 2], [], NULL], {'q': 3}),
  (2, NULL, NULL, NULL, NULL, NULL),
  (3, {'x': NULL, 'y': NULL, 'ts': NULL, 'gone': NULL}, [], MAP {}, [NULL], {'q': NULL}),
  (4, {'x': -7, 'y': 'é"' || chr(10), 'ts': '1969-12-31 23:59:59.999', 'gone': NULL},
      [{'k': 2147483647, 'w': -0.25}], MAP {-1: 'neg'}, [[NULL, 3]], NULL)`)
await c.run(`COPY (SELECT * FROM t ORDER BY id) TO '${out}' (FORMAT parquet${flag === '--no-ids' ? '' : ids})`)
