import {
  ApproveAssignmentCommand,
  CreateHITTypeCommand,
  CreateHITWithHITTypeCommand,
  GetAssignmentCommand,
  ListBonusPaymentsCommand,
  ListHITsCommand,
  MTurkClient,
  RequestError,
  SendBonusCommand,
  UpdateExpirationForHITCommand,
} from '@aws-sdk/client-mturk';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeMturk, startFakeMturk } from './fake-mturk.js';

// The fake MTurk through the real AWS SDK: the documented behaviours the recruiting code depends on (fake-mturk.ts
// cites the page of each).

const fakes: FakeMturk[] = [];
afterEach(async () => {
  for (const f of fakes.splice(0)) await f.close();
});

async function setup(balance = '100.00') {
  const fake = await startFakeMturk({ accessKeyId: 'AKIATESTFAKE0001', balance });
  fakes.push(fake);
  const client = new MTurkClient({ endpoint: fake.url, region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: 'AKIATESTFAKE0001', secretAccessKey: 'secret' } });
  const { HITTypeId } = await client.send(new CreateHITTypeCommand({ Title: 't', Description: 'd', Reward: '1.00', AssignmentDurationInSeconds: 600, AutoApprovalDelayInSeconds: 3600 }));
  const question = '<ExternalQuestion><ExternalURL>https://x.example/r/1</ExternalURL><FrameHeight>0</FrameHeight></ExternalQuestion>';
  const createHit = (token: string, annotation = token) => client.send(new CreateHITWithHITTypeCommand({ HITTypeId, LifetimeInSeconds: 3600, MaxAssignments: 2, Question: question, UniqueRequestToken: token, RequesterAnnotation: annotation }));
  const hit = (await createHit('hit-1')).HIT?.HITId ?? '';
  const { assignment } = fake.acceptHit(hit, 'A1WORKER');
  fake.submitAssignment(assignment.AssignmentId);
  return { fake, client, hit, assignmentId: assignment.AssignmentId, createHit };
}

const refusal = async (work: Promise<unknown>) => {
  const error = await work.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(RequestError);
  return error as RequestError;
};

describe('the fake MTurk', () => {
  it('SendBonus, repeated with its UniqueRequestToken, is refused as already processed within 24 hours and pays again after them', async () => {
    const { fake, client, assignmentId } = await setup();
    const bonus = () => client.send(new SendBonusCommand({ WorkerId: 'A1WORKER', AssignmentId: assignmentId, BonusAmount: '0.50', Reason: 'Thank you', UniqueRequestToken: 'tok-1' }));
    expect((await refusal(bonus())).message).toMatch(/approved or rejected/);
    await client.send(new ApproveAssignmentCommand({ AssignmentId: assignmentId }));
    await bonus();
    expect((await refusal(bonus())).message).toMatch(/^The idempotency token "tok-1" has already been processed\. \(\d+\)$/);
    fake.advance(23 * 3600);
    await refusal(bonus());
    fake.advance(2 * 3600);
    await bonus();
    expect(fake.bonuses.map((b) => b.BonusAmount)).toEqual(['0.50', '0.50']);
    // $1.00 reward + 20% fee, two $0.50 bonuses + 20% fee each, from $100.00.
    expect(fake.balanceCents()).toBe(10_000 - 120 - 2 * 60);
  });

  it('CreateHITWithHITType, repeated with its UniqueRequestToken, is refused with HitAlreadyExists naming the HIT; ListHITs pages with NextToken up to an empty page', async () => {
    const { fake, client, hit, createHit } = await setup();
    const error = await refusal(createHit('hit-1', 'other'));
    expect(error.TurkErrorCode).toBe('AWS.MechanicalTurk.HitAlreadyExists');
    expect(error.message).toContain(hit);
    for (let i = 2; i <= 6; i++) await createHit(`hit-${i}`);
    const pages: number[] = [];
    let token: string | undefined;
    do {
      const r = await client.send(new ListHITsCommand({ MaxResults: 100, NextToken: token }));
      pages.push(r.HITs?.length ?? 0);
      token = r.NextToken;
    } while (token);
    expect(pages).toEqual([4, 2, 0]);
    fake.advance(25 * 3600);
    await createHit('hit-1');
    expect(fake.hits.size).toBe(7);
  });

  it('a submitted assignment nobody acts on is approved by MTurk at its auto-approval time; approving it then is refused', async () => {
    const { fake, client, assignmentId } = await setup();
    fake.advance(3599);
    expect((await client.send(new GetAssignmentCommand({ AssignmentId: assignmentId }))).Assignment?.AssignmentStatus).toBe('Submitted');
    fake.advance(1);
    expect((await client.send(new GetAssignmentCommand({ AssignmentId: assignmentId }))).Assignment?.AssignmentStatus).toBe('Approved');
    expect((await refusal(client.send(new ApproveAssignmentCommand({ AssignmentId: assignmentId })))).message).toMatch(/status of: Submitted/);
  });

  it('UpdateExpirationForHIT to 0 expires the HIT; the same request again is refused as already processed', async () => {
    const { fake, client, hit } = await setup();
    await client.send(new UpdateExpirationForHITCommand({ HITId: hit, ExpireAt: new Date(0) }));
    expect(() => fake.acceptHit(hit, 'A2WORKER')).toThrow(/not assignable/);
    expect((await refusal(client.send(new UpdateExpirationForHITCommand({ HITId: hit, ExpireAt: new Date(0) })))).message).toMatch(/has already been processed/);
  });

  it('a bonus taken in flight, its connection dropped, is refused as a duplicate until MTurk carries it out, then listed once', async () => {
    const { fake, client, assignmentId } = await setup();
    await client.send(new ApproveAssignmentCommand({ AssignmentId: assignmentId }));
    fake.faults.push({ operation: 'SendBonus', inFlight: true });
    const bonus = () => client.send(new SendBonusCommand({ WorkerId: 'A1WORKER', AssignmentId: assignmentId, BonusAmount: '0.50', Reason: 'Thank you', UniqueRequestToken: 'tok-2' }));
    const lost = await bonus().then(() => null, (e: unknown) => e as { $metadata?: { httpStatusCode?: number } });
    expect(lost?.$metadata?.httpStatusCode).toBeUndefined();
    const listed = async () => (await client.send(new ListBonusPaymentsCommand({ AssignmentId: assignmentId }))).BonusPayments ?? [];
    expect(await listed()).toEqual([]);
    await refusal(bonus());
    fake.completeInFlight();
    expect((await listed()).map((b) => b.BonusAmount)).toEqual(['0.50']);
  });
});
