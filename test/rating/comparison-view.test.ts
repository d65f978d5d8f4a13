import { describe, expect, it } from 'vitest';
import { chooseMarkers, createComparisonViewMemo } from '../../src/rating/comparison-view.js';
import { raterClient, seedBatch, testApp } from './rating-fixtures.js';

describe('chooseMarkers', () => {
  it('chooseMarkers, for two names with different initials, gives each character its initials', () => {
    expect(chooseMarkers(['Ana Ito', 'ben okoro'])).toEqual(['AI', 'BO']);
  });

  it('chooseMarkers, for two names with the same initials, tells them apart by number', () => {
    expect(chooseMarkers(['Sam Lee', 'Sara Long'])).toEqual(['SL1', 'SL2']);
  });

  it('chooseMarkers, for a missing name, falls back to the character number', () => {
    expect(chooseMarkers(['', 'Mia Hall Jones'])).toEqual(['1', 'MH']);
  });
});

describe('the comparison page, from a remembered view', () => {
  it('GET /r/:batch/c/:id, when model text, the scenario and the characters hold HTML, shows all of it escaped, on a first and a remembered view alike', async () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 1, settings: { context: 'scenario+profiles+goals', perRaterCap: 1, judgmentsPerPair: 2 } });
    const hostile = (what: string) => `<img src=x onerror="alert('${what}')"><script>alert('${what}')</script>`;
    t.db.prepare("UPDATE turns SET text = :text WHERE action = 'speak'").run({ text: hostile('turn') });
    t.db.prepare('UPDATE scenarios SET title = :title, context = :context, goal_1 = :goal').run({ title: hostile('title'), context: hostile('context'), goal: hostile('goal') });
    t.db.prepare('UPDATE characters SET first_name = :name, secret = :secret').run({ name: hostile('name'), secret: hostile('secret') });

    for (const address of ['198.51.100.7', '198.51.100.8']) {
      const page = await raterClient(t.app, { address }).startRating(seeded.publicId);
      expect(page.url).toMatch(/\/c\//);
      const html = page.res.text;
      for (const what of ['turn', 'title', 'context', 'goal', 'name', 'secret']) {
        expect(html).not.toContain(`<script>alert('${what}')</script>`);
        expect(html).not.toContain(`<img src=x onerror="alert('${what}')">`);
        // Escaped where shown (goal and context markup is read as plain text first, which drops the script tag).
        expect(html).toContain(`&lt;img src=x onerror=&#34;alert(&#39;${what}&#39;)&#34;&gt;`);
      }
      // Both conversations, each in its own slot, with every turn's text.
      expect(html.match(/<li class="turn speaker-\d">/g)?.length).toBeGreaterThanOrEqual(2);
      expect(html).toContain('id="conversation-1"');
      expect(html).toContain('id="conversation-2"');
    }
  });
});

describe('remembered comparison views', () => {
  it('createComparisonViewMemo gives both sides of a pair, and another pair of its scenario and cast, the same context; a scenario edited shows once a view is made again after 30 s, on every side', () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 1 });
    type Pair = { dialogue_a_id: number; dialogue_b_id: number; scenario_id: string; cast_id: number };
    const pair = t.db.prepare<[number], Pair>('SELECT dialogue_a_id, dialogue_b_id, scenario_id, cast_id FROM pairs WHERE id = ?').get(seeded.pairIds[0] as number) as Pair;
    const swapped = { ...pair, dialogue_a_id: pair.dialogue_b_id, dialogue_b_id: pair.dialogue_a_id };
    let now = 0;
    const views = createComparisonViewMemo(t.db, { now: () => now });
    const title = (html: string) => /<h2 id="context-heading">([^<]*)</.exec(html)?.[1];

    const a = views(pair, 'a', 'scenario+profiles+goals');
    const b = views(pair, 'b', 'scenario+profiles+goals');
    const other = views(swapped, 'a', 'scenario+profiles+goals');
    expect(title(a.html.context)).toMatch(/^The situation/);
    expect(b.html.context).toBe(a.html.context);
    expect(other.html.context).toBe(a.html.context);
    // The sides swap the conversations, each rendered for its place on the screen.
    expect(b.html.left).not.toBe(a.html.left);
    expect(a.html.left).toContain('id="conversation-1"');
    expect(b.html.right).toContain('id="conversation-2"');
    // Fewer parts shown: the scenario alone.
    expect(views(pair, 'a', 'scenario').html.context).not.toContain('class="characters"');
    expect(a.html.context).toContain('class="characters"');

    t.db.prepare('UPDATE scenarios SET title = :title WHERE id = :id').run({ title: 'Edited title', id: pair.scenario_id });
    now += 29_000;
    expect(title(views(pair, 'b', 'scenario+profiles+goals').html.context)).not.toContain('Edited title');
    now += 2_000;
    for (const [p, side] of [[pair, 'a'], [pair, 'b'], [swapped, 'a']] as const) expect(title(views(p, side, 'scenario+profiles+goals').html.context)).toBe('The situation: Edited title');
  });
});
