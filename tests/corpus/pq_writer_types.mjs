// The files of tests/unit/parquet/test_writer_iceberg.c (every Iceberg primitive through
// the row sink, and the legacy forms mirrored: INT96, TIMESTAMP_MILLIS, un-annotated
// binary string, decimal on BYTE_ARRAY, 2-level list) read by DuckDB, every value cast to
// VARCHAR and compared with the value the test emitted (see emit_row and
// test_mirror_legacy there), and by hyparquet (rows, lists, maps, longs).
//   node pq_writer_types.mjs DIR      exit 1 on a difference, 3 when a package is missing
import { readFileSync } from 'node:fs'
import { importPackage } from '../fixtures/node_resolve.mjs'

let DuckDBInstance, hyparquet, compressors
try {
  ;({ DuckDBInstance } = await importPackage('@duckdb/node-api'))
  hyparquet = await importPackage('hyparquet')
  ;({ compressors } = await importPackage('hyparquet-compressors'))
} catch (e) {
  console.error(`pq_writer_types: a package is missing: ${e.message}`)
  process.exit(3)
}
const dir = process.argv[2]
const day = k => new Date((19000 + k) * 86400000).toISOString().slice(0, 10)
const types = [0, 1, 2, 3].map(k => ({
  b: String(Boolean(k & 1)),
  i: k === 1 ? null : String(-7 * k),
  l: String(2n ** 40n + BigInt(k)),
  f: (1.5 * k).toFixed(1),
  d9: ((12345 + k) / 100).toFixed(2),
  d18: '-123456789012.345',
  d38: '-5.00',
  dt: day(k),
  tm: k ? `01:00:00.00000${k}` : '01:00:00',
  ts: '2023-11-14 22:13:20.123456',
  tstz: '1969-12-31 23:59:58.999999+00',
  tsns: '2023-11-14 22:13:20.123456789',
  s: 'héllo',
  u: '12345678-9abc-def0-0102-030405060708',
  fx: 'abcd',
  bin: '\\x00\\x01',
  lst: [ '[]', '[0]', null, '[0, NULL, 2]' ][k],
  m: k ? '{a=10, b=NULL}' : '{}',
  st: "{'x': 99}",
}))
const legacy = [{
  ts: '1970-01-02 00:00:00.000001', // INT96
  tstz: '1970-01-01 00:00:01.5', // TIMESTAMP_MILLIS
  s: 'x', // BYTE_ARRAY without UTF8
  d18: '-123456789012.345', // DECIMAL on BYTE_ARRAY
  lst: '[5, 6]', // 2-level list
  l: '1099511627776', // promoted int -> long
}]
const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run("SET TimeZone = 'UTC'")
let bad = 0
for (const [name, want] of [['types', types], ['legacy', legacy]]) {
  const f = `${dir}/${name}.parquet`
  const got = (await con.runAndReadAll(`SELECT COLUMNS(*)::VARCHAR FROM read_parquet('${f}')`)).getRowObjectsJson()
  if (got.length !== want.length) { console.log(`${name}: duckdb ${got.length} rows`); bad++ }
  want.forEach((w, r) => {
    for (const [c, v] of Object.entries(w)) {
      if (got[r]?.[c] !== v) { console.log(`${name} row ${r} ${c}: duckdb ${got[r]?.[c]}, want ${v}`); bad++ }
    }
  })
  const buf = readFileSync(f)
  const rows = await hyparquet.parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength), compressors })
  if (rows.length !== want.length) { console.log(`${name}: hyparquet ${rows.length} rows`); bad++ }
  want.forEach((w, r) => {
    if (String(rows[r]?.l) !== w.l) { console.log(`${name} row ${r} l: hyparquet ${rows[r]?.l}`); bad++ }
    const lst = rows[r]?.lst
    const txt = lst == null ? null : `[${lst.map(x => (x == null ? 'NULL' : String(x))).join(', ')}]`
    if (txt !== w.lst) { console.log(`${name} row ${r} lst: hyparquet ${txt}, want ${w.lst}`); bad++ }
  })
  const big = (k, v) => (typeof v === 'bigint' ? Number(v) : v)
  if (name === 'types' && JSON.stringify(rows[1]?.m, big) !== '{"a":10,"b":null}') {
    console.log(`types row 1 m: hyparquet ${JSON.stringify(rows[1]?.m, big)}`)
    bad++
  }
}
console.log(`types.parquet and legacy.parquet: ${bad} differences`)
process.exitCode = bad ? 1 : 0
