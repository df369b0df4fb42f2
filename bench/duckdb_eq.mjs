// DuckDB side of bench/bench_eq_keys.sh, and its table writer.
//
//   node bench/duckdb_eq.mjs sql STATEMENT...
//       runs each SQL statement (the generator writes its Parquet files this way)
//   node bench/duckdb_eq.mjs scan THREADS OUT EQFILE KEYS DATA...
//       the equality-delete merge-on-read in SQL: the `id` of every row of the DATA files
//       whose key (KEYS: comma-separated columns) is not among EQFILE's keys,
//         COPY (SELECT d.id FROM read_parquet([DATA]) d
//               ANTI JOIN (SELECT DISTINCT KEYS FROM read_parquet(EQFILE)) e
//               ON d.k IS NOT DISTINCT FROM e.k AND ...) TO OUT (FORMAT json)
//       (every data file is older than the delete file in that table, so no per-file
//       condition is needed). Prints one JSON line: {"seconds": time of the COPY,
//       "rows": rows written, "maxRssKiB": peak RSS of this process}.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(new URL('../tests/node/package.json', import.meta.url));
let duckdb;
try {
  duckdb = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
} catch (e) {
  console.error(`duckdb_eq: @duckdb/node-api is missing (run bash scripts/node-deps.sh): ${e.message}`);
  process.exit(3);
}
const lit = (s) => `'${String(s).replaceAll("'", "''")}'`;
const ident = (s) => `"${String(s).replaceAll('"', '""')}"`;
const [mode, ...args] = process.argv.slice(2);
const instance = await duckdb.DuckDBInstance.create(':memory:');
const conn = await instance.connect();
if (mode === 'sql') {
  await conn.run('SET threads = 2');
  for (const s of args) await conn.run(s);
} else if (mode === 'scan') {
  const [threads, out, eq, keys, ...data] = args;
  if (!data.length) {
    console.error('usage: node bench/duckdb_eq.mjs scan THREADS OUT EQFILE KEYS DATA...');
    process.exit(2);
  }
  await conn.run(`SET threads = ${Number(threads)}`);
  await conn.run('SET preserve_insertion_order = false');
  const k = keys.split(',');
  const on = k.map((c) => `d.${ident(c)} IS NOT DISTINCT FROM e.${ident(c)}`).join(' AND ');
  const sql = `SELECT d.id FROM read_parquet([${data.map(lit).join(', ')}]) d
    ANTI JOIN (SELECT DISTINCT ${k.map(ident).join(', ')} FROM read_parquet(${lit(eq)})) e ON ${on}`;
  const start = process.hrtime.bigint();
  const res = await conn.run(`COPY (${sql}) TO ${lit(out)} (FORMAT json)`);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ seconds, rows: Number(res.rowsChanged ?? -1),
                               maxRssKiB: process.resourceUsage().maxRSS }));
} else {
  console.error('usage: node bench/duckdb_eq.mjs sql|scan ...');
  process.exit(2);
}
