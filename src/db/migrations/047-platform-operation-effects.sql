-- Issue 50: a 2xx from Prolific says a request was taken, not that it was done. Bulk approve and bonus pay are carried
-- out later ("Bulk approve in progress"; "Bonus payments are made asynchronously. The payment will be done in the
-- following minutes": docs.prolific.com), so an operation confirmed in platform_operations (the platform accepted it)
-- may still be in flight. When the platform's own state is seen to show an operation's effect (every bonus of a pay on
-- its participant's submission), it is written here once, and that operation is not read from the platform again.
CREATE TABLE platform_operation_effects (
  operation_id INTEGER PRIMARY KEY REFERENCES platform_operations (id),
  seen_at TEXT NOT NULL
) STRICT;
