// DuckDB side of bench/bench_scan.sh: the same merge-on-read as `icedruid scan`, in SQL,
// written to NDJSON with COPY ... (FORMAT json). Prints one JSON line:
// {"seconds": time of the COPY, "rows": rows written, "maxRssKiB": peak RSS of this process}.
//
// Usage: node bench/duckdb_scan.mjs THREADS TASKS_JSON FROM_PREFIX TO_PREFIX OUT.ndjson
//   TASKS_JSON   the output of `icedruid tasks TABLE` (data files, their data sequence
//                numbers and the delete files matched to each; paths are the metadata's)
//   FROM_PREFIX  the table location written in the metadata (/tmp/icedruid-corpus/...)
//   TO_PREFIX    where the table really is; metadata paths are mapped FROM -> TO
//
// The SQL, per the Iceberg spec's merge-on-read rules:
//   data   = read_parquet(all data files, filename = true, file_row_number = true)
//   pos    = the position-delete files' (file_path, pos), file_path mapped to the local
//            path so it compares with `filename` (the delete files hold metadata paths)
//   eq     = each equality-delete file's key rows (its columns are the equality columns)
//   result = data ANTI JOIN pos ON (filename, file_row_number)
//                 ANTI JOIN eq ON the key columns, only for data files whose data sequence
//                 number is lower than the delete file's
// The task list decides which delete applies to which file, so a data file newer than an
// equality delete (seq 13 > 12 in bench2m) keeps its rows.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [threads, tasksPath, fromPrefix, toPrefix, out] = process.argv.slice(2);
if (!threads || !tasksPath || !fromPrefix || !toPrefix || !out) {
  console.error('usage: node bench/duckdb_scan.mjs THREADS TASKS_JSON FROM TO OUT.ndjson');
  process.exit(2);
}
// @duckdb/node-api is installed in tests/node by scripts/node-deps.sh.
const require = createRequire(new URL('../tests/node/package.json', import.meta.url));
let duckdb;
try {
  duckdb = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
} catch (e) {
  console.error(`duckdb_scan: @duckdb/node-api is missing (run bash scripts/node-deps.sh): ${e.message}`);
  process.exit(3);
}

const local = (p) => (p.startsWith(fromPrefix) ? toPrefix + p.slice(fromPrefix.length) : p);
const lit = (s) => `'${String(s).replaceAll("'", "''")}'`;
const ident = (s) => `"${String(s).replaceAll('"', '""')}"`;

const plan = JSON.parse(readFileSync(tasksPath, 'utf8'));
const dataFiles = []; // { path (local), seq }
const posFiles = new Set();
const eqFiles = new Map(); // local path -> { seq, files: Set of data paths it applies to }
for (const t of plan.tasks) {
  const d = t.data_file;
  if (d.format !== 'PARQUET') throw new Error(`unsupported data file format ${d.format}`);
  const dpath = local(d.path);
  dataFiles.push({ path: dpath, seq: d.sequence_number });
  for (const del of t.delete_files) {
    const p = local(del.path);
    if (del.kind === 'position_deletes') posFiles.add(p);
    else if (del.kind === 'equality_deletes') {
      if (!eqFiles.has(p)) eqFiles.set(p, { seq: del.sequence_number, applies: new Set() });
      eqFiles.get(p).applies.add(dpath);
    } else throw new Error(`unsupported delete kind ${del.kind}`);
  }
}

const instance = await duckdb.DuckDBInstance.create(':memory:');
const conn = await instance.connect();
await conn.run(`SET threads = ${Number(threads)}`);
await conn.run(`SET preserve_insertion_order = false`);

const list = (xs) => `[${xs.map(lit).join(', ')}]`;
// The data columns of the first file (all files share the table schema here).
const cols = (await (await conn.runAndReadAll(
  `DESCRIBE SELECT * FROM read_parquet(${lit(dataFiles[0].path)})`)).getRowObjects())
  .map((r) => r.column_name);

let sql = `WITH data AS (SELECT * FROM read_parquet(${list(dataFiles.map((f) => f.path))},
             filename = true, file_row_number = true))`;
if (posFiles.size) {
  sql += `, pos AS (SELECT replace(file_path, ${lit(fromPrefix)}, ${lit(toPrefix)}) AS file_path, pos
             FROM read_parquet(${list([...posFiles])}))`;
}
let i = 0;
const eqNames = [];
for (const [p, e] of eqFiles) {
  const keyCols = (await (await conn.runAndReadAll(
    `DESCRIBE SELECT * FROM read_parquet(${lit(p)})`)).getRowObjects()).map((r) => r.column_name);
  const name = `eq${i++}`;
  eqNames.push({ name, keyCols, applies: [...e.applies] });
  sql += `, ${name} AS (SELECT DISTINCT ${keyCols.map(ident).join(', ')} FROM read_parquet(${lit(p)}))`;
}
sql += `\nSELECT ${cols.map((c) => `data.${ident(c)}`).join(', ')} FROM data`;
if (posFiles.size)
  sql += `\n  ANTI JOIN pos ON pos.file_path = data.filename AND pos.pos = data.file_row_number`;
const where = [];
for (const e of eqNames) {
  // only the data files the delete applies to (older data sequence number)
  const on = e.keyCols.map((c) => `${e.name}.${ident(c)} IS NOT DISTINCT FROM data.${ident(c)}`);
  where.push(`NOT (data.filename IN (${e.applies.map(lit).join(', ')}) AND EXISTS (SELECT 1 FROM ${e.name} WHERE ${on.join(' AND ')}))`);
}
if (where.length) sql += `\n  WHERE ${where.join('\n    AND ')}`;

const start = process.hrtime.bigint();
const res = await conn.run(`COPY (${sql}) TO ${lit(out)} (FORMAT json)`);
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const rows = Number(res.rowsChanged ?? -1);
console.log(JSON.stringify({ seconds, rows, maxRssKiB: process.resourceUsage().maxRSS }));
