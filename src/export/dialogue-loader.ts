import type { Db } from '../db/connection.js';
import { type ChatMessage, scenarioPrompt, transcript } from './dialogue-text.js';
import { type DialogueRow, getDialogue, listTurns } from '../generation/dialogue.queries.js';
import { type DialogueCast, findDialogueCast } from './export.queries.js';

export type LoadedDialogue = { header: DialogueRow; cast: DialogueCast; prompt: ChatMessage[]; transcript: string };

/**
 * Loads dialogues for formats that print them next to each judgment. Rows arrive in pair order, so the few most
 * recent dialogues are kept and memory stays bounded however large the batch.
 */
export function createDialogueLoader(db: Db, keep = 8) {
  const recent = new Map<number, LoadedDialogue>();
  return (dialogueId: number): LoadedDialogue => {
    const hit = recent.get(dialogueId);
    if (hit) return hit;
    const header = getDialogue(db, dialogueId);
    const cast = header ? findDialogueCast(db, header.cast_id) : undefined;
    if (!header || !cast) throw new Error(`dialogue ${dialogueId} or its cast is missing`);
    const loaded = { header, cast, prompt: scenarioPrompt(cast), transcript: transcript(cast, listTurns(db, dialogueId)) };
    recent.set(dialogueId, loaded);
    if (recent.size > keep) recent.delete(recent.keys().next().value as number);
    return loaded;
  };
}

/** The prompt as one user message, for formats (Chatbot Arena) whose conversations hold no system message. */
export function promptText(prompt: ChatMessage[]): string {
  return prompt.map((m) => m.content).join('\n\n');
}
