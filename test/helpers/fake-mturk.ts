// A fake of MTurk's requester API (version 2017-01-17) on 127.0.0.1, written from AWS's reference and from what real
// clients (Mephisto's mturk_utils.py, Dallinger's mturk.py) and their issue threads show of the live service. It speaks
// the protocol @aws-sdk/client-mturk uses (AWS JSON 1.1): `POST /` with `X-Amz-Target:
// MTurkRequesterServiceV20170117.<Operation>`, JSON bodies, timestamps as epoch seconds. Each behaviour a test depends
// on cites its source beside it. Reference pages are under https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/
// (written below as "API: <page>"); "RequestTokens" is
// https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMechanicalTurkRequester/RequestTokens.html.
//
// Its clock (`advance`) moves MTurk's time: past the 24 hours a UniqueRequestToken is remembered, past an
// assignment's auto-approval. Its faults script what the network and the service do to one request: an error instead
// of the work or after it, a late answer, an answer lost (the connection drops) after the work was done, or a request
// MTurk has taken but not yet carried out when the connection drops (`inFlight`, done by `completeInFlight()`).
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
};

export type FakeAssignment = {
  AssignmentId: string;
  WorkerId: string;
  HITId: string;
  /** "Accepted" is the fake's own state for a worker still working: MTurk lists only Submitted, Approved, Rejected. */
  AssignmentStatus: 'Accepted' | 'Submitted' | 'Approved' | 'Rejected';
  AcceptTime: number;
  SubmitTime: number | null;
  AutoApprovalTime: number | null;
  ApprovalTime: number | null;
  RejectionTime: number | null;
  RequesterFeedback: string | null;
  Answer: string;
};

export type FakeBonus = { WorkerId: string; AssignmentId: string; BonusAmount: string; Reason: string; GrantTime: number };

/**
 * What happens to the next request of `operation`: `status` (with `type`, `message`, `turkErrorCode`) answers an
 * error instead of doing the work, or after doing it with `after`; `delayMs` answers late (the work is done at once);
 * `drop` closes the connection without an answer (after the work with `after`, else before it); `inFlight` takes
 * the request (its UniqueRequestToken is used from now on) and drops the connection, the work waiting for
 * `completeInFlight()`; `then` runs once the request is handled (a test moving the clock between two requests).
 */
export type MturkFault = {
  operation: string;
  status?: number;
  type?: string;
  message?: string;
  turkErrorCode?: string;
  after?: boolean;
  delayMs?: number;
  drop?: boolean;
  inFlight?: boolean;
  then?: () => void;
};

export type FakeMturk = Awaited<ReturnType<typeof startFakeMturk>>;

const TARGET_PREFIX = 'MTurkRequesterServiceV20170117.';
/** RequestTokens: "The unique token expires after 24 hours." */
const TOKEN_MEMORY_SECONDS = 24 * 3600;
/** RequestTokens: "the token must not be longer than 64 characters". */
const TOKEN_MAX = 64;
/** API: CreateHITType, AutoApprovalDelayInSeconds: "between 0 (auto-approve the results as soon as possible) and 2592000 (30 days)", the default. */
const MAX_AUTO_APPROVAL_SECONDS = 2_592_000;
/**
 * Items per page at most. The reference bounds MaxResults at 100 and promises no more than it; the fake answers
 * fewer so tests page with NextToken. Like the live service (Mephisto's get_outstanding_hits reads pages until one
 * is empty, taking NextToken from every non-empty page), a NextToken comes with every non-empty page and the end is
 * an empty page without one.
 */
const DEFAULT_PAGE_SIZE = 4;
/**
 * A new qualification type is found by ListQualificationTypes' Query only after MTurk has indexed it: Dallinger's
 * get_qualification_type_by_name polls up to 12 s "because there's some indexing that needs to happen on MTurk for
 * search to work". Real time, not the fake's clock.
 */
const QUALIFICATION_INDEX_MS = 1_500;

const mturkId = (n = 30) => randomBytes(n).toString('hex').toUpperCase().slice(0, n);
const cents = (amount: string) => Math.round(Number(amount) * 100);

