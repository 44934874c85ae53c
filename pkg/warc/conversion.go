package warc

import "time"

// ConversionRecord returns a conversion record (ISO 28500 6.3.8): content
// derived from the record refersTo names, here the DOM a browser built from a
// page's response, so that a replay tool or a reader finds the rendered page
// beside the page as served. contentType is the block's media type.
func ConversionRecord(targetURI string, date time.Time, refersTo, contentType string, block []byte) *Record {
	rec := &Record{Block: block}
	rec.Header.Set(FieldType, TypeConversion)
	rec.Header.Set(FieldTargetURI, targetURI)
	rec.Header.Set(FieldDate, FormatDate(date))
	if refersTo != "" {
		rec.Header.Set(FieldRefersTo, refersTo)
	}
	rec.Header.Set(FieldContentType, contentType)
	rec.Header.Set(FieldPayloadDigest, sha1Digest(block))
	return rec
}
