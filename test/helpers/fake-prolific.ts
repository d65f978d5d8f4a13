// A fake of Prolific's REST API (https://docs.prolific.com/api-reference) on 127.0.0.1, written from its reference and
// from what Prolific's own CLI (prolific-oss/cli, client/client.go) and other clients (Mephisto's and PsyNet's Prolific
// providers) rely on. Each behaviour a test depends on names its source beside it. What matters for money:
// - bulk approve and bonus pay answer with a JSON *string* (not an object) and do their work LATER: the fake queues it
//   and applies it when the test calls `process()` (the world's "in the following minutes");
// - a bulk approve accepted with a 200 may still leave a submission unapproved (`dropFromApproval`);
// - bonus pay is NOT idempotent: every call pays every line again;
// - COMPLETE is refused for a completion code whose actor is the participant;
// - a submission awaiting review is approved automatically from midnight UTC on the 21st day (`advance`);
// - an answer can be lost after the work was done (fault `lose`), as a crash or a dropped connection loses it.
// - the workspace's currency is the unit of every amount: a study is created in the token's default workspace and
//   carries its currency_code, whatever the batch meant (`currency`, `otherWorkspaces`).
// Statuses are Prolific's own spellings ("AWAITING REVIEW", "TIMED-OUT", "SCREENED OUT"). Every submission status
// change is kept in `events`.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Submission statuses as Prolific spells them (Count study submissions by status; Submission object). */
export type FakeSubmissionStatus = 'RESERVED' | 'ACTIVE' | 'TIMED-OUT' | 'AWAITING REVIEW' | 'APPROVED' | 'RETURNED' | 'REJECTED' | 'PARTIALLY APPROVED' | 'SCREENED OUT' | 'PROCESSING';

export type FakeCompletionCode = {
  code: string;
  code_type: string;
  actor: 'participant' | 'researcher';
  actions: { action: string; fixed_screen_out_reward?: number; slots?: number }[];
};

export type FakeStudy = {
  id: string;
  name: string;
  internal_name: string;
  description: string;
  external_study_url: string;
  status: string;
  total_available_places: number;
  places_taken: number;
  reward: number;
  currency_code: string;
  estimated_completion_time: number;
  device_compatibility: string[];
  completion_codes: FakeCompletionCode[];
};

export type FakeSubmission = {
  id: string;
  study_id: string;
  participant_id: string;
  status: FakeSubmissionStatus;
  entered_code: string | null;
  started_at: string;
  completed_at: string | null;
  /** Paid bonuses in pence / cents, a screen-out's fixed reward among them (PsyNet, recruiters.py: "verified live"). */
  bonus_payments: number[];
  return_requested: string | null;
};

type BulkBonus = { id: string; study: string; lines: { submission: string; cents: number }[]; payCalls: number };

/** Work Prolific does after answering: a bulk approve, or a bulk bonus pay. */
type Job = { kind: 'approve'; submissionIds: string[] } | { kind: 'pay'; bulkId: string };

/**
 * A scripted answer for the next request that matches: `status` instead of the normal answer (after doing the work when
 * `after`), the normal answer `delayMs` late, or no answer at all after doing the work (`lose`: the connection drops).
 */
export type Fault = { method: string; path: RegExp; status?: number; retryAfter?: string; after?: boolean; delayMs?: number; body?: unknown; rawBody?: string; lose?: boolean };

export type FakeProlific = Awaited<ReturnType<typeof startFakeProlific>>;

const hexId = () => randomBytes(12).toString('hex');
const PAGE_SIZE = 4;
/** Prolific's service charge on rewards and bonuses, "~33.33%" (help centre, "How to resolve an underpaying study"). */
const FEE_SHARE = 1 / 3;
const DAY_MS = 24 * 3600 * 1000;

/**
 * When Prolific approves a submission still awaiting review by itself: "on the 21st day (just after midnight GMT) from
 * when they're made", which "may be approved after 20 days in some US timezones" (researcher help centre, "When should
 * I approve submissions": prolific-researcher.dixa.help/en/article/a33f88; docs.prolific.com, Submissions guide).
 */
function autoApprovalAt(completedAt: string): number {
  const d = new Date(completedAt);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 21);
}

export type FakeWorkspace = { id: string; title: string; currency: 'GBP' | 'USD' };

export type FakeProlificOptions = {
  token: string;
  /** The default workspace's currency: the study's `currency_code`, and the unit of every reward and bonus. */
  currency?: 'GBP' | 'USD';
  /** Further workspaces of the token's user (studies are still created in the default one, the first listed). */
  otherWorkspaces?: FakeWorkspace[];
  /**
   * Submissions in a queued bulk approve show PROCESSING until it is done, as Mephisto's provider saw ("After you
   * approve or reject a submission, it may have the 'Processing' status for a short time": Mephisto, prolific
   * api/constants.py, citing Prolific's "Submission statuses explained"). Off: they show AWAITING REVIEW meanwhile.
   */
  processingWhileQueued?: boolean;
};


