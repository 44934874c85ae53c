-- URLs a pattern budget holds back (store.FrontierStore.HeldURLs): a fetcher
-- that takes over a partition with work left decides them again, which also
-- covers a previous owner that was killed before it could hand them back.
-- Partial, so the many other exclusions (scope, robots, traps) cost it
-- nothing. The PostgreSQL schema (0012_held_urls.sql) has the same index.
CREATE INDEX exclusions_held ON exclusions (host, first_at) WHERE reason = 'trap_pattern_budget';
