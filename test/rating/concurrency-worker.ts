// One of several processes hammering the same SQLite file: raters enter, lease, and answer (twice, as a double
// submit), each worker with its own clock skew so leases expire under other workers' feet and late answers race.
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { openDatabase } from '../../src/db/connection.js';
import { assignNextPair } from '../../src/rating/assign-next-pair.js';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import { admitRater } from '../../src/rating/rater-pool.js';
import { newPublicId } from '../../src/web/ids.js';
import { setRaterStatus } from '../../src/rating/rating.queries.js';
import { recordJudgment } from '../../src/rating/record-judgment.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';

const [dbPath, batchIdText, seedText, roundsText] = process.argv.slice(2);
const db = openDatabase(dbPath ?? '');
const batch = getBatchRow(db, Number(batchIdText));
if (!batch) throw new Error('no batch');
const random = seededRandom(Number(seedText));
const base = Date.parse('2026-02-01T09:00:00.000Z');
const settings = batchSettingsSchema.parse(JSON.parse(batch.settings));
// `revised` and `final` stay 0: recordJudgment alone answers a second submit as a duplicate (only the rater pages revise).
const tally = { assigned: 0, stored: 0, duplicate: 0, revised: 0, final: 0, full: 0, closed: 0, rejected: 0, done: 0 };
const pending: { raterId: number; publicId: string }[] = [];
for (let i = 0; i < Number(roundsText); i += 1) {
  const now = new Date(base + Math.floor(random() * 60) * 60_000);
  // Consent reserves what it promises; a batch with nothing left for a newcomer turns them away before consent.
  const entered = admitRater(db, batch, settings, { kind: 'link', nonce: newPublicId() }, { agree: true, raterPublicId: newPublicId(), userAgent: 'worker', addressHash: null, now });
  if (entered.kind === 'full') {
    tally.done += 1;
    continue;
  }
  if (entered.kind !== 'admitted') throw new Error(`entry refused: ${entered.kind}`);
  setRaterStatus(db, entered.rater.id, 'rating', now);
  const outcome = assignNextPair(db, entered.rater.id, { now, random });
  if (outcome.kind !== 'assigned') {
    tally.done += 1;
    continue;
  }
  tally.assigned += 1;
  pending.push({ raterId: entered.rater.id, publicId: outcome.assignment.public_id });
  // Answer some right away, keep others for a late burst below.
  while (pending.length > 0 && random() < 0.3) {
    const item = pending.splice(Math.floor(random() * pending.length), 1)[0];
    if (!item) break;
    const later = new Date(now.getTime() + Math.floor(random() * 40) * 60_000);
    for (let k = 0; k < 2; k += 1) {
      const r = recordJudgment(db, item.raterId, { assignmentPublicId: item.publicId, choice: random() < 0.5 ? 'left' : 'right', reason: null, activeMs: 1000 }, later);
      tally[r.kind] += 1;
    }
  }
}
for (const item of pending) {
  const r = recordJudgment(db, item.raterId, { assignmentPublicId: item.publicId, choice: 'left', reason: null, activeMs: 1000 }, new Date(base + 90 * 60_000));
  tally[r.kind] += 1;
}
db.close();
process.stdout.write(JSON.stringify(tally));
