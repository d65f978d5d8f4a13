// Benchmark of the MTurk settle plan (src/recruiting/mturk-plan.ts), which the console's MTurk page computes on the
// server's request thread for its dry run and before every settle. It looked up each worker's rater by searching every
// matched assignment, once per worker: quadratic, 1.25e9 comparisons for a batch of 50,000 workers. Prints the time
// per worker of a large batch against a small one in the same process (a ratio near 1: linear; the search gave about
// the ratio of the sizes), for workers with one HIT and with two.
// Run: npx tsx scripts/bench/mturk-settle-plan.ts [--small 500] [--large 50000] [--runs 5]
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import type { DecidedParticipant } from '../../src/recruiting/decided-participants.js';
import { matchAssignments, planMturkSettle } from '../../src/recruiting/mturk-plan.js';
import { medianMs } from './support/median-time.js';
import { numberFlag } from './support/number-flag.js';

const SMALL = numberFlag('--small', 500);
const LARGE = numberFlag('--large', 50_000);
const RUNS = numberFlag('--runs', 5);

const settings = batchSettingsSchema.parse({
  name: 'Settle benchmark',
  runs: ['run-a'],
  comparisons: [['SCRIPT:m', 'AGENTS:m']],
  pay: '$2.00',
  bonus: { fixed: '0.20', perJudgment: '0.05' },
});

/** A batch of `workers` MTurk workers, every tenth left for review, each with `hits` submitted assignments. */
function batchOf(workers: number, hits: number) {
  const people: DecidedParticipant[] = [];
  const sessions: { raterId: number; workerId: string; assignmentId: string }[] = [];
  for (let id = 1; id <= workers; id++) {
    const review = id % 10 === 0;
    people.push({
      raterId: id, provider: 'mturk', participantId: `A${id}WORKER`, studyId: 'HIT1', sessionId: `AS${id}-0`, judge: `J${id}`, status: 'completed', outcome: 'completed',
      excluded: false, exclusionReason: null, decision: review ? 'review' : 'approve', why: review ? 'completed, flagged: too fast' : 'completed', regularJudgments: 20, minutes: 15, finishedAt: null,
    });
    for (let h = 0; h < hits; h++) sessions.push({ raterId: id, workerId: `A${id}WORKER`, assignmentId: `AS${id}-${h}` });
  }
  const assignments = sessions.map((s) => ({ assignmentId: s.assignmentId, workerId: s.workerId, hitId: 'HIT1', status: 'Submitted' }));
  return { people, sessions, assignments };
}

function timePerWorker(workers: number, hits: number): { ms: number; perWorkerUs: number; bonuses: number } {
  const { people, sessions, assignments } = batchOf(workers, hits);
  const covered = { approve: new Set<string>(), bonus: new Set<string>() };
  let bonuses = 0;
  const ms = medianMs(() => (bonuses = planMturkSettle(matchAssignments(people, sessions, assignments), settings, covered).bonus.length), RUNS, { warm: true });
  return { ms, perWorkerUs: (ms * 1000) / workers, bonuses };
}

for (const hits of [1, 2]) {
  const small = timePerWorker(SMALL, hits);
  const large = timePerWorker(LARGE, hits);
  // Every approved worker gets one bonus, whatever their number of HITs: the plan is the same whichever way it looks up.
  if (small.bonuses !== SMALL - Math.floor(SMALL / 10) || large.bonuses !== LARGE - Math.floor(LARGE / 10)) throw new Error('unexpected plan');
  console.log(
    `${hits} HIT${hits > 1 ? 's' : ''} a worker: ${SMALL.toLocaleString('en')} workers ${small.ms.toFixed(1)} ms (${small.perWorkerUs.toFixed(2)} µs a worker), ` +
      `${LARGE.toLocaleString('en')} workers ${large.ms.toFixed(1)} ms (${large.perWorkerUs.toFixed(2)} µs a worker); ` +
      `time a worker, large against small: ${(large.perWorkerUs / small.perWorkerUs).toFixed(2)} (size ratio ${(LARGE / SMALL).toFixed(0)})`,
  );
}
