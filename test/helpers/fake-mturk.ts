// A fake of MTurk's requester API (API version 2017-01-17) on 127.0.0.1, written from its public reference, speaking
// the wire protocol @aws-sdk/client-mturk uses (AWS JSON 1.1): `POST /` with `X-Amz-Target:
// MTurkRequesterServiceV20170117.<Operation>`, JSON bodies, timestamps as epoch seconds, errors as a 400 (RequestError)
// or 500 (ServiceFault) with `{ "__type", "Message" }`. It behaves as documented where money is concerned:
// ApproveAssignment only on a Submitted assignment (an approved one is an error); SendBonus pays again unless the same
// UniqueRequestToken was used within the last 24 hours (then an error naming the earlier request); CreateHITWithHITType's
// UniqueRequestToken likewise; list operations page with NextToken. Its clock can be moved on (`advance`), so a test can
// go past the 24 hours. A SigV4 Authorization header with the expected access key is required.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeHit = {
  HITId: string;
  HITTypeId: string;
  Title: string;
  Description: string;
  Keywords: string;
  Reward: string;
  Question: string;
  MaxAssignments: number;
  AssignmentDurationInSeconds: number;
  AutoApprovalDelayInSeconds: number;
  QualificationRequirements: unknown[];
  RequesterAnnotation: string | null;
  CreationTime: number;
  Expiration: number;
  HITStatus: string;
  requestToken: string | null;
};

export type FakeAssignment = {
  AssignmentId: string;
  WorkerId: string;
  HITId: string;
  AssignmentStatus: 'Accepted' | 'Submitted' | 'Approved' | 'Rejected';
  AcceptTime: number;
  SubmitTime: number | null;
  ApprovalTime: number | null;
  RejectionTime: number | null;
  RequesterFeedback: string | null;
  Answer: string;
};

export type FakeBonus = { WorkerId: string; AssignmentId: string; BonusAmount: string; Reason: string; GrantTime: number; token: string | null };

/** A scripted answer for the next request of this operation: a status and error type instead of the answer (after doing the work when `after`), or the answer `delayMs` late. */
export type MturkFault = { operation: string; status?: number; type?: string; message?: string; after?: boolean; delayMs?: number };

export type FakeMturk = Awaited<ReturnType<typeof startFakeMturk>>;

const TARGET_PREFIX = 'MTurkRequesterServiceV20170117.';
/** MTurk keeps a UniqueRequestToken for 24 hours (SendBonus, CreateHIT reference). */
const TOKEN_MEMORY_SECONDS = 24 * 3600;
/** Items per page at most, below MaxResults, so tests go through NextToken (MTurk may answer fewer than asked). */
const PAGE_SIZE = 4;

const mturkId = (n = 30) => randomBytes(n).toString('hex').toUpperCase().slice(0, n);

class RequestError extends Error {
  constructor(
    message: string,
    readonly status = 400,
    readonly type = 'RequestError',
  ) {
    super(message);
  }
}

