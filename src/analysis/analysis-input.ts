// How the analysis worker reads a batch's analysis input without holding one snapshot through a million judgments.
//
// Read in one read transaction, a million judgments took the worker 5 s alone and ~14 s under full rater load. While
// a reader holds a snapshot, no checkpoint copies the log past it: the server's write-ahead log grew by every rater's
// commit (30–35 MB a second) to 600–850 MB, every page the request thread looked up searched the log's whole index
// beyond what had been copied, and the reader's end left hundreds of megabytes to copy at once (issue 12: raters'
// p99 rose by 20–150 ms while a researcher opened such an analysis). So only what the judgments are joined to is read
// in one short transaction, with the last judgment id it holds; the judgments up to that id are read after it in parts,
// each in a snapshot of its own; then a short transaction checks that nothing of what was read changed meanwhile.
// Judgments are only ever added with new ids, and removals and changes are counted (migration 031): if the data version
// up to that id is the same at the end as at the start, the parts read exactly the judgments the first snapshot held.
// Otherwise (a rater excluded, a pair removed, a participant's data erased while it read) it is read again in one
// transaction, as before.
import type { Db } from '../db/connection.js';
import {
  type AnalysisSettings,
  type BatchAnalysisInput,
  analysisVersion,
  completeBatchAnalysisInput,
  loadBatchAnalysisInput,
  readBatchAnalysisFrame,
} from './analysis-cache.js';

export type ReadAnalysisInput = 'unchanged' | { version: string; input: BatchAnalysisInput | null; inParts: boolean };

/**
 * The batch's analysis input and the version it is of; 'unchanged' when the stored result already has that version.
 * `idsPerPart`: judgment ids per statement (tests read a few batches' judgments in several parts).
 */
export function readAnalysisInput(db: Db, batchId: number, settings: AnalysisSettings, idsPerPart?: number): ReadAnalysisInput {
  const first = db.transaction(() => {
    const version = analysisVersion(db, batchId, settings);
    const stored = db.prepare<{ b: number }, { data_version: string }>('SELECT data_version FROM analysis_cache WHERE batch_id = :b').get({ b: batchId });
    if (stored?.data_version === version) return 'unchanged' as const;
    return { version, frame: readBatchAnalysisFrame(db, batchId) };
  })();
  if (first === 'unchanged') return first;
  const { version, frame } = first;
  if (!frame) return { version, input: null, inParts: false };
  const input = completeBatchAnalysisInput(db, frame, idsPerPart);
  if (db.transaction(() => analysisVersion(db, batchId, settings, frame.upTo))() === version) return { version, input, inParts: true };
  return db.transaction(() => ({ version: analysisVersion(db, batchId, settings), input: loadBatchAnalysisInput(db, batchId), inParts: false }))();
}
