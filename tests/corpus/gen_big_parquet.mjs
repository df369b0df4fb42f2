// Writes the big data file of test_scan_memory.py with DuckDB and answers the test's
// oracle queries. Usage:
//   node gen_big_parquet.mjs write OUT.parquet ROWS ROW_GROUP_ROWS
//     columns id (long, field id 1), k (int, 2: id % 1000), s (string, 3: 48 hex digits,
//     poorly compressible), d (double, 4); SNAPPY; rows in id order (one thread)
//   node gen_big_parquet.mjs expect FILE.parquet POS_MOD EQ_KEYS(comma list)
//     prints {"rows": N}: the rows whose file row number is not a multiple of POS_MOD and
//     whose k is not one of EQ_KEYS - computed from the file itself, not from icedruid.
// Exit 3 when @duckdb/node-api is missing (the test skips).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(new URL('../node/package.json', import.meta.url));
let duckdb;
try {
  duckdb = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
} catch (e) {
  console.error(`gen_big_parquet: @duckdb/node-api is missing: ${e.message}`);
  process.exit(3);
}
const lit = (s) => `'${String(s).replaceAll("'", "''")}'`;
const [cmd, file, a, b] = process.argv.slice(2);
const instance = await duckdb.DuckDBInstance.create(':memory:');
const conn = await instance.connect();
await conn.run('SET threads = 1'); // keeps the rows in id order
if (cmd === 'write') {
  const rows = BigInt(a), rg = Number(b);
  await conn.run(`COPY (SELECT i AS id, CAST(i % 1000 AS INTEGER) AS k,
                        md5(CAST(i AS VARCHAR)) || substr(md5(CAST(i * 7 AS VARCHAR)), 1, 16) AS s,
                        CAST(i AS DOUBLE) / 3 AS d
                   FROM range(${rows}) t(i))
                  TO ${lit(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE ${rg},
                                   FIELD_IDS {id: 1, k: 2, s: 3, d: 4})`);
  console.log(JSON.stringify({ ok: true }));
} else if (cmd === 'expect') {
  const keys = b.split(',').map(Number).join(', ');
  const r = await conn.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${lit(file)}, file_row_number = true)
                                      WHERE file_row_number % ${Number(a)} <> 0 AND k NOT IN (${keys})`);
  console.log(JSON.stringify({ rows: Number(r.getRowObjects()[0].n) }));
} else {
  console.error('usage: gen_big_parquet.mjs write|expect ...');
  process.exit(2);
}
