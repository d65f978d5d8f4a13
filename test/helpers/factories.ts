// Row factories: each test makes its own rows in its own database. They write through the same tables the
// product uses, with explicit columns, so a schema change that breaks them breaks loudly.
import type { Db } from '../../src/db/connection.js';
import { batchSettingsSchema, type BatchSettingsInput, type BatchState } from '../../src/batches/batch.schema.js';
import { insertDialogue, replaceTurns, type NewTurn } from '../../src/generation/dialogue.queries.js';
import { type Action, type Mode, parseCondition } from '../../src/generation/mode.js';
import { insertSimpleRun } from '../../src/generation/run.queries.js';
import type { Category, Relationship } from '../../src/scenarios/scenario.schema.js';
import { upsertCharacter, upsertScenario } from '../../src/scenarios/scenario.queries.js';
import { newPublicId } from '../../src/web/ids.js';

const NOW = new Date('2026-01-15T12:00:00.000Z');
let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

export type MadeScenario = { scenarioId: string; castId: number; characters: [string, string] };

/** A scenario with two new characters and one cast; secrets and goals carry recognisable markers. */
export function makeScenario(
  db: Db,
  options: { id?: string; category?: Category; relationship?: Relationship; goals?: [string, string]; secrets?: [string, string] } = {},
): MadeScenario {
  const id = options.id ?? unique('scenario');
  const characters: [string, string] = [`${id}-c1`, `${id}-c2`];
  const now = NOW.toISOString();
  characters.forEach((characterId, i) => {
    upsertCharacter(
      db,
      {
        id: characterId,
        firstName: i === 0 ? 'Ana' : 'Ben',
        lastName: i === 0 ? 'Ito' : 'Okoro',
        age: 30 + i,
        gender: i === 0 ? 'Woman' : 'Man',
        pronouns: i === 0 ? 'she/her' : 'he/him',
        occupation: i === 0 ? 'Nurse' : 'Carpenter',
        publicInfo: `Public info of ${characterId}`,
        personalityAndValues: 'Warm and direct.',
        decisionMakingStyle: 'Analytical',
        secret: options.secrets?.[i] ?? `SECRET-${characterId}`,
        bigFive: '',
        moralValues: [],
        schwartzValues: [],
      },
      'test',
      now,
    );
  });
  upsertScenario(
    db,
    {
      id,
      title: `Title of ${id}`,
      category: options.category ?? 'mixed',
      context: `Context of ${id}`,
      relationship: options.relationship ?? 'stranger',
      goals: options.goals ?? [`GOAL-1-${id}`, `GOAL-2-${id}`],
      casts: [characters],
    },
    'test',
    now,
  );
  const castId = db
    .prepare('SELECT id FROM casts WHERE scenario_id = :id ORDER BY position LIMIT 1')
    .pluck()
    .get({ id }) as number;
  return { scenarioId: id, castId, characters };
}

export function makeRun(db: Db, options: { name?: string; model?: string; modes?: Mode[] } = {}): number {
  return insertSimpleRun(
    db,
    { name: options.name ?? unique('run'), kind: 'import', state: 'complete', model: options.model ?? 'test-model', modes: options.modes ?? ['SCRIPT', 'AGENTS'] },
    NOW,
  );
}

/** Turns alternating speakers; `words` words per spoken turn. */
export function makeTurns(count: number, words = 10, action: Action = 'speak'): NewTurn[] {
  return Array.from({ length: count }, (_, i) => ({
    speaker: (i % 2 === 0 ? 1 : 2) as 1 | 2,
    action,
    text: Array.from({ length: words }, (_, w) => `w${i}_${w}`).join(' '),
  }));
}

export function makeDialogue(
  db: Db,
  options: { runId: number; scenario: MadeScenario; mode: Mode; model?: string; sampleIndex?: number; turns?: NewTurn[]; state?: 'complete' | 'failed' },
): number {
  const id = insertDialogue(
    db,
    {
      runId: options.runId,
      scenarioId: options.scenario.scenarioId,
      castId: options.scenario.castId,
      sampleIndex: options.sampleIndex ?? 0,
      mode: options.mode,
      model: options.model ?? 'test-model',
      origin: 'imported',
      state: options.state ?? 'complete',
    },
    NOW,
  );
  replaceTurns(db, id, options.turns ?? makeTurns(6));
  return id;
}

export type MadeBatch = { batchId: number; publicId: string; comparisonIds: number[] };

