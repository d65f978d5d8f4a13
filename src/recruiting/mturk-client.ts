import {
  ApproveAssignmentCommand,
  type Assignment,
  AssociateQualificationWithWorkerCommand,
  type BonusPayment,
  CreateHITTypeCommand,
  type CreateHITTypeCommandInput,
  CreateHITWithHITTypeCommand,
  type CreateHITWithHITTypeCommandInput,
  CreateQualificationTypeCommand,
  GetAccountBalanceCommand,
  GetAssignmentCommand,
  GetHITCommand,
  type HIT,
  ListAssignmentsForHITCommand,
  ListBonusPaymentsCommand,
  ListHITsCommand,
  ListQualificationTypesCommand,
  MTurkClient,
  type QualificationType,
  SendBonusCommand,
  UpdateExpirationForHITCommand,
} from '@aws-sdk/client-mturk';
import type { AwsCredentials } from '../config.js';
import { PlatformHttpError } from './platform-error.js';

// The only importer of @aws-sdk/client-mturk: the requests `mturk publish`, `status` and `settle` make, each turning a
// failure into a PlatformHttpError (status 429 for throttling, 0 for no answer) that platform-operation.ts acts on.

export const MTURK_PRODUCTION_ENDPOINT = 'https://mturk-requester.us-east-1.amazonaws.com';
export const MTURK_SANDBOX_ENDPOINT = 'https://mturk-requester-sandbox.us-east-1.amazonaws.com';
/** MTurk's requester API lives in us-east-1 only. */
const MTURK_REGION = 'us-east-1';
/** Items per page of MTurk's list operations (its maximum is 100). */
export const MTURK_PAGE_SIZE = 100;

/** The SDK's names for throttling (its own retry strategy treats these as "slow down", as does platform-operation.ts). */
const THROTTLING = new Set(['ThrottlingException', 'Throttling', 'TooManyRequestsException', 'RequestLimitExceeded', 'ThrottledException']);

type SdkFailure = { name?: string; message?: string; TurkErrorCode?: string; $metadata?: { httpStatusCode?: number } };

/**
 * MTurk's refusals of a request it already has, each meaning the write may be done, never that it was not: a HIT
 * created again with its UniqueRequestToken ("AWS.MechanicalTurk.HitAlreadyExists error with a message containing the
 * HITId", the CreateHIT reference), any other write repeated with its token (RequestTokens: "subsequent calls return
 * an error with a message containing the request ID"; the live wording, Dallinger issue #3109: `The idempotency token
 * "..." has already been processed.`), and a qualification type created again under its unique name (Dallinger
 * issue #3331, AWS.MechanicalTurk.QualificationTypeAlreadyExists).
 */
const DUPLICATE_CODES = new Set(['AWS.MechanicalTurk.HitAlreadyExists', 'AWS.MechanicalTurk.DuplicateRequest', 'AWS.MechanicalTurk.QualificationTypeAlreadyExists']);
const DUPLICATE_MESSAGE = /has already been processed|already exists|already created a QualificationType with this name/i;

/** The SDK's failure as a PlatformHttpError: MTurk's own message, the status, 429 for throttling, 0 for no answer. */
function platformErrorOf(error: unknown): PlatformHttpError {
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkFailure;
  const status = e.$metadata?.httpStatusCode;
  const message = e.message || e.name || 'no message';
  if (e.name && THROTTLING.has(e.name)) return new PlatformHttpError('mturk', 429, message);
  if (typeof status !== 'number') return new PlatformHttpError('mturk', 0, message);
  const duplicate = e.name === 'RequestError' && (DUPLICATE_CODES.has(e.TurkErrorCode ?? '') || DUPLICATE_MESSAGE.test(message));
  return new PlatformHttpError('mturk', status, `${e.name ?? 'Error'}: ${message}${e.TurkErrorCode ? ` (${e.TurkErrorCode})` : ''}`, null, duplicate);
}

async function call<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw platformErrorOf(error);
  }
}

export type { BonusPayment, HIT };
export type MturkClientOptions = { endpoint: string; credentials: AwsCredentials };

/**
 * MTurk's requester API over the SDK. Writes go out once per call (maxAttempts 1): a write is retried only by
 * platform-operation.ts, after it is recorded and after MTurk's state was read. Reads use the SDK's own retries
 * (throttling and 5xx, with its backoff), since reading twice changes nothing.
 */
