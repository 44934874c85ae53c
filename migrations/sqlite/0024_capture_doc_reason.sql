-- captures.doc_reason: why a document (a PDF) was not read, or was read only
-- in part (store.Capture.DocReason: pdf_truncated, pdf_encrypted, pdf_broken,
-- pdf_page_limit, pdf_too_large, pdf_time_limit; docs/data.md lists them);
-- '' when it was read whole, for any other answer, and for captures stored
-- before this column. The PostgreSQL schema (0021_capture_doc_reason.sql) has
-- the same column.
ALTER TABLE captures ADD COLUMN doc_reason TEXT NOT NULL DEFAULT '';
