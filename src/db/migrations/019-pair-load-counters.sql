-- Issue 12 (point 2): per-pair counters of live leases and reservations, kept by the triggers below in the same
-- transaction as the assignments and reservations they count (whichever code makes the change), so that choosing,
-- promising and counting open pairs reads them instead of counting rows for every pair it looks at.
ALTER TABLE pairs ADD COLUMN leased INTEGER NOT NULL DEFAULT 0 CHECK (leased >= 0);
ALTER TABLE pairs ADD COLUMN leased_left_a INTEGER NOT NULL DEFAULT 0 CHECK (leased_left_a >= 0);
ALTER TABLE pairs ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0);

UPDATE pairs SET
  leased = (SELECT count(*) FROM assignments a WHERE a.pair_id = pairs.id AND a.state = 'leased'),
  leased_left_a = (SELECT count(*) FROM assignments a WHERE a.pair_id = pairs.id AND a.state = 'leased' AND a.left_side = 'a'),
  reserved = (SELECT count(*) FROM pair_reservations r WHERE r.pair_id = pairs.id);

CREATE TRIGGER pair_load_lease_added AFTER INSERT ON assignments
WHEN NEW.state = 'leased'
BEGIN
  UPDATE pairs SET leased = leased + 1, leased_left_a = leased_left_a + (NEW.left_side = 'a') WHERE id = NEW.pair_id;
END;

CREATE TRIGGER pair_load_lease_removed AFTER DELETE ON assignments
WHEN OLD.state = 'leased'
BEGIN
  UPDATE pairs SET leased = leased - 1, leased_left_a = leased_left_a - (OLD.left_side = 'a') WHERE id = OLD.pair_id;
END;

CREATE TRIGGER pair_load_lease_changed AFTER UPDATE OF state, pair_id, left_side ON assignments
WHEN OLD.state = 'leased' OR NEW.state = 'leased'
BEGIN
  UPDATE pairs SET leased = leased - 1, leased_left_a = leased_left_a - (OLD.left_side = 'a') WHERE id = OLD.pair_id AND OLD.state = 'leased';
  UPDATE pairs SET leased = leased + 1, leased_left_a = leased_left_a + (NEW.left_side = 'a') WHERE id = NEW.pair_id AND NEW.state = 'leased';
END;

CREATE TRIGGER pair_load_reservation_added AFTER INSERT ON pair_reservations
BEGIN
  UPDATE pairs SET reserved = reserved + 1 WHERE id = NEW.pair_id;
END;

CREATE TRIGGER pair_load_reservation_removed AFTER DELETE ON pair_reservations
BEGIN
  UPDATE pairs SET reserved = reserved - 1 WHERE id = OLD.pair_id;
END;

CREATE TRIGGER pair_load_reservation_changed AFTER UPDATE OF pair_id ON pair_reservations
BEGIN
  UPDATE pairs SET reserved = reserved - 1 WHERE id = OLD.pair_id;
  UPDATE pairs SET reserved = reserved + 1 WHERE id = NEW.pair_id;
END;
