import { type BatchSettings, type BatchSettingsInput, DEFAULT_QUESTION, DEFAULT_QUESTION_ID } from '../batches/batch.schema.js';
import { formatCondition, parseCondition } from '../generation/mode.js';
import type { RunChoice } from './batch-form.queries.js';

// The console's batch form is flat HTML fields; these two pure functions map it to the settings object that
// `batches create --from FILE.json` takes, and back. Validation is left to the batch schema itself, so the
// form and the CLI's file can never disagree about what is valid.

/**
 * A question after the first, as one row of the form (issue 16); a row with neither id nor text is left out. `kind`,
 * `real` and `confidence` (issue 53) are empty for a preference question.
 */
export type QuestionRow = { id: string; text: string; allowTie: boolean; reason: string; kind: string; real: string; confidence: string };

/** Rows offered for questions 2..6 (the schema allows six questions): fixed fields, so the form needs no script. */
export const MORE_QUESTION_ROWS = 5;

export type BatchFormValues = {
  name: string;
  runs: string[];
  comparisons: string;
  scenarios: string;
  judgmentsPerPair: string;
  question: string;
  /** The first question's id (the single question's is `natural`). */
  questionId: string;
  /** The first question's kind, real condition and confidence (issue 53); empty for a preference question. */
  questionKind: string;
  questionReal: string;
  questionConfidence: string;
  /** The which-is-real question's equivalence margin (issue 53), empty for none. */
  equivalenceMargin: string;
  /** Questions 2.. in page order, filled rows first (blank rows in between are closed up when the form is read). */
  moreQuestions: QuestionRow[];
  /** The batch states its questions as `questions` (kept so that a one-question `questions` batch edits as one). */
  questionList: boolean;
  context: string;
  allowTie: boolean;
  reason: string;
  allowSameSample: boolean;
  onboardingEnabled: boolean;
  onboardingPairs: string;
  onboardingThreshold: string;
  attentionEnabled: boolean;
  attentionRate: string;
  attentionMaxFailures: string;
  perRaterCap: string;
  /** Places to be published; empty means not said (the capacity check then only reports how many are needed). */
  plannedRaters: string;
  leaseMinutes: string;
  providerKind: string;
  paramParticipant: string;
  paramStudy: string;
  paramSession: string;
  codeCompleted: string;
  codeScreenedOut: string;
  codeNoConsent: string;
  codePartial: string;
  sandbox: boolean;
  comparisonsPerHit: string;
  addressRatersPerWindow: string;
  addressWindowMinutes: string;
  addressActiveRaters: string;
  estimatedMinutes: string;
  pay: string;
  /** The `bonus` setting (issue 41): a fixed amount and an amount per regular judgment, empty for none. */
  bonusFixed: string;
  bonusPerJudgment: string;
  /** Prolific's paid screen-out (provider.screenOutPay), empty for a return. */
  screenOutPay: string;
  /** The `mturk` setting as JSON (how `mturk publish` lists the batch), empty for MTurk's defaults. */
  mturk: string;
  consent: string;
  instructions: string;
  /** Batch ids (as the form sends them) whose participants may not take this batch. */
  blockParticipantsOf: string[];
};

/** A JSON field: empty → null; text that is not JSON is passed on as text, so the schema names the field. */
function jsonField(value: string): unknown {
  if (value.trim() === '') return null;
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed;
  } catch {
    return value;
  }
}

function text(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : '';
  return typeof value === 'string' ? value : '';
}

function list(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  const values = Array.isArray(value) ? value : [value];
  return values.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
}

const checked = (body: Record<string, unknown>, key: string) => ['on', 'true', '1', 'yes'].includes(text(body, key));

/** Form field names of question `n` (2..6): `q2Id`, `q2Text`, `q2AllowTie`, `q2Reason`, `q2Kind`, `q2Real`, `q2Confidence`. */
export function questionRowField(n: number, part: 'Id' | 'Text' | 'AllowTie' | 'Reason' | 'Kind' | 'Real' | 'Confidence'): string {
  return `q${n}${part}`;
}

