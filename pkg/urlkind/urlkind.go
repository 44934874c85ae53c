// Package urlkind names what a URL is fetched for. It is the one Kind that
// travels with a URL from admission through the store and the frontier to the
// worker; the store's column and the Kafka records keep their text names
// (String, Parse), so neither format changed when the three kinds the code
// had before (a frontier number, a store string, a queue string) became one.
package urlkind

// Kind says what a URL is fetched for. The zero Kind is Page, as an empty
// kind on the wire or in the store always meant.
type Kind uint8

const (
	Page        Kind = iota // an ordinary page
	Sitemap                 // a sitemap or sitemap index
	Subresource             // a script or data a page being rendered waits for
	// Robots is a robots.txt document at the end of another host's robots.txt
	// redirect: fetched in this host's turn like any request, but ahead of its
	// queue and before its own robots.txt, since it needs no permission and
	// another host waits on it.
	Robots
	// Requisite is what a page needs to display, for the archive: it waits in
	// its host's requisite queue, which is served only when none of the
	// host's pages is queued, so requisites never change the order in which a
	// host's pages are fetched.
	Requisite
)

// names are the store's and the wire's spelling; they must not change.
var names = [...]string{Page: "page", Sitemap: "sitemap", Subresource: "subresource", Robots: "robots", Requisite: "requisite"}

// String returns the kind's name in the store and on the wire.
func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return "page"
}

// Parse returns the kind a stored or wire name stands for; an empty name is
// Page. ok is false for a name that is no URL kind (a record kind such as a
// verdict, or garbage), which reads as Page.
func Parse(s string) (k Kind, ok bool) {
	if s == "" {
		return Page, true
	}
	for i, n := range names {
		if n == s {
			return Kind(i), true
		}
	}
	return Page, false
}

// Of is Parse without ok, for reading the store's own column, which holds
// only names String wrote.
func Of(name string) Kind {
	k, _ := Parse(name)
	return k
}
