import { z } from 'zod';
import { parseInput } from '../web/validate.js';

export const pageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  per_page: z.coerce.number().int().min(1).max(500).default(50),
});

export type Page = { page: number; perPage: number; offset: number };

/** `?page=&per_page=` validated; the same on console lists and API lists. */
export function parsePage(query: unknown, defaultPerPage = 50): Page {
  const input = parseInput(pageQuerySchema.extend({ per_page: z.coerce.number().int().min(1).max(500).default(defaultPerPage) }), query, 'pagination');
  return { page: input.page, perPage: input.per_page, offset: (input.page - 1) * input.per_page };
}