type HookSubscription = { id: string; workspace_id: string; event_type: string; target_url: string; is_enabled: boolean; confirmSecret: string; confirmed: boolean };
type Delivery = { eventId: string; subscriptionId: string; attempts: number; lastStatus: number; done: boolean; headers: Record<string, string>; body: string };

/**
 * Prolific's webhooks (docs.prolific.com, API reference, Webhooks): a workspace secret (POST /hooks/secrets/, "you can
 * only have one active secret per workspace at a time"), a subscription (POST /hooks/subscriptions/, whose target_url
 * "must use https:// and be publicly accessible"; the answer carries an X-Hook-Secret header) that delivers only once
 * confirmed (POST /hooks/subscriptions/{id}/ with that secret). A delivery is the event's JSON ("Receiving":
 * resource_id, event_type, participant_id, status), signed ("Verifying": X-Prolific-Request-Signature, the base64
 * HMAC-SHA256 of timestamp + body with the workspace secret, and X-Prolific-Request-Timestamp), with an X-Event-ID that
 * stays "the same across retries"; a non-2xx or a failed connection is retried ("up to 11 additional times over a
 * 24-hour period": Event Delivery & Retry Logic). `resolveTarget` maps a public https target to where the test's
 * server listens, as DNS and a proxy would.
 */
function hookState() {
  return { secrets: new Map<string, { id: string; value: string }>(), subscriptions: [] as HookSubscription[], deliveries: [] as Delivery[], resolveTarget: (url: string) => url };
}

