import { z } from 'zod';
import type { AnalysisReport } from './analysis-report.js';

/**
 * analysis_cache.result as read back: its top-level shape is checked (the fields every page and the API rely on); the
 * rest is the report this version wrote. A cached row of another shape (damaged, or from another version) is not
 * served: it is recomputed.
 */
export const storedAnalysisReportSchema = z
  .looseObject({
    schema_version: z.number(),
    generated_at: z.string(),
    source: z.looseObject({ kind: z.enum(['batch', 'file']) }),
    settings: z.looseObject({}),
    n_judgments: z.number(),
    comparisons: z.array(z.looseObject({})),
    agreement: z.looseObject({}),
    // Not checked one by one: a batch of a million judgments has 50,000 raters, and a checked copy of each doubled
    // the memory a stored report takes while it is read (issue 12).
    raters: z.array(z.unknown()),
    notes: z.array(z.string()),
  })
  .transform((report) => report as unknown as AnalysisReport);
