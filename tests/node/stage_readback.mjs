// Reads files staged by `icedruid stage` (and raw data files) with independent readers and
// prints their rows as NDJSON, for tests/druid/test_stage.py and bench/stage_corpus.py.
//   node stage_readback.mjs READER COLUMNS_JSON FILE...
// READER: duckdb (read_parquet), hyparquet (parquetReadObjects) or avro (icebird's
// avroRead). COLUMNS_JSON: the read schema's top-level column names; only those the file
// has are printed (a column added after the file was written is absent = null).
// Values: DuckDB's getRowObjectsJson forms; hyparquet / Avro values with BigInt as a
// decimal string, Date as an ISO string, bytes as {"$bytes": base64}.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [reader, colsJson, ...files] = process.argv.slice(2);
const wanted = JSON.parse(colsJson);

function plain(v) {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString('base64') };
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) return [...v.entries()].map(([key, value]) => ({ key: plain(key), value: plain(value) }));
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = plain(x);
    return o;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : (v > 0 ? 'Infinity' : '-Infinity');
  return v;
}

// rows go out file by file (a large table is never held whole)
let out = [];
const flush = () => {
  if (out.length) process.stdout.write(out.join('\n') + '\n');
  out = [];
};
if (reader === 'duckdb') {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  for (const f of files) {
    const q = f.replaceAll("'", "''");
    const d = await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${q}')`);
    const have = new Set(d.getRowObjectsJson().map((r) => r.column_name));
    const cols = wanted.filter((n) => have.has(n));
    if (!cols.length) {
      const n = await c.runAndReadAll(`SELECT count(*)::BIGINT n FROM read_parquet('${q}')`);
      for (let i = 0; i < Number(n.getRowObjectsJson()[0].n); i++) out.push('{}');
      continue;
    }
    const sel = cols.map((n) => '"' + n.replaceAll('"', '""') + '"').join(',');
    const r = await c.runAndReadAll(`SELECT ${sel} FROM read_parquet('${q}')`);
    for (const row of r.getRowObjectsJson()) out.push(JSON.stringify(row));
    flush();
  }
} else if (reader === 'hyparquet') {
  const { parquetMetadataAsync, parquetReadObjects, parquetSchema } = await import('hyparquet');
  const { compressors } = await import('hyparquet-compressors').catch(() => ({ compressors: undefined }));
  for (const f of files) {
    const buf = readFileSync(f);
    const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const md = await parquetMetadataAsync(file);
    const have = new Set(parquetSchema(md).children.map((c) => c.element.name));
    const cols = wanted.filter((n) => have.has(n));
    const rows = await parquetReadObjects({ file, metadata: md, columns: cols.length ? cols : undefined, compressors, utf8: false });
    for (const row of rows) {
      const o = {};
      for (const n of cols) o[n] = plain(row[n]);
      out.push(JSON.stringify(o));
    }
    flush();
  }
} else if (reader === 'avro') {
  const { avroMetadata, avroRead } = await import('icebird');
  const { readZigZagBigInt } = await import('icebird/src/avro/avro.metadata.js');
  const { inflateRawSync } = await import('node:zlib');
  // Avro's "zstandard" blocks: Node 20 has no zstd, the zstd tool (Debian's zstd) does it
  const zstdDecompress = (b) => execFileSync('zstd', ['-d', '-c', '-q'], { input: b, maxBuffer: 1 << 30 });
  for (const f of files) {
    const buf = readFileSync(f);
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const reader0 = { view: new DataView(ab), offset: 0 };
    const { metadata, syncMarker } = avroMetadata(reader0);
    // icebird inflates blocks with a gzip routine that rejects tiny raw-deflate blocks:
    // inflate them here with node's zlib and hand icebird a codec-null container.
    const parts = [];
    const zz = (n) => {
      let z = BigInt(n) << 1n;
      const b = [];
      while (z >= 0x80n) { b.push(Number(z & 0x7fn) | 0x80); z >>= 7n; }
      b.push(Number(z));
      return Buffer.from(b);
    };
    while (reader0.offset < ab.byteLength) {
      const count = Number(readZigZagBigInt(reader0));
      const size = Number(readZigZagBigInt(reader0));
      let data = Buffer.from(ab, reader0.offset, size);
      reader0.offset += size + 16;
      const codec = metadata['avro.codec'];
      if (codec === 'deflate') data = inflateRawSync(data);
      else if (codec === 'zstandard') data = zstdDecompress(data);
      else if (codec === 'snappy') throw new Error('snappy Avro blocks are not decoded here');
      parts.push(zz(count), zz(data.length), data, Buffer.from(syncMarker));
    }
    const nb = Buffer.concat(parts);
    const rows = avroRead({
      reader: { view: new DataView(nb.buffer, nb.byteOffset, nb.byteLength), offset: 0 },
      metadata: { ...metadata, 'avro.codec': 'null' },
      syncMarker,
    });
    for (const row of rows) {
      const o = {};
      for (const n of wanted) if (n in row) o[n] = plain(row[n]);
      out.push(JSON.stringify(o));
    }
    flush();
  }
} else {
  console.error('unknown reader ' + reader);
  process.exit(2);
}
flush();
