-- What a render waited for and what the page raised; see
-- sqlite/0018_render_detail.sql.
ALTER TABLE render_decisions ADD COLUMN detail text NOT NULL DEFAULT '';
