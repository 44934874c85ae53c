-- captures.doc_reason; see sqlite/0024_capture_doc_reason.sql. A constant
-- default costs no rewrite of the table.
ALTER TABLE captures ADD COLUMN doc_reason text NOT NULL DEFAULT '';
