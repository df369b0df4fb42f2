// Writes the small Parquet seed files of the Parquet fuzz targets with DuckDB
// (tests/fuzz/corpus/fuzz_parquet_file/ and, footer only, fuzz_parquet_footer/).
// Usage: node tests/node/gen_parquet_fuzz_seeds.mjs   (after scripts/node-deps.sh)
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fuzz', 'corpus');
const fileDir = path.join(root, 'fuzz_parquet_file');
const footDir = path.join(root, 'fuzz_parquet_footer');
fs.mkdirSync(fileDir, { recursive: true });
fs.mkdirSync(footDir, { recursive: true });

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();

const seeds = {
  flat_types: `SELECT i::INTEGER a, (i * 1000003)::BIGINT b, i % 2 = 0 c, (i / 7.0)::DOUBLE d,
      (i / 3.0)::FLOAT e, 'str' || i s, CASE WHEN i % 3 = 0 THEN NULL ELSE i END n,
      (i * 1.5)::DECIMAL(9,2) dec32, (i * 1.5)::DECIMAL(18,3) dec64, (i * 1.5)::DECIMAL(30,4) dec128,
      DATE '2020-01-01' + i::INTEGER dt, TIMESTAMP '2020-01-01 00:00:00' + INTERVAL (i) SECOND ts,
      TIMESTAMPTZ '2020-01-01 00:00:00+00' + INTERVAL (i) MINUTE tstz, TIME '01:02:03' + INTERVAL (i) SECOND tm,
      i::UTINYINT u8, i::USMALLINT u16, i::UINTEGER u32, (i * 1000)::UBIGINT u64, i::TINYINT i8,
      gen_random_uuid() u, encode('blob' || i) bl FROM range(40) t(i)`,
  nested: `SELECT i id, [i, NULL, i + 1] l, CASE WHEN i % 4 = 0 THEN NULL ELSE [[i], [], NULL] END ll,
      {'x': i, 'y': CASE WHEN i % 2 = 0 THEN NULL ELSE 'y' || i END} st,
      MAP(['k' || i, 'kk' || i], [i, NULL]) m, [{'a': i, 'b': [i, i]}] ls FROM range(20) t(i)`,
  dict_strings: `SELECT ['red', 'green', 'blue', NULL][(i % 4) + 1] color, i % 5 small FROM range(300) t(i)`,
  empty: `SELECT 1::INTEGER a, 'x' b WHERE false`,
};
const opts = {
  v1_snappy: "(FORMAT PARQUET, COMPRESSION SNAPPY)",
  v2_zstd: "(FORMAT PARQUET, COMPRESSION ZSTD, PARQUET_VERSION V2)",
  v1_gzip_small_groups: "(FORMAT PARQUET, COMPRESSION GZIP, ROW_GROUP_SIZE 7)",
  v1_uncompressed: "(FORMAT PARQUET, COMPRESSION UNCOMPRESSED)",
};
let n = 0;
for (const [name, sql] of Object.entries(seeds)) {
  for (const [oname, o] of Object.entries(opts)) {
    if (name === 'empty' && oname !== 'v1_snappy') continue;
    const out = path.join(fileDir, `${name}_${oname}.parquet`);
    await con.run(`COPY (${sql}) TO '${out}' ${o}`);
    const buf = fs.readFileSync(out);
    if (buf.length > 20000) { fs.unlinkSync(out); console.log('too big, dropped', out); continue; }
    const len = buf.readUInt32LE(buf.length - 8);
    fs.writeFileSync(path.join(footDir, `${name}_${oname}.footer`), buf.subarray(buf.length - 8 - len, buf.length - 8));
    n++;
  }
}
// Several row groups (DuckDB cuts row groups at multiples of 2048 rows): also read by
// tests/unit/parquet/test_pq_reader.c, which checks row positions against id = position.
const rg = path.join(fileDir, 'row_groups_5.parquet');
await con.run(`COPY (SELECT i::BIGINT id, i % 5 small, CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 END m
    FROM range(10000) t(i)) TO '${rg}' (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE 2048)`);
console.log(`wrote ${n + 1} seeds (${fs.statSync(rg).size} bytes for row_groups_5)`);