export function createMturkClient(options: MturkClientOptions) {
  const base = { endpoint: options.endpoint, region: MTURK_REGION, credentials: options.credentials };
  const writer = new MTurkClient({ ...base, maxAttempts: 1 });
  const reader = new MTurkClient({ ...base, maxAttempts: 4 });

  /** Every page of a list: MTurk gives a NextToken with each page that has items, and ends with an empty one (Mephisto's get_outstanding_hits reads until then). */
  async function allPages<T>(page: (token: string | undefined) => Promise<{ items: T[]; next: string | undefined }>): Promise<T[]> {
    const out: T[] = [];
    let token: string | undefined;
    do {
      const { items, next } = await page(token);
      out.push(...items);
      token = items.length > 0 ? next : undefined;
    } while (token);
    return out;
  }

  return {
    accountBalance: () => call(async () => (await reader.send(new GetAccountBalanceCommand({}))).AvailableBalance ?? null),
    createHitType: (input: CreateHITTypeCommandInput) => call(async () => (await writer.send(new CreateHITTypeCommand(input))).HITTypeId ?? ''),
    createHit: (input: CreateHITWithHITTypeCommandInput) => call(async () => (await writer.send(new CreateHITWithHITTypeCommand(input))).HIT as HIT),
    getHit: (hitId: string) => call(async () => (await reader.send(new GetHITCommand({ HITId: hitId }))).HIT as HIT),
    listHits: () =>
      call(() =>
        allPages(async (token) => {
          const r = await reader.send(new ListHITsCommand({ MaxResults: MTURK_PAGE_SIZE, NextToken: token }));
          return { items: r.HITs ?? [], next: r.NextToken };
        }),
      ),
    expireHit: (hitId: string) => call(() => writer.send(new UpdateExpirationForHITCommand({ HITId: hitId, ExpireAt: new Date(0) }))),
    listAssignments: (hitId: string): Promise<Assignment[]> =>
      call(() =>
        allPages(async (token) => {
          const r = await reader.send(new ListAssignmentsForHITCommand({ HITId: hitId, MaxResults: MTURK_PAGE_SIZE, NextToken: token, AssignmentStatuses: ['Submitted', 'Approved', 'Rejected'] }));
          return { items: r.Assignments ?? [], next: r.NextToken };
        }),
      ),
    getAssignment: (assignmentId: string) => call(async () => (await reader.send(new GetAssignmentCommand({ AssignmentId: assignmentId }))).Assignment as Assignment),
    approveAssignment: (assignmentId: string, feedback: string) => call(() => writer.send(new ApproveAssignmentCommand({ AssignmentId: assignmentId, RequesterFeedback: feedback }))),
    sendBonus: (input: { workerId: string; assignmentId: string; amount: string; reason: string; token: string }) =>
      call(() =>
        writer.send(new SendBonusCommand({ WorkerId: input.workerId, AssignmentId: input.assignmentId, BonusAmount: input.amount, Reason: input.reason, UniqueRequestToken: input.token })),
      ),
    /** The bonuses paid for an assignment, or for every assignment of a HIT. */
    listBonusPayments: (of: { assignmentId: string } | { hitId: string }): Promise<BonusPayment[]> =>
      call(() =>
        allPages(async (token) => {
          const which = 'hitId' in of ? { HITId: of.hitId } : { AssignmentId: of.assignmentId };
          const r = await reader.send(new ListBonusPaymentsCommand({ ...which, MaxResults: MTURK_PAGE_SIZE, NextToken: token }));
          return { items: r.BonusPayments ?? [], next: r.NextToken };
        }),
      ),
    createQualificationType: (name: string, description: string) =>
      call(async () => (await writer.send(new CreateQualificationTypeCommand({ Name: name, Description: description, QualificationTypeStatus: 'Active' }))).QualificationType as QualificationType),
    findQualificationType: (name: string) =>
      call(async () => {
        const r = await reader.send(new ListQualificationTypesCommand({ Query: name, MustBeRequestable: false, MustBeOwnedByCaller: true, MaxResults: MTURK_PAGE_SIZE }));
        return (r.QualificationTypes ?? []).find((q) => q.Name === name) ?? null;
      }),
    assignQualification: (qualificationTypeId: string, workerId: string) =>
      call(() => writer.send(new AssociateQualificationWithWorkerCommand({ QualificationTypeId: qualificationTypeId, WorkerId: workerId, IntegerValue: 1, SendNotification: false }))),
  };
}
export type MturkClient = ReturnType<typeof createMturkClient>;
