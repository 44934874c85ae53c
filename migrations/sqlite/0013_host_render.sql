-- An operator's render mode for a host (pkg/render): '' = by evidence,
-- 'always' or 'never', over the page signals and the verdicts, as the
-- -render-always and -render-never flags are for the hosts they name.
ALTER TABLE host_controls ADD COLUMN render TEXT NOT NULL DEFAULT '';
