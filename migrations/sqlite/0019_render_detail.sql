-- What a render waited for and what the page raised (store.RenderDetail as
-- JSON), for the URL look-up: a render that yields nothing says why.
ALTER TABLE render_decisions ADD COLUMN detail TEXT NOT NULL DEFAULT '';
