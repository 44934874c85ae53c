-- An operator's render mode for a host; see sqlite/0013_host_render.sql.
ALTER TABLE host_controls ADD COLUMN render text NOT NULL DEFAULT '';
