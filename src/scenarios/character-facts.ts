import type { CharacterRow } from './scenario.queries.js';

/** A character's short facts as every page and prompt shows them: "34 years old, woman, she/her, nurse". */
export function characterFacts(c: Pick<CharacterRow, 'age' | 'gender' | 'pronouns' | 'occupation'>): string {
  return [c.age === null ? '' : `${c.age} years old`, c.gender, c.pronouns, c.occupation].filter(Boolean).join(', ');
}
