import { type BatchSettings, batchSettingsSchema, partnerSchema, roleplayOf, turnsSchema } from '../batches/batch.schema.js';
import { roleplaySessionTime } from '../batches/minimum-time.js';
import type { FieldErrors } from '../web/field-errors.js';
import { batchFormErrors } from './batch-form-errors.js';
import { num, optional, parseScenarios, text } from './batch-form.js';

// The console's role-play batch form (issue 52): flat HTML fields mapped to the settings object that
// `batches create --from FILE.json` takes with "task": "roleplay", and validated by the same batch schema, so the
// form and the CLI's file can never disagree about what is valid or what a batch holds.

export const ROLEPLAY_FIELDS = [
  'name',
  'run',
  'scenarios',
  'waitSeconds',
  'fallbackModel',
  'waitBonusPerMinute',
  'waitBonusAfterSeconds',
  'turnsMax',
  'turnsMin',
  'turnSeconds',
  'estimatedMinutes',
  'pay',
  'consent',
  'instructions',
  'providerKind',
  'plannedRaters',
  'codeCompleted',
  'codeScreenedOut',
  'codeNoConsent',
  'codeNoPartner',
] as const;

/** What the form holds, as typed (every field a string, so a refused form shows back exactly what was typed). */
export type RoleplayFormValues = Record<(typeof ROLEPLAY_FIELDS)[number], string>;

export function readRoleplayForm(body: Record<string, unknown>): RoleplayFormValues {
  return Object.fromEntries(ROLEPLAY_FIELDS.map((field) => [field, text(body, field)])) as RoleplayFormValues;
}

/** The form of a new role-play batch: the schema's defaults, and a promise of the time a session can take with them. */
export function defaultRoleplayForm(): RoleplayFormValues {
  const partner = partnerSchema.parse({});
  const turns = turnsSchema.parse({});
  const blank = Object.fromEntries(ROLEPLAY_FIELDS.map((field) => [field, ''])) as RoleplayFormValues;
  return {
    ...blank,
    scenarios: 'all',
    waitSeconds: String(partner.waitSeconds),
    turnsMax: String(turns.max),
    turnsMin: String(turns.min),
    turnSeconds: String(turns.turnSeconds),
    estimatedMinutes: String(roleplaySessionTime({ partner, turns }).minutes),
    providerKind: 'link',
  };
}

const drop = <T extends Record<string, unknown>>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** The settings object the form describes (unvalidated: the batch schema validates it). */
export function roleplayFormToSettings(form: RoleplayFormValues): Record<string, unknown> {
  const fallback = optional(form.fallbackModel);
  const bonus = optional(form.waitBonusPerMinute);
  return drop({
    name: form.name,
    task: 'roleplay',
    run: optional(form.run),
    scenarios: parseScenarios(form.scenarios),
    partner: drop({
      waitSeconds: num(form.waitSeconds),
      fallback: fallback ? { model: fallback } : null,
      waitBonus: bonus ? drop({ perMinute: bonus, afterSeconds: num(form.waitBonusAfterSeconds) }) : null,
    }),
    turns: drop({ max: num(form.turnsMax), min: num(form.turnsMin), turnSeconds: num(form.turnSeconds) }),
    estimatedMinutes: num(form.estimatedMinutes),
    pay: form.pay.trim(),
    consent: form.consent,
    instructions: form.instructions,
    plannedRaters: num(form.plannedRaters),
    provider: {
      kind: optional(form.providerKind) ?? 'link',
      completionCodes: drop({
        completed: optional(form.codeCompleted),
        screenedOut: optional(form.codeScreenedOut),
        noConsent: optional(form.codeNoConsent),
        noPartner: optional(form.codeNoPartner),
      }),
    },
  });
}

