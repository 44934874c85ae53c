package pattern

// branching follows how many new URLs of a family its made-up pages make up
// in turn, per such page fetched: a family's crawl is a branching process,
// each page a parent of the new URLs it makes up. Below one a page,
// whatever the family's URLs look like and however its pages differ, its
// unfetched URLs run out: a forum's threads end in their last pages, a
// tree's leaves link nothing new. An endless space makes up at least one a
// page, or it would end: a calendar a month ahead per month fetched, a
// search several related searches per result.
//
// A family dwindles when its made-up pages made up at most three new URLs
// for every four fetched, over its whole crawl, and its latest window of
// them made up no more than one a page: it may fetch what it has found.
// While it is so, what it makes up is bounded by what it fetched: a trap
// in a family of real pages that link nothing new gets a fraction of them.
// Pages the site links (grounded) are left out on both sides: a section's
// entries that link nothing of it would make a chain of one a page look
// dwindling.
//
// Copies are no parents and, counted as children, make nothing: a print,
// AMP or share view that each page makes up would make a forum that ends
// look as if it grew. Those fetched are taken out; of those not fetched
// yet (held by a budget), the share that the fetched ones copied is.
type branching struct {
	pages, made       int // made-up pages fetched distinct, new URLs made up on them (less those that came back copies)
	winPages, winMade int // the same when the latest window began
	// Of made, those fetched and judged distinct; and the copies taken out.
	madeDistinct, madeDup int
	growing               bool
}

// branchWindow is how many made-up pages a family fetches before it may
// dwindle, and between two looks at its latest window.
const branchWindow = 8

// judged counts a made-up page of the family fetched (made: counted as
// made up by a made-up page), and reports whether the family dwindles now
// while it did not before.
func (b *branching) judged(duplicate, made bool) bool {
	was := b.dwindling()
	switch {
	case duplicate && made && b.made > 0:
		b.made--
		b.madeDup++
		b.winMade = min(b.winMade, b.made)
	case !duplicate:
		if made {
			b.madeDistinct++
		}
		b.pages++
		if n := b.pages - b.winPages; n >= branchWindow {
			b.growing = b.made-b.winMade > n
			b.winPages, b.winMade = b.pages, b.made
		}
	}
	return !was && b.dwindling()
}

func (b *branching) dwindling() bool {
	return b.pages >= branchWindow && 4*b.fertile() <= 3*float64(b.pages) && !b.growing
}

// fertile is how many of the new URLs made up are not copies: those judged
// distinct, and of those not judged yet, the share of the judged ones that
// were not copies.
func (b *branching) fertile() float64 {
	unjudged := float64(max(b.made-b.madeDistinct, 0))
	if judged := b.madeDistinct + b.madeDup; judged > 0 {
		return float64(b.madeDistinct) + unjudged*float64(b.madeDistinct)/float64(judged)
	}
	return unjudged
}
