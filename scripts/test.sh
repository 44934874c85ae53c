#!/usr/bin/env bash
# make test's run: the race detector's pass over PKGS, and beside it, when
# PKGS is the whole module, the simulations without the race detector.
#
# The simulations (loadtest/trapsim, and pkg/recrawl's TestPolicyNearOptimal)
# drive single-threaded decisions through simulated crawls, with no network
# and no clock: the race detector has nothing to find in them and slows them
# about tenfold. Under it trapsim cut its seeds to a quarter and left its
# large webs out, and still took 354 s of the 2026-12-02 CI run's two test
# slots; without it, with every seed and size, about 180 s of one process
# beside the others, whose politeness waits leave a core a fifth idle. The
# race pass still runs pkg/recrawl (its simulation at one seed a case) and
# the admission code the simulations drive, through pkg/pattern,
# pkg/admission and the fetcher's own tests.
#
# Usage: scripts/test.sh GO PKGS... (make test passes $(GO) and $(PKGS)).
set -uo pipefail
GO=$1
shift
PKGS=("$@")

# go test starts packages in the order it is given them, -p at a time.
# cmd/crawler (15 minutes under the race detector) and test/cluster (12) go
# first, so that the small packages fill the end rather than one of them
# running alone for its whole length (40 minutes in all when test/cluster
# came last by name). Both mostly wait on politeness delays: cmd/crawler
# used 0.44 of a core over its 891 s in a 2026-12-03 CI run. So three run
# at once on two cores, not go test's default of one per core, under which
# the small packages waited for one of the two to end. TEST_P sets it.
first=(./cmd/crawler ./pkg/browser ./test/cluster)
slots=${TEST_P:-3}

if [ "${PKGS[*]}" != "./..." ]; then
	exec env CRAWLER_REQUIRE_WARCIO=1 "$GO" test -race -count=1 -timeout 30m "${PKGS[@]}"
fi

sims=$(mktemp)
trap 'rm -f "$sims"' EXIT
(
	"$GO" test -count=1 -timeout 20m ./loadtest/trapsim &&
		"$GO" test -count=1 -timeout 10m -run '^TestPolicyNearOptimal$' ./pkg/recrawl
) >"$sims" 2>&1 &
simpid=$!

# A failed listing must not shrink the race pass to the first three.
if ! all=$("$GO" list ./...); then
	echo "go list ./... failed" >&2
	exit 1
fi
mapfile -t race < <(grep -v '/loadtest/trapsim$' <<<"$all")
CRAWLER_REQUIRE_WARCIO=1 "$GO" test -race -count=1 -p "$slots" -timeout 30m "${first[@]}" "${race[@]}"
raceexit=$?

wait "$simpid"
simexit=$?
echo "== the simulations, without the race detector"
cat "$sims"
if [ "$raceexit" -ne 0 ] || [ "$simexit" -ne 0 ]; then
	exit 1
fi
