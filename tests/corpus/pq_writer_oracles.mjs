// Independent readers over the Parquet files the native writer wrote (see
// test_pq_writer_corpus.py, which runs this): every written file is read by DuckDB
// (read_parquet) and by hyparquet, and its rows are compared with the same reader's rows
// of the ORIGINAL data file at the positions the Iceberg read kept (OUTDIR/i.pos), column
// by column for every top-level column present in both (matched by field id, or by name
// for files without ids), values compared exactly (DuckDB: to_json text of the value;
// hyparquet: JSON of the decoded value, BigInt / bytes / dates spelled out).
//
//   node pq_writer_oracles.mjs REPORT.json
// Prints "N files checked" and one line per difference; exit 1 on any difference or
// read error, 3 when a package is missing.
import { readFileSync } from 'node:fs'
import { importPackage } from '../fixtures/node_resolve.mjs'

let DuckDBInstance, hyparquet, compressors
try {
  ;({ DuckDBInstance } = await importPackage('@duckdb/node-api'))
  hyparquet = await importPackage('hyparquet')
  ;({ compressors } = await importPackage('hyparquet-compressors'))
} catch (e) {
  console.error(`pq_writer_oracles: a package is missing (bash scripts/node-deps.sh): ${e.message}`)
  process.exit(3)
}

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
const rows = async sql => (await con.runAndReadAll(sql)).getRowObjectsJson()
const q = s => `'${s.replaceAll("'", "''")}'`
const ident = s => `"${s.replaceAll('"', '""')}"`

function plain(v) {
  if (typeof v === 'bigint') return `${v}n`
  if (v instanceof Date) return v.toISOString()
  if (v instanceof Uint8Array) return { hex: Buffer.from(v).toString('hex') }
  if (Array.isArray(v)) return v.map(plain)
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
  return v
}

// Top-level columns of a flat schema element list: [{name, field_id}].
function topLevel(elements) {
  const root = elements[0]
  const out = []
  let i = 1
  const skip = () => {
    const e = elements[i++]
    for (let k = 0; k < (Number(e.num_children) || 0); k++) skip()
  }
  for (let k = 0; k < Number(root.num_children); k++) {
    const e = elements[i]
    out.push({ name: e.name, field_id: e.field_id == null ? null : Number(e.field_id) })
    skip()
  }
  return out
}

// Pairs (original name, written name) of the columns both files have.
function pairs(orig, written) {
  const byId = orig.some(c => c.field_id != null)
  const res = []
  for (const w of written) {
    const o = orig.find(c => (byId ? c.field_id === w.field_id : c.name === w.name))
    if (o) res.push([o.name, w.name])
  }
  return res
}

let checked = 0
let values = 0
let failures = 0
const fail = msg => {
  failures++
  if (failures <= 30) console.log(msg)
}

for (const x of report) {
  let kept = readFileSync(x.written.replace(/\.parquet$/, '.pos'), 'utf8').split('\n').filter(Boolean).map(Number)
  if (process.env.PQW_ORACLE_SELFTEST) kept = kept.reverse() // must make the check fail
  try {
    // DuckDB
    const os = topLevel(await rows(`SELECT * FROM parquet_schema(${q(x.data_file)})`))
    const ws = topLevel(await rows(`SELECT * FROM parquet_schema(${q(x.written)})`))
    const cols = pairs(os, ws)
    if (cols.length === 0) {
      fail(`${x.written}: no column in common with ${x.data_file}`)
      continue
    }
    const sel = side => cols.map((p, k) => `to_json(${ident(p[side])})::VARCHAR AS c${k}`).join(', ')
    const read = (f, side) => rows(`SELECT file_row_number AS pos, ${sel(side)} FROM read_parquet(${q(f)}, file_row_number = true) ORDER BY pos`)
    const orows = await read(x.data_file, 0)
    const wrows = await read(x.written, 1)
    const opick = kept.map(p => orows[p])
    if (wrows.length !== x.rows || opick.length !== wrows.length) {
      fail(`${x.written}: duckdb reads ${wrows.length} rows, the writer wrote ${x.rows}, ${kept.length} kept`)
    } else {
      for (let r = 0; r < wrows.length; r++) {
        for (let k = 0; k < cols.length; k++) {
          const a = opick[r]?.[`c${k}`]
          const b = wrows[r][`c${k}`]
          values++
          if (a !== b) {
            fail(`${x.written} row ${r} column ${cols[k][1]}: duckdb original ${a}, written ${b}`)
            r = wrows.length
            break
          }
        }
      }
    }
    // hyparquet
    const load = f => {
      const buf = readFileSync(f)
      return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
    }
    const of = load(x.data_file)
    const wf = load(x.written)
    const hcols = pairs(topLevel(hyparquet.parquetMetadata(of).schema), topLevel(hyparquet.parquetMetadata(wf).schema))
    const ho = await hyparquet.parquetReadObjects({ file: of, compressors })
    const hw = await hyparquet.parquetReadObjects({ file: wf, compressors })
    if (hw.length !== x.rows) {
      fail(`${x.written}: hyparquet reads ${hw.length} rows, the writer wrote ${x.rows}`)
    } else {
      for (let r = 0; r < hw.length; r++) {
        for (const [on, wn] of hcols) {
          values++
          const a = JSON.stringify(plain(ho[kept[r]]?.[on]))
          const b = JSON.stringify(plain(hw[r][wn]))
          if (a !== b) {
            fail(`${x.written} row ${r} column ${wn}: hyparquet original ${a}, written ${b}`)
            r = hw.length
            break
          }
        }
      }
    }
    checked++
  } catch (e) {
    fail(`${x.written}: ${String(e.message || e).split('\n')[0]}`)
  }
}
console.log(`${checked} files checked by duckdb and hyparquet (${values} values compared), ${failures} differences`)
process.exitCode = failures ? 1 : 0
