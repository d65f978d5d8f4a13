// A fake of Prolific's REST API (https://docs.prolific.com/api-reference) on 127.0.0.1, written from its public
// reference: token authentication (`Authorization: Token <token>`), studies and their transitions (UNPUBLISHED →
// ACTIVE ⇄ PAUSED → COMPLETED), submissions created when a participant is sent to the study URL with its three
// placeholders filled, paginated lists (`results`, `_links.next.href`, `meta.count`), submission transitions (idempotent
// on Prolific's side), bulk approve, return requests, the study cost calculator, and bulk bonuses: set up (pays
// nothing) then paid by a call that is NOT idempotent (each call pays again). Errors answer `{ error: { title, detail } }`.
// Faults are scripted per request: a status (after doing the work or not), a Retry-After, a delayed answer.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  estimated_completion_time: number;
  device_compatibility: string[];
  completion_codes: { code: string; code_type: string; actor?: string; actions: { action: string; fixed_screen_out_reward?: number }[] }[];
};

export type FakeSubmission = {
  id: string;
  study_id: string;
  participant_id: string;
  status: string;
  entered_code: string | null;
  started_at: string;
  completed_at: string | null;
  bonus_payments: number[];
  return_requested: string | null;
};

type BulkBonus = { id: string; study: string; lines: { participant: string; cents: number }[]; payCalls: number };

/** A scripted answer for the next request that matches: `status` instead of the normal answer (after doing the work when `after`), or the normal answer `delayMs` late. */
export type Fault = { method: string; path: RegExp; status?: number; retryAfter?: string; after?: boolean; delayMs?: number; body?: unknown };

export type FakeProlific = Awaited<ReturnType<typeof startFakeProlific>>;

const hexId = () => randomBytes(12).toString('hex');
const PAGE_SIZE = 4;
/** Prolific's fee and VAT on top of rewards, as the fake's cost calculator applies them (a third). */
const FEE_SHARE = 1 / 3;

