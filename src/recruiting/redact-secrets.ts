/** What stands in a text for a secret taken out of it. */
export const REDACTED = '[redacted]';

/** Secrets shorter than this are not searched for (a one-letter "token" would blank out every text). */
const MIN_SECRET_LENGTH = 6;

/** The text with every occurrence of each secret replaced, so no API token reaches the database, a log or a message. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  return out;
}

/** A JSON-like value with every string (keys included) redacted, for request summaries and platform answers. */
export function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactText(k, secrets), redactValue(v, secrets)]));
  }
  return value;
}
