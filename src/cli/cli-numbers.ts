import { CliError } from './cli-context.js';

/** A number flag, or a one-line error naming the flag. */
export function numberOption(flag: string, value: string | undefined, rule: { integer?: boolean; min?: number; max?: number } = {}): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const bounds = `${rule.min !== undefined ? ` of at least ${rule.min}` : ''}${rule.max !== undefined ? ` and at most ${rule.max}` : ''}`;
  const what = rule.integer ? 'a whole number' : 'a number';
  if (value.trim() === '' || !Number.isFinite(n) || (rule.integer && !Number.isInteger(n)) || (rule.min !== undefined && n < rule.min) || (rule.max !== undefined && n > rule.max))
    throw new CliError(`${flag} must be ${what}${bounds}, not "${value}"`);
  return n;
}
