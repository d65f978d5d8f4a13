// A batch's stored analysis as the database holds it (analysis_cache.result): since migration 027 the gzip of the
// report's JSON (a BLOB), before it the JSON itself (TEXT).
import { gunzipSync } from 'node:zlib';
import type { Db } from '../../src/db/connection.js';

/** The stored row's value as better-sqlite3 reads it, or undefined when none is stored. */
export const storedAnalysisValue = (db: Db, batchId: number) =>
  db.prepare('SELECT result FROM analysis_cache WHERE batch_id = ?').pluck().get(batchId) as Buffer | string | undefined;

/** The stored report's JSON text, decompressed when it is stored compressed. */
export function storedAnalysisJson(db: Db, batchId: number): string {
  const value = storedAnalysisValue(db, batchId);
  if (value === undefined) throw new Error(`no analysis is stored for batch ${batchId}`);
  return typeof value === 'string' ? value : gunzipSync(value).toString('utf8');
}

/** The stored report, parsed. */
export const storedAnalysis = <T>(db: Db, batchId: number): T => JSON.parse(storedAnalysisJson(db, batchId)) as T;
