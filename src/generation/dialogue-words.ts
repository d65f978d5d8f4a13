/** Words in a text, counted as runs of non-space characters (the dialogue metrics, exports and promised times all count so). */
export function countWords(text: string): number {
  const m = text.match(/\S+/g);
  return m ? m.length : 0;
}

/** Words of all of a dialogue's turns, as stored in `dialogues.words` (migration 021). */
export function countTurnWords(turns: readonly { text: string }[]): number {
  return turns.reduce((sum, turn) => sum + countWords(turn.text), 0);
}
