-- A sitemap's word on each URL it lists (issue 24): the newest listing's
-- <lastmod> and when the sitemap saying it was fetched, both in ms (0: never
-- listed with a <lastmod>). The parser reads them at the URL's next fetch as
-- an observation of its change history: a lastmod before the copy says the
-- copy was still current when the sitemap was fetched; one after it dates
-- the change (recrawl.Dated).
ALTER TABLE urls ADD COLUMN sitemap_lastmod INTEGER NOT NULL DEFAULT 0;
ALTER TABLE urls ADD COLUMN sitemap_seen_at INTEGER NOT NULL DEFAULT 0;