/** A batch row with its comparisons; settings are validated by the product's schema (defaults filled in). */
export function makeBatch(
  db: Db,
  options: { settings?: Partial<BatchSettingsInput>; state?: BatchState; comparisons?: [string, string][] } = {},
): MadeBatch {
  const comparisons = options.comparisons ?? options.settings?.comparisons ?? [['SCRIPT:test-model', 'AGENTS:test-model']];
  const settings = batchSettingsSchema.parse({ name: unique('batch'), runs: ['test'], ...options.settings, comparisons });
  const publicId = newPublicId();
  const batchId = Number(
    db
      .prepare(
        `INSERT INTO batches (public_id, name, state, settings, judge_salt, created_by, created_at, opened_at)
         VALUES (:publicId, :name, :state, :settings, :salt, 'test', :now, :openedAt)`,
      )
      .run({
        publicId,
        name: settings.name,
        state: options.state ?? 'open',
        settings: JSON.stringify(settings),
        salt: newPublicId(),
        now: NOW.toISOString(),
        openedAt: options.state === 'draft' ? null : NOW.toISOString(),
      }).lastInsertRowid,
  );
  const comparisonIds = settings.comparisons.map(([a, b], position) =>
    Number(
      db
        .prepare('INSERT INTO comparisons (batch_id, position, condition_a, condition_b) VALUES (:batchId, :position, :a, :b)')
        .run({ batchId, position, a, b }).lastInsertRowid,
    ),
  );
  return { batchId, publicId, comparisonIds };
}

export function makePair(
  db: Db,
  options: { batchId: number; comparisonId: number | null; dialogueA: number; dialogueB: number; kind?: 'regular' | 'attention' | 'onboarding'; expected?: 'a' | 'b' },
): number {
  const dialogue = db
    .prepare<{ id: number }, { scenario_id: string; cast_id: number; sample_index: number }>(
      'SELECT scenario_id, cast_id, sample_index FROM dialogues WHERE id = :id',
    )
    .get({ id: options.dialogueA });
  if (!dialogue) throw new Error(`no dialogue ${options.dialogueA}`);
  return Number(
    db
      .prepare(
        `INSERT INTO pairs (batch_id, comparison_id, kind, dialogue_a_id, dialogue_b_id, expected, scenario_id, cast_id, sample_index)
         VALUES (:batchId, :comparisonId, :kind, :a, :b, :expected, :scenarioId, :castId, :sampleIndex)`,
      )
      .run({
        batchId: options.batchId,
        comparisonId: options.comparisonId,
        kind: options.kind ?? 'regular',
        a: options.dialogueA,
        b: options.dialogueB,
        expected: options.expected ?? null,
        scenarioId: dialogue.scenario_id,
        castId: dialogue.cast_id,
        sampleIndex: dialogue.sample_index,
      }).lastInsertRowid,
  );
}

export function makeRater(
  db: Db,
  options: { batchId: number; provider?: 'prolific' | 'mturk' | 'link'; participantId?: string; status?: string; excluded?: boolean; exclusionReason?: string },
): number {
  return Number(
    db
      .prepare(
        `INSERT INTO raters (batch_id, public_id, provider, participant_id, session_id, status, excluded, exclusion_reason, created_at, last_seen_at)
         VALUES (:batchId, :publicId, :provider, :participantId, :sessionId, :status, :excluded, :reason, :now, :now)`,
      )
      .run({
        batchId: options.batchId,
        publicId: newPublicId(),
        provider: options.provider ?? 'link',
        participantId: options.participantId ?? unique('participant'),
        sessionId: unique('session'),
        status: options.status ?? 'rating',
        excluded: options.excluded ? 1 : 0,
        reason: options.exclusionReason ?? null,
        now: NOW.toISOString(),
      }).lastInsertRowid,
  );
}

/**
 * An answered assignment and its judgment, with the pair's counters kept as the rating code keeps them.
 * `winner` names the dialogue chosen (a, b or tie); the screen choice follows from `leftSide`.
 */
