-- Every reason a trap budget holds a URL back with (pattern.ReasonPatternBudget,
-- ReasonDuplicateSpace, ReasonRewrite; store.HeldReasons): held URLs of all
-- three are reconsidered from the store, after a restart or a rebalance and
-- when a host holds more than its fetcher keeps in memory. The SQLite schema
-- (0016_held_reasons.sql) has the same index.
DROP INDEX exclusions_held;
CREATE INDEX exclusions_held ON exclusions (host, first_at)
	WHERE reason IN ('trap_pattern_budget', 'trap_duplicate_space', 'dust_rewrite');
