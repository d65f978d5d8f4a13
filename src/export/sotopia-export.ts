import { characterName } from './dialogue-text.js';
import { type DialogueParts, iterateDialogueParts } from './dialogues-export.js';
import type { ExportContext } from './export-context.js';
import type { TurnRow } from '../generation/dialogue.queries.js';
import { writeChunk } from './stream-write.js';

// Dialogues as Sotopia EpisodeLog records (sotopia/database/logs.py): environment and agents are the scenario and
// character slugs (a Sotopia codename is kept as the scenario slug on import), messages are arranged by turn as
// (sender, receiver, text) with the environment's opening observation to each agent first, and action texts use
// Sotopia's own wording (`said: "..."`, `[non-verbal communication] ...`, `did nothing`, `left the conversation`).
// simarena measures human preference, not Sotopia's per-agent rewards: unless an imported dialogue carried rewards,
// `rewards` holds 0.0 placeholders (EpisodeLog requires one per agent) and `rewards_known` says so.

function actionText(turn: TurnRow): string {
  switch (turn.action) {
    case 'speak':
      return `said: "${turn.text}"`;
    case 'non-verbal':
      return `[non-verbal communication] ${turn.text}`;
    case 'action':
      return `[action] ${turn.text}`;
    case 'none':
      return 'did nothing';
    case 'leave':
      return 'left the conversation';
  }
}

function knownRewards(meta: string): unknown[] | null {
  try {
    const value = JSON.parse(meta) as { rewards?: unknown };
    return Array.isArray(value.rewards) && value.rewards.length === 2 ? value.rewards : null;
  } catch {
    return null;
  }
}

export function episodeRecord(ctx: ExportContext, { row, cast, turns }: DialogueParts) {
  const names = cast.characters.map(characterName) as [string, string];
  const goals = [cast.scenario.goal_1, cast.scenario.goal_2];
  const opening = names.map((name, i) => {
    const other = names[1 - i] as string;
    const character = cast.characters[i as 0 | 1];
    return [
      'Environment',
      name,
      [
        `Here is the context of this interaction:`,
        `Scenario: ${cast.scenario.context}`,
        `Participants: ${names[0]} and ${names[1]}`,
        `${name}'s background: ${character.public_info}`,
        `${name}'s goal: ${goals[i]}`,
        `${other}'s goal: Unknown`,
      ].join('\n'),
    ];
  });
  const rewards = knownRewards(row.meta);
  return {
    pk: `simarena-${ctx.batch.id}-${row.id}`,
    environment: cast.scenario.id,
    agents: cast.characters.map((c) => c.id),
    // Sotopia marks script-mode episodes with "script" among the tag's underscore-separated words.
    tag: `simarena_${row.mode.toLowerCase()}`,
    models: ['', row.model, row.model],
    messages: [opening, ...turns.map((t) => [[names[t.speaker - 1] ?? `Character ${t.speaker}`, 'Environment', actionText(t)]])],
    reasoning: '',
    rewards: rewards ?? [0.0, 0.0],
    rewards_prompt: '',
    simarena: {
      dialogue_id: row.id,
      run_id: row.run_id,
      run_name: row.run_name,
      mode: row.mode,
      model: row.model,
      condition: `${row.mode}:${row.model}`,
      rewards_known: rewards !== null,
    },
  };
}

/** One JSON object: `simarena` (the export's provenance) and `episodes`, written one episode at a time. */
export async function writeSotopia(ctx: ExportContext, out: NodeJS.WritableStream): Promise<number> {
  await writeChunk(out, `{"simarena":${JSON.stringify(ctx.meta)},\n"episodes":[`);
  let rows = 0;
  for (const parts of iterateDialogueParts(ctx)) {
    await writeChunk(out, `${rows === 0 ? '\n' : ',\n'}${JSON.stringify(episodeRecord(ctx, parts))}`);
    rows++;
  }
  await writeChunk(out, rows === 0 ? ']}\n' : '\n]}\n');
  return rows;
}
