import type { z } from 'zod';
import { HttpError } from './http-error.js';

/** Formats zod issues as one sentence a person can act on: "field: problem; other: problem". */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

/** Validates input at the HTTP edge; failures become a 400 with the fields named. */
export function parseInput<S extends z.ZodType>(schema: S, data: unknown, what = 'input'): z.infer<S> {
  const result = schema.safeParse(data);
  if (!result.success) throw new HttpError(400, `Invalid ${what}: ${describeIssues(result.error)}`);
  return result.data;
}
