-- captures.doc_reason: why a document (a PDF, docx or odt) was not read, or
-- was read only in part (store.Capture.DocReason: pdf_encrypted,
-- office_truncated, pdf_page_limit, ...; docs/data.md lists them);
-- '' when it was read whole, for any other answer, and for captures stored
-- before this column. The PostgreSQL schema (0021_capture_doc_reason.sql) has
-- the same column.
ALTER TABLE captures ADD COLUMN doc_reason TEXT NOT NULL DEFAULT '';
