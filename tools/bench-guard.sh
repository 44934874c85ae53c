#!/bin/sh
# bench-guard: CPU per page of this tree's crawler against a base commit's, on
# the medium synthetic web, in one run (docs/performance.md, "The guard").
#
#   tools/bench-guard.sh            base: HEAD if the tree has changes, else HEAD~1
#   BASE=<rev> PAIRS=3 JSON=guard.json tools/bench-guard.sh   (JSON: keep the bench's results)
#
# Both binaries run the same web, alternating (ours, base, ours, base, ...), so
# the machine's load falls on both alike; the ratios are what to read, not the
# absolute numbers. Prints each pair's ours/base ratios and their geometric mean.
set -eu
GO=${GO:-go}
root=$(git rev-parse --show-toplevel)
cd "$root"
if [ -z "${BASE:-}" ]; then
	if [ -n "$(git status --porcelain --untracked-files=no)" ]; then BASE=HEAD; else BASE=HEAD~1; fi
fi
base=$(git rev-parse --verify "$BASE^{commit}")
pairs=${PAIRS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-guard.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

echo "bench-guard: base $(git log -1 --format='%h %s' "$base")" >&2
echo "bench-guard: ours $(git describe --always --dirty)" >&2
mkdir "$work/src"
git archive "$base" | tar -x -C "$work/src"
(cd "$work/src" && $GO build -o "$work/crawler-base" ./cmd/crawler)
$GO build -o "$work/crawler-ours" ./cmd/crawler

crawlers=ours,base
i=1
while [ "$i" -lt "$pairs" ]; do crawlers="$crawlers,ours,base"; i=$((i + 1)); done
$GO run ./loadtest/cmd/bench -hosts 500 -pages 100 -delay 100ms -crawlers "$crawlers" \
	-ours "$work/crawler-ours" -base "$work/crawler-base" -work "$work/bench" ${JSON:+-json "$JSON"} | tee "$work/table.txt"

# "ours/base: pages/s 1.02x, CPU/page 0.97x, peak RSS 1.01x", one line per pair.
awk '/^ours\/base:/ {
	gsub(/[x,]/, "")
	for (i = 1; i <= NF; i++) {
		if ($i == "pages/s") p += log($(i + 1))
		if ($i == "CPU/page") c += log($(i + 1))
		if ($i == "RSS") r += log($(i + 1))
	}
	n++
}
END {
	if (n == 0) { print "bench-guard: no ours/base pair completed" > "/dev/stderr"; exit 1 }
	printf "bench-guard: ours/base over %d pairs (geometric mean): CPU/page %.3fx, pages/s %.3fx, peak RSS %.3fx\n", n, exp(c / n), exp(p / n), exp(r / n)
}' "$work/table.txt"
