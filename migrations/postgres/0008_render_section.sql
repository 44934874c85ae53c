-- A render verdict per part of a host as well as per host; see
-- sqlite/0011_render_section.sql.
ALTER TABLE render_decisions ADD COLUMN section text NOT NULL DEFAULT '';
DROP INDEX render_decisions_host;
CREATE INDEX render_decisions_samples ON render_decisions (host, section) WHERE compared = 1;
