-- A render verdict per part of a host (pkg/render.SectionOf: "/" and the
-- first folder of the path), as well as per host: a site's application part
-- needs a browser where its server-rendered part does not. The samples are
-- read per host and section from the compared rows only.
ALTER TABLE render_decisions ADD COLUMN section TEXT NOT NULL DEFAULT '';
DROP INDEX render_decisions_host;
CREATE INDEX render_decisions_samples ON render_decisions (host, section) WHERE compared = 1;