export async function startFakeProlific(options: { token: string }) {
  const studies = new Map<string, FakeStudy>();
  const submissions = new Map<string, FakeSubmission>();
  const bonuses = new Map<string, BulkBonus>();
  const faults: Fault[] = [];
  const requests: { method: string; path: string; body: unknown; authorization: string | undefined }[] = [];
  const waiters: { test: (r: { method: string; path: string }) => boolean; resolve: () => void }[] = [];
  let base = '';

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const fail = (status: number, title: string, detail: string) => ({ status, body: { error: { status, title, detail } } });

  function page<T>(items: T[], url: URL) {
    const n = Math.max(1, Number(url.searchParams.get('page') ?? '1'));
    const results = items.slice((n - 1) * PAGE_SIZE, n * PAGE_SIZE);
    const next = n * PAGE_SIZE < items.length ? `${base}${url.pathname}?page=${n + 1}` : null;
    return { status: 200, body: { results, _links: { self: { href: `${base}${url.pathname}?page=${n}` }, next: { href: next } }, meta: { count: items.length } } };
  }

  function createStudy(body: Record<string, unknown>) {
    const missing = ['name', 'description', 'external_study_url', 'completion_codes', 'total_available_places', 'estimated_completion_time', 'reward'].filter((k) => body[k] === undefined);
    if (missing.length > 0) return fail(400, 'Bad request', `Missing fields: ${missing.join(', ')}`);
    const url = String(body.external_study_url);
    for (const p of ['{{%PROLIFIC_PID%}}', '{{%STUDY_ID%}}', '{{%SESSION_ID%}}']) if (!url.includes(p)) return fail(400, 'Bad request', `external_study_url must carry ${p}`);
    if (!Number.isInteger(body.reward) || Number(body.reward) <= 0) return fail(400, 'Bad request', 'reward must be a whole number of pence/cents');
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
      estimated_completion_time: Number(body.estimated_completion_time),
      device_compatibility: (body.device_compatibility as string[]) ?? [],
      completion_codes: body.completion_codes as FakeStudy['completion_codes'],
    };
    studies.set(study.id, study);
    return { status: 201, body: study };
  }

  const STUDY_MOVES: Record<string, { from: string[]; to: string }> = {
    PUBLISH: { from: ['UNPUBLISHED'], to: 'ACTIVE' },
    PAUSE: { from: ['ACTIVE'], to: 'PAUSED' },
    START: { from: ['PAUSED'], to: 'ACTIVE' },
    STOP: { from: ['ACTIVE', 'PAUSED'], to: 'AWAITING REVIEW' },
  };

  function transitionSubmission(s: FakeSubmission, body: Record<string, unknown>) {
    if (body.action === 'APPROVE') {
      if (s.status === 'APPROVED') return { status: 200, body: s };
      if (s.status !== 'AWAITING REVIEW') return fail(400, 'Bad request', `Submission ${s.id} is ${s.status}, not AWAITING REVIEW`);
      s.status = 'APPROVED';
      return { status: 200, body: s };
    }
    if (body.action === 'COMPLETE') {
      const code = studies.get(s.study_id)?.completion_codes.find((c) => c.code === body.completion_code);
      if (!code) return fail(400, 'Bad request', 'completion_code is not a code of this study');
      if (s.status === 'SCREENED OUT') return { status: 200, body: s };
      if (!code.actions.some((a) => a.action === 'FIXED_SCREEN_OUT_PAYMENT')) return fail(400, 'Bad request', 'the code is not a screen-out code');
      if (s.status !== 'AWAITING REVIEW' && s.status !== 'ACTIVE') return fail(400, 'Bad request', `Submission ${s.id} is ${s.status}`);
      s.status = 'SCREENED OUT';
      s.entered_code = code.code;
      return { status: 200, body: s };
    }
    return fail(400, 'Bad request', 'action must be APPROVE, REJECT or COMPLETE');
  }

  function createBonus(body: Record<string, unknown>) {
    const study = studies.get(String(body.study_id ?? ''));
    if (!study) return fail(400, 'Bad request', 'study_id is not a study of yours');
    const lines: BulkBonus['lines'] = [];
    const wrong: string[] = [];
    for (const line of String(body.csv_bonuses ?? '').split('\n').filter((l) => l.trim() !== '')) {
      const [participant = '', amount = ''] = line.split(',').map((c) => c.trim());
      const took = [...submissions.values()].some((s) => s.study_id === study.id && s.participant_id === participant);
      if (!took || !/^\d+(\.\d{1,2})?$/.test(amount)) wrong.push(participant);
      else lines.push({ participant, cents: Math.round(Number(amount) * 100) });
    }
    if (wrong.length > 0 || lines.length === 0) return fail(400, 'Bad request', `Invalid IDs or amounts: ${wrong.join(', ') || 'no lines'}`);
    const bonus: BulkBonus = { id: hexId(), study: study.id, lines, payCalls: 0 };
    bonuses.set(bonus.id, bonus);
    const amount = lines.reduce((sum, l) => sum + l.cents, 0);
    const fees = Math.round(amount * FEE_SHARE);
    return { status: 201, body: { id: bonus.id, study: study.id, amount, fees, vat: 0, total_amount: amount + fees } };
  }

  function payBonus(id: string) {
    const bonus = bonuses.get(id);
    if (!bonus) return fail(404, 'Not found', 'No bulk bonus payment with this id');
    // Not idempotent, as the documentation warns: every call pays every line again.
    bonus.payCalls += 1;
    for (const line of bonus.lines) {
      const s = [...submissions.values()].find((x) => x.study_id === bonus.study && x.participant_id === line.participant);
      s?.bonus_payments.push(line.cents);
    }
    return { status: 202, body: {} };
  }

  function route(method: string, url: URL, body: Record<string, unknown>): { status: number; body: unknown } {
    const p = url.pathname.replace(/^\/api\/v1/, '');
    let m: RegExpExecArray | null;
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
      if (!study) return fail(404, 'Not found', 'No study with this id');
      const move = STUDY_MOVES[String(body.action)];
      if (!move) return fail(400, 'Bad request', 'action must be PUBLISH, PAUSE, START or STOP');
      if (study.status === move.to) return { status: 200, body: study };
      if (!move.from.includes(study.status)) return fail(400, 'Bad request', `A study that is ${study.status} cannot be moved by ${String(body.action)}`);
      study.status = move.to;
      return { status: 200, body: study };
    }
    if ((m = /^\/studies\/([^/]+)\/submissions\/$/.exec(p)) && method === 'GET') {
      if (!studies.has(m[1] ?? '')) return fail(404, 'Not found', 'No study with this id');
      return page([...submissions.values()].filter((s) => s.study_id === m?.[1]), url);
    }
    if ((m = /^\/submissions\/([^/]+)\/$/.exec(p)) && method === 'GET') {
      const s = submissions.get(m[1] ?? '');
      return s ? { status: 200, body: { ...s, participant: s.participant_id } } : fail(404, 'Not found', 'No submission with this id');
    }
    if ((m = /^\/submissions\/([^/]+)\/transition\/$/.exec(p)) && method === 'POST') {
      const s = submissions.get(m[1] ?? '');
      return s ? transitionSubmission(s, body) : fail(404, 'Not found', 'No submission with this id');
    }
    if ((m = /^\/submissions\/([^/]+)\/request-return\/$/.exec(p)) && method === 'POST') {
      const s = submissions.get(m[1] ?? '');
      if (!s) return fail(404, 'Not found', 'No submission with this id');
      if (!Array.isArray(body.request_return_reasons) || body.request_return_reasons.length === 0) return fail(400, 'Bad request', 'request_return_reasons is required');
      if (s.status !== 'ACTIVE' && s.status !== 'AWAITING REVIEW') return fail(400, 'Bad request', `Submission ${s.id} is ${s.status}`);
      s.return_requested ??= new Date().toISOString();
      return { status: 200, body: { id: s.id, status: s.status, participant: s.participant_id } };
    }
    if (method === 'POST' && p === '/submissions/bulk-approve/') {
      const ids = Array.isArray(body.submission_ids) ? body.submission_ids.map(String) : [];
      const wrong = ids.filter((id) => !['AWAITING REVIEW', 'APPROVED'].includes(submissions.get(id)?.status ?? ''));
      if (ids.length === 0 || wrong.length > 0) return fail(400, 'Bad request', `Submissions not awaiting review: ${wrong.join(', ') || 'none given'}`);
      for (const id of ids) (submissions.get(id) as FakeSubmission).status = 'APPROVED';
      return { status: 200, body: { message: 'The request bulk approve has been scheduled' } };
    }
    if (method === 'POST' && p === '/submissions/bonus-payments/') return createBonus(body);
    if ((m = /^\/bulk-bonus-payments\/([^/]+)\/pay\/$/.exec(p)) && method === 'POST') return payBonus(m[1] ?? '');
    return fail(404, 'Not found', `No route ${method} ${p}`);
  }

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
    if (req.headers.authorization !== `Token ${options.token}`) return send(res, 401, { error: { status: 401, title: 'Unauthorized', detail: 'Invalid token.' } });
    const faultIndex = faults.findIndex((f) => f.method === method && f.path.test(url.pathname));
    const fault = faultIndex >= 0 ? faults.splice(faultIndex, 1)[0] : undefined;
    if (fault?.status && !fault.after) return send(res, fault.status, fault.body ?? { error: { status: fault.status, title: 'Error', detail: 'Scripted failure' } }, fault.retryAfter ? { 'retry-after': fault.retryAfter } : {});
    const answer = route(method, url, body);
    if (fault?.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    if (fault?.status) return send(res, fault.status, fault.body ?? { error: { status: fault.status, title: 'Error', detail: 'Scripted failure' } });
    send(res, answer.status, answer.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 500, { error: { status: 500, title: 'Internal', detail: 'fake failed' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: `${base}/api/v1/`,
    studies,
    submissions,
    bonuses,
    requests,
    faults,
    /** Resolves when a request matching the method and path arrives (before it is answered). */
    waitFor: (method: string, path: RegExp) => new Promise<void>((resolve) => waiters.push({ test: (r) => r.method === method && path.test(r.path), resolve })),
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
        started_at: new Date().toISOString(),
        completed_at: null,
        bonus_payments: [],
        return_requested: null,
      };
      submissions.set(submission.id, submission);
      const url = study.external_study_url.replace('{{%PROLIFIC_PID%}}', participantId).replace('{{%STUDY_ID%}}', studyId).replace('{{%SESSION_ID%}}', submission.id);
      return { submission, url };
    },
    /** The participant lands on app.prolific.com/submissions/complete?cc=CODE: the code's actions apply. */
    completeSubmission(submissionId: string, code: string) {
      const s = submissions.get(submissionId);
      if (!s) throw new Error('no such submission');
      const known = studies.get(s.study_id)?.completion_codes.find((c) => c.code === code);
      s.entered_code = code;
      s.completed_at = new Date().toISOString();
      const actions = known?.actions.map((a) => a.action) ?? [];
      s.status = actions.includes('AUTOMATICALLY_APPROVE') ? 'APPROVED' : actions.includes('FIXED_SCREEN_OUT_PAYMENT') ? 'SCREENED OUT' : 'AWAITING REVIEW';
      if (actions.includes('REQUEST_RETURN')) s.return_requested = new Date().toISOString();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
