// Where a JSON text breaks, as a person looks for it in an editor (issue 49): V8 names a character offset ("in JSON at
// position 124"), which no editor shows; line and column (both from 1) are what a person can find.

/** The line and column (from 1) of a character offset in a text. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines[lines.length - 1] as string).length + 1 };
}

/**
 * JSON.parse's complaint about `text` with its "at position N" replaced by the line and column, e.g. "line 5, column 3:
 * Expected ',' or '}' after property value"; an unexpected end is placed after the last character.
 */
export function jsonSyntaxMessage(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const at = /\s*in JSON at position (\d+)(?: \(line \d+ column \d+\))?/.exec(message);
  const offset = at ? Number(at[1]) : /Unexpected end of JSON input/.test(message) ? text.length : null;
  if (offset === null) return message;
  const { line, column } = lineAndColumn(text, offset);
  const what = at ? message.slice(0, at.index) + message.slice(at.index + at[0].length) : message;
  return `line ${line}, column ${column}: ${what}`;
}