export function makeJudgment(
  db: Db,
  options: { pairId: number; raterId: number; winner: 'a' | 'b' | 'tie'; leftSide?: 'a' | 'b'; reason?: string | null; activeMs?: number; submittedAt?: Date },
): number {
  const pair = db
    .prepare<{ id: number }, { batch_id: number; kind: string; expected: string | null; condition_a: string | null; condition_b: string | null }>(
      `SELECT p.batch_id, p.kind, p.expected, c.condition_a, c.condition_b
       FROM pairs p LEFT JOIN comparisons c ON c.id = p.comparison_id WHERE p.id = :id`,
    )
    .get({ id: options.pairId });
  if (!pair) throw new Error(`no pair ${options.pairId}`);
  const leftSide = options.leftSide ?? 'a';
  const choice = options.winner === 'tie' ? 'tie' : options.winner === leftSide ? 'left' : 'right';
  const label = options.winner === 'tie' ? 'TIE' : ((options.winner === 'a' ? pair.condition_a : pair.condition_b) ?? options.winner);
  const isGold = pair.kind !== 'regular';
  const submitted = options.submittedAt ?? NOW;
  const shown = new Date(submitted.getTime() - (options.activeMs ?? 30_000));
  return db.transaction(() => {
    const assignmentId = Number(
      db
        .prepare(
          `INSERT INTO assignments (public_id, batch_id, pair_id, rater_id, left_side, state, leased_at, expires_at)
           VALUES (:publicId, :batchId, :pairId, :raterId, :leftSide, 'answered', :shown, :expires)`,
        )
        .run({
          publicId: newPublicId(),
          batchId: pair.batch_id,
          pairId: options.pairId,
          raterId: options.raterId,
          leftSide,
          shown: shown.toISOString(),
          expires: new Date(shown.getTime() + 20 * 60_000).toISOString(),
        }).lastInsertRowid,
    );
    const id = Number(
      db
        .prepare(
          `INSERT INTO judgments (assignment_id, batch_id, pair_id, rater_id, left_side, choice, winner, label, reason, is_gold, correct,
             shown_at, submitted_at, active_ms, question_version)
           VALUES (:assignmentId, :batchId, :pairId, :raterId, :leftSide, :choice, :winner, :label, :reason, :isGold, :correct,
             :shown, :submitted, :activeMs, 1)`,
        )
        .run({
          assignmentId,
          batchId: pair.batch_id,
          pairId: options.pairId,
          raterId: options.raterId,
          leftSide,
          choice,
          winner: options.winner,
          label,
          reason: options.reason ?? null,
          isGold: isGold ? 1 : 0,
          correct: isGold ? (options.winner === pair.expected ? 1 : 0) : null,
          shown: shown.toISOString(),
          submitted: submitted.toISOString(),
          activeMs: options.activeMs ?? 30_000,
        }).lastInsertRowid,
    );
    db.prepare(
      'UPDATE pairs SET accepted = accepted + 1, accepted_left_a = accepted_left_a + :leftA WHERE id = :id',
    ).run({ id: options.pairId, leftA: leftSide === 'a' ? 1 : 0 });
    return id;
  })();
}

/**
 * A whole batch in one call: one scenario sample per entry of `votes`, a pair per sample for the first comparison,
 * and raters voting as listed (votes[i][r] is rater r's winner for pair i, or null for no judgment).
 */
export function makeBatchWithJudgments(
  db: Db,
  options: { comparison?: [string, string]; votes: ('a' | 'b' | 'tie' | null)[][]; category?: Category; settings?: Partial<BatchSettingsInput> },
): MadeBatch & { pairIds: number[]; raterIds: number[]; runId: number } {
  const comparison = options.comparison ?? ['SCRIPT:test-model', 'AGENTS:test-model'];
  const [condA, condB] = comparison.map((c) => parseCondition(c));
  if (!condA || !condB) throw new Error('bad comparison');
  const runId = makeRun(db, { modes: [condA.mode, condB.mode] });
  const batch = makeBatch(db, { comparisons: [comparison], settings: options.settings });
  const raterCount = Math.max(0, ...options.votes.map((v) => v.length));
  const raterIds = Array.from({ length: raterCount }, () => makeRater(db, { batchId: batch.batchId }));
  const pairIds = options.votes.map((row, i) => {
    const scenario = makeScenario(db, { category: options.category });
    const a = makeDialogue(db, { runId, scenario, mode: condA.mode, model: condA.model, turns: makeTurns(6, 16) });
    const b = makeDialogue(db, { runId, scenario, mode: condB.mode, model: condB.model, turns: makeTurns(6, 30) });
    const pairId = makePair(db, { batchId: batch.batchId, comparisonId: batch.comparisonIds[0] ?? null, dialogueA: a, dialogueB: b });
    row.forEach((winner, r) => {
      const raterId = raterIds[r];
      if (winner && raterId !== undefined) makeJudgment(db, { pairId, raterId, winner, leftSide: (i + r) % 2 === 0 ? 'a' : 'b' });
    });
    return pairId;
  });
  return { ...batch, pairIds, raterIds, runId };
}

/**
 * Settings with what the launch checklist asks for before `open` (issue 14): consent, instructions, pay and, for
 * Prolific, its three completion codes. Values the test gives win.
 */
export function launchReady<T extends object>(settings: T): T {
  const provider = (settings as Partial<BatchSettingsInput>).provider;
  const codes = provider?.kind === 'prolific' ? { completed: 'DONE-CODE', screenedOut: 'SCREENED-CODE', noConsent: 'NOCONSENT-CODE', ...provider.completionCodes } : provider?.completionCodes;
  return {
    consent: 'You agree to compare conversations for this study.',
    instructions: 'Read both conversations and choose one.',
    // MTurk pays in dollars (the launch checklist refuses another currency for it).
    pay: provider?.kind === 'mturk' ? '$3.00' : '£3.00',
    ...settings,
    ...(provider ? { provider: { ...provider, ...(codes ? { completionCodes: codes } : {}) } } : {}),
  } as T;
}
