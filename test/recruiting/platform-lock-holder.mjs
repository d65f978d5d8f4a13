// A second process of the platform-lock test: it takes a batch's lock for MTurk on its own connection, says "held",
// and keeps working (its heartbeat running) until told; "check" asks it whether it still holds the lock, as it would
// before sending a request ("still held" or "lost"); "release" ends its work and its lock.
import { createInterface } from 'node:readline';

const { register } = await import('tsx/esm/api');
register();
const { openDatabase } = await import('../../src/db/connection.ts');
const { withPlatformLock } = await import('../../src/recruiting/platform-lock.ts');

const [path, batchId, heartbeatMs] = process.argv.slice(2);
const db = openDatabase(path);
const lines = createInterface({ input: process.stdin });
await withPlatformLock(
  db,
  'mturk',
  Number(batchId),
  'settle',
  () => new Date(),
  (lock) =>
    new Promise((resolve) => {
      process.stdout.write('held\n');
      lines.on('line', (line) => {
        if (line === 'release') return resolve();
        try {
          lock.assertHeld();
          process.stdout.write('still held\n');
        } catch {
          process.stdout.write('lost\n');
        }
      });
    }),
  { heartbeatMs: Number(heartbeatMs) },
);
db.close();
process.exit(0);
