import { z } from 'zod';

export const RELATIONSHIPS = ['stranger', 'know_by_name', 'acquaintance', 'friend', 'romantic', 'family'] as const;
export type Relationship = (typeof RELATIONSHIPS)[number];
export const CATEGORIES = ['cooperative', 'competitive', 'mixed'] as const;
export type Category = (typeof CATEGORIES)[number];

export const slugSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'must be a slug: lowercase letters, digits, "-" or "_"')
  .max(120);

const text = (max: number) => z.string().trim().max(max);

export const characterSchema = z.strictObject({
  id: slugSchema,
  firstName: text(100).min(1, 'is required'),
  lastName: text(100).default(''),
  age: z.number().int().min(0).max(150).nullable().default(null),
  gender: text(100).default(''),
  pronouns: text(100).default(''),
  occupation: text(200).default(''),
  publicInfo: text(4000).default(''),
  personalityAndValues: text(4000).default(''),
  decisionMakingStyle: text(500).default(''),
  secret: text(4000).default(''),
  bigFive: text(1000).default(''),
  moralValues: z.array(text(100)).default([]),
  schwartzValues: z.array(text(100)).default([]),
});
export type Character = z.infer<typeof characterSchema>;

// A private fact of one side, marked so that dialogue metrics can find it in the text (information leakage,
// Zhou et al. 2024 §5): the mutual friend's name in MutualFriends, each side's target price in bargaining.
export const FACT_KINDS = ['mutual_friend', 'friend', 'target_price', 'reservation_price', 'other'] as const;
export const factSchema = z.strictObject({
  owner: z.union([z.literal(1), z.literal(2)]),
  kind: z.enum(FACT_KINDS),
  value: text(200).min(1, 'is required'),
  aliases: z.array(text(200).min(1)).default([]),
});
export type Fact = z.infer<typeof factSchema>;

/** scenario_facts.aliases as read back: the list of strings written from a fact's `aliases`. */
export const factAliasesSchema = z.array(z.string());

export const scenarioSchema = z.strictObject({
  id: slugSchema,
  title: text(300).min(1, 'is required'),
  category: z.enum(CATEGORIES),
  context: text(8000).min(1, 'is required'),
  relationship: z.enum(RELATIONSHIPS),
  goals: z.tuple([text(8000).min(1, 'is required'), text(8000).min(1, 'is required')]),
  casts: z
    .array(z.tuple([slugSchema, slugSchema]).refine(([x, y]) => x !== y, 'a character cannot play both roles'))
    .min(1, 'needs at least one pair of characters'),
  facts: z.array(factSchema).optional(),
});
export type Scenario = z.infer<typeof scenarioSchema>;

/** A record's fields as a message lists them: `"name"`, with `?` after those that may be left out. */
export function fieldList(schema: z.ZodObject): string {
  return Object.entries(schema.shape)
    .map(([key, field]) => `"${key}"${(field as z.ZodType).safeParse(undefined).success ? '?' : ''}`)
    .join(', ');
}

/**
 * The shape of simarena's library records, named in messages that refuse a file or record of another shape (issue 40:
 * a wrong shape was refused without saying which one is expected). Written from the schemas, so it cannot drift.
 */
export const LIBRARY_RECORD_SHAPES = `a simarena character {${fieldList(characterSchema)}} or scenario {${fieldList(scenarioSchema)}}, with "goals" two strings and "casts" a list of [character 1 id, character 2 id] (see docs/reference/scenario-format.md)`;

/** Converts a relationship written as Sotopia's integer (0-5) or name into ours. */
export function parseRelationship(value: unknown): Relationship | null {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < RELATIONSHIPS.length) {
    return RELATIONSHIPS[value] ?? null;
  }
  if (typeof value === 'string') {
    const key = value.trim().toLowerCase().replace(/[\s-]+/g, '_');
    // Sotopia's enum names for the two closest relationships.
    if (key === 'romantic_relationship') return 'romantic';
    if (key === 'family_member') return 'family';
    return (RELATIONSHIPS as readonly string[]).includes(key) ? (key as Relationship) : null;
  }
  return null;
}