function readQuestionRows(body: Record<string, unknown>): QuestionRow[] {
  const rows: QuestionRow[] = [];
  for (let n = 2; n < 2 + MORE_QUESTION_ROWS; n += 1) {
    const row = {
      id: text(body, questionRowField(n, 'Id')),
      text: text(body, questionRowField(n, 'Text')),
      allowTie: checked(body, questionRowField(n, 'AllowTie')),
      reason: text(body, questionRowField(n, 'Reason')),
      kind: text(body, questionRowField(n, 'Kind')),
      real: text(body, questionRowField(n, 'Real')),
      confidence: text(body, questionRowField(n, 'Confidence')),
    };
    if (row.id.trim() !== '' || row.text.trim() !== '') rows.push(row);
  }
  return rows;
}

export function readBatchForm(body: Record<string, unknown>): BatchFormValues {
  return {
    name: text(body, 'name'),
    runs: list(body, 'runs'),
    comparisons: text(body, 'comparisons'),
    scenarios: text(body, 'scenarios'),
    judgmentsPerPair: text(body, 'judgmentsPerPair'),
    question: text(body, 'question'),
    questionId: text(body, 'questionId'),
    questionKind: text(body, 'questionKind'),
    questionReal: text(body, 'questionReal'),
    questionConfidence: text(body, 'questionConfidence'),
    equivalenceMargin: text(body, 'equivalenceMargin'),
    moreQuestions: readQuestionRows(body),
    questionList: checked(body, 'questionList'),
    context: text(body, 'context'),
    allowTie: checked(body, 'allowTie'),
    reason: text(body, 'reason'),
    allowSameSample: checked(body, 'allowSameSample'),
    onboardingEnabled: checked(body, 'onboardingEnabled'),
    onboardingPairs: text(body, 'onboardingPairs'),
    onboardingThreshold: text(body, 'onboardingThreshold'),
    attentionEnabled: checked(body, 'attentionEnabled'),
    attentionRate: text(body, 'attentionRate'),
    attentionMaxFailures: text(body, 'attentionMaxFailures'),
    perRaterCap: text(body, 'perRaterCap'),
    plannedRaters: text(body, 'plannedRaters'),
    leaseMinutes: text(body, 'leaseMinutes'),
    providerKind: text(body, 'providerKind'),
    paramParticipant: text(body, 'paramParticipant'),
    paramStudy: text(body, 'paramStudy'),
    paramSession: text(body, 'paramSession'),
    codeCompleted: text(body, 'codeCompleted'),
    codeScreenedOut: text(body, 'codeScreenedOut'),
    codeNoConsent: text(body, 'codeNoConsent'),
    codePartial: text(body, 'codePartial'),
    sandbox: checked(body, 'sandbox'),
    comparisonsPerHit: text(body, 'comparisonsPerHit'),
    addressRatersPerWindow: text(body, 'addressRatersPerWindow'),
    addressWindowMinutes: text(body, 'addressWindowMinutes'),
    addressActiveRaters: text(body, 'addressActiveRaters'),
    estimatedMinutes: text(body, 'estimatedMinutes'),
    pay: text(body, 'pay'),
    bonusFixed: text(body, 'bonusFixed'),
    bonusPerJudgment: text(body, 'bonusPerJudgment'),
    screenOutPay: text(body, 'screenOutPay'),
    mturk: text(body, 'mturk'),
    consent: text(body, 'consent'),
    instructions: text(body, 'instructions'),
    blockParticipantsOf: list(body, 'blockParticipantsOf'),
  };
}

/** A number field: empty means "use the default"; anything else is passed on for the schema to judge. */
function num(value: string): number | string | undefined {
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : trimmed;
}

const optional = (value: string) => (value.trim() === '' ? undefined : value.trim());

/** One comparison per line, written "A vs B" (or "A, B"). */
export function parseComparisonLines(textValue: string): string[][] {
  return textValue
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => line.split(/\s+vs\.?\s+|\s*,\s*/i).map((part) => part.trim()));
}

function parseScenarios(value: string): string | string[] | undefined {
  const parts = value.split(/[\s,]+/).filter((p) => p !== '');
  if (parts.length === 0) return undefined;
  return parts.length === 1 ? parts[0] : parts;
}

/**
 * The form's questions as the settings' `questions`, or null when it asks the one question `natural` the way the
 * single `question` setting does (then `question`, `allowTie` and `reason` carry it, as before issue 16).
 */
