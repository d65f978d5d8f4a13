import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { BatchSettings } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { listTurns } from '../generation/dialogue.queries.js';
import { type RaterTurn, renderTurnsForRater } from '../generation/render-turns.js';
import { getCast, getCharacter, getScenario, type CharacterRow } from '../scenarios/scenario.queries.js';
import { markupAsPlainText } from '../scenarios/goal-markup.js';
import { characterFacts } from '../scenarios/character-facts.js';
import { createTtlMemo } from './ttl-memo.js';
import { createTemplateCompiler } from '../web/ejs-templates.js';
import { flatCopy } from '../web/flat-copy.js';

export type CharacterView = {
  name: string;
  facts: string;
  publicInfo: string;
  personality: string;
  decisionStyle: string;
  secret: string;
  goal: string | null;
};

export type SpeakerView = { name: string; marker: string };

/** Initials as a badge; two characters with the same initials are told apart by their number. */
export function chooseMarkers(names: [string, string]): [string, string] {
  const initials = names.map((n) =>
    n
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, 2)
      .map((w) => w.charAt(0).toUpperCase())
      .join(''),
  );
  const [a, b] = [initials[0] || '1', initials[1] || '2'];
  return a === b ? [`${a}1`, `${b}2`] : [a, b];
}

/**
 * What a rater sees of a comparison: the context the batch chooses and the two dialogues in screen order.
 * Built from text only: no mode, model, run, pair or dialogue id ever enters it (blinding, issue 4).
 */
export type ComparisonView = {
  scenario: { title: string; context: string };
  /** Character 1 then 2: the name and the short badge that marks the character's turns in both conversations. */
  speakers: [SpeakerView, SpeakerView];
  characters: CharacterView[] | null;
  left: RaterTurn[];
  right: RaterTurn[];
};

function describeCharacter(c: CharacterRow | undefined, goal: string | null): CharacterView {
  const name = c ? `${c.first_name} ${c.last_name}`.trim() : 'Unknown';
  const facts = c ? characterFacts(c) : '';
  return {
    name,
    facts,
    publicInfo: c?.public_info ?? '',
    personality: c?.personality_and_values ?? '',
    decisionStyle: c?.decision_making_style ?? '',
    secret: c?.secret ?? '',
    goal,
  };
}

type ViewPair = { dialogue_a_id: number; dialogue_b_id: number; scenario_id: string; cast_id: number };

/** What a comparison shows around its two dialogues: the scenario, who speaks (names and badges), the characters. */
type ViewContext = Omit<ComparisonView, 'left' | 'right'>;

function buildViewContext(db: Db, pair: ViewPair, context: BatchSettings['context']): ViewContext {
  const scenario = getScenario(db, pair.scenario_id);
  const cast = getCast(db, pair.cast_id);
  const chars = [cast ? getCharacter(db, cast.character_1_id) : undefined, cast ? getCharacter(db, cast.character_2_id) : undefined];
  const names: [string, string] = [describeCharacter(chars[0], null).name, describeCharacter(chars[1], null).name];
  const withGoals = context === 'scenario+profiles+goals';
  const characters =
    context === 'scenario'
      ? null
      : [
          // Sotopia's goal markup (<extra_info>, <p viewer=...>) reaches raters as plain text.
          describeCharacter(chars[0], withGoals ? markupAsPlainText(scenario?.goal_1 ?? '') : null),
          describeCharacter(chars[1], withGoals ? markupAsPlainText(scenario?.goal_2 ?? '') : null),
        ];
  const markers = chooseMarkers(names);
  return {
    scenario: { title: scenario?.title ?? '', context: markupAsPlainText(scenario?.context ?? '') },
    speakers: [
      { name: names[0], marker: markers[0] },
      { name: names[1], marker: markers[1] },
    ],
    characters,
  };
}

/** A dialogue's turns as raters read them, under the names the view shows. */
const turnsOnScreen = (db: Db, view: ViewContext, dialogueId: number): RaterTurn[] =>
  renderTurnsForRater(listTurns(db, dialogueId), [view.speakers[0].name, view.speakers[1].name]);
const dialoguesOnScreen = (pair: ViewPair, leftSide: 'a' | 'b'): [number, number] => (leftSide === 'a' ? [pair.dialogue_a_id, pair.dialogue_b_id] : [pair.dialogue_b_id, pair.dialogue_a_id]);

