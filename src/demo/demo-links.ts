import type { Db } from '../db/connection.js';

/** The rater entry links of open demo batches, for the start-up banner. */
export function demoBatchLinks(db: Db, publicUrl: string): { name: string; url: string }[] {
  return db
    .prepare<[], { name: string; public_id: string }>(
      "SELECT name, public_id FROM batches WHERE state = 'open' AND created_by = 'system' ORDER BY id",
    )
    .all()
    .map((b) => ({ name: b.name, url: `${publicUrl}/r/${b.public_id}` }));
}
