import { describe, expect, it } from 'vitest';
import { getBatch } from '../../src/batches/batch.commands.js';
import { batchLaunchChecklist } from '../../src/batches/batch-launch.js';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import { createBatch } from '../../src/batches/create-batch.js';
import { draftProblem, mergeDraft, type DraftTurn } from '../../src/live/written-turns.js';
import { hitTypeRequest } from '../../src/recruiting/mturk-plan.js';
import { prolificStudyRequest } from '../../src/recruiting/prolific-plan.js';
import { launchReady, makeScenario } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';

const NOW = new Date('2026-05-01T09:00:00.000Z');
const write = (extra: Record<string, unknown> = {}) => launchReady({ name: 'Writing round', task: 'write', run: 'written-1', ...extra });

function turn(speaker: 1 | 2, text: string, action: DraftTurn['action'] = 'speak'): DraftTurn {
  return { speaker, action, text, keys: 0, typing_ms: 0, pastes: 0, started_at: NOW.toISOString(), edited_at: NOW.toISOString() };
}

describe('writing batches', () => {
  it('createBatch, for "task": "write", makes a HUMAN_SCRIPT collection run, fills in the writing bounds and forms no pairs', () => {
    const { db } = createTestDb();
    makeScenario(db);
    const result = createBatch(db, write(), { actor: 'test', now: NOW });
    expect(result.pairs).toEqual([]);
    expect(db.prepare("SELECT kind, state, model, modes FROM runs WHERE name = 'written-1'").get()).toEqual({ kind: 'collection', state: 'running', model: 'human', modes: '["HUMAN_SCRIPT"]' });
    expect(getBatch(db, result.batchId)?.settings).toMatchObject({ task: 'write', run: 'written-1', writing: { minTurns: 8, maxTurns: 20 }, partner: null, turns: null });
    const capacity = batchLaunchChecklist(db, result.batchId, { publicUrl: 'https://study.example.org', minPayPerHour: null }).find((item) => item.key === 'capacity');
    expect(capacity).toMatchObject({ ok: true, detail: '1 scenario casts to write; each dialogue takes the next sample of one.' });
  });

  it('the batch schema, for a writing batch with role-play or rating settings and a rating batch with writing bounds, refuses naming each field', () => {
    const issues = (input: Record<string, unknown>) => {
      const parsed = batchSettingsSchema.safeParse(input);
      return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    expect(issues(write({ turns: { max: 10 } }))).toEqual([expect.stringMatching(/^turns: belongs to a role-play batch; a writing batch has one writer/)]);
    expect(issues(write({ writing: { minTurns: 9, maxTurns: 8 } }))).toEqual(['writing.minTurns: minTurns must not exceed maxTurns']);
    expect(issues(launchReady({ name: 'r', task: 'roleplay', run: 'x', writing: {} }))).toEqual([expect.stringMatching(/^writing: belongs to a writing batch/)]);
    expect(issues(launchReady({ name: 'r', runs: ['a'], comparisons: [['SCRIPT:m', 'AGENTS:m']], writing: {} }))).toEqual([expect.stringMatching(/^writing: belongs to a writing batch/)]);
  });

  it('batchLaunchChecklist, for a writing batch on Prolific paying under its floor for the time stated, blocks opening', () => {
    const { db } = createTestDb();
    makeScenario(db);
    const provider = { kind: 'prolific', completionCodes: { completed: 'C' } };
    const { batchId } = createBatch(db, write({ provider, plannedRaters: 10, pay: '£1.00', estimatedMinutes: 30 }), { actor: 'test', now: NOW });
    const item = batchLaunchChecklist(db, batchId, { publicUrl: 'https://study.example.org', minPayPerHour: null }).find((i) => i.key === 'platformPay');
    expect(item).toMatchObject({ ok: false, blocking: true });
    expect(item?.detail).toContain('£1.00 for 30 minutes is £2.00 per hour, below');
  });

  it('prolificStudyRequest and hitTypeRequest, for a writing batch, name the task (never the conditions), and Prolific lets phones take it', () => {
    const settings = batchSettingsSchema.parse(write({ provider: { kind: 'prolific', completionCodes: { completed: 'C', screenedOut: 'S', noConsent: 'N' } } }));
    const study = prolificStudyRequest({ publicId: 'p1', settings }, { studyUrl: 'https://study.example.org/r/p1', places: 10, minutes: 20, rewardMinor: 300 });
    expect(study.name).toBe('Write a short conversation between two characters');
    expect(study.device_compatibility).toEqual(['desktop', 'tablet', 'mobile']);
    const mturk = batchSettingsSchema.parse(write({ provider: { kind: 'mturk' }, pay: '$3.00' }));
    expect(hitTypeRequest({ settings: mturk }, '3.00', null).Title).toBe('Write a short conversation between two characters');
  });
});

describe('a written draft', () => {
  const bounds = { minTurns: 3, maxTurns: 4 };
  const names = ['Ana Ito', 'Ben Okoro'] as const;

  it('draftProblem names what keeps a draft from being handed in, and nothing for one that meets the bounds', () => {
    expect(draftProblem([turn(1, 'Hi'), turn(2, 'Hello')], bounds, names)).toBe('The conversation needs at least 3 turns in which someone says or does something; it has 2.');
    expect(draftProblem([turn(1, 'a'), turn(2, 'b'), turn(1, 'c'), turn(2, 'd'), turn(1, 'e')], bounds, names)).toBe('The conversation has 5 turns; it may have at most 4. Remove 1.');
    expect(draftProblem([turn(2, 'a'), turn(1, 'b'), turn(2, 'c')], bounds, names)).toBe('Ana Ito begins the conversation: make the first turn theirs.');
    expect(draftProblem([turn(1, 'a'), turn(2, ''), turn(1, 'c')], bounds, names)).toBe('Turn 2 is empty: write what Ben Okoro says or does, or remove the turn.');
    expect(draftProblem([turn(1, 'a'), turn(2, '', 'leave'), turn(1, 'c'), turn(2, 'd')], bounds, names)).toBe('Turn 2 leaves the conversation, so it must be the last turn.');
    // A leave does not count toward the minimum, and ends the conversation as its last turn.
    expect(draftProblem([turn(1, 'a'), turn(2, 'b'), turn(1, '', 'leave')], bounds, names)).toMatch(/it has 2\.$/);
    expect(draftProblem([turn(1, 'a'), turn(2, 'mail me at ana@example.org'), turn(1, 'c')], bounds, names)).toBe('Turn 2 holds a web link, an e-mail address or a phone number: please leave contact details out of the conversation.');
    expect(draftProblem([turn(1, 'a'), turn(2, 'It costs $1,250,000.'), turn(1, 'c'), turn(2, '', 'leave')], bounds, names)).toBeNull();
  });

  it('mergeDraft tidies the text and keeps a turn\'s first-saved time, moving its edit time only when the turn changed', () => {
    const later = new Date(NOW.getTime() + 60_000);
    const merged = mergeDraft([turn(1, 'Hello there'), turn(2, 'Hi')], [{ speaker: 1, action: 'speak', text: ' Hello   there ', keys: 5, typing_ms: 10, pastes: 0 }, { speaker: 2, action: 'speak', text: 'Hi, Ana', keys: 3, typing_ms: 9, pastes: 1 }, { speaker: 1, action: 'action', text: 'waves', keys: 5, typing_ms: 1, pastes: 0 }], later);
    expect(merged.map((t) => [t.text, t.started_at, t.edited_at])).toEqual([
      ['Hello there', NOW.toISOString(), NOW.toISOString()],
      ['Hi, Ana', NOW.toISOString(), later.toISOString()],
      ['waves', later.toISOString(), later.toISOString()],
    ]);
  });
});
