import { describe, expect, it } from 'vitest';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { cli } from '../helpers/run-cli.js';
import { raterClient, seedBatch } from '../rating/rating-fixtures.js';
import { CODES, mturkSetup, publishedWithWorkers, workerIds } from './mturk-helpers.js';

describe('mturk publish', () => {
  it('mturk publish, for a batch blocking an earlier round, gives its workers the took-part-before qualification and keeps them from seeing the HIT', async () => {
    const setup = await mturkSetup();
    const earlier = setup.seeded;
    for (const [i, worker] of workerIds(2).entries()) {
      await raterClient(setup.app).startRating(earlier.publicId, `?assignmentId=3EARLIER${i}ASSIGN&hitId=3EARLIERHIT&workerId=${worker}&turkSubmitTo=https%3A%2F%2Fwww.mturk.com`);
    }
    const next = seedBatch(setup.db, {
      samples: 4,
      settings: { judgmentsPerPair: 2, perRaterCap: 2, plannedRaters: 4, pay: '$1.50', provider: { kind: 'mturk', completionCodes: CODES }, blockParticipantsOf: [earlier.batchId] },
    });
    const dry = await cli(['mturk', 'publish', next.publicId, '--dry-run'], setup.cliEnv);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('AssociateQualificationWithWorker');
    expect(setup.fake.requests.map((r) => r.operation)).toEqual(['GetAccountBalance']);

    const published = await cli(['mturk', 'publish', next.publicId], setup.cliEnv);
    expect(published.code).toBe(0);
    const [qualification] = [...setup.fake.qualificationTypes.values()];
    expect(qualification?.Name).toBe(`simarena-${next.publicId}-took-part-before`);
    expect([...(qualification?.workers.keys() ?? [])].sort()).toEqual(workerIds(2));
    const hit = [...setup.fake.hits.values()][0];
    expect(hit?.MaxAssignments).toBe(4);
    expect(hit?.QualificationRequirements).toContainEqual({ QualificationTypeId: qualification?.QualificationTypeId, Comparator: 'DoesNotExist', ActionsGuarded: 'DiscoverPreviewAndAccept' });
    expect(setup.db.prepare("SELECT kind FROM batch_platform_links WHERE batch_id = ? ORDER BY kind").pluck().all(next.batchId)).toEqual(['hit', 'hit_type', 'qualification']);
  }, 60_000);

  it('mturk publish, when MTurk creates a HIT but answers 500, finds the HIT by its mark and never creates it twice', async () => {
    const setup = await mturkSetup({ settings: { mturk: { hits: 2 } } });
    setup.fake.faults.push({ operation: 'CreateHITWithHITType', status: 500, after: true });
    const published = await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(published.code).toBe(0);
    expect(setup.fake.calls('CreateHITWithHITType')).toBe(2);
    expect([...setup.fake.hits.values()].map((h) => h.RequesterAnnotation).sort()).toEqual([1, 2].map((i) => `simarena-${setup.seeded.publicId}-hit-${i}`));
    const hits = listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').filter((o) => o.kind === 'hit_create');
    expect(hits.map((o) => [o.state, o.platform_object_id])).toEqual([...setup.fake.hits.keys()].map((id) => ['confirmed', id]));
    // The batch is linked to the HIT MTurk showed, not to the mark it was looked up by (status and settle read it).
    expect(setup.db.prepare("SELECT platform_id FROM batch_platform_links WHERE kind = 'hit' ORDER BY platform_id").pluck().all()).toEqual([...setup.fake.hits.keys()].sort());
    expect((await cli(['mturk', 'status', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    expect((await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    expect(setup.fake.hits.size).toBe(2);
  }, 60_000);

  it('mturk publish and settle, for a batch whose name names its modes and model, send no worker-visible field naming them: the HIT, the qualification, the approval feedback and the bonus reason', async () => {
    const setup = await mturkSetup();
    const batchName = setup.db.prepare<{ id: number }, string>('SELECT name FROM batches WHERE id = :id').pluck().get({ id: setup.seeded.batchId }) as string;
    expect(batchName).toMatch(/SCRIPT vs AGENTS blindcheck/);
    const { hit } = await publishedWithWorkers(setup, 1);
    const next = seedBatch(setup.db, { samples: 4, settings: { name: 'SCRIPT vs MINDREADERS blindcheck round 2', judgmentsPerPair: 2, perRaterCap: 2, plannedRaters: 4, pay: '$1.50', provider: { kind: 'mturk', completionCodes: CODES }, blockParticipantsOf: [setup.seeded.batchId] } });
    expect((await cli(['mturk', 'publish', next.publicId], setup.cliEnv)).code).toBe(0);
    expect((await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    // What a worker can read (MTurk's HIT, qualification, assignment and bonus pages); RequesterAnnotation is the requester's alone.
    const visible = [
      ...[...setup.fake.hits.values()].flatMap((h) => [h.Title, h.Description, h.Keywords, h.Question]),
      ...[...setup.fake.qualificationTypes.values()].flatMap((q) => [q.Name, q.Description]),
      ...[...setup.fake.assignments.values()].map((a) => a.RequesterFeedback ?? ''),
      ...setup.fake.bonuses.map((b) => b.Reason),
    ];
    expect(setup.fake.bonuses).toHaveLength(1);
    expect(setup.fake.assignments.get([...setup.fake.assignments.keys()][0] ?? '')?.RequesterFeedback).toBeTruthy();
    expect(hit.Title).toBe('Compare pairs of short conversations');
    for (const text of visible) expect(text).not.toMatch(/SCRIPT|AGENTS|MINDREADERS|blindcheck|round 2/);
  }, 60_000);
});