export async function startFakeMturk(options: { accessKeyId: string; balance?: string }) {
  const hitTypes = new Map<string, Record<string, unknown>>();
  const hits = new Map<string, FakeHit>();
  const assignments = new Map<string, FakeAssignment>();
  const bonuses: FakeBonus[] = [];
  const qualificationTypes = new Map<string, { QualificationTypeId: string; Name: string; Description: string; workers: Map<string, number> }>();
  const faults: MturkFault[] = [];
  const requests: { operation: string; body: Record<string, unknown>; headers: IncomingMessage['headers'] }[] = [];
  const waiters: { operation: string; resolve: () => void }[] = [];
  let offsetSeconds = 0;
  const now = () => Math.floor(Date.now() / 1000) + offsetSeconds;

  function page<T>(items: T[], body: Record<string, unknown>, key: string) {
    const start = Number(body.NextToken ?? 0);
    const size = Math.min(PAGE_SIZE, Number(body.MaxResults ?? 100));
    const slice = items.slice(start, start + size);
    const next = start + size < items.length ? String(start + size) : undefined;
    return { [key]: slice, NumResults: slice.length, ...(next ? { NextToken: next } : {}) };
  }

  const required = (body: Record<string, unknown>, ...names: string[]) => {
    const missing = names.filter((n) => body[n] === undefined || body[n] === '');
    if (missing.length > 0) throw new RequestError(`1 validation error detected: Value null at '${missing[0]}' failed to satisfy constraint: Member must not be null`, 400, 'ValidationException');
  };

  function createHit(body: Record<string, unknown>) {
    required(body, 'HITTypeId', 'LifetimeInSeconds');
    const type = hitTypes.get(String(body.HITTypeId));
    if (!type) throw new RequestError(`HITTypeId ${String(body.HITTypeId)} does not exist.`);
    if (!body.Question && !body.HITLayoutId) throw new RequestError('Either Question or HITLayoutId must be provided.');
    const token = typeof body.UniqueRequestToken === 'string' ? body.UniqueRequestToken : null;
    const earlier = token ? [...hits.values()].find((h) => h.requestToken === token && now() - h.CreationTime < TOKEN_MEMORY_SECONDS) : undefined;
    if (earlier) throw new RequestError(`The HIT with ID "${earlier.HITId}" already exists. (AWS.MechanicalTurk.HitAlreadyExists)`);
    const question = String(body.Question);
    if (!/<ExternalURL>https?:\/\/[^<]+<\/ExternalURL>/.test(question) || !/<FrameHeight>\d+<\/FrameHeight>/.test(question)) throw new RequestError('The Question is not a valid ExternalQuestion.');
    const hit: FakeHit = {
      HITId: mturkId(),
      HITTypeId: String(body.HITTypeId),
      Title: String(type.Title),
      Description: String(type.Description),
      Keywords: String(type.Keywords ?? ''),
      Reward: String(type.Reward),
      Question: question,
      MaxAssignments: Number(body.MaxAssignments ?? 1),
      AssignmentDurationInSeconds: Number(type.AssignmentDurationInSeconds),
      AutoApprovalDelayInSeconds: Number(type.AutoApprovalDelayInSeconds ?? 2_592_000),
      QualificationRequirements: (type.QualificationRequirements as unknown[]) ?? [],
      RequesterAnnotation: typeof body.RequesterAnnotation === 'string' ? body.RequesterAnnotation : null,
      CreationTime: now(),
      Expiration: now() + Number(body.LifetimeInSeconds),
      HITStatus: 'Assignable',
      requestToken: token,
    };
    hits.set(hit.HITId, hit);
    return { HIT: view(hit) };
  }

  function view(h: FakeHit) {
    const taken = [...assignments.values()].filter((a) => a.HITId === h.HITId);
    const { requestToken: _token, ...rest } = h;
    return {
      ...rest,
      NumberOfAssignmentsPending: taken.filter((a) => a.AssignmentStatus === 'Accepted').length,
      NumberOfAssignmentsAvailable: Math.max(0, h.MaxAssignments - taken.length),
      NumberOfAssignmentsCompleted: taken.filter((a) => a.AssignmentStatus !== 'Accepted').length,
      HITStatus: h.Expiration <= now() ? (taken.some((a) => a.AssignmentStatus === 'Submitted') ? 'Reviewable' : 'Reviewable') : h.HITStatus,
    };
  }

  const assignmentOf = (body: Record<string, unknown>) => {
    required(body, 'AssignmentId');
    const a = assignments.get(String(body.AssignmentId));
    if (!a) throw new RequestError(`Assignment ${String(body.AssignmentId)} does not exist. (AWS.MechanicalTurk.AssignmentDoesNotExist)`);
    return a;
  };

  function sendBonus(body: Record<string, unknown>) {
    required(body, 'WorkerId', 'BonusAmount', 'AssignmentId', 'Reason');
    const a = assignmentOf(body);
    if (a.WorkerId !== body.WorkerId) throw new RequestError(`Assignment ${a.AssignmentId} is not of worker ${String(body.WorkerId)}.`);
    if (a.AssignmentStatus !== 'Approved' && a.AssignmentStatus !== 'Submitted') throw new RequestError(`A bonus can be paid only for a submitted or approved assignment; ${a.AssignmentId} is ${a.AssignmentStatus}.`);
    if (!/^\d+(\.\d{1,2})?$/.test(String(body.BonusAmount)) || Number(body.BonusAmount) <= 0) throw new RequestError(`BonusAmount ${String(body.BonusAmount)} is not a valid amount.`);
    const token = typeof body.UniqueRequestToken === 'string' ? body.UniqueRequestToken : null;
    const earlier = token ? bonuses.find((b) => b.token === token && now() - b.GrantTime < TOKEN_MEMORY_SECONDS) : undefined;
    if (earlier) throw new RequestError(`The bonus for request ${token} has already been granted. (AWS.MechanicalTurk.DuplicateRequest)`);
    bonuses.push({ WorkerId: a.WorkerId, AssignmentId: a.AssignmentId, BonusAmount: String(body.BonusAmount), Reason: String(body.Reason), GrantTime: now(), token });
    return {};
  }

  const OPERATIONS: Record<string, (body: Record<string, unknown>) => unknown> = {
    GetAccountBalance: () => ({ AvailableBalance: options.balance ?? '10000.00' }),
    CreateHITType: (body) => {
      required(body, 'AssignmentDurationInSeconds', 'Reward', 'Title', 'Description');
      if (!/^\d+\.\d{2}$/.test(String(body.Reward))) throw new RequestError(`Reward ${String(body.Reward)} is not a valid amount in US dollars.`);
      // The same properties give the same HIT type (MTurk's reference: "if a HIT type with the same values exists, its id is returned").
      const key = JSON.stringify(body);
      const found = [...hitTypes.entries()].find(([, t]) => JSON.stringify(t) === key);
      const id = found?.[0] ?? mturkId();
      hitTypes.set(id, body);
      return { HITTypeId: id };
    },
    CreateHITWithHITType: createHit,
    GetHIT: (body) => {
      const h = hits.get(String(body.HITId));
      if (!h) throw new RequestError(`Hit ${String(body.HITId)} does not exist. (AWS.MechanicalTurk.HitDoesNotExist)`);
      return { HIT: view(h) };
    },
    ListHITs: (body) => page([...hits.values()].map(view), body, 'HITs'),
    UpdateExpirationForHIT: (body) => {
      required(body, 'HITId', 'ExpireAt');
      const h = hits.get(String(body.HITId));
      if (!h) throw new RequestError(`Hit ${String(body.HITId)} does not exist. (AWS.MechanicalTurk.HitDoesNotExist)`);
      h.Expiration = Math.min(h.Expiration, Math.max(Number(body.ExpireAt), 0), now());
      return {};
    },
    ListAssignmentsForHIT: (body) => {
      required(body, 'HITId');
      if (!hits.has(String(body.HITId))) throw new RequestError(`Hit ${String(body.HITId)} does not exist. (AWS.MechanicalTurk.HitDoesNotExist)`);
      const statuses = (body.AssignmentStatuses as string[] | undefined) ?? ['Submitted', 'Approved', 'Rejected'];
      return page([...assignments.values()].filter((a) => a.HITId === body.HITId && statuses.includes(a.AssignmentStatus)), body, 'Assignments');
    },
    GetAssignment: (body) => {
      const a = assignmentOf(body);
      const h = hits.get(a.HITId) as FakeHit;
      return { Assignment: a, HIT: view(h) };
    },
    ApproveAssignment: (body) => {
      const a = assignmentOf(body);
      if (a.AssignmentStatus !== 'Submitted' && !(a.AssignmentStatus === 'Rejected' && body.OverrideRejection === true)) {
        throw new RequestError(`This operation can be called with a status of: Submitted (${a.AssignmentStatus}). (AWS.MechanicalTurk.InvalidAssignmentState)`);
      }
      a.AssignmentStatus = 'Approved';
      a.ApprovalTime = now();
      a.RequesterFeedback = typeof body.RequesterFeedback === 'string' ? body.RequesterFeedback : null;
      return {};
    },
    RejectAssignment: (body) => {
      required(body, 'RequesterFeedback');
      const a = assignmentOf(body);
      if (a.AssignmentStatus !== 'Submitted') throw new RequestError(`This operation can be called with a status of: Submitted (${a.AssignmentStatus}). (AWS.MechanicalTurk.InvalidAssignmentState)`);
      a.AssignmentStatus = 'Rejected';
      a.RejectionTime = now();
      a.RequesterFeedback = String(body.RequesterFeedback);
      return {};
    },
    SendBonus: sendBonus,
    ListBonusPayments: (body) => {
      if (!body.HITId && !body.AssignmentId) throw new RequestError('Either HITId or AssignmentId must be provided.');
      const found = bonuses.filter((b) => (body.AssignmentId ? b.AssignmentId === body.AssignmentId : assignments.get(b.AssignmentId)?.HITId === body.HITId));
      return page(found.map(({ token: _t, ...b }) => b), body, 'BonusPayments');
    },
    CreateQualificationType: (body) => {
      required(body, 'Name', 'Description', 'QualificationTypeStatus');
      if ([...qualificationTypes.values()].some((q) => q.Name === body.Name)) throw new RequestError(`You have already created a QualificationType with this name. (AWS.MechanicalTurk.QualificationTypeAlreadyExists)`);
      const q = { QualificationTypeId: mturkId(), Name: String(body.Name), Description: String(body.Description), workers: new Map<string, number>() };
      qualificationTypes.set(q.QualificationTypeId, q);
      return { QualificationType: { QualificationTypeId: q.QualificationTypeId, Name: q.Name, Description: q.Description, QualificationTypeStatus: 'Active', CreationTime: now() } };
    },
    ListQualificationTypes: (body) => {
      const query = String(body.Query ?? '').toLowerCase();
      const found = [...qualificationTypes.values()].filter((q) => q.Name.toLowerCase().includes(query) || q.Description.toLowerCase().includes(query));
      return page(found.map((q) => ({ QualificationTypeId: q.QualificationTypeId, Name: q.Name, Description: q.Description, QualificationTypeStatus: 'Active' })), body, 'QualificationTypes');
    },
    AssociateQualificationWithWorker: (body) => {
      required(body, 'QualificationTypeId', 'WorkerId');
      const q = qualificationTypes.get(String(body.QualificationTypeId));
      if (!q) throw new RequestError(`QualificationType ${String(body.QualificationTypeId)} does not exist.`);
      q.workers.set(String(body.WorkerId), Number(body.IntegerValue ?? 1));
      return {};
    },
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': mturkId(8) });
    res.end(JSON.stringify(body));
  };
  const error = (status: number, type: string, message: string) => ({ status, body: { __type: type, Message: message } });

  function answer(operation: string, body: Record<string, unknown>): { status: number; body: unknown } {
    const run = OPERATIONS[operation];
    if (!run) return error(400, 'UnknownOperationException', `Unknown operation ${operation}`);
    try {
      return { status: 200, body: run(body) };
    } catch (e) {
      if (e instanceof RequestError) return error(e.status, e.type, e.message);
      throw e;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    if (req.method !== 'POST' || req.url !== '/' || !target.startsWith(TARGET_PREFIX)) return send(res, 404, { __type: 'UnknownOperationException', Message: 'Not an MTurk request' });
    const operation = target.slice(TARGET_PREFIX.length);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      return send(res, 400, { __type: 'SerializationException', Message: 'Malformed JSON' });
    }
    requests.push({ operation, body, headers: req.headers });
    for (const w of waiters.splice(0)) if (w.operation === operation) w.resolve();
    else waiters.push(w);
    if (!String(req.headers.authorization ?? '').includes(`Credential=${options.accessKeyId}/`)) {
      return send(res, 400, { __type: 'UnrecognizedClientException', Message: 'The security token included in the request is invalid.' });
    }
    const index = faults.findIndex((f) => f.operation === operation);
    const fault = index >= 0 ? faults.splice(index, 1)[0] : undefined;
    const faultAnswer = () => error(fault?.status ?? 500, fault?.type ?? 'ServiceFault', fault?.message ?? 'Scripted failure');
    if (fault?.status && !fault.after) {
      const f = faultAnswer();
      return send(res, f.status, f.body);
    }
    const result = answer(operation, body);
    if (fault?.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    const final = fault?.status ? faultAnswer() : result;
    send(res, final.status, final.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 500, { __type: 'ServiceFault', Message: 'fake failed' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    hitTypes,
    hits,
    assignments,
    bonuses,
    qualificationTypes,
    requests,
    faults,
    /** Moves MTurk's clock on (past the 24 hours a UniqueRequestToken is remembered, say). */
    advance: (seconds: number) => {
      offsetSeconds += seconds;
    },
    calls: (operation: string) => requests.filter((r) => r.operation === operation).length,
    /** Resolves when a request of this operation arrives (before it is answered). */
    waitFor: (operation: string) => new Promise<void>((resolve) => waiters.push({ operation, resolve })),
    /**
     * A worker accepts the HIT: an assignment is created and the URL MTurk frames is returned, the ExternalURL with
     * assignmentId, hitId, workerId and turkSubmitTo appended (MTurk's ExternalQuestion reference).
     */
    acceptHit(hitId: string, workerId: string): { assignment: FakeAssignment; url: string } {
      const hit = hits.get(hitId);
      if (!hit || hit.Expiration <= now()) throw new Error(`HIT ${hitId} is not assignable`);
      if ([...assignments.values()].filter((a) => a.HITId === hitId).length >= hit.MaxAssignments) throw new Error('no assignment left');
      const assignment: FakeAssignment = { AssignmentId: mturkId(), WorkerId: workerId, HITId: hitId, AssignmentStatus: 'Accepted', AcceptTime: now(), SubmitTime: null, ApprovalTime: null, RejectionTime: null, RequesterFeedback: null, Answer: '' };
      assignments.set(assignment.AssignmentId, assignment);
      const external = (/<ExternalURL>([^<]+)<\/ExternalURL>/.exec(hit.Question)?.[1] ?? '').replace(/&amp;/g, '&');
      const query = new URLSearchParams({ assignmentId: assignment.AssignmentId, hitId, workerId, turkSubmitTo: 'https://www.mturk.com' });
      return { assignment, url: `${external}${external.includes('?') ? '&' : '?'}${query.toString()}` };
    },
    /** The worker's browser posts the done page's form to turkSubmitTo/mturk/externalSubmit. */
    submitAssignment(assignmentId: string, answerText = '') {
      const a = assignments.get(assignmentId);
      if (!a) throw new Error('no such assignment');
      a.AssignmentStatus = 'Submitted';
      a.SubmitTime = now();
      a.Answer = answerText;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
