package searchsql

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/controlsql"
)

// FTS5's bm25 weighs a term by its inverse document frequency, which it
// counts at each query by reading the term's whole document list: for a
// word on most of a million pages that count was 69% of a search's CPU
// (BenchmarkSearch's profile), whatever the matches ranked. A word on more
// than CommonShare of the pages weighs little (bm25's IDF of a word on a
// tenth of the pages is 2.2, on half 0 and clamped to 1e-6 above, against
// 7 for a word on one page in a thousand), so the SQLite store ranks by
// the other words only (when the common one is also on more than
// CommonPages pages: a shorter list is read fast), and reads which pages
// hold the common ones in the matching itself, which stops at
// MaxCandidates. A query of common words only is ranked by the least
// common: one list read, not one a word. A share of 0.2 instead of 0.1
// left the words on 10-20% of the pages to be counted, and those made
// BenchmarkSearch's p99 2.6-3.2 times as long (alternated in one run).
const (
	CommonShare = 0.1
	CommonPages = 20_000
	// ShareSample is how many of the latest indexed pages a word's share
	// is read from (all pages in a smaller index).
	ShareSample = 2000
)

type candidate struct {
	id, hash int64
	score    float64
}

// searchRanked is Search in two steps (the Dialect's Candidates, Latest,
// Count, Ranked and Docs): the matches of every term, then their rank by the less common
// ones.
func (x *Index) searchRanked(ctx context.Context, q store.SearchQuery, args []any, limit int, after store.SearchCursor) ([]store.SearchHit, error) {
	d := x.d
	var cands []candidate
	at := map[int64]int{}
	err := x.db.Query(ctx, d.Candidates, args, func(r controlsql.Row) error {
		var c candidate
		if err := r.Scan(&c.id, &c.hash); err != nil {
			return err
		}
		at[c.id] = len(cands)
		cands = append(cands, c)
		return nil
	})
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	rank, allCommon, err := x.rankTerms(ctx, q.Terms)
	if err != nil {
		return nil, err
	}
	lo, hi := cands[0].id, cands[0].id
	for _, c := range cands {
		lo, hi = min(lo, c.id), max(hi, c.id)
	}
	ranked := make([]bool, len(cands))
	if allCommon && d.Present != "" {
		err = x.present(ctx, q.Terms, lo, hi, cands, at)
		for i := range ranked {
			ranked[i] = true
		}
	} else {
		err = x.db.Query(ctx, d.Ranked, []any{d.Match(rank), lo, hi}, func(r controlsql.Row) error {
			var id int64
			var score float64
			if err := r.Scan(&id, &score); err != nil {
				return err
			}
			if i, ok := at[id]; ok {
				cands[i].score, ranked[i] = score, true
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("rank by %q: %w", rank, err)
	}
	page := cands[:0]
	for i, c := range cands {
		if ranked[i] && (c.score > after.Score || c.score == after.Score && c.hash > after.URLHash) {
			page = append(page, c)
		}
	}
	slices.SortFunc(page, func(a, b candidate) int { return cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(a.hash, b.hash)) })
	page = page[:min(len(page), limit)]
	if len(page) == 0 {
		return nil, nil
	}
	hashes := make([]int64, len(page))
	for i, c := range page {
		hashes[i] = c.hash
	}
	list, err := json.Marshal(hashes)
	if err != nil {
		return nil, err
	}
	hits := make([]store.SearchHit, len(page))
	byHash := make(map[int64]int, len(page))
	for i, c := range page {
		hits[i].Score = c.score
		byHash[c.hash] = i
	}
	err = x.db.Query(ctx, d.Docs, []any{string(list)}, func(r controlsql.Row) error {
		var h store.SearchHit
		if err := scanURL(r, &h.IndexedURL, &h.Duplicates); err != nil {
			return err
		}
		if i, ok := byHash[h.URLHash]; ok {
			h.Score = hits[i].Score
			hits[i] = h
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %d hits: %w", len(page), err)
	}
	// A hit whose entry went between the statements is left out.
	return slices.DeleteFunc(hits, func(h store.SearchHit) bool { return h.URLHash == 0 }), nil
}

// present scores the candidates of a query of common words by the fields
// that hold each word (Dialect.Present), best negative as bm25's. bm25
// weighs a word by its inverse document frequency, which FTS5 counts by
// reading the word's whole document list at each query: for the least
// common of two words that are each on most of a million pages that read
// was most of a search's time, and it set BenchmarkSearch's p99, for a
// weight that orders nothing (one word ranks: its IDF is the same for
// every page, and near 0). Every candidate holds every word, so which
// fields hold them is what sets pages apart; a field is read only between
// the least and greatest candidate.
func (x *Index) present(ctx context.Context, terms []string, lo, hi int64, cands []candidate, at map[int64]int) error {
	for _, t := range terms {
		err := x.db.Query(ctx, x.d.Present, []any{x.d.Match([]string{t}), lo, hi}, func(r controlsql.Row) error {
			var id int64
			var weight float64
			if err := r.Scan(&id, &weight); err != nil {
				return err
			}
			if i, ok := at[id]; ok {
				cands[i].score -= weight
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// rankTerms returns the terms but the common ones, else the least common
// term and allCommon. A term's share is read from the latest ShareSample
// pages; the pages indexed are estimated from how densely they hold
// capture IDs.
func (x *Index) rankTerms(ctx context.Context, terms []string) (rank []string, allCommon bool, err error) {
	var from, to, pages int64
	err = x.db.Query(ctx, x.d.Latest, []any{ShareSample}, func(r controlsql.Row) error { return r.Scan(&from, &to, &pages) })
	if err != nil {
		return nil, false, fmt.Errorf("latest pages: %w", err)
	}
	indexed := float64(pages) / float64(max(to-from+1, 1)) * float64(to)
	common := float64(CommonPages)
	if x.d.CommonPages > 0 {
		common = x.d.CommonPages
	}
	least, leastShare := "", 2.0
	for _, t := range terms {
		var n int64
		err := x.db.Query(ctx, x.d.Count, []any{x.d.Match([]string{t}), from}, func(r controlsql.Row) error { return r.Scan(&n) })
		if err != nil {
			return nil, false, fmt.Errorf("pages with %q: %w", t, err)
		}
		share := float64(n) / float64(max(pages, 1))
		if share <= CommonShare || share*indexed < common {
			rank = append(rank, t)
		}
		if share < leastShare {
			least, leastShare = t, share
		}
	}
	if len(rank) == 0 {
		return []string{least}, true, nil
	}
	return rank, false, nil
}
