import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A scratch folder for one benchmark run, removed when the process ends: at its end, on an error, and on Ctrl-C or a
 * kill (an interrupted rater-load run at 1M judgments left 430 MB in the system's temporary folder).
 */
export function benchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', remove);
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => process.exit(code));
  }
  return dir;
}
