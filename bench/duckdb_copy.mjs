// DuckDB side of bench/bench_pqwrite.sh: the same data rows written to Parquet by DuckDB,
//   COPY (SELECT * FROM read_parquet([FILES])) TO OUT (FORMAT parquet, COMPRESSION CODEC)
// Prints one JSON line: {"seconds": time of the COPY, "rows": rows written,
// "maxRssKiB": peak RSS of this process}.
//
// Usage: node bench/duckdb_copy.mjs THREADS CODEC OUT.parquet FILE...
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

const [threads, codec, out, ...files] = process.argv.slice(2)
if (!threads || !codec || !out || files.length === 0) {
  console.error('usage: node bench/duckdb_copy.mjs THREADS CODEC OUT.parquet FILE...')
  process.exit(2)
}
const modules = process.env.ICD_NODE_MODULES
const require = createRequire(new URL('../tests/node/package.json', import.meta.url))
let duckdb
try {
  const entry = modules ? `${modules}/@duckdb/node-api` : '@duckdb/node-api'
  duckdb = await import(pathToFileURL(require.resolve(entry)).href)
} catch (e) {
  console.error(`duckdb_copy: @duckdb/node-api is missing (run bash scripts/node-deps.sh): ${e.message}`)
  process.exit(3)
}
const lit = s => `'${String(s).replaceAll("'", "''")}'`
const instance = await duckdb.DuckDBInstance.create(':memory:')
const con = await instance.connect()
await con.run(`SET threads = ${Number(threads)}`)
const t0 = process.hrtime.bigint()
const r = await con.runAndReadAll(
  `COPY (SELECT * FROM read_parquet([${files.map(lit).join(', ')}])) TO ${lit(out)} ` +
    `(FORMAT parquet, COMPRESSION ${codec})`)
const seconds = Number(process.hrtime.bigint() - t0) / 1e9
const rows = Number(r.getRows()[0][0]) // COPY returns the number of rows written
console.log(JSON.stringify({ seconds, rows, maxRssKiB: process.resourceUsage().maxRSS }))
