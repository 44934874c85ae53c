-- AddCaptures counts a batch's captures with one upsert per counter instead of
-- this trigger's four upserts per inserted row: the trigger was a quarter of
-- the cost of storing a capture. Deletes keep their trigger (captures are
-- deleted rarely, one by one).
DROP TRIGGER captures_count_insert;