// Where each role-play setting is typed: a zod issue's path, mapped to its input (the rest as the batch form maps them).
const FIELD_OF_PATH: Record<string, string> = {
  'partner.waitSeconds': 'waitSeconds',
  'partner.fallback': 'fallbackModel',
  'partner.waitBonus.perMinute': 'waitBonusPerMinute',
  'partner.waitBonus.afterSeconds': 'waitBonusAfterSeconds',
  'partner.waitBonus': 'waitBonusPerMinute',
  partner: 'waitSeconds',
  'turns.max': 'turnsMax',
  'turns.min': 'turnsMin',
  'turns.turnSeconds': 'turnSeconds',
  turns: 'turnsMax',
  'provider.completionCodes.noPartner': 'codeNoPartner',
};

/** The role-play form's problems keyed by input name, or null when the settings are valid. */
export function roleplayFormErrors(settings: Record<string, unknown>): FieldErrors | null {
  const parsed = batchSettingsSchema.safeParse(settings);
  if (parsed.success) return null;
  const errors: FieldErrors = { ...batchFormErrors(settings) };
  delete errors.partner;
  delete errors.turns;
  for (const issue of parsed.error.issues) {
    const path = issue.path.map(String);
    const field = FIELD_OF_PATH[path.slice(0, 3).join('.')] ?? FIELD_OF_PATH[path.slice(0, 2).join('.')] ?? FIELD_OF_PATH[path[0] ?? ''];
    if (field) errors[field] ??= issue.message;
  }
  return errors;
}

/** The form's values for a stored role-play batch (its edit page). */
export function settingsToRoleplayForm(s: BatchSettings): RoleplayFormValues {
  const roleplay = roleplayOf(s);
  const codes = s.provider.completionCodes;
  const shown = (value: number | string | null | undefined) => (value === null || value === undefined ? '' : String(value));
  return {
    name: s.name,
    run: s.run ?? '',
    scenarios: typeof s.scenarios === 'string' ? s.scenarios : s.scenarios.join(', '),
    waitSeconds: shown(roleplay?.partner.waitSeconds),
    fallbackModel: roleplay?.partner.fallback?.model ?? '',
    waitBonusPerMinute: roleplay?.partner.waitBonus?.perMinute ?? '',
    waitBonusAfterSeconds: shown(roleplay?.partner.waitBonus?.afterSeconds),
    turnsMax: shown(roleplay?.turns.max),
    turnsMin: shown(roleplay?.turns.min),
    turnSeconds: shown(roleplay?.turns.turnSeconds),
    estimatedMinutes: String(s.estimatedMinutes),
    pay: s.pay,
    consent: s.consent,
    instructions: s.instructions,
    providerKind: s.provider.kind,
    plannedRaters: shown(s.plannedRaters),
    codeCompleted: codes.completed ?? '',
    codeScreenedOut: codes.screenedOut ?? '',
    codeNoConsent: codes.noConsent ?? '',
    codeNoPartner: codes.noPartner ?? '',
  };
}

/**
 * The stored settings with the form's over them: what the form does not show (the partner's away time and address
 * rule, the fallback's endpoint and pace, the provider's parameters and other codes, address limits, blocked
 * batches) is kept as it was, so an edit in the console changes only what it shows.
 */
export function mergeRoleplayEdit(stored: BatchSettings, form: RoleplayFormValues): Record<string, unknown> {
  const edited = roleplayFormToSettings(form);
  const partner = (edited.partner ?? {}) as Record<string, unknown>;
  const fallback = partner.fallback as { model: string } | null;
  const storedPartner = stored.partner ?? {};
  const provider = edited.provider as { kind: string; completionCodes: Record<string, string> };
  const { completed: _c, screenedOut: _s, noConsent: _n, noPartner: _p, ...otherCodes } = stored.provider.completionCodes;
  return {
    ...stored,
    ...edited,
    // A number left empty keeps what was stored; planned places left empty are none.
    plannedRaters: edited.plannedRaters ?? null,
    partner: { ...storedPartner, ...partner, fallback: fallback ? { ...(stored.partner?.fallback ?? {}), model: fallback.model } : null },
    turns: { ...stored.turns, ...(edited.turns as Record<string, unknown>) },
    provider: { ...stored.provider, kind: provider.kind, completionCodes: { ...otherCodes, ...provider.completionCodes } },
  };
}