/**
 * MTurk's error answer: RequestError (400, "Your request is invalid") or ServiceFault (500, "temporarily unable to
 * process your request"), each with Message and TurkErrorCode (the SDK's errors schema; botocore's RequestError page).
 * Live messages end with the time in milliseconds, e.g. Dallinger issue #3331: {"__type":"RequestError","Message":"You
 * requested a Qualification that does not exist. (1631094715163)","TurkErrorCode":"AWS.MechanicalTurk.QualificationDoesNotExist"}.
 */
class MturkError extends Error {
  constructor(
    message: string,
    readonly turkErrorCode: string | null = null,
    readonly status = 400,
    readonly type = 'RequestError',
  ) {
    super(message);
  }
}

type Body = Record<string, unknown>;
type Deferred = { run: () => void };

export async function startFakeMturk(options: { accessKeyId: string; balance?: string; pageSize?: number }) {
  const hitTypes = new Map<string, Body>();
  const hits = new Map<string, FakeHit>();
  /** The HIT each CreateHIT UniqueRequestToken made. */
  const hitByToken = new Map<string, string>();
  const assignments = new Map<string, FakeAssignment>();
  const bonuses: FakeBonus[] = [];
  const qualificationTypes = new Map<string, { QualificationTypeId: string; Name: string; Description: string; createdAtMs: number; workers: Map<string, number> }>();
  /** Every UniqueRequestToken MTurk has taken (the idempotency tokens it derives itself too), per operation, with when. */
  const tokens = new Map<string, number>();
  const faults: MturkFault[] = [];
  const requests: { operation: string; body: Body; headers: IncomingMessage['headers'] }[] = [];
  const waiters: { operation: string; resolve: () => void }[] = [];
  const inFlight: Deferred[] = [];
  let balanceCents = cents(options.balance ?? '10000.00');
  let offsetSeconds = 0;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const now = () => Math.floor(Date.now() / 1000) + offsetSeconds;
  const stamp = () => `(${(now() * 1000).toString()})`;

  /**
   * RequestTokens: "If the operation has already been performed using the same UniqueRequestToken, subsequent calls
   * return an error with a message containing the request ID", until the token expires after 24 hours; after that
   * "Subsequent calls using the same UniqueRequestToken made after the 24 hour limit could create duplicate HITs"
   * (API: CreateHIT) or grant multiple bonuses (the GrantBonus reference, quoted in cloudyr/MTurkR issue #75).
   */
  function takeToken(operation: string, token: string | null, refusal: () => MturkError): void {
    if (token === null) return;
    if (token.length > TOKEN_MAX) throw new MturkError(`UniqueRequestToken must not be longer than ${TOKEN_MAX} characters. ${stamp()}`);
    const key = `${operation}\n${token}`;
    const taken = tokens.get(key);
    if (taken !== undefined && now() - taken < TOKEN_MEMORY_SECONDS) throw refusal();
    tokens.set(key, now());
  }
  /** The refusal Dallinger issue #3109 shows from the live service for a repeated idempotency token. */
  const alreadyProcessed = (token: string) => new MturkError(`The idempotency token "${token}" has already been processed. ${stamp()}`);

  /** Every non-empty page carries a NextToken; the end is an empty page without one (see DEFAULT_PAGE_SIZE). */
  function page<T>(items: T[], body: Body, key: string) {
    const max = body.MaxResults === undefined ? 100 : Number(body.MaxResults);
    if (!Number.isInteger(max) || max < 1 || max > 100) throw new MturkError(`MaxResults must be between 1 and 100. ${stamp()}`);
    const start = body.NextToken === undefined ? 0 : Number(Buffer.from(String(body.NextToken), 'base64url').toString('utf8').replace(/^p/, ''));
    if (!Number.isInteger(start) || start < 0) throw new MturkError(`The pagination token is invalid. ${stamp()}`);
    const slice = items.slice(start, start + Math.min(pageSize, max));
    const next = slice.length > 0 ? Buffer.from(`p${start + slice.length}`).toString('base64url') : undefined;
    return { [key]: slice, NumResults: slice.length, ...(next ? { NextToken: next } : {}) };
  }

  const required = (body: Body, ...names: string[]) => {
    const missing = names.filter((n) => body[n] === undefined || body[n] === '');
    if (missing.length > 0) throw new MturkError(`1 validation error detected: Value null at '${missing[0]}' failed to satisfy constraint: Member must not be null`, null, 400, 'ValidationException');
  };

  /** MTurk's pricing page: 20% of a reward or bonus, 40% of the reward of a HIT with 10 or more assignments, at least $0.01. */
  const feeCents = (amountCents: number, maxAssignments = 1) => Math.max(1, Math.round(amountCents * (maxAssignments >= 10 ? 0.4 : 0.2)));

  /**
   * The Assignment data structure: a submitted assignment nobody approved or rejected is "considered Approved
   * automatically" at its AutoApprovalTime, SubmitTime plus the HIT's auto-approval delay; the reward is paid then.
   * Applied whenever MTurk is asked anything, as if it had happened on time.
   */
  function autoApprove() {
    for (const a of assignments.values()) {
      if (a.AssignmentStatus !== 'Submitted' || a.AutoApprovalTime === null || a.AutoApprovalTime > now()) continue;
      const hit = hits.get(a.HITId) as FakeHit;
      a.AssignmentStatus = 'Approved';
      a.ApprovalTime = a.AutoApprovalTime;
      balanceCents -= cents(hit.Reward) + feeCents(cents(hit.Reward), hit.MaxAssignments);
    }
  }

  const hitOf = (body: Body) => {
    required(body, 'HITId');
    const h = hits.get(String(body.HITId));
    if (!h) throw new MturkError(`Hit ${String(body.HITId)} does not exist. ${stamp()}`, 'AWS.MechanicalTurk.HitDoesNotExist');
    return h;
  };

  function view(h: FakeHit) {
    const taken = [...assignments.values()].filter((a) => a.HITId === h.HITId);
    const available = Math.max(0, h.MaxAssignments - taken.length);
    const submitted = taken.filter((a) => a.AssignmentStatus !== 'Accepted').length;
    // API: HIT data structure, HITStatus: Assignable | Unassignable | Reviewable | Reviewing | Disposed.
    const status = h.Expiration <= now() || submitted === h.MaxAssignments ? 'Reviewable' : available === 0 ? 'Unassignable' : 'Assignable';
    return {
      ...h,
      HITStatus: status,
      NumberOfAssignmentsPending: taken.filter((a) => a.AssignmentStatus === 'Accepted').length,
      NumberOfAssignmentsAvailable: h.Expiration <= now() ? 0 : available,
      NumberOfAssignmentsCompleted: submitted,
    };
  }

  /** API: CreateHITType. "If you register a HIT type with values that match an existing HIT type, the HIT type ID of the existing type will be returned." */
  function createHitType(body: Body) {
    required(body, 'AssignmentDurationInSeconds', 'Reward', 'Title', 'Description');
    if (!/^\d+(\.\d{1,2})?$/.test(String(body.Reward))) throw new MturkError(`Reward ${String(body.Reward)} is not a valid amount in US dollars. ${stamp()}`);
    const delay = body.AutoApprovalDelayInSeconds === undefined ? MAX_AUTO_APPROVAL_SECONDS : Number(body.AutoApprovalDelayInSeconds);
    if (!(delay >= 0 && delay <= MAX_AUTO_APPROVAL_SECONDS)) throw new MturkError(`AutoApprovalDelayInSeconds must be between 0 and ${MAX_AUTO_APPROVAL_SECONDS}. ${stamp()}`);
    const duration = Number(body.AssignmentDurationInSeconds);
    // API: CreateHITType, AssignmentDurationInSeconds: "between 30 seconds and 365 days".
    if (!(duration >= 30 && duration <= 31_536_000)) throw new MturkError(`AssignmentDurationInSeconds must be between 30 and 31536000. ${stamp()}`);
    const type = { ...body, AutoApprovalDelayInSeconds: delay };
    const key = JSON.stringify(type);
    const found = [...hitTypes.entries()].find(([, t]) => JSON.stringify(t) === key);
    const id = found?.[0] ?? mturkId();
    hitTypes.set(id, type);
    return { HITTypeId: id };
  }

  function createHit(body: Body, deferred: Deferred | null) {
    required(body, 'HITTypeId', 'LifetimeInSeconds');
    const type = hitTypes.get(String(body.HITTypeId));
    if (!type) throw new MturkError(`HITTypeId ${String(body.HITTypeId)} does not exist. ${stamp()}`, 'AWS.MechanicalTurk.HITTypeDoesNotExist');
    if (!body.Question && !body.HITLayoutId) throw new MturkError(`Either Question or HITLayoutId must be provided. ${stamp()}`);
    const question = String(body.Question);
    // API: ExternalQuestion (an ExternalURL and a FrameHeight). MTurk frames only https pages; simarena refuses an
    // http link itself before sending (mturk-workflows.ts), and the suite's server is plain http, so both pass here.
    if (!/<ExternalURL>https?:\/\/[^<]+<\/ExternalURL>/.test(question) || !/<FrameHeight>\d+<\/FrameHeight>/.test(question)) throw new MturkError(`The Question is not a valid ExternalQuestion. ${stamp()}`);
    const lifetime = Number(body.LifetimeInSeconds);
    // API: CreateHITWithHITType, LifetimeInSeconds: 30 seconds to 365 days; RequesterAnnotation: at most 255 characters.
    if (!(lifetime >= 30 && lifetime <= 31_536_000)) throw new MturkError(`LifetimeInSeconds must be between 30 and 31536000. ${stamp()}`);
    const annotation = typeof body.RequesterAnnotation === 'string' ? body.RequesterAnnotation : null;
    if (annotation !== null && annotation.length > 255) throw new MturkError(`RequesterAnnotation must not be longer than 255 characters. ${stamp()}`);
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
      AutoApprovalDelayInSeconds: Number(type.AutoApprovalDelayInSeconds),
      QualificationRequirements: (type.QualificationRequirements as unknown[]) ?? [],
      RequesterAnnotation: annotation,
      CreationTime: now(),
      Expiration: now() + lifetime,
    };
    // API: CreateHIT, UniqueRequestToken: a repeat within 24 hours "will return a AWS.MechanicalTurk.HitAlreadyExists
    // error with a message containing the HITId".
    const token = typeof body.UniqueRequestToken === 'string' ? body.UniqueRequestToken : null;
    takeToken('CreateHIT', token, () => {
      const earlier = hitByToken.get(token ?? '') ?? hit.HITId;
      return new MturkError(`The HIT with ID "${earlier}" already exists. ${stamp()}`, 'AWS.MechanicalTurk.HitAlreadyExists');
    });
    if (token !== null) hitByToken.set(token, hit.HITId);
    const store = () => hits.set(hit.HITId, hit);
    if (deferred) deferred.run = store;
    else store();
    return { HIT: view(hit) };
  }

  const assignmentOf = (body: Body) => {
    required(body, 'AssignmentId');
    const a = assignments.get(String(body.AssignmentId));
    if (!a || a.AssignmentStatus === 'Accepted') throw new MturkError(`Assignment ${String(body.AssignmentId)} does not exist. ${stamp()}`, 'AWS.MechanicalTurk.AssignmentDoesNotExist');
    return a;
  };

  /**
   * API: ApproveAssignment. Only a Submitted assignment, or a Rejected one with OverrideRejection "submitted within
   * the previous 30 days"; "If the Requester's account does not have adequate funds for these payments, the call to
   * ApproveAssignment returns an exception, and the approval is not processed." An approved one is refused as
   * Dallinger issue #3072 shows: "This operation can be called with a status of: Submitted (1625139618656)".
   */
  function approve(body: Body) {
    const a = assignmentOf(body);
    const override = a.AssignmentStatus === 'Rejected' && body.OverrideRejection === true && now() - (a.SubmitTime ?? 0) <= 30 * 86_400;
    if (a.AssignmentStatus !== 'Submitted' && !override) throw new MturkError(`This operation can be called with a status of: Submitted ${stamp()}`);
    const hit = hits.get(a.HITId) as FakeHit;
    const cost = cents(hit.Reward) + feeCents(cents(hit.Reward), hit.MaxAssignments);
    if (cost > balanceCents) throw new MturkError(`You do not have enough funds to approve this assignment. ${stamp()}`);
    balanceCents -= cost;
    a.AssignmentStatus = 'Approved';
    a.ApprovalTime = now();
    a.RequesterFeedback = typeof body.RequesterFeedback === 'string' ? body.RequesterFeedback : null;
    return {};
  }

  /**
   * API: SendBonus. WorkerId, AssignmentId, BonusAmount (US dollars) and Reason ("The Worker receiving the bonus can
   * see this message") are required; it "fails if your account does not have enough funds to pay for both the bonus
   * and the fees". The Worker must have had the results "approved or rejected" (the GrantBonus reference, quoted in
   * Dallinger's grant_bonus); an assignment still being worked on "does not exist" (Mephisto issue #1081).
   */
  function sendBonus(body: Body, deferred: Deferred | null) {
    required(body, 'WorkerId', 'BonusAmount', 'AssignmentId', 'Reason');
    const a = assignmentOf(body);
    if (a.WorkerId !== body.WorkerId) throw new MturkError(`Assignment ${a.AssignmentId} is not of worker ${String(body.WorkerId)}. ${stamp()}`);
    if (a.AssignmentStatus === 'Submitted') throw new MturkError(`A bonus can be paid only for an approved or rejected assignment; ${a.AssignmentId} is Submitted. ${stamp()}`);
    if (!/^\d+(\.\d{1,2})?$/.test(String(body.BonusAmount)) || Number(body.BonusAmount) <= 0) throw new MturkError(`BonusAmount ${String(body.BonusAmount)} is not a valid amount. ${stamp()}`);
    const amount = cents(String(body.BonusAmount));
    if (amount + feeCents(amount) > balanceCents) throw new MturkError(`You do not have enough funds to pay this bonus. ${stamp()}`);
    const token = typeof body.UniqueRequestToken === 'string' ? body.UniqueRequestToken : null;
    takeToken('SendBonus', token, () => alreadyProcessed(token ?? ''));
    const pay = () => {
      balanceCents -= amount + feeCents(amount);
      bonuses.push({ WorkerId: a.WorkerId, AssignmentId: a.AssignmentId, BonusAmount: String(body.BonusAmount), Reason: String(body.Reason), GrantTime: now() });
    };
    if (deferred) deferred.run = pay;
    else pay();
    return {};
  }

  /**
   * API: UpdateExpirationForHIT. "To expire a HIT immediately, provide the value 0 or set ExpireAt to a time in the
   * past"; "You cannot shorten the expiration time". MTurk derives an idempotency token from the HIT and the time, and
   * refuses the same request again (Dallinger issue #3109: `The idempotency token "<HITId><date>" has already been
   * processed.`).
   */
  function updateExpiration(body: Body) {
    required(body, 'ExpireAt');
    const h = hitOf(body);
    const at = Number(body.ExpireAt);
    takeToken('UpdateExpirationForHIT', `${h.HITId}${new Date(at * 1000).toUTCString()}`, () => alreadyProcessed(`${h.HITId}${new Date(at * 1000).toUTCString()}`));
    if (at > now() && at < h.Expiration) throw new MturkError(`You cannot shorten the expiration time of a HIT; expire it now with 0 instead. ${stamp()}`);
    h.Expiration = at <= now() ? Math.min(h.Expiration, now()) : at;
    return {};
  }

  /** API: ListBonusPayments. "Either the HITId parameter or the AssignmentId parameter must be specified"; WorkerId, BonusAmount, AssignmentId, Reason, GrantTime. */
  function listBonusPayments(body: Body) {
    if (!body.HITId && !body.AssignmentId) throw new MturkError(`Either HITId or AssignmentId must be provided. ${stamp()}`);
    const found = bonuses.filter((b) => (body.AssignmentId ? b.AssignmentId === body.AssignmentId : assignments.get(b.AssignmentId)?.HITId === body.HITId));
    return page(found, body, 'BonusPayments');
  }

  const OPERATIONS: Record<string, (body: Body, deferred: Deferred | null) => unknown> = {
    GetAccountBalance: () => ({ AvailableBalance: (balanceCents / 100).toFixed(2) }),
    CreateHITType: createHitType,
    CreateHITWithHITType: createHit,
    GetHIT: (body) => ({ HIT: view(hitOf(body)) }),
    // API: ListHITs. "returns all of a Requester's HITs ... of any status, except for HITs that have been deleted".
    ListHITs: (body) => page([...hits.values()].map(view), body, 'HITs'),
    UpdateExpirationForHIT: updateExpiration,
    // API: ListAssignmentsForHIT, AssignmentStatuses: Submitted | Approved | Rejected (all of them when omitted).
    ListAssignmentsForHIT: (body) => {
      const h = hitOf(body);
      const statuses = (body.AssignmentStatuses as string[] | undefined) ?? ['Submitted', 'Approved', 'Rejected'];
      return page([...assignments.values()].filter((a) => a.HITId === h.HITId && statuses.includes(a.AssignmentStatus)), body, 'Assignments');
    },
    GetAssignment: (body) => {
      const a = assignmentOf(body);
      return { Assignment: a, HIT: view(hits.get(a.HITId) as FakeHit) };
    },
    ApproveAssignment: approve,
    RejectAssignment: (body) => {
      required(body, 'RequesterFeedback');
      const a = assignmentOf(body);
      if (a.AssignmentStatus !== 'Submitted') throw new MturkError(`This operation can be called with a status of: Submitted ${stamp()}`);
      a.AssignmentStatus = 'Rejected';
      a.RejectionTime = now();
      a.RequesterFeedback = String(body.RequesterFeedback);
      return {};
    },
    SendBonus: sendBonus,
    ListBonusPayments: listBonusPayments,
    // Dallinger issue #3331: a name is unique among the requester's qualification types.
    CreateQualificationType: (body) => {
      required(body, 'Name', 'Description', 'QualificationTypeStatus');
      if ([...qualificationTypes.values()].some((q) => q.Name === body.Name)) {
        throw new MturkError(`You have already created a QualificationType with this name. A QualificationType's name must be unique among all of the QualificationTypes created by the same user. ${stamp()}`, 'AWS.MechanicalTurk.QualificationTypeAlreadyExists');
      }
      const q = { QualificationTypeId: mturkId(), Name: String(body.Name), Description: String(body.Description), createdAtMs: Date.now(), workers: new Map<string, number>() };
      qualificationTypes.set(q.QualificationTypeId, q);
      return { QualificationType: { QualificationTypeId: q.QualificationTypeId, Name: q.Name, Description: q.Description, QualificationTypeStatus: 'Active', CreationTime: now() } };
    },
    ListQualificationTypes: (body) => {
      const query = String(body.Query ?? '').toLowerCase();
      const indexed = [...qualificationTypes.values()].filter((q) => Date.now() - q.createdAtMs >= QUALIFICATION_INDEX_MS);
      const found = indexed.filter((q) => q.Name.toLowerCase().includes(query) || q.Description.toLowerCase().includes(query));
      return page(found.map((q) => ({ QualificationTypeId: q.QualificationTypeId, Name: q.Name, Description: q.Description, QualificationTypeStatus: 'Active' })), body, 'QualificationTypes');
    },
    AssociateQualificationWithWorker: (body) => {
      required(body, 'QualificationTypeId', 'WorkerId');
      const q = qualificationTypes.get(String(body.QualificationTypeId));
      if (!q) throw new MturkError(`You requested a Qualification that does not exist. ${stamp()}`, 'AWS.MechanicalTurk.QualificationDoesNotExist');
      q.workers.set(String(body.WorkerId), Number(body.IntegerValue ?? 1));
      return {};
    },
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': mturkId(8) });
    res.end(JSON.stringify(body));
  };
  const errorBody = (e: MturkError) => ({ status: e.status, body: { __type: e.type, Message: e.message, ...(e.turkErrorCode ? { TurkErrorCode: e.turkErrorCode } : {}) } });

  function answer(operation: string, body: Body, deferred: Deferred | null): { status: number; body: unknown } {
    const run = OPERATIONS[operation];
    if (!run) return { status: 400, body: { __type: 'UnknownOperationException', Message: `Unknown operation ${operation}` } };
    autoApprove();
    try {
      return { status: 200, body: run(body, deferred) };
    } catch (e) {
      if (e instanceof MturkError) return errorBody(e);
      throw e;
    }
  }

  function nextFault(operation: string): MturkFault | undefined {
    const index = faults.findIndex((f) => f.operation === operation);
    return index >= 0 ? faults.splice(index, 1)[0] : undefined;
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    if (req.method !== 'POST' || req.url !== '/' || !target.startsWith(TARGET_PREFIX)) return send(res, 404, { __type: 'UnknownOperationException', Message: 'Not an MTurk request' });
    const operation = target.slice(TARGET_PREFIX.length);
    let body: Body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Body;
    } catch {
      return send(res, 400, { __type: 'SerializationException', Message: 'Malformed JSON' });
    }
    requests.push({ operation, body, headers: req.headers });
    for (const w of waiters.splice(0)) if (w.operation === operation) w.resolve();
    else waiters.push(w);
    // AWS signs every request (Signature Version 4); a key MTurk does not know is refused.
    if (!String(req.headers.authorization ?? '').includes(`Credential=${options.accessKeyId}/`)) {
      return send(res, 400, { __type: 'UnrecognizedClientException', Message: 'The security token included in the request is invalid.' });
    }
    const fault = nextFault(operation);
    try {
      await respond(req, res, operation, body, fault);
    } finally {
      fault?.then?.();
    }
  }

  async function respond(req: IncomingMessage, res: ServerResponse, operation: string, body: Body, fault: MturkFault | undefined) {
    const scripted = () => errorBody(new MturkError(fault?.message ?? `Scripted failure ${stamp()}`, fault?.turkErrorCode ?? null, fault?.status ?? 500, fault?.type ?? 'ServiceFault'));
    if (fault?.status && !fault.after) {
      const f = scripted();
      return send(res, f.status, f.body);
    }
    if (fault?.drop && !fault.after) return req.socket.destroy();
    const deferred: Deferred | null = fault?.inFlight ? { run: () => {} } : null;
    const result = answer(operation, body, deferred);
    if (deferred && result.status === 200) inFlight.push(deferred);
    if (fault?.inFlight || fault?.drop) return req.socket.destroy();
    if (fault?.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    const final = fault?.status ? scripted() : result;
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
    /** The account's balance in cents, after every reward, bonus and fee paid. */
    balanceCents: () => balanceCents,
    /** Moves MTurk's clock on (past the 24 hours a UniqueRequestToken is remembered, past auto-approval). */
    advance: (seconds: number) => {
      offsetSeconds += seconds;
      autoApprove();
    },
    calls: (operation: string) => requests.filter((r) => r.operation === operation).length,
    /** Resolves when a request of this operation arrives (before it is answered). */
    waitFor: (operation: string) => new Promise<void>((resolve) => waiters.push({ operation, resolve })),
    /** Carries out the requests MTurk took while their connection dropped (`inFlight` faults). */
    completeInFlight: () => {
      for (const d of inFlight.splice(0)) d.run();
    },
    /**
     * A worker accepts the HIT: an assignment is created and the URL MTurk frames is returned, the ExternalURL with
     * assignmentId, hitId, workerId and turkSubmitTo appended (API: ExternalQuestion).
     */
    acceptHit(hitId: string, workerId: string): { assignment: FakeAssignment; url: string } {
      const hit = hits.get(hitId);
      if (!hit || hit.Expiration <= now()) throw new Error(`HIT ${hitId} is not assignable`);
      if ([...assignments.values()].filter((a) => a.HITId === hitId).length >= hit.MaxAssignments) throw new Error('no assignment left');
      const assignment: FakeAssignment = {
        AssignmentId: mturkId(), WorkerId: workerId, HITId: hitId, AssignmentStatus: 'Accepted', AcceptTime: now(), SubmitTime: null, AutoApprovalTime: null,
        ApprovalTime: null, RejectionTime: null, RequesterFeedback: null, Answer: '',
      };
      assignments.set(assignment.AssignmentId, assignment);
      const external = (/<ExternalURL>([^<]+)<\/ExternalURL>/.exec(hit.Question)?.[1] ?? '').replace(/&amp;/g, '&');
      const query = new URLSearchParams({ assignmentId: assignment.AssignmentId, hitId, workerId, turkSubmitTo: 'https://www.mturk.com' });
      return { assignment, url: `${external}${external.includes('?') ? '&' : '?'}${query.toString()}` };
    },
    /** The worker's browser posts the done page's form to turkSubmitTo/mturk/externalSubmit: the auto-approval clock starts. */
    submitAssignment(assignmentId: string, answerText = '') {
      const a = assignments.get(assignmentId);
      if (!a) throw new Error('no such assignment');
      const hit = hits.get(a.HITId) as FakeHit;
      a.AssignmentStatus = 'Submitted';
      a.SubmitTime = now();
      a.AutoApprovalTime = now() + hit.AutoApprovalDelayInSeconds;
      a.Answer = answerText;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
