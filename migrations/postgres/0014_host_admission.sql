-- A host's admission state (pattern.Host.MarshalBinary: its spaces' evidence,
-- charges and verdicts, learned rewrites, folded path positions), saved with
-- the host so that a restart or a new partition owner goes on with the
-- budgets the crawl had earned instead of starting them afresh. NULL: none
-- saved. The SQLite schema (0017_host_admission.sql) has the same column.
ALTER TABLE hosts ADD COLUMN admission bytea;
