// Package admit decides whether a normalized URL candidate enters the
// frontier, and at what priority.
//
// It runs in the fetcher's admission step after normalization and before the
// seen-URL check: scope (is the URL inside what the operator asked for),
// link depth, crawler traps (absurdly deep paths, repeated segments, endless
// calendars, query explosions) and the per-host page budget. A rejected
// candidate gets a stable reason code for the exclusion log, so invariant 2
// ("no URL lost" unless a rule excludes it and the reason is recorded) can be
// checked. An admitted one gets a score and the front-queue level it maps to.
//
// Rules are pure and deterministic: the caller passes the clock and the
// host's page count, and nothing here does I/O.
package admit
