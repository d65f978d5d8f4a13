import type { Db } from '../db/connection.js';
import { type BatchRow, getBatchRow, getBatchRowByPublicId } from './batch.queries.js';

// Every rater request reads its batch's row, some twice (issue 12: 2.4 reads per judgment, each decoding a settings
// text of a few kilobytes; 5% of the rater path's CPU). A batch row changes only when a researcher creates, edits,
// opens, pauses or closes a batch, so rows are kept per database handle and dropped, all at once, when either
//  - this handle wrote the batches table: a TEMP trigger (this connection's own, whatever code or SQL wrote) calls
//    back into JS; a write rolled back afterwards only costs a re-read; or
//  - another connection committed anything (the CLI, another server process, the analysis worker's results):
//    SQLite's `PRAGMA data_version` changes then. Outside a transaction it is read once per turn of the event loop,
//    not once per request: read 2.4 times a judgment it was 2% of the request thread's CPU (issue 12), and the answer
//    thread's commits change it between nearly every two requests.
// Rows are kept only when read outside a transaction (committed rows). So a row served from here is the row a query
// would return at that moment inside a transaction, and outside one the row as of this turn of the event loop: a
// change another connection commits is seen by the requests of the next turn (a few milliseconds), and by every
// transaction at once (an answer's, a lease's: they decide what a batch that is not open may still do).

type RowCache = {
  /** Bumped by the TEMP triggers on every write to batches through this handle. */
  writes: number;
  seenWrites: number;
  seenDataVersion: number;
  /** `PRAGMA data_version` as read outside a transaction in this turn of the event loop; null from the next turn on. */
  turnDataVersion: number | null;
  byId: Map<number, BatchRow>;
  byPublicId: Map<string, BatchRow>;
};

const MAX_ROWS = 256;
const caches = new WeakMap<Db, RowCache>();
/** Handles whose triggers could not be made: not tried again. */
const unavailable = new WeakSet<Db>();

/** The handle's cache; null where none can be set up now (then rows are read each time). */
function cacheOf(db: Db): RowCache | null {
  const known = caches.get(db);
  if (known) return known;
  if (unavailable.has(db)) return null;
  // A TEMP trigger created inside a transaction would vanish with its rollback, leaving the cache blind.
  if (db.inTransaction || db.readonly) return null;
  const cache: RowCache = { writes: 0, seenWrites: -1, seenDataVersion: -1, turnDataVersion: null, byId: new Map(), byPublicId: new Map() };
  try {
    db.function('simarena_batches_written', { deterministic: false }, () => {
      cache.writes += 1;
      return null;
    });
    db.transaction(() => {
      for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
        db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS batch_row_cache_${event.toLowerCase()} AFTER ${event} ON main.batches BEGIN SELECT simarena_batches_written(); END`);
      }
    })();
  } catch {
    // No function or triggers (the connection or its temporary store refused them): rows are read each time, as
    // without this cache.
    unavailable.add(db);
    return null;
  }
  caches.set(db, cache);
  return cache;
}

/** The cache, emptied first when anything may have changed a batch row since it was filled. */
function currentCache(db: Db): RowCache | null {
  const cache = cacheOf(db);
  if (!cache) return null;
  const dataVersion = dataVersionOf(db, cache);
  if (dataVersion !== cache.seenDataVersion || cache.writes !== cache.seenWrites || cache.byId.size >= MAX_ROWS) {
    cache.byId.clear();
    cache.byPublicId.clear();
    cache.seenDataVersion = dataVersion;
    cache.seenWrites = cache.writes;
  }
  return cache;
}

function dataVersionOf(db: Db, cache: RowCache): number {
  const read = () => db.prepare<[], number>('PRAGMA data_version').pluck().get() ?? -1;
  if (db.inTransaction) return read();
  if (cache.turnDataVersion === null) {
    cache.turnDataVersion = read();
    setImmediate(() => {
      cache.turnDataVersion = null;
    });
  }
  return cache.turnDataVersion;
}

function remember(db: Db, cache: RowCache, row: BatchRow | undefined): BatchRow | undefined {
  // Inside a transaction the row may hold this transaction's own writes, which a rollback takes back: not kept.
  if (!row || db.inTransaction) return row;
  // Shared by every caller until the next change: nobody may alter it.
  const frozen = Object.freeze(row);
  cache.byId.set(row.id, frozen);
  cache.byPublicId.set(row.public_id, frozen);
  return frozen;
}

/** getBatchRowByPublicId, for the rater path: the same row, read from the database only after a change. */
export function cachedBatchRowByPublicId(db: Db, publicId: string): BatchRow | undefined {
  const cache = currentCache(db);
  if (!cache) return getBatchRowByPublicId(db, publicId);
  return cache.byPublicId.get(publicId) ?? remember(db, cache, getBatchRowByPublicId(db, publicId));
}

/** getBatchRow, for the rater path: the same row, read from the database only after a change. */
export function cachedBatchRow(db: Db, id: number): BatchRow | undefined {
  const cache = currentCache(db);
  if (!cache) return getBatchRow(db, id);
  return cache.byId.get(id) ?? remember(db, cache, getBatchRow(db, id));
}