function questionsOf(form: BatchFormValues): Record<string, unknown>[] | null {
  const firstId = form.questionId.trim() || DEFAULT_QUESTION_ID;
  const firstKind = realismOf(form.questionKind, form.questionReal, form.questionConfidence);
  if (form.moreQuestions.length === 0 && firstId === DEFAULT_QUESTION_ID && !form.questionList && Object.keys(firstKind).length === 0) return null;
  const first = { id: firstId, text: optional(form.question) ?? DEFAULT_QUESTION, allowTie: form.allowTie, reason: optional(form.reason), ...firstKind };
  const rest = form.moreQuestions.map((q) => ({ id: q.id.trim(), text: q.text, allowTie: q.allowTie, reason: optional(q.reason), ...realismOf(q.kind, q.real, q.confidence) }));
  return [first, ...rest];
}

/** A question's kind fields (issue 53) as the settings take them: none at all for a preference question. */
function realismOf(kind: string, real: string, confidence: string): Record<string, string> {
  if (optional(kind) !== 'which-is-real') return optional(kind) && kind.trim() !== 'preference' ? { kind: kind.trim() } : {};
  const fields: Record<string, string> = { kind: 'which-is-real' };
  if (optional(real)) fields.real = real.trim();
  if (optional(confidence)) fields.confidence = confidence.trim();
  return fields;
}

/** The settings object the form describes (unvalidated: the batch schema validates it). */
export function formToSettings(form: BatchFormValues): Record<string, unknown> {
  const drop = <T extends Record<string, unknown>>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  const questions = questionsOf(form);
  return drop({
    name: form.name,
    runs: form.runs,
    comparisons: parseComparisonLines(form.comparisons),
    scenarios: parseScenarios(form.scenarios),
    judgmentsPerPair: num(form.judgmentsPerPair),
    // With `questions`, the schema fills question, allowTie and reason from the first one.
    question: questions ? undefined : optional(form.question),
    questions: questions ?? undefined,
    context: optional(form.context),
    allowTie: questions ? undefined : form.allowTie,
    reason: questions ? undefined : optional(form.reason),
    allowSameSample: form.allowSameSample,
    equivalenceMargin: num(form.equivalenceMargin),
    onboarding: form.onboardingEnabled ? drop({ pairs: num(form.onboardingPairs), threshold: num(form.onboardingThreshold) }) : null,
    attentionChecks: form.attentionEnabled ? drop({ rate: num(form.attentionRate), maxFailures: num(form.attentionMaxFailures) }) : null,
    perRaterCap: num(form.perRaterCap),
    plannedRaters: num(form.plannedRaters),
    leaseMinutes: num(form.leaseMinutes),
    provider: {
      kind: optional(form.providerKind) ?? 'link',
      params: drop({ participant: optional(form.paramParticipant), study: optional(form.paramStudy), session: optional(form.paramSession) }),
      completionCodes: drop({
        completed: optional(form.codeCompleted),
        screenedOut: optional(form.codeScreenedOut),
        noConsent: optional(form.codeNoConsent),
        partial: optional(form.codePartial),
      }),
      screenOutPay: optional(form.screenOutPay),
      sandbox: form.sandbox,
      comparisonsPerHit: num(form.comparisonsPerHit),
    },
    addressLimits: drop({
      ratersPerWindow: num(form.addressRatersPerWindow),
      windowMinutes: num(form.addressWindowMinutes),
      activeRaters: num(form.addressActiveRaters),
    }),
    estimatedMinutes: num(form.estimatedMinutes),
    pay: form.pay.trim(),
    bonus: optional(form.bonusFixed) || optional(form.bonusPerJudgment) ? drop({ fixed: optional(form.bonusFixed), perJudgment: optional(form.bonusPerJudgment) }) : null,
    mturk: jsonField(form.mturk),
    consent: form.consent,
    instructions: form.instructions,
    blockParticipantsOf: form.blockParticipantsOf.map((id) => num(id)),
  });
}

type QuestionSettings = NonNullable<BatchSettings['questions']>[number] | undefined;
const kindOf = (q: QuestionSettings) => (q?.kind === 'which-is-real' ? 'which-is-real' : '');
const confidenceOf = (q: QuestionSettings) => (q?.kind === 'which-is-real' ? (q.confidence ?? '') : '');

