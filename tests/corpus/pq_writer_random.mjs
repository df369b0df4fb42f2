// Independent readers over the random files of tests/unit/parquet/test_writer_random.c:
// DuckDB (read_parquet, each row as to_json) and hyparquet (parquetReadObjects) must read
// every DIR/rand_N.parquet and give exactly the rows of DIR/rand_N.json (the generator's
// rows: structs as objects, lists as arrays, maps as objects keyed by their string keys).
// Numbers compare as numbers (int64 values stay below 2^53), everything else exactly.
//
//   node pq_writer_random.mjs DIR
// Exit 1 on any difference or read error, 3 when a package is missing.
import { readFileSync, readdirSync } from 'node:fs'
import { importPackage } from '../fixtures/node_resolve.mjs'

let DuckDBInstance, hyparquet, compressors
try {
  ;({ DuckDBInstance } = await importPackage('@duckdb/node-api'))
  hyparquet = await importPackage('hyparquet')
  ;({ compressors } = await importPackage('hyparquet-compressors'))
} catch (e) {
  console.error(`pq_writer_random: a package is missing (bash scripts/node-deps.sh): ${e.message}`)
  process.exit(3)
}
const dir = process.argv[2]
const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
const q = s => `'${s.replaceAll("'", "''")}'`

// A canonical text: numbers (and BigInt) as numbers, maps (Map or [{key, value}]) as
// objects, object keys in their order.
function canon(v) {
  if (v === undefined || v === null) return null
  if (typeof v === 'bigint') return Number(v)
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), canon(x)]))
  if (v instanceof Uint8Array) return Buffer.from(v).toString('latin1')
  if (Array.isArray(v)) return v.map(canon)
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canon(x)]))
  return v
}

let files = 0
let failures = 0
const fail = m => {
  failures++
  if (failures <= 20) console.log(m)
}
for (const name of readdirSync(dir).filter(n => /^rand_\d+\.parquet$/.test(n)).sort()) {
  const f = `${dir}/${name}`
  const expected = readFileSync(f.replace(/\.parquet$/, '.json'), 'utf8').split('\n').filter(Boolean)
    .map(l => JSON.stringify(canon(JSON.parse(l))))
  try {
    const res = await con.runAndReadAll(`SELECT to_json(t)::VARCHAR AS j FROM read_parquet(${q(f)}) t`)
    const got = res.getRowObjectsJson().map(r => JSON.stringify(canon(JSON.parse(r.j))))
    if (got.length !== expected.length) fail(`${name}: duckdb ${got.length} rows, expected ${expected.length}`)
    for (let i = 0; i < got.length && i < expected.length; i++) {
      if (got[i] !== expected[i]) {
        fail(`${name} row ${i}: duckdb ${got[i]}\n   expected ${expected[i]}`)
        break
      }
    }
  } catch (e) {
    fail(`${name}: duckdb: ${String(e.message || e).split('\n')[0]}`)
  }
  try {
    const buf = readFileSync(f)
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
    const rows = await hyparquet.parquetReadObjects({ file: ab, compressors })
    const got = rows.map(r => JSON.stringify(canon(r)))
    if (got.length !== expected.length) fail(`${name}: hyparquet ${got.length} rows, expected ${expected.length}`)
    for (let i = 0; i < got.length && i < expected.length; i++) {
      if (got[i] !== expected[i]) {
        fail(`${name} row ${i}: hyparquet ${got[i]}\n   expected ${expected[i]}`)
        break
      }
    }
  } catch (e) {
    fail(`${name}: hyparquet: ${String(e.message || e).split('\n')[0]}`)
  }
  files++
}
console.log(`${files} random files read by duckdb and hyparquet, ${failures} differences`)
process.exitCode = failures || files === 0 ? 1 : 0
