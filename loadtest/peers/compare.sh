#!/bin/bash
# Crawls one synthetic web with our embedded crawler, the Colly peer and the
# Scrapy peer, one after the other, each under /usr/bin/time -v, and prints
# one line per crawler: pages/s, crawler user+sys CPU, CPU per page, peak RSS
# and the synthweb audit. A stop-gap for issue 5 until `make bench` exists.
#
#   loadtest/peers/compare.sh [-hosts 100] [-pages 50] [-delay 100ms] [-max-pages N] [-only "ours colly scrapy"]
#
# Needs: go, /usr/bin/time (Debian package "time"), jq, and for the Scrapy peer
# Debian's python3-scrapy. Work files go to $OUT (default a new temp dir).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
hosts=100 pages=50 delay=100ms max_pages=1000000 only="ours colly scrapy"
while [ $# -gt 0 ]; do
	case $1 in
	-hosts) hosts=$2 ;;
	-pages) pages=$2 ;;
	-delay) delay=$2 ;;
	-max-pages) max_pages=$2 ;;
	-only) only=$2 ;;
	*) echo "compare.sh: unknown flag $1" >&2; exit 2 ;;
	esac
	shift 2
done
out=${OUT:-$(mktemp -d /tmp/peers-compare.XXXXXX)}
mkdir -p "$out"
agent=benchbot
ua="benchbot/1.0 (+https://example.com/benchbot)"
delay_s=$(awk "BEGIN { d = \"$delay\"; if (d ~ /ms$/) print substr(d, 1, length(d)-2)/1000; else { sub(/s$/, \"\", d); print d } }")

(cd "$root" && go build -o "$out/synthweb" ./loadtest/cmd/synthweb && go build -o "$out/ours" ./cmd/crawler)
(cd "$root/loadtest/peers/colly" && go build -o "$out/colly-peer" .)

# run NAME CMD...: synthweb with CMD as the crawler, CMD under time -v.
run() {
	local name=$1
	shift
	"$out/synthweb" -hosts "$hosts" -pages "$pages" -agent "$agent" -default-delay "$delay" -timeout 10m \
		-report-json "$out/$name.json" -- /usr/bin/time -v -o "$out/$name.time" "$@" >"$out/$name.log" 2>&1 || true
	local user sys rss wall fetched cov
	user=$(awk -F': ' '/User time/ {print $2}' "$out/$name.time")
	sys=$(awk -F': ' '/System time/ {print $2}' "$out/$name.time")
	rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$out/$name.time")
	wall=$(awk -F': ' '/Elapsed \(wall/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s}' "$out/$name.time")
	fetched=$(jq .fetched "$out/$name.json")
	printf '%-7s %7s pages in %6.2fs = %7.1f pages/s  cpu %6.2fs (user %s sys %s) = %5.0f us/page  peak RSS %4d MiB  %s\n' \
		"$name" "$fetched" "$wall" "$(awk "BEGIN {print $fetched / $wall}")" "$(awk "BEGIN {print $user + $sys}")" "$user" "$sys" \
		"$(awk "BEGIN {print ($user + $sys) * 1e6 / ($fetched > 0 ? $fetched : 1)}")" $((rss / 1024)) \
		"$(jq -r '"coverage \(.coverage * 1000 | round / 10)%  requests \(.requests)  robots \(.robots.count)  overlaps \(.overlaps.count)  politeness \(.politeness.count)  duplicates \(.duplicates.count)"' "$out/$name.json")"
}

echo "web: $hosts hosts x $pages pages, delay $delay, agent $agent; load before: $(cut -d' ' -f1-3 /proc/loadavg); work dir $out"
for name in $only; do
	case $name in
	ours)
		rm -rf "$out/ours-data"
		run ours "$out/ours" -data "$out/ours-data" -seeds {seeds} -allow-private-networks -exit-when-idle \
			-default-delay "$delay" -user-agent "$ua" -max-pages "$max_pages" -workers 256 -sitemap-probe=false
		;;
	colly)
		run colly "$out/colly-peer" -seeds {seeds} -user-agent "$ua" -delay "$delay" -max-pages "$max_pages" -parallelism 256
		;;
	scrapy)
		if /usr/bin/python3 -c 'import scrapy' 2>/dev/null; then
			run scrapy "$root/loadtest/peers/scrapy/run.sh" -seeds {seeds} -user-agent "$ua" -delay "$delay_s" \
				-max-pages "$max_pages" -concurrency 256
		else
			echo "scrapy  skipped: python3-scrapy not installed (apt-get install -y python3-scrapy)"
		fi
		;;
	esac
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