/** The form's values for existing settings (edit page, clone). */
export function settingsToForm(settings: BatchSettings | BatchSettingsInput): BatchFormValues {
  const s = settings as BatchSettings;
  return {
    name: s.name,
    runs: s.runs ?? [],
    comparisons: (s.comparisons ?? []).map(([a, b]) => `${a} vs ${b}`).join('\n'),
    scenarios: s.scenarios === undefined ? 'all' : typeof s.scenarios === 'string' ? s.scenarios : s.scenarios.join(', '),
    judgmentsPerPair: String(s.judgmentsPerPair ?? ''),
    question: s.questions?.[0]?.text ?? s.question ?? '',
    questionId: s.questions?.[0]?.id ?? DEFAULT_QUESTION_ID,
    questionKind: kindOf(s.questions?.[0]),
    questionReal: s.questions?.[0]?.real ?? '',
    questionConfidence: confidenceOf(s.questions?.[0]),
    equivalenceMargin: s.equivalenceMargin == null ? '' : String(s.equivalenceMargin),
    moreQuestions: (s.questions ?? []).slice(1).map((q) => ({
      id: q.id,
      text: q.text,
      allowTie: Boolean(q.allowTie),
      reason: q.reason ?? '',
      kind: kindOf(q),
      real: q.real ?? '',
      confidence: confidenceOf(q),
    })),
    questionList: s.questions != null,
    context: s.context ?? '',
    allowTie: Boolean(s.allowTie),
    reason: s.reason ?? '',
    allowSameSample: Boolean(s.allowSameSample),
    onboardingEnabled: s.onboarding != null,
    onboardingPairs: String(s.onboarding?.pairs ?? ''),
    onboardingThreshold: String(s.onboarding?.threshold ?? ''),
    attentionEnabled: s.attentionChecks != null,
    attentionRate: String(s.attentionChecks?.rate ?? ''),
    attentionMaxFailures: String(s.attentionChecks?.maxFailures ?? ''),
    perRaterCap: String(s.perRaterCap ?? ''),
    plannedRaters: s.plannedRaters == null ? '' : String(s.plannedRaters),
    leaseMinutes: String(s.leaseMinutes ?? ''),
    providerKind: s.provider?.kind ?? 'link',
    paramParticipant: s.provider?.params?.participant ?? '',
    paramStudy: s.provider?.params?.study ?? '',
    paramSession: s.provider?.params?.session ?? '',
    codeCompleted: s.provider?.completionCodes?.completed ?? '',
    codeScreenedOut: s.provider?.completionCodes?.screenedOut ?? '',
    codeNoConsent: s.provider?.completionCodes?.noConsent ?? '',
    codePartial: s.provider?.completionCodes?.partial ?? '',
    sandbox: Boolean(s.provider?.sandbox),
    comparisonsPerHit: String(s.provider?.comparisonsPerHit ?? ''),
    addressRatersPerWindow: String(s.addressLimits?.ratersPerWindow ?? ''),
    addressWindowMinutes: String(s.addressLimits?.windowMinutes ?? ''),
    addressActiveRaters: String(s.addressLimits?.activeRaters ?? ''),
    estimatedMinutes: String(s.estimatedMinutes ?? ''),
    pay: s.pay ?? '',
    bonusFixed: s.bonus?.fixed ?? '',
    bonusPerJudgment: s.bonus?.perJudgment ?? '',
    screenOutPay: s.provider?.screenOutPay ?? '',
    mturk: s.mturk ? JSON.stringify(s.mturk, null, 2) : '',
    consent: s.consent ?? '',
    instructions: s.instructions ?? '',
    blockParticipantsOf: (s.blockParticipantsOf ?? []).map(String),
  };
}

/**
 * Conditions named in the form's comparisons that no chosen run has a completed dialogue in: a typo there would
 * otherwise give a silent preview of zero pairs. Malformed conditions are left to the batch schema's message.
 */
export function conditionsMissingFromRuns(form: BatchFormValues, runChoices: RunChoice[]): { missing: string[]; available: string[] } {
  const chosen = runChoices.filter((r) => form.runs.includes(r.name) || form.runs.includes(String(r.id)));
  const available = [...new Set(chosen.flatMap((r) => r.conditions))].sort();
  if (chosen.length === 0) return { missing: [], available };
  const named = parseComparisonLines(form.comparisons)
    .flat()
    .map((text) => parseCondition(text))
    .filter((c) => c !== null)
    .map(formatCondition);
  return { missing: [...new Set(named.filter((c) => !available.includes(c)))], available };
}
