-- Issue 49, item 6: the per-address limit is checked before consent, not after. Six colleagues behind one office
-- address opened the link together; all six saw the consent page (nobody held anything yet), and the sixth was told
-- "too many sessions" only after consenting. Now showing the consent page holds a place of its address for a few
-- minutes: the counts of `addressLimits` include the holds of others, and consenting with one's own hold turns it
-- into the rater. One hold per holder: a Prolific or MTurk participant opening the link again keeps one hold (their
-- participant id, hashed), a plain-link visit holds by the rater id its consent form carries. Only hashes are stored.
CREATE TABLE address_holds (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  holder TEXT NOT NULL,
  rater_public_id TEXT NOT NULL UNIQUE,
  address_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (batch_id, holder)
) STRICT;

CREATE INDEX address_holds_by_address ON address_holds (batch_id, address_hash, expires_at);
