-- Issue 12: the per-address limit counts the raters of one address that hold comparisons; only raters still in their
-- session can (finishing releases leases and reservations), so the count reads those alone, however many people have
-- already finished from the same address (a university network, or a load test from one machine).
CREATE INDEX raters_active_by_address ON raters (batch_id, address_hash) WHERE status IN ('instructions', 'onboarding', 'rating');
