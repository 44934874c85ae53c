package api

import (
	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// reasonDescriptions say in a sentence what the reasons an operator meets
// in failures mean, and what to do about one when there is anything: the
// URL and host look-ups show them beside a reason, the stats beside the
// counts. A reason without one is left to its name.
var reasonDescriptions = map[string]string{
	fetch.ReasonTimeout: "The server did not answer in time: connecting, the response headers or the body took longer " +
		"than -connect-timeout, -header-timeout or -total-timeout.",
	fetch.ReasonDNS:     "The host name did not resolve: it does not exist, or DNS failed.",
	fetch.ReasonConnect: "No connection to the server: it refused it, reset it before answering, or there is no route to it.",
	fetch.ReasonTLS: "The TLS handshake failed: the server's certificate is not trusted or not for this host, " +
		"or it speaks no TLS the crawler accepts.",
	fetch.ReasonAddressBlocked: "The host resolves only to addresses the crawler refuses (loopback, private, link-local, " +
		"metadata: the SSRF guard); -allow-private-networks allows them.",
	robots.ReasonUnavailable: "The host's robots.txt answered 429 or 5xx (or could not be read for another reason than " +
		"the network: too many redirects, say), so nothing else was fetched from it; its URLs are given up after " +
		"-robots-max-failures such answers in a row, until it answers again.",
	fetch.Reason(fetch.ClassHeadersTooLarge): "The response headers were over 64 KiB.",
	fetch.Reason(fetch.ClassOther):           "The fetch failed in a way the crawler does not classify; the fetcher's log has the error.",
	"robots":                                 "robots.txt disallows the URL for the crawler.",
	urlnorm.Reason(urlnorm.ErrTooLong): "The URL is over 2 KiB (a link over 8 KiB is not even resolved); its row keeps the " +
		"first 2 KiB and the length it had (cut_from).",
	urlnorm.Reason(urlnorm.ErrInvalid): "The reference is not a URL the crawler can read.",
	// Documents' (a capture's document_reason).
	parse.ReasonPDFTruncated: "The PDF was cut short by -max-body-bytes (or the fetch's other body limits): its " +
		"cross-reference table is at its end, so nothing of it was read. It is archived as fetched.",
	parse.ReasonPDFEncrypted: "The PDF needs a password to be read: archived as fetched, without text or links.",
	parse.ReasonPDFBroken:    "The PDF could not be read (not a PDF, or damaged): archived as fetched, without text or links.",
	parse.ReasonPDFPageLimit: "The PDF has more than 1,000 pages: the text and links of the first 1,000 were read.",
	parse.ReasonPDFTooLarge: "Part of the PDF decodes past the parser's bounds (16 MiB of content a page, 64 MiB a " +
		"document, 512 MiB of reads): those pages were skipped, the others read (none, if it came to nothing).",
	parse.ReasonPDFTimeLimit: "Reading the PDF took longer than 5 s: what was read by then is kept (nothing, if it came to nothing).",
	parse.ReasonOfficeTruncated: "The docx or odt was cut short by -max-body-bytes (or the fetch's other body limits): its " +
		"zip directory is at its end, so nothing of it was read. It is archived as fetched.",
	parse.ReasonOfficeEncrypted: "The docx or odt needs a password to be read: archived as fetched, without text or links.",
	parse.ReasonOfficeBroken: "The docx or odt could not be read (not a zip, damaged, or without its text part): archived as " +
		"fetched, without text or links.",
	parse.ReasonOfficeTooLarge: "The docx or odt has more than 10,000 files in its zip (nothing read), or its text part " +
		"inflates past 8 MiB (what came before is kept).",
	parse.ReasonOfficeTimeLimit: "Reading the docx or odt took longer than 5 s: what was read by then is kept.",
}

// describe returns the description of reason, "" when it has none.
func describe(reason string) string { return reasonDescriptions[reason] }

// descriptionsOf returns the descriptions of the reasons of these counts
// that have one.
func descriptionsOf(counts ...map[string]int64) map[string]string {
	out := map[string]string{}
	for _, c := range counts {
		for r := range c {
			if d := describe(r); d != "" {
				out[r] = d
			}
		}
	}
	return out
}
