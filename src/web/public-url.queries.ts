import type { Db } from '../db/connection.js';

/**
 * The public URL the server started with last, kept in the database it serves: the CLI, run with an environment of
 * its own, prints rater links to the address raters can actually reach (and judges the https check by it).
 */
export function recordServedPublicUrl(db: Db, url: string): void {
  db.prepare("INSERT INTO settings (key, value) VALUES ('served_public_url', :url) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run({ url });
}

export function servedPublicUrl(db: Db): string | null {
  const url: unknown = db.prepare("SELECT value FROM settings WHERE key = 'served_public_url'").pluck().get();
  return typeof url === 'string' ? url : null;
}