export async function startFakeProlific(options: FakeProlificOptions) {
  const studies = new Map<string, FakeStudy>();
  const workspaces: FakeWorkspace[] = [{ id: hexId(), title: 'My workspace', currency: options.currency ?? 'GBP' }, ...(options.otherWorkspaces ?? [])];
  const submissions = new Map<string, FakeSubmission>();
  const bonuses = new Map<string, BulkBonus>();
  const jobs: Job[] = [];
  const faults: Fault[] = [];
  const requests: { method: string; path: string; body: unknown; authorization: string | undefined }[] = [];
  const events: { id: string; type: 'submission.status.change'; submissionId: string; participantId: string; status: FakeSubmissionStatus; at: string }[] = [];
  const hooks = startHooks();
  /** Every payment made: rewards on approval, screen-out rewards and bonuses (who was paid, and how often). */
  const payments: { participantId: string; kind: 'reward' | 'screen_out' | 'bonus'; cents: number; bulkId?: string }[] = [];
  const waiters: { test: (r: { method: string; path: string }) => boolean; resolve: () => void }[] = [];
  let offsetMs = 0;
  let base = '';
  const now = () => new Date(Date.now() + offsetMs);

  const fail = (status: number, title: string, detail: string) => ({ status, body: { error: { status, title, detail } } });
  const studyOf = (s: FakeSubmission) => studies.get(s.study_id) as FakeStudy;

  function startHooks() {
    const state = hookState();
    const bad = (detail: string) => fail(400, 'Bad request', detail);
    function route(method: string, p: string, body: Record<string, unknown>): { status: number; body: unknown; headers?: Record<string, string> } | null {
      if (method === 'GET' && p === '/hooks/event-types/') return { status: 200, body: { results: [{ event_type: 'submission.status.change', description: 'Triggered when the status of a submission changes.' }] } };
      if (method === 'POST' && p === '/hooks/secrets/') {
        const workspace = workspaces.find((w) => w.id === body.workspace_id);
        if (!workspace) return bad('workspace_id is not a workspace of yours');
        const secret = { id: hexId(), value: randomBytes(32).toString('base64url') };
        state.secrets.set(workspace.id, secret);
        return { status: 201, body: { id: secret.id, value: secret.value, workspace_id: workspace.id } };
      }
      if (method === 'GET' && p === '/hooks/secrets/') return { status: 200, body: { results: [...state.secrets.entries()].map(([workspace_id, x]) => ({ id: x.id, value: x.value, workspace_id })) } };
      if (method === 'GET' && p === '/hooks/subscriptions/') return { status: 200, body: { results: state.subscriptions.map(({ confirmSecret: _c, confirmed: _d, ...shown }) => shown) } };
      if (method === 'POST' && p === '/hooks/subscriptions/') {
        const workspace = workspaces.find((w) => w.id === body.workspace_id);
        if (!workspace || !state.secrets.has(workspace.id)) return bad('Create a secret for the workspace before subscribing');
        const target = String(body.target_url ?? '');
        if (!/^https:\/\/[^/]+/.test(target) || /^https:\/\/(localhost|127\.|\[::1\])/.test(target)) return bad('target_url must use https:// and be publicly accessible');
        if (body.event_type !== 'submission.status.change') return bad('event_type is not a subscribable event type');
        const sub: HookSubscription = { id: hexId(), workspace_id: workspace.id, event_type: body.event_type, target_url: target, is_enabled: body.is_enabled !== false, confirmSecret: randomBytes(16).toString('hex'), confirmed: false };
        state.subscriptions.push(sub);
        const shown = { id: sub.id, event_type: sub.event_type, target_url: sub.target_url, is_enabled: sub.is_enabled, workspace_id: sub.workspace_id };
        return { status: 201, body: { ...shown, results: [shown] }, headers: { 'x-hook-secret': sub.confirmSecret } };
      }
      const m = /^\/hooks\/subscriptions\/([^/]+)\/$/.exec(p);
      if (m && method === 'POST') {
        const sub = state.subscriptions.find((x) => x.id === m[1]);
        if (!sub) return fail(404, 'Not found', 'No subscription with this id');
        if (body.secret !== sub.confirmSecret) return bad('secret does not match the X-Hook-Secret of this subscription');
        sub.confirmed = true;
        return { status: 200, body: { id: sub.id, event_type: sub.event_type, target_url: sub.target_url, is_enabled: sub.is_enabled, workspace_id: sub.workspace_id } };
      }
      return null;
    }
    async function deliverOne(d: Delivery, sub: HookSubscription) {
      d.attempts += 1;
      try {
        const answer = await fetch(state.resolveTarget(sub.target_url), { method: 'POST', headers: d.headers, body: d.body, signal: AbortSignal.timeout(5000) });
        d.lastStatus = answer.status;
        d.done = answer.ok;
      } catch {
        d.lastStatus = 0;
      }
    }
    async function deliver() {
      for (const sub of state.subscriptions.filter((x) => x.confirmed && x.is_enabled)) {
        const secret = state.secrets.get(sub.workspace_id);
        if (!secret) continue;
        for (const e of events.filter((x) => x.type === sub.event_type && !state.deliveries.some((d) => d.eventId === x.id && d.subscriptionId === sub.id))) {
          const body = JSON.stringify({ resource_id: e.submissionId, event_type: e.type, participant_id: e.participantId, status: e.status });
          const timestamp = String(Math.floor(now().getTime() / 1000));
          const signature = createHmac('sha256', secret.value).update(timestamp + body).digest('base64');
          const headers = { 'content-type': 'application/json', 'x-event-id': e.id, 'x-prolific-request-timestamp': timestamp, 'x-prolific-request-signature': signature };
          state.deliveries.push({ eventId: e.id, subscriptionId: sub.id, attempts: 0, lastStatus: 0, done: false, headers, body });
        }
        for (const d of state.deliveries.filter((x) => x.subscriptionId === sub.id && !x.done && x.attempts < 12)) await deliverOne(d, sub);
      }
      return state.deliveries;
    }
    /** Prolific sends a delivery again (a timeout on its side): the same X-Event-ID, body and signature. */
    async function redeliver(eventId: string) {
      for (const d of state.deliveries.filter((x) => x.eventId === eventId)) {
        const sub = state.subscriptions.find((x) => x.id === d.subscriptionId);
        if (sub) await deliverOne(d, sub);
      }
    }
    return { state, route, deliver, redeliver };
  }

  function setStatus(s: FakeSubmission, status: FakeSubmissionStatus) {
    if (s.status === status) return;
    s.status = status;
    events.push({ id: hexId(), type: 'submission.status.change', submissionId: s.id, participantId: s.participant_id, status, at: now().toISOString() });
    if (status === 'APPROVED') payments.push({ participantId: s.participant_id, kind: 'reward', cents: studyOf(s).reward });
  }

  /** The scheduled check that approves what has awaited review too long (runs before every request and every step). */
  function autoApprove() {
    for (const s of submissions.values()) {
      if ((s.status === 'AWAITING REVIEW' || s.status === 'PROCESSING') && s.completed_at && now().getTime() >= autoApprovalAt(s.completed_at)) setStatus(s, 'APPROVED');
    }
  }

  // docs.prolific.com, "List study submissions": each result is a SubmissionShort: id, participant_id, status,
  // started_at, completed_at, has_siblings, study_code, return_requested (no bonus_payments, no entered_code).
  const shortOf = (s: FakeSubmission) => ({
    id: s.id,
    participant_id: s.participant_id,
    status: s.status,
    started_at: s.started_at,
    completed_at: s.completed_at,
    has_siblings: false,
    study_code: s.entered_code,
    return_requested: s.return_requested,
  });
  // docs.prolific.com, "Retrieve a submission": `participant` (not participant_id), entered_code, bonus_payments in
  // pence / cents, return_requested.
  const detailOf = (s: FakeSubmission) => ({
    id: s.id,
    study_id: s.study_id,
    participant: s.participant_id,
    status: s.status,
    started_at: s.started_at,
    completed_at: s.completed_at,
    entered_code: s.entered_code,
    bonus_payments: [...s.bonus_payments],
    return_requested: s.return_requested,
  });

  function page<T>(items: T[], url: URL) {
    const n = Math.max(1, Number(url.searchParams.get('page') ?? '1'));
    const results = items.slice((n - 1) * PAGE_SIZE, n * PAGE_SIZE);
    const next = n * PAGE_SIZE < items.length ? `${base}${url.pathname}?page=${n + 1}` : null;
    return { status: 200, body: { results, _links: { self: { href: `${base}${url.pathname}?page=${n}` }, next: { href: next } }, meta: { count: items.length } } };
  }

  /** Checks a study's completion codes as "Create a draft study" and Prolific's custom-screening notes require. */
  function completionCodesProblem(codes: unknown, reward: number): string | null {
    if (!Array.isArray(codes) || codes.length === 0) return 'completion_codes is required';
    let screenOuts = 0;
    for (const c of codes as FakeCompletionCode[]) {
      if (typeof c.code !== 'string' || !c.code || typeof c.code_type !== 'string' || !c.code_type) return 'each completion code needs a code and a code_type';
      if (c.actor !== 'participant' && c.actor !== 'researcher') return `actor must be participant or researcher (code ${c.code})`;
      for (const a of c.actions ?? []) {
        if (a.action !== 'FIXED_SCREEN_OUT_PAYMENT') continue;
        screenOuts++;
        // Prolific's "New custom screening" (July 2025): fixed_screen_out_reward in pence / cents and slots; the reward
        // below the study's (PsyNet, recruiters.py: "Prolific requires the fixed screen-out reward to be less than the
        // study reward"); at least £0.10 / $0.14 (Prolific Team, "Update to in-study screening rewards").
        const cents = a.fixed_screen_out_reward;
        if (!Number.isInteger(cents) || (cents ?? 0) < (options.currency === 'USD' ? 14 : 10)) return 'fixed_screen_out_reward must be a whole number of pence / cents, at least the minimum screen-out pay';
        if ((cents ?? 0) >= reward) return 'fixed_screen_out_reward must be less than the study reward';
        if (!Number.isInteger(a.slots) || (a.slots ?? 0) < 1) return 'slots must be a positive whole number';
      }
    }
    // The study object: "any number of automated actions ... except when using a custom screening action, which is
    // limited to a single code" (PsyNet: "Prolific only supports one completion code with a FIXED_SCREEN_OUT_PAYMENT").
    return screenOuts > 1 ? 'only one completion code may carry FIXED_SCREEN_OUT_PAYMENT' : null;
  }

  function createStudy(body: Record<string, unknown>) {
    const missing = ['name', 'description', 'external_study_url', 'completion_codes', 'total_available_places', 'estimated_completion_time', 'reward'].filter((k) => body[k] === undefined);
    if (missing.length > 0) return fail(400, 'Bad request', `Missing fields: ${missing.join(', ')}`);
    const url = String(body.external_study_url);
    // The study object: the placeholders {{%PROLIFIC_PID%}}, {{%STUDY_ID%}}, {{%SESSION_ID%}} (simarena needs all three).
    for (const p of ['{{%PROLIFIC_PID%}}', '{{%STUDY_ID%}}', '{{%SESSION_ID%}}']) if (!url.includes(p)) return fail(400, 'Bad request', `external_study_url must carry ${p}`);
    // The study object: "The reward is the total reward you pay a participant in cents (according to the currency of your account)".
    if (!Number.isInteger(body.reward) || Number(body.reward) <= 0) return fail(400, 'Bad request', 'reward must be a whole number of pence/cents');
    const codesProblem = completionCodesProblem(body.completion_codes, Number(body.reward));
    if (codesProblem) return fail(400, 'Bad request', codesProblem);
    const study: FakeStudy = {
      id: hexId(),
      name: String(body.name),
      internal_name: String(body.internal_name ?? ''),
      description: String(body.description),
      external_study_url: url,
      status: 'UNPUBLISHED',
      total_available_places: Number(body.total_available_places),
      places_taken: 0,
      reward: Number(body.reward),
      // The study object: "reward ... in cents (according to the currency of your account)"; Prolific's CLI reads the
      // study's currency_code (model/study.go, GetCurrencyCode). A study is made in the default workspace.
      currency_code: (workspaces[0] as FakeWorkspace).currency,
      estimated_completion_time: Number(body.estimated_completion_time),
      device_compatibility: (body.device_compatibility as string[]) ?? [],
      completion_codes: body.completion_codes as FakeCompletionCode[],
    };
    studies.set(study.id, study);
    return { status: 201, body: study };
  }

  // The study object, status: UNPUBLISHED → ACTIVE (PUBLISH) ⇄ PAUSED (PAUSE, START) → AWAITING REVIEW (STOP).
  const STUDY_MOVES: Record<string, { from: string[]; to: string }> = {
    PUBLISH: { from: ['UNPUBLISHED'], to: 'ACTIVE' },
    PAUSE: { from: ['ACTIVE'], to: 'PAUSED' },
    START: { from: ['PAUSED', 'AWAITING REVIEW'], to: 'ACTIVE' },
    STOP: { from: ['ACTIVE', 'PAUSED'], to: 'AWAITING REVIEW' },
  };

  function transitionStudy(study: FakeStudy, body: Record<string, unknown>) {
    const move = STUDY_MOVES[String(body.action)];
    if (!move) return fail(400, 'Bad request', 'action must be PUBLISH, PAUSE, START or STOP');
    if (study.status === move.to) return { status: 200, body: study };
    if (!move.from.includes(study.status)) return fail(400, 'Bad request', `A study that is ${study.status} cannot be moved by ${String(body.action)}`);
    study.status = move.to;
    return { status: 200, body: study };
  }

  /** A completion code's actions applied to a submission (the study object, "actions"). */
  function applyCode(s: FakeSubmission, code: FakeCompletionCode) {
    s.entered_code = code.code;
    s.completed_at ??= now().toISOString();
    const screenOut = code.actions.find((a) => a.action === 'FIXED_SCREEN_OUT_PAYMENT');
    if (screenOut) {
      setStatus(s, 'SCREENED OUT');
      s.bonus_payments.push(screenOut.fixed_screen_out_reward ?? 0);
      payments.push({ participantId: s.participant_id, kind: 'screen_out', cents: screenOut.fixed_screen_out_reward ?? 0 });
      // "New custom screening": slots limit the screen-outs; "once this threshold has been reached, the study will be paused".
      const study = studyOf(s);
      const screened = [...submissions.values()].filter((x) => x.study_id === study.id && x.status === 'SCREENED OUT').length;
      if (screened >= (screenOut.slots ?? Infinity) && study.status === 'ACTIVE') study.status = 'PAUSED';
      return;
    }
    setStatus(s, code.actions.some((a) => a.action === 'AUTOMATICALLY_APPROVE') ? 'APPROVED' : 'AWAITING REVIEW');
    if (code.actions.some((a) => a.action === 'REQUEST_RETURN')) s.return_requested ??= now().toISOString();
  }

  // docs.prolific.com, "Approve or reject a submission": APPROVE, REJECT (a message of at least 100 characters and a
  // rejection_category), COMPLETE ("the completion code must match a value provided when creating the study, and the
  // actor must have been set to researcher"). "Note this endpoint is idempotent": a repeat is ignored. The answer is
  // the submission (id, started_at, status, study_id, completed_at, entered_code, participant).
  function transitionSubmission(s: FakeSubmission, body: Record<string, unknown>) {
    const answer = () => ({ status: 200, body: { id: s.id, started_at: s.started_at, status: s.status, study_id: s.study_id, completed_at: s.completed_at, entered_code: s.entered_code, participant: s.participant_id } });
    if (body.action === 'APPROVE') {
      if (s.status === 'APPROVED') return answer();
      if (s.status !== 'AWAITING REVIEW') return fail(400, 'Bad request', `Submission ${s.id} is ${s.status}, not AWAITING REVIEW`);
      setStatus(s, 'APPROVED');
      return answer();
    }
    if (body.action === 'REJECT') {
      if (typeof body.message !== 'string' || body.message.length < 100 || typeof body.rejection_category !== 'string') return fail(400, 'Bad request', 'REJECT needs a message of at least 100 characters and a rejection_category');
      if (s.status === 'REJECTED') return answer();
      if (s.status !== 'AWAITING REVIEW') return fail(400, 'Bad request', `Submission ${s.id} is ${s.status}, not AWAITING REVIEW`);
      setStatus(s, 'REJECTED');
      return answer();
    }
    if (body.action === 'COMPLETE') {
      const code = studyOf(s).completion_codes.find((c) => c.code === body.completion_code);
      if (!code) return fail(400, 'Bad request', 'completion_code is not a code of this study');
      if (code.actor !== 'researcher') return fail(400, 'Bad request', `Completion code ${code.code} is not a researcher code: its actor must be researcher to complete a submission`);
      if (s.entered_code === code.code && s.status !== 'ACTIVE') return answer();
      // PsyNet (recruiters.py) completes submissions that are ACTIVE or TIMED-OUT.
      if (s.status !== 'ACTIVE' && s.status !== 'TIMED-OUT') return fail(400, 'Bad request', `Submission ${s.id} is ${s.status}`);
      applyCode(s, code);
      return answer();
    }
    return fail(400, 'Bad request', 'action must be APPROVE, REJECT or COMPLETE');
  }

  // docs.prolific.com, "Request the participant ... to return": request_return_reasons (a non-empty list); the answer
  // (Prolific's CLI, RequestSubmissionReturnResponse) is id, status, participant, return_requested.
  function requestReturn(s: FakeSubmission, body: Record<string, unknown>) {
    if (!Array.isArray(body.request_return_reasons) || body.request_return_reasons.length === 0) return fail(400, 'Bad request', 'request_return_reasons is required');
    if (s.status !== 'ACTIVE' && s.status !== 'AWAITING REVIEW') return fail(400, 'Bad request', `Submission ${s.id} is ${s.status}`);
    s.return_requested ??= now().toISOString();
    return { status: 200, body: { id: s.id, status: s.status, participant: s.participant_id, return_requested: s.return_requested } };
  }

  // docs.prolific.com, "Bulk approve submissions": `submission_ids`, or `study_id` with `participant_ids`; answered 200
  // "Bulk approve in progress" with a JSON string ("The request to bulk approve has been made successfully."). The
  // approvals are made afterwards (queued here); a submission no longer awaiting review then is left as it is.
  function bulkApprove(body: Record<string, unknown>) {
    let ids: string[];
    if (Array.isArray(body.submission_ids)) ids = body.submission_ids.map(String);
    else if (typeof body.study_id === 'string' && Array.isArray(body.participant_ids)) {
      const wanted = new Set(body.participant_ids.map(String));
      ids = [...submissions.values()].filter((s) => s.study_id === body.study_id && wanted.has(s.participant_id)).map((s) => s.id);
    } else return fail(400, 'Bad request', 'submission_ids, or study_id and participant_ids, are required');
    const unknown = ids.filter((id) => !submissions.has(id));
    if (ids.length === 0 || unknown.length > 0) return fail(400, 'Bad request', `Invalid submission ids: ${unknown.join(', ') || 'none given'}`);
    jobs.push({ kind: 'approve', submissionIds: ids });
    if (options.processingWhileQueued) for (const id of ids) if (submissions.get(id)?.status === 'AWAITING REVIEW') setStatus(submissions.get(id) as FakeSubmission, 'PROCESSING');
    return { status: 200, body: 'The request to bulk approve has been made successfully.' };
  }

  // docs.prolific.com, "Set up bonuses": study_id and csv_bonuses, lines `<participant_id>,<amount>` or
  // `<submission_id>,<amount>`, the amount a decimal in the study's currency; a 400 names the ids that did not take
  // part. "Setting up a bonus payment does not actually pay them." The 201 answer: id, study, amount, fees, vat,
  // total_amount, in minor units (Prolific's CLI, CreateBonusPaymentsResponse).
  function createBonus(body: Record<string, unknown>) {
    const study = studies.get(String(body.study_id ?? ''));
    if (!study) return fail(400, 'Bad request', 'study_id is not a study of yours');
    const lines: BulkBonus['lines'] = [];
    const wrong: string[] = [];
    for (const line of String(body.csv_bonuses ?? '').split('\n').filter((l) => l.trim() !== '')) {
      const [who = '', amount = ''] = line.split(',').map((c) => c.trim());
      const s = [...submissions.values()].find((x) => x.study_id === study.id && (x.participant_id === who || x.id === who));
      if (!s || !/^\d+(\.\d{1,2})?$/.test(amount)) wrong.push(who);
      else lines.push({ submission: s.id, cents: Math.round(Number(amount) * 100) });
    }
    if (wrong.length > 0 || lines.length === 0) return fail(400, 'Bad request', `Invalid IDs or amounts: ${wrong.join(', ') || 'no lines'}`);
    const bonus: BulkBonus = { id: hexId(), study: study.id, lines, payCalls: 0 };
    bonuses.set(bonus.id, bonus);
    const amount = lines.reduce((sum, l) => sum + l.cents, 0);
    const fees = Math.round(amount * FEE_SHARE * 100) / 100;
    return { status: 201, body: { id: bonus.id, study: study.id, amount, fees, vat: 0, total_amount: amount + fees } };
  }

  // docs.prolific.com, "Pay bonuses": 202 with a JSON string ("Bulk bonus payment with ID ... is being processed
  // asynchronously"); "The payment will be done in the following minutes"; "This endpoint is not idempotent. Sending
  // multiple requests with the same bulk bonus payment ID will result in participants being paid multiple times."
  function payBonus(id: string) {
    const bonus = bonuses.get(id);
    if (!bonus) return fail(404, 'Not found', 'No bulk bonus payment with this id');
    bonus.payCalls += 1;
    jobs.push({ kind: 'pay', bulkId: id });
    return { status: 202, body: `Bulk bonus payment with ID ${id} is being processed asynchronously. Payments will be completed shortly.` };
  }

  function runJob(job: Job) {
    if (job.kind === 'approve') {
      for (const id of job.submissionIds) {
        const s = submissions.get(id);
        if (s && (s.status === 'AWAITING REVIEW' || s.status === 'PROCESSING')) setStatus(s, 'APPROVED');
      }
      return;
    }
    const bonus = bonuses.get(job.bulkId) as BulkBonus;
    for (const line of bonus.lines) {
      const s = submissions.get(line.submission) as FakeSubmission;
      s.bonus_payments.push(line.cents);
      payments.push({ participantId: s.participant_id, kind: 'bonus', cents: line.cents, bulkId: bonus.id });
    }
  }

  // docs.prolific.com, Workspaces: "Get all a user's workspaces" lists them (id, title, ...); "Get the balance of a
  // workspace" answers currency_code ("The currency used for all financial transactions within the workspace") and
  // the balances "in the sub-currency of your workspace currency (e.g. pence, cents)".
  function workspaceRoute(method: string, p: string, url: URL): { status: number; body: unknown } | null {
    if (method !== 'GET') return null;
    const shown = (w: FakeWorkspace) => ({ id: w.id, title: w.title, description: '', owner: 'researcher', users: [], projects: [], wallet: `wallet-${w.id}` });
    if (p === '/workspaces/') return page(workspaces.map(shown), url);
    const m = /^\/workspaces\/([^/]+)\/(balance\/)?$/.exec(p);
    if (!m) return null;
    const w = workspaces.find((x) => x.id === m[1]);
    if (!w) return fail(404, 'Not found', 'No workspace with this id');
    if (!m[2]) return { status: 200, body: shown(w) };
    return { status: 200, body: { currency_code: w.currency, total_balance: 100_000, balance_breakdown: { rewards: 75_000, fees: 25_000, vat: 0 }, available_balance: 100_000, available_balance_breakdown: { rewards: 75_000, fees: 25_000, vat: 0 } } };
  }

  function route(method: string, url: URL, body: Record<string, unknown>): { status: number; body: unknown; headers?: Record<string, string> } {
    const p = url.pathname.replace(/^\/api\/v1/, '');
    let m: RegExpExecArray | null;
    const workspace = workspaceRoute(method, p, url) ?? hooks.route(method, p, body);
    if (workspace) return workspace;
    const submissionAt = (id: string | undefined) => submissions.get(id ?? '');
    if (method === 'POST' && p === '/studies/') return createStudy(body);
    if (method === 'GET' && p === '/studies/') return page([...studies.values()], url);
    if (method === 'POST' && p === '/study-cost-calculator/') {
      return { status: 200, body: { total_cost: Math.round(Number(body.reward) * Number(body.total_available_places) * (1 + FEE_SHARE)) } };
    }
    if ((m = /^\/studies\/([^/]+)\/$/.exec(p)) && method === 'GET') {
      const study = studies.get(m[1] ?? '');
      return study ? { status: 200, body: study } : fail(404, 'Not found', 'No study with this id');
    }
    if ((m = /^\/studies\/([^/]+)\/transition\/$/.exec(p)) && method === 'POST') {
      const study = studies.get(m[1] ?? '');
      return study ? transitionStudy(study, body) : fail(404, 'Not found', 'No study with this id');
    }
    if ((m = /^\/studies\/([^/]+)\/submissions\/$/.exec(p)) && method === 'GET') {
      if (!studies.has(m[1] ?? '')) return fail(404, 'Not found', 'No study with this id');
      return page([...submissions.values()].filter((s) => s.study_id === m?.[1]).map(shortOf), url);
    }
    if ((m = /^\/submissions\/([^/]+)\/$/.exec(p)) && method === 'GET') {
      const s = submissionAt(m[1]);
      return s ? { status: 200, body: detailOf(s) } : fail(404, 'Not found', 'No submission with this id');
    }
    if ((m = /^\/submissions\/([^/]+)\/transition\/$/.exec(p)) && method === 'POST') {
      const s = submissionAt(m[1]);
      return s ? transitionSubmission(s, body) : fail(404, 'Not found', 'No submission with this id');
    }
    if ((m = /^\/submissions\/([^/]+)\/request-return\/$/.exec(p)) && method === 'POST') {
      const s = submissionAt(m[1]);
      return s ? requestReturn(s, body) : fail(404, 'Not found', 'No submission with this id');
    }
    if (method === 'POST' && p === '/submissions/bulk-approve/') return bulkApprove(body);
    if (method === 'POST' && p === '/submissions/bonus-payments/') return createBonus(body);
    if ((m = /^\/bulk-bonus-payments\/([^/]+)\/pay\/$/.exec(p)) && method === 'POST') return payBonus(m[1] ?? '');
    return fail(404, 'Not found', `No route ${method} ${p}`);
  }

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown>;
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      return send(res, 400, { error: { status: 400, title: 'Bad request', detail: 'JSON parse error' } });
    }
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    requests.push({ method, path: url.pathname, body, authorization: req.headers.authorization });
    for (const w of waiters.splice(0)) if (w.test({ method, path: url.pathname })) w.resolve();
    else waiters.push(w);
    // Introduction: "add Authorization header with the value Token <your token>".
    if (req.headers.authorization !== `Token ${options.token}`) return send(res, 401, { error: { status: 401, title: 'Unauthorized', detail: 'Invalid token.' } });
    autoApprove();
    const faultIndex = faults.findIndex((f) => f.method === method && f.path.test(url.pathname));
    const fault = faultIndex >= 0 ? faults.splice(faultIndex, 1)[0] : undefined;
    const scripted = (f: Fault) => {
      if (f.rawBody === undefined) return send(res, f.status ?? 500, f.body ?? { error: { status: f.status, title: 'Error', detail: 'Scripted failure' } }, f.retryAfter ? { 'retry-after': f.retryAfter } : {});
      res.writeHead(f.status ?? 500, { 'content-type': 'application/json' });
      res.end(f.rawBody);
    };
    if (fault?.status && !fault.after) return scripted(fault);
    const answer = route(method, url, body);
    if (fault?.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    if (fault?.lose) return void res.socket?.destroy();
    if (fault?.status) return scripted(fault);
    send(res, answer.status, answer.body, answer.headers);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 500, { error: { status: 500, title: 'Internal', detail: 'fake failed' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const requireSubmission = (id: string) => {
    const s = submissions.get(id);
    if (!s) throw new Error(`no submission ${id}`);
    return s;
  };

  return {
    url: `${base}/api/v1/`,
    workspaces,
    studies,
    submissions,
    bonuses,
    requests,
    faults,
    events,
    hooks: hooks.state,
    /** Prolific delivers the events its confirmed subscriptions ask for: each not yet delivered, and each it retries. */
    deliverHooks: () => hooks.deliver(),
    redeliverHook: (eventId: string) => hooks.redeliver(eventId),
    payments,
    now,
    /** Work accepted but not done yet (bulk approves and bonus pays). */
    pendingJobs: () => jobs.length,
    /** Resolves when a request matching the method and path arrives (before it is answered). */
    waitFor: (method: string, path: RegExp) => new Promise<void>((resolve) => waiters.push({ test: (r) => r.method === method && path.test(r.path), resolve })),
    /** Prolific does the work it accepted: every queued bulk approve and bonus pay, in order, then the 21-day check. */
    process() {
      for (const job of jobs.splice(0)) runJob(job);
      autoApprove();
    },
    /** Every bulk approve queued now leaves this submission awaiting review (each was taken with a 200 all the same). */
    dropFromApproval(submissionId: string) {
      for (const job of jobs) if (job.kind === 'approve') job.submissionIds = job.submissionIds.filter((id) => id !== submissionId);
      const s = submissions.get(submissionId);
      if (s?.status === 'PROCESSING') setStatus(s, 'AWAITING REVIEW');
    },
    /** Moves the fake's clock on (Prolific's 21-day automatic approval runs at once). */
    advance(ms: number) {
      offsetMs += ms;
      autoApprove();
    },
    advanceDays: (days: number) => {
      offsetMs += days * DAY_MS;
      autoApprove();
    },
    /**
     * A participant takes a place: a submission is created (ACTIVE) and the URL Prolific sends them to is returned,
     * the study URL with its placeholders filled.
     */
    startSubmission(studyId: string, participantId: string): { submission: FakeSubmission; url: string } {
      const study = studies.get(studyId);
      if (!study || study.status !== 'ACTIVE') throw new Error(`study ${studyId} is not active`);
      study.places_taken += 1;
      const submission: FakeSubmission = {
        id: hexId(),
        study_id: studyId,
        participant_id: participantId,
        status: 'ACTIVE',
        entered_code: null,
        started_at: now().toISOString(),
        completed_at: null,
        bonus_payments: [],
        return_requested: null,
      };
      submissions.set(submission.id, submission);
      const url = study.external_study_url.replace('{{%PROLIFIC_PID%}}', participantId).replace('{{%STUDY_ID%}}', studyId).replace('{{%SESSION_ID%}}', submission.id);
      return { submission, url };
    },
    /**
     * The participant lands on app.prolific.com/submissions/complete?cc=CODE: a participant code's actions apply; any
     * other code (unknown, or a researcher's) leaves the submission awaiting review with the code entered, as Prolific
     * does with a wrong code (help centre, "Participants are completing my study with 'NOCODE' or the wrong code").
     */
    completeSubmission(submissionId: string, code: string) {
      const s = requireSubmission(submissionId);
      const known = studyOf(s).completion_codes.find((c) => c.code === code && c.actor === 'participant');
      if (known) return applyCode(s, known);
      s.entered_code = code;
      s.completed_at = now().toISOString();
      setStatus(s, 'AWAITING REVIEW');
    },
    /** The participant returns their submission ("Return and cancel reward", participant help centre). */
    returnSubmission(submissionId: string) {
      setStatus(requireSubmission(submissionId), 'RETURNED');
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
