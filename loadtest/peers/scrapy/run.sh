#!/bin/sh
# Runs the Scrapy peer (peer_spider.py) with Debian's python3-scrapy.
#
#   run.sh -seeds FILE [-user-agent UA] [-delay SECONDS] [-max-pages N]
#          [-concurrency N] [-max-duration SECONDS] [-- SCRAPY ARGS...]
#
# SCRAPY ARGS (after --) are passed on, e.g. -s SCHEDULER_PRIORITY_QUEUE=...
#
# -delay takes seconds (0.1) or a Go-style duration in ms or s (100ms, 1s).
# PYTHON overrides the interpreter (default /usr/bin/python3, not pyenv's).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-/usr/bin/python3}
seeds= ua=scrapypeer delay=1 max_pages=100000 concurrency=256 max_duration=600
while [ $# -gt 0 ]; do
	[ "$1" = -- ] && { shift; break; }
	[ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
	case $1 in
	-seeds | --seeds) seeds=$2 ;;
	-user-agent | --user-agent) ua=$2 ;;
	-delay | --delay) delay=$2 ;;
	-max-pages | --max-pages) max_pages=$2 ;;
	-concurrency | --concurrency) concurrency=$2 ;;
	-max-duration | --max-duration) max_duration=$2 ;;
	*) echo "run.sh: unknown flag $1" >&2; exit 2 ;;
	esac
	shift 2
done
[ -n "$seeds" ] || { echo "run.sh: -seeds FILE is required" >&2; exit 2; }
case $delay in
*ms) delay=$(awk "BEGIN { print ${delay%ms} / 1000 }") ;;
*s) delay=${delay%s} ;;
esac
cd "$here"
exec "$python" -m scrapy runspider peer_spider.py \
	-a seeds="$seeds" \
	-s USER_AGENT="$ua" \
	-s DOWNLOAD_DELAY="$delay" \
	-s CLOSESPIDER_PAGECOUNT="$max_pages" \
	-s CONCURRENT_REQUESTS="$concurrency" \
	-s CLOSESPIDER_TIMEOUT="$max_duration" \
	"$@"
