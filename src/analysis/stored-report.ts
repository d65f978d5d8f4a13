// The form a batch's analysis report takes in analysis_cache.result (migration 027): the gzip of its JSON, a BLOB; rows
// written before that migration hold the JSON itself, as TEXT, and are read as they are. At a million judgments the
// JSON is 10–14 MB: writing it held raters' write transactions 55–80 ms behind the worker's, and reading it held the
// server's request thread 66–83 ms (issue 12). Compressed it is about 0.8 MB: the worker's store transaction took 5.4 ms
// instead of 29 ms and the server's read of a new result 0.8 ms instead of 12.7 ms (34 ms with the bytes the API sent),
// measured side by side by scripts/bench/stored-report.ts.
import { promisify } from 'node:util';
import { createGunzip, gunzip, gunzipSync, gzipSync } from 'node:zlib';
import type { AnalysisReport } from './analysis-report.js';
import { storedAnalysisReportSchema } from './analysis-report.schema.js';

/** analysis_cache.result as better-sqlite3 reads it: gzip bytes (a BLOB), or JSON text written before migration 027. */
export type StoredResult = Buffer | string;

/**
 * gzip level 1, measured on the report of 1M judgments (scripts/bench/stored-report.ts; 10.3 MB of JSON): 0.81 MB in
 * 40–44 ms of the worker (level 3: the same size; level 6: 0.76 MB in 62 ms; level 9: 0.74 MB in 109 ms). The row is
 * what raters' writes and the server's reads wait for, and level 1 already takes it to 8%; more saves 50 KB at most.
 */
export const REPORT_GZIP_LEVEL = 1;

const gunzipAsync = promisify(gunzip);
/**
 * zlib's asynchronous API inflates one output chunk per task on the thread pool and goes back through the event loop
 * between chunks: with its default 16 KB chunks a million judgments' report (14 MB) took some 900 turns of a request
 * thread busy with raters, and the API's answer came up to 67 s after the report was stored (issue 12). In 1 MB
 * chunks it is some 14 turns.
 */
const UNZIP_CHUNK_BYTES = 1 << 20;
const gunzipOnThreadPool = (stored: Buffer) => gunzipAsync(stored, { chunkSize: UNZIP_CHUNK_BYTES });

/** The stored form of a report's JSON. Compressed before the write transaction opens, never inside it. */
export function compressReport(json: string, level = REPORT_GZIP_LEVEL): Buffer {
  return gzipSync(json, { level });
}

/** Whether stored bytes start as gzip does (magic number, deflate): the check a foreign BLOB fails without decompressing. */
export function looksLikeGzip(stored: Buffer): boolean {
  return stored.length >= 18 && stored[0] === 0x1f && stored[1] === 0x8b && stored[2] === 0x08;
}

const REPORT_START = '{"schema_version":';
const REPORT_START_BYTES = Buffer.from(REPORT_START, 'utf8');

/**
 * A report's JSON as the worker writes it (JSON.stringify of a report, whose first key is schema_version): the check a
 * damaged or foreign row fails without parsing it. Parsing a million judgments' report took 150–400 ms of the request
 * thread, and the API, which sends the report as stored, does not need it (issue 12).
 */
export function looksLikeReportJson(json: string | Buffer): boolean {
  if (typeof json === 'string') return json.startsWith(REPORT_START) && json.endsWith('}');
  return json.length > REPORT_START_BYTES.length && json.subarray(0, REPORT_START_BYTES.length).equals(REPORT_START_BYTES) && json[json.length - 1] === 0x7d;
}

/**
 * The report's JSON bytes, decompressed on libuv's thread pool (not the event loop); null when the gzip is damaged
 * (bad header, bad deflate data, wrong checksum or length) or the bytes are not a report's JSON.
 */
export async function decompressReport(stored: Buffer): Promise<Buffer | null> {
  try {
    const json = await gunzipOnThreadPool(stored);
    return looksLikeReportJson(json) ? json : null;
  } catch {
    return null;
  }
}

/**
 * Whether stored gzip bytes are whole (header, deflate data, checksum and length) and hold a report's JSON, inflated on
 * the thread pool in the same chunks as decompressReport but let go one by one: only the JSON's first bytes and its last
 * byte are kept. Inflated whole, a million judgments' report held 14 MB, and twice that while zlib joined its chunks:
 * the server's largest allocation, made at the start of every bundle export (issue 12).
 */
export async function gzipHoldsReport(stored: Buffer): Promise<boolean> {
  const inflating = createGunzip({ chunkSize: UNZIP_CHUNK_BYTES });
  inflating.end(stored);
  let head = Buffer.alloc(0);
  let last = -1;
  try {
    for await (const chunk of inflating as AsyncIterable<Buffer>) {
      if (chunk.length === 0) continue;
      if (head.length < REPORT_START_BYTES.length) head = Buffer.concat([head, chunk.subarray(0, REPORT_START_BYTES.length - head.length)]);
      last = chunk[chunk.length - 1] as number;
    }
  } catch {
    return false;
  }
  // The JSON's ends, judged by the one rule for a report's JSON (a body no longer than its start is not one).
  return last >= 0 && looksLikeReportJson(Buffer.concat([head, Buffer.of(last)]));
}

/**
 * A report's JSON checked against its schema; null (to be recomputed) when it is damaged or of another shape. The
 * report is returned as parsed, not as zod's copy (which puts the checked keys first): a bundle's analysis.json is then
 * the same text whether its report was just computed or read back.
 */
function parseReportJson(json: string): AnalysisReport | null {
  let report: unknown;
  try {
    report = JSON.parse(json);
  } catch {
    return null;
  }
  return storedAnalysisReportSchema.safeParse(report).success ? (report as AnalysisReport) : null;
}

/**
 * A stored row's report for the server: the gzip decompressed on libuv's thread pool (`decompressReport`), the JSON
 * parsed on the caller's thread. Null when the row is damaged (bad gzip, not a report's JSON, another shape).
 */
export async function parseStoredReport(stored: StoredResult): Promise<AnalysisReport | null> {
  const json = typeof stored === 'string' ? stored : ((await decompressReport(stored))?.toString('utf8') ?? null);
  return json === null ? null : parseReportJson(json);
}

/**
 * A stored row's report, decompressed and parsed on the caller's thread: for the worker and the CLI, which answer no
 * requests. Null when the row is damaged (bad gzip, bad JSON, another shape).
 */
export function readStoredReport(stored: StoredResult): AnalysisReport | null {
  if (typeof stored === 'string') return parseReportJson(stored);
  let json: string;
  try {
    json = gunzipSync(stored).toString('utf8');
  } catch {
    return null;
  }
  return parseReportJson(json);
}
