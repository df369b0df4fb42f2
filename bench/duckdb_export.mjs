// DuckDB side of bench/bench_cat.sh: exports every row of each Parquet file to NDJSON with
// DuckDB (COPY ... TO ... (FORMAT json)), one file after the other in one process, and
// prints one JSON line: {"seconds": wall time of the exports, "cpuSeconds": user+system CPU
// time of the process during the exports, "maxRssKiB": peak RSS}.
// Usage: node bench/duckdb_export.mjs THREADS OUTDIR FILE...
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [threads, outDir, ...files] = process.argv.slice(2);
if (!threads || !outDir || files.length === 0) {
  console.error('usage: node bench/duckdb_export.mjs THREADS OUTDIR FILE...');
  process.exit(2);
}
// @duckdb/node-api is installed in tests/node by scripts/node-deps.sh.
const require = createRequire(new URL('../tests/node/package.json', import.meta.url));
let duckdb;
try {
  duckdb = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
} catch (e) {
  console.error(`duckdb_export: @duckdb/node-api is missing (run bash scripts/node-deps.sh): ${e.message}`);
  process.exit(3);
}
const sql = (s) => `'${s.replaceAll("'", "''")}'`;
const instance = await duckdb.DuckDBInstance.create(':memory:');
const conn = await instance.connect();
await conn.run(`SET threads = ${Number(threads)}`);
const start = process.hrtime.bigint();
const cpu0 = process.cpuUsage();
for (const f of files) {
  const out = join(outDir, basename(f).replace(/\.parquet$/, '') + '.ndjson');
  await conn.run(`COPY (SELECT * FROM read_parquet(${sql(f)})) TO ${sql(out)} (FORMAT json)`);
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const cpu = process.cpuUsage(cpu0);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
console.log(JSON.stringify({ seconds, cpuSeconds, maxRssKiB: process.resourceUsage().maxRSS }));
