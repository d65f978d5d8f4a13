import { createRequire } from 'node:module';
import type * as LanguageCommon from '@zxcvbn-ts/language-common';
import type { Role } from './user.queries.js';

// Which passwords an account may have (NIST SP 800-63B §5.1.1.2: a minimum length, no composition rules, and a
// check against passwords known to be common). The list is zxcvbn-ts's ~49,000 most common passwords from breaches.

export const MIN_LENGTH: Record<Role, number> = { researcher: 8, admin: 12 };
export const MAX_LENGTH = 200;

let common: Set<string> | undefined;

// Loaded on the first password check, not with the server: the list takes 6 MB that a running study never needs.
const requireHere = createRequire(import.meta.url);

function isCommon(candidate: string): boolean {
  common ??= new Set((requireHere('@zxcvbn-ts/language-common') as typeof LanguageCommon).dictionary['passwords-common']);
  return common.has(candidate);
}

/** True for one character or a short chunk repeated (aaaaaaaa, abababab), or a run of the alphabet, digits or keyboard. */
function isTrivial(password: string): boolean {
  const lower = password.toLowerCase();
  for (let size = 1; size <= 4; size++) {
    const chunk = lower.slice(0, size);
    if (lower.length >= size * 2 && chunk.repeat(Math.ceil(lower.length / size)).slice(0, lower.length) === lower) return true;
  }
  const runs = ['abcdefghijklmnopqrstuvwxyz', '01234567890', 'qwertyuiopasdfghjklzxcvbnm'];
  return runs.some((run) => run.includes(lower) || [...run].reverse().join('').includes(lower));
}

/** Why `password` may not be used for an account of `role`, or null when it may. */
export function passwordProblem(password: string, role: Role, email?: string): string | null {
  const min = MIN_LENGTH[role];
  if ([...password].length < min) return `must be at least ${min} characters${role === 'admin' ? ' for an admin' : ''}`;
  if (password.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters`;
  const lower = password.toLowerCase();
  // "Password2024!" is "password" with the usual decoration: strip a short tail of digits and symbols too.
  const stem = lower.replace(/[\d\W_]{1,4}$/u, '');
  if (isTrivial(password) || isCommon(lower) || (stem.length >= 4 && isCommon(stem)))
    return 'is one of the most common passwords or a simple pattern; choose a longer phrase of unrelated words';
  const local = email?.split('@')[0]?.toLowerCase();
  if (local && local.length >= 4 && lower.includes(local)) return 'must not contain the account’s email name';
  return null;
}