export function buildComparisonView(db: Db, pair: ViewPair, leftSide: 'a' | 'b', context: BatchSettings['context']): ComparisonView {
  const view = buildViewContext(db, pair, context);
  const [leftId, rightId] = dialoguesOnScreen(pair, leftSide);
  return { ...view, left: turnsOnScreen(db, view, leftId), right: turnsOnScreen(db, view, rightId) };
}

/**
 * The parts of a comparison page that depend on its view alone, already rendered (HTML, every text escaped): all the
 * page needs of the view, so the view itself (both dialogues' turn objects) is not kept beside it.
 */
export type RenderedComparisonView = { html: { context: string; left: string; right: string } };

/**
 * The page parts a view alone decides (views/rater/partials/context.ejs and conversation.ejs), compiled once: rendered
 * once per remembered view, not on every page (issue 12: both conversations' turns were escaped again on each view).
 * Each is kept as a flat copy (flatCopy says why: as rendered, each held about 1.6 times its text).
 */
function compileViewParts() {
  const viewsDir = fileURLToPath(new URL('../../views/', import.meta.url));
  const templates = createTemplateCompiler(viewsDir);
  const context = templates.template(`${viewsDir}rater/partials/context.ejs`);
  const conversation = templates.template(`${viewsDir}rater/partials/conversation.ejs`);
  return {
    context: (view: ViewContext): string => flatCopy(context({ view }) as string),
    conversation: (view: ViewContext, position: 1 | 2, turns: RaterTurn[]): string =>
      flatCopy(conversation({ view, id: `conversation-${position}`, label: `Conversation ${position}`, turns }) as string),
  };
}

/**
 * Comparison views remembered for 30 s, with their rendered parts: a batch's pairs are shown again and again, and
 * building a view reads six rows and both dialogues' turns (issue 12). An edit of a scenario or character reaches
 * raters' pages within the 30 s. A dialogue's rendered turns are kept longer, five minutes, by the names and badges they
 * are shown with and their place on the screen: a view made again after its 30 s reads the four rows around the
 * dialogues, not their turns (a view a second rebuilt on average was 3% of the rater path's CPU). A pair's dialogues
 * are complete ones, whose turns no longer change (only a failed dialogue is generated again); a renamed character
 * makes new keys at once.
 */
export function createComparisonViewMemo(db: Db, options: { ttlMs?: number; conversationTtlMs?: number; now?: () => number } = {}) {
  const memo = createTtlMemo<RenderedComparisonView>({ ttlMs: options.ttlMs ?? 30_000, max: 2_000, now: options.now });
  const conversations = createTtlMemo<string>({ ttlMs: options.conversationTtlMs ?? 300_000, max: 4_000, now: options.now });
  const parts = compileViewParts();
  // The context part is the same for both sides of a pair and for every pair of a scenario and cast: one copy, found by
  // what it is rendered from, so that an edit read into a view makes a new key (1,800 copies of 3.8 KB were 7 MB under
  // the rater benchmark's 900 pairs, issue 12).
  const contexts = createTtlMemo<string>({ ttlMs: options.ttlMs ?? 30_000, max: 2_000, now: options.now });
  const contextPart = (view: ViewContext) => contexts(createHash('sha1').update(JSON.stringify(view)).digest('base64'), () => parts.context(view));
  return (pair: ViewPair, leftSide: 'a' | 'b', context: BatchSettings['context']): RenderedComparisonView =>
    memo(`${pair.dialogue_a_id}|${pair.dialogue_b_id}|${pair.scenario_id}|${pair.cast_id}|${leftSide}|${context}`, () => {
      const view = buildViewContext(db, pair, context);
      const speakers = JSON.stringify(view.speakers);
      const conversation = (dialogueId: number, position: 1 | 2) =>
        conversations(`${dialogueId}|${position}|${speakers}`, () => parts.conversation(view, position, turnsOnScreen(db, view, dialogueId)));
      const [leftId, rightId] = dialoguesOnScreen(pair, leftSide);
      return { html: { context: contextPart(view), left: conversation(leftId, 1), right: conversation(rightId, 2) } };
    });
}
