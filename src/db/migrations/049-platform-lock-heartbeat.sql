-- Issue 50, item 9: a platform lock was taken over after an hour even while its holder still ran (a large settle can
-- run longer), and two commands could then send the same batch's operations at once. The holder now refreshes
-- heartbeat_at while it works (src/recruiting/platform-lock.ts); a lock is taken over only when its holder is gone:
-- a process of this host that is not alive, or a heartbeat that stopped. A lock written before this migration has
-- none: its acquired_at stands for it.
ALTER TABLE platform_locks ADD COLUMN heartbeat_at TEXT;
