import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createTemplateCompiler } from '../../src/web/ejs-templates.js';
import { flatCopy } from '../../src/web/flat-copy.js';

// A collection on demand, to measure what kept strings hold: the flag reaches contexts made after it is set.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** Heap bytes `make()`'s result holds while it is kept, measured after full collections on both sides. */
function heldBy(make: () => unknown): number {
  collect();
  collect();
  const before = process.memoryUsage().heapUsed;
  const kept = make();
  collect();
  collect();
  const held = process.memoryUsage().heapUsed - before;
  // Read after the measure, so that what `make()` returned is still referenced while it is measured.
  expect(kept).toBeDefined();
  return held;
}

const viewsDir = fileURLToPath(new URL('../../views/', import.meta.url));
const conversation = createTemplateCompiler(viewsDir).template(`${viewsDir}rater/partials/conversation.ejs`);
const speakers = [
  { name: 'Ana Ito', marker: 'AI' },
  { name: 'Ben Okoro', marker: 'BO' },
];

/** Conversation `n` as the comparison page renders it: 12 turns of about 30 words. */
function renderConversation(n: number): string {
  const turns = Array.from({ length: 12 }, (_, t) => ({
    kind: 'speak',
    speaker: (t % 2) + 1,
    name: speakers[t % 2]?.name,
    text: `Turn ${t} of conversation ${n}: I understand your position, and I would like to find a way that works for both of us & the "others" <too>. Could we meet halfway on the price, say by Friday?`,
  }));
  return conversation({ view: { speakers }, id: `conversation-${(n % 2) + 1}`, label: `Conversation ${(n % 2) + 1}`, turns }) as string;
}

describe('flatCopy', () => {
  it('flatCopy, for text beyond Latin-1, an astral character and a lone surrogate, gives the same code units', () => {
    for (const text of ['', 'plain', 'Zoë — “quoted” 漢字', 'emoji 🙂 end', 'lone \ud800 high', 'lone \udc00 low', `${'a'.repeat(5000)}\ud83d`]) {
      const copy = flatCopy(text);
      expect(copy).toBe(text);
      expect(copy.length).toBe(text.length);
    }
  });

  it("flatCopy, of the comparison page's rendered conversations, holds about their length where the strings as rendered hold half as much again", () => {
    const count = 400;
    const chars = Array.from({ length: count }, (_, n) => renderConversation(n).length).reduce((a, b) => a + b, 0);
    expect(chars / count).toBeGreaterThan(3000);
    const asRendered = heldBy(() => Array.from({ length: count }, (_, n) => renderConversation(n)));
    const copied = heldBy(() => Array.from({ length: count }, (_, n) => flatCopy(renderConversation(n))));
    // One byte a character (the text is Latin-1) and a header per string; as rendered, a node and a string per piece.
    expect(copied).toBeLessThan(1.15 * chars);
    expect(asRendered).toBeGreaterThan(1.4 * chars);
  });
});
