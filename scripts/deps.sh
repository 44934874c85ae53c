#!/usr/bin/env bash
# Installs what the tests need on a fresh machine (Debian or Ubuntu), and only
# what is missing: `make deps` runs it, `make test` runs it first, and .ci/run
# calls it, so the README's test command and CI install the same things.
#
#   scripts/deps.sh      install what is missing (apt-get as root, or via sudo)
#   scripts/deps.sh -n   only list what is missing
#
# The tests start their own private servers from these binaries (no systemd
# here); the Debian services themselves are not needed. Go itself is not
# installed: the README names the version (go.mod's).
set -euo pipefail
cd "$(dirname "$0")/.."

dry=
[ "${1:-}" = "-n" ] && dry=1

export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
if ! command -v go >/dev/null; then
	echo "deps: Go is not installed; get the version go.mod names from https://go.dev/dl/" >&2
	exit 1
fi

# bash's command -v also names a file that is not executable; a tool is there
# only if it can run.
have() { local p; p="$(command -v "$1")" && [ -x "$p" ]; }

apt=()
{ have node && have npm; } || apt+=(nodejs npm)
have make || apt+=(make)
# The store tests: PostgreSQL and Redis servers, started privately per test run.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || have initdb || apt+=(postgresql)
have redis-server || apt+=(redis-server)
# The alert rules' tests (promtool).
have promtool || apt+=(prometheus)
# The documentation-site crawls serve real documentation trees with nginx.
{ [ -x /usr/sbin/nginx ] && [ -e /usr/share/doc/python3/html/index.html ] && [ -e /usr/share/doc/postgresql-doc-15/html/index.html ] && [ -e /usr/share/doc/git/html/git.html ]; } || apt+=(nginx python3-doc postgresql-doc-15 git-doc)
# More generators of real documentation for the simulated admission
# (loadtest/trapsim, TestAdmissionOnDocSites): CMake's Sphinx, SQLite's own,
# libstdc++'s Doxygen (3,800 pages in one flat folder), Octave's Texinfo,
# Vim's help.
{ [ -e /usr/share/doc/cmake-data/html/index.html ] && [ -e /usr/share/doc/sqlite3/index.html ] && [ -e /usr/share/doc/gcc-12-base/libstdc++/index.html ] && [ -e /usr/share/doc/octave/octave.html/index.html ] && [ -e /usr/share/doc/vim/html/index.html ]; } || apt+=(cmake-doc sqlite3-doc libstdc++-12-doc octave-doc vim-doc)
# And gtk-doc (GLib), gi-docgen (Pango), Django's Sphinx (276 release notes in
# one folder), texi2html's numbered pages (Maxima), Apache's manual in eleven
# languages (most of its pages links to the English ones), LaTeX2HTML (gnuplot),
# MkDocs, jQuery UI's demos, BIND's manual, SBCL's Texinfo, Doxygen's manual
# and examples: 130 MB together. Javadoc (libcommons-lang3-java-doc),
# erlang-doc, Qt 5's QDoc (qt5-doc-html) and Sphinx's own manual (sphinx-doc)
# are 270, 210, 336 and 60 MB with what they need: the simulation and the
# crawl take them when installed, CI does not.
{ [ -e /usr/share/gtk-doc/html/gio/index.html ] && [ -e /usr/share/doc/libpango1.0-doc/reference/Pango/index.html ] && [ -e /usr/share/doc/python-django-doc/html/index.html ] && [ -e /usr/share/doc/maxima-doc/html/maxima.html ]; } || apt+=(libglib2.0-doc libpango1.0-doc python-django-doc maxima-doc)
# These without what they recommend (apache2-doc would bring Apache, and
# start it): docs+=, installed apart.
docs=()
{ [ -e /usr/share/doc/apache2-doc/manual/index.html ] && [ -e /usr/share/doc/gnuplot/htmldocs/index.html ] && [ -e /usr/share/doc/doxygen/html/index.html ] && [ -e /usr/share/doc/sbcl/sbcl-internals/index.html ] && [ -e /usr/share/doc/mkdocs/html/index.html ] && [ -e /usr/share/doc/libjs-jquery-ui-docs/examples/index.html ] && [ -e /usr/share/doc/bind9-doc/arm/index.html ]; } || docs+=(apache2-doc gnuplot-doc mkdocs-doc libjs-jquery-ui-docs bind9-doc sbcl-doc doxygen-doc)
# The disk-full test mounts a small tmpfs as the crawler's data folder.
have mount || apt+=(mount)
# The console's and the render tier's browser tests drive headless Chromium.
[ -x /usr/bin/chromium ] || apt+=(chromium)

gotools=()
have versitygw || gotools+=(github.com/versity/versitygw/cmd/versitygw@v1.8.0) # S3 server of the blob and cluster tests
have helm || gotools+=(helm.sh/helm/v3/cmd/helm@v3.22.0)                      # the chart's validation (make test-deploy)

warcio=
[ -e tools/warcio-check/node_modules/.package-lock.json ] || warcio=1
replay=
[ -e tools/replay-check/node_modules/.package-lock.json ] || replay=1

if [ -n "$dry" ]; then
	[ ${#apt[@]} -eq 0 ] || echo "missing Debian packages: ${apt[*]}"
	[ ${#docs[@]} -eq 0 ] || echo "missing documentation packages: ${docs[*]}"
	[ ${#gotools[@]} -eq 0 ] || echo "missing Go tools: ${gotools[*]}"
	[ -z "$warcio" ] || echo "missing: warcio.js (npm ci --prefix tools/warcio-check)"
	[ -z "$replay" ] || echo "missing: ReplayWeb.page's engine, wabac.js (npm ci --prefix tools/replay-check)"
	[ ${#apt[@]} -eq 0 ] && [ ${#docs[@]} -eq 0 ] && [ ${#gotools[@]} -eq 0 ] && [ -z "$warcio" ] && [ -z "$replay" ] && echo "nothing missing"
	exit 0
fi

if [ ${#apt[@]} -gt 0 ] || [ ${#docs[@]} -gt 0 ]; then
	sudo=
	if [ "$(id -u)" != 0 ]; then
		if ! command -v sudo >/dev/null; then
			echo "deps: not root and no sudo; install these Debian packages: ${apt[*]} ${docs[*]}" >&2
			exit 1
		fi
		sudo=sudo
	fi
	$sudo apt-get update -qq
	if [ ${#apt[@]} -gt 0 ]; then
		echo "== Debian packages: ${apt[*]}"
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt[@]}"
	fi
	if [ ${#docs[@]} -gt 0 ]; then
		echo "== Debian documentation packages: ${docs[*]}"
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${docs[@]}"
	fi
fi
for t in "${gotools[@]}"; do
	echo "== go install $t"
	go install "$t"
done

echo "== Go modules"
go mod download
go mod verify

if [ -n "$warcio" ]; then
	echo "== warcio.js (independent WARC reader)"
	npm ci --prefix tools/warcio-check --no-audit --no-fund
fi
if [ -n "$replay" ]; then
	# TestReplayDocSite serves wabac.js's service worker to headless Chromium.
	echo "== ReplayWeb.page's engine (wabac.js), for the WACZ replay test"
	npm ci --prefix tools/replay-check --no-audit --no-fund
fi
