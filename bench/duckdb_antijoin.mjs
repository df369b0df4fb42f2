// DuckDB's version of what `icedruid stage` writes for bench2m: the data files that have
// deletes, minus the position-deleted rows (anti-join on file + row number) and the
// equality-deleted keys (anti-join on the key column), COPY'd to one Parquet file.
//   node duckdb_antijoin.mjs THREADS CODEC OUT.parquet FROM_PREFIX TO_PREFIX POSDEL EQDEL KEY DATA...
// Prints the number of rows written.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// the npm packages live in tests/node (scripts/node-deps.sh)
const require = createRequire(new URL('../tests/node/package.json', import.meta.url));
const { DuckDBInstance } = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);

const [threads, codec, out, from, to, posdel, eqdel, key, ...data] = process.argv.slice(2);
const q = (s) => "'" + s.replaceAll("'", "''") + "'";
const inst = await DuckDBInstance.create(':memory:');
const c = await inst.connect();
await c.run(`SET threads = ${Number(threads)}`);
const list = '[' + data.map(q).join(',') + ']';
await c.run(`COPY (
  SELECT d.* EXCLUDE (filename, file_row_number)
  FROM read_parquet(${list}, filename = true, file_row_number = true) d
  ANTI JOIN (SELECT replace(file_path, ${q(from)}, ${q(to)}) AS fp, pos FROM read_parquet(${q(posdel)})) p
    ON d.filename = p.fp AND d.file_row_number = p.pos
  ANTI JOIN read_parquet(${q(eqdel)}) e ON d."${key}" = e."${key}"
) TO ${q(out)} (FORMAT parquet, COMPRESSION ${codec})`);
const r = await c.runAndReadAll(`SELECT count(*)::BIGINT n FROM read_parquet(${q(out)})`);
console.log(r.getRowObjectsJson()[0].n);
