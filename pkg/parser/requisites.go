package parser

import (
	"flag"
	"fmt"
)

// DefaultRequisitesPerPage bounds the requisites one page (or stylesheet)
// sends to the crawl: the python3-doc pages need 6 to 10, news pages 50 to
// 150; past the cap they are counted, not fetched.
const DefaultRequisitesPerPage = 100

// RequisiteFlags are the -requisites flags, shared by the crawler and
// parser commands.
type RequisiteFlags struct {
	Enabled bool
	PerPage int
}

// RegisterFlags registers -requisites and -requisites-per-page.
func (r *RequisiteFlags) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&r.Enabled, "requisites", false, "also fetch what each page needs to display (stylesheets, images, scripts, fonts, icons), after the host's pages, so the WARCs replay (off: pages only)")
	fs.IntVar(&r.PerPage, "requisites-per-page", DefaultRequisitesPerPage, "with -requisites, requisites of one page or stylesheet sent to the crawl at most; the rest are counted")
}

// Validate reports a cap that cannot be meant.
func (r RequisiteFlags) Validate() error {
	if r.Enabled && r.PerPage <= 0 {
		return fmt.Errorf("-requisites-per-page must be positive with -requisites, got %d", r.PerPage)
	}
	return nil
}

// Limit is Config.Requisites: 0 when off.
func (r RequisiteFlags) Limit() int {
	if !r.Enabled {
		return 0
	}
	return r.PerPage
}
