-- The store counts URL inserts and state changes per transaction (see
-- pkg/store/sqlite/counts.go) instead of with these row triggers, which ran two
-- to four counter upserts for every admitted URL and every state change: a
-- sixth of the cost of admitting URLs and a fifth of storing captures.
-- Deletes keep their trigger (URLs are deleted rarely).
DROP TRIGGER urls_count_insert;
DROP TRIGGER urls_count_update;
