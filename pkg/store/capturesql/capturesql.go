// Package capturesql is what both SQL stores read of a captures row, written
// once: the columns of captures are the same in both dialects but for the
// fetch time (integer milliseconds in SQLite, timestamptz in PostgreSQL), so
// the column list and the order of the scan's destinations live here, and a
// column added to one store's reads is added to the other's.
package capturesql

import (
	"fmt"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// Columns are the captures columns a store reads into a store.Capture, in
// Dest's order.
const Columns = `id, ` + Written

// Written are the columns a store writes of a new capture (all but its ID),
// in Columns' order: both stores' inserts name them from here.
const Written = `fetch_id, url_hash, url, fetched_at, status, content_type, length, truncated,
	warc_file, warc_offset, warc_length, warc_record_id, payload_digest, content_sha256, simhash,
	revisit_of, near_dup_of, title, description, language, canonical, noindex, links, etag, last_modified,
	change, duration_ms, links_dropped, location, kind, doc_reason`

// WrittenCount is the number of Written columns: SQLite's insert has as
// many placeholders.
const WrittenCount = 31

// Dest returns the scan destinations of Columns into c. The columns a
// dialect stores in its own type go to the caller's variables, which it
// converts after the scan: fetched (fetched_at), simhash (a signed 64-bit
// integer) and durationMS.
func Dest(c *store.Capture, fetched any, simhash, durationMS *int64) []any {
	return []any{&c.ID, &c.FetchID, &c.URLHash, &c.URL, fetched, &c.Status, &c.ContentType, &c.Length,
		&c.Truncated, &c.WARCFile, &c.WARCOffset, &c.WARCLength, &c.WARCRecordID, &c.PayloadDigest,
		&c.ContentSHA256, simhash, &c.RevisitOf, &c.NearDupOf, &c.Title, &c.Description, &c.Language,
		&c.Canonical, &c.NoIndex, &c.Links, &c.ETag, &c.LastModified, &c.Change, durationMS, &c.LinksDropped,
		&c.Location, KindDest(&c.Kind), &c.DocReason}
}

// KindDest is a scan destination for a URL kind's stored name (urlkind):
// "" and NULL, on captures stored before kinds were recorded, read as a
// page.
func KindDest(k *store.Kind) any { return kindDest{k} }

type kindDest struct{ k *store.Kind }

func (d kindDest) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*d.k = store.KindPage
	case string:
		*d.k = urlkind.Of(x)
	case []byte:
		*d.k = urlkind.Of(string(x))
	default:
		return fmt.Errorf("capture kind: %T is no kind's name", v)
	}
	return nil
}
