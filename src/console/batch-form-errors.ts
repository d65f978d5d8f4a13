import { batchSettingsSchema } from '../batches/batch.schema.js';
import type { FieldErrors } from '../web/field-errors.js';

// Where each setting is typed in the batch form (views/console/batch-form.ejs): a zod issue's path in the settings
// object, mapped to the input it came from, so its message can stand beside that input.
const FIELD_OF_PATH: Record<string, string> = {
  'onboarding.pairs': 'onboardingPairs',
  'onboarding.threshold': 'onboardingThreshold',
  'attentionChecks.rate': 'attentionRate',
  'attentionChecks.maxFailures': 'attentionMaxFailures',
  'provider.kind': 'providerKind',
  'provider.params.participant': 'paramParticipant',
  'provider.params.study': 'paramStudy',
  'provider.params.session': 'paramSession',
  'provider.completionCodes.completed': 'codeCompleted',
  'provider.completionCodes.screenedOut': 'codeScreenedOut',
  'provider.completionCodes.noConsent': 'codeNoConsent',
  'provider.sandbox': 'sandbox',
  'provider.screenOutPay': 'screenOutPay',
  'addressLimits.ratersPerWindow': 'addressRatersPerWindow',
  'addressLimits.windowMinutes': 'addressWindowMinutes',
  'addressLimits.activeRaters': 'addressActiveRaters',
  'bonus.fixed': 'bonusFixed',
  'bonus.perJudgment': 'bonusPerJudgment',
  bonus: 'bonusFixed',
};

/**
 * The input of a question's setting: question 1 is typed in the first question's fields (`question`, `questionId`,
 * `allowTie`, `reason`), question n ≥ 2 in its row (`q2Text`, ...; rows are closed up when read, so index = row).
 */
function questionField(path: string[]): string {
  const index = Number(path[1]);
  const part = path[2];
  if (!Number.isInteger(index)) return 'questions';
  const realism: Record<string, string> = { kind: 'Kind', real: 'Real', confidence: 'Confidence' };
  if (index === 0) return part === 'id' ? 'questionId' : part === 'text' ? 'question' : part && realism[part] ? `question${realism[part]}` : (part ?? 'question');
  const suffix = part === 'id' ? 'Id' : part === 'allowTie' ? 'AllowTie' : part === 'reason' ? 'Reason' : part && realism[part] ? realism[part] : 'Text';
  return `q${index + 1}${suffix}`;
}

/** The batch form's problems keyed by input name, or null when the settings are valid. */
export function batchFormErrors(settings: Record<string, unknown>): FieldErrors | null {
  const parsed = batchSettingsSchema.safeParse(settings);
  if (parsed.success) return null;
  const errors: FieldErrors = {};
  for (const issue of parsed.error.issues) {
    const path = issue.path.map(String);
    if (path[0] === 'questions') {
      errors[path.length > 1 ? questionField(path) : 'questions'] ??= issue.message;
      continue;
    }
    const field = FIELD_OF_PATH[path.slice(0, 3).join('.')] ?? FIELD_OF_PATH[path.slice(0, 2).join('.')] ?? path[0] ?? '_form';
    errors[field] ??= issue.message;
  }
  return errors;
}
