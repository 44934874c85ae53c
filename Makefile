# Targets: build, deps, test, test-short, bench, lint, fmt, run, demo, fuzz.
GO      ?= go
BIN     ?= bin
DATA    ?= demo-data
PKGS    ?= ./...
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: all build deps test test-deploy test-short bench bench-compare bench-medium bench-large bench-freshness bench-guard bench-micro lint fmt run demo fuzz warcio replay clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/... ./loadtest/cmd/...

# What the tests need (servers, browser, tools), installed if missing; the
# same script .ci/run uses. `scripts/deps.sh -n` lists what is missing.
deps:
	scripts/deps.sh

# The full suite: unit tables, race detector, end-to-end crawls of the synthetic
# web, and the WARC check with an independent reader (warcio.js, installed by the
# warcio target). Uncached: the end-to-end and cluster tests build the binaries at
# run time, so the test cache cannot see changes in the packages they use.
#
# scripts/test.sh runs the race detector's pass and, beside it, the
# simulations without the race detector (its comments say why and in what
# order the packages go).
test: deps warcio replay
	$(GO) vet $(PKGS)
	scripts/test.sh $(GO) $(PKGS)
	$(MAKE) test-deploy

# The deployment artifacts, validated offline (own Go modules, so the main go.mod
# stays free of Kubernetes and compose libraries).
test-deploy:
	cd deploy/helm/validate && $(GO) test -count=1 ./...
	cd deploy/compose/validate && $(GO) test -count=1 ./...

# Quick iteration: no end-to-end crawls, no race detector, nothing to install:
# tests whose server (PostgreSQL, Redis, versitygw, promtool, Chromium) is
# missing skip, naming it.
test-short:
	$(GO) test -short -timeout 10m $(PKGS)

warcio: tools/warcio-check/node_modules/.package-lock.json

tools/warcio-check/node_modules/.package-lock.json: tools/warcio-check/package-lock.json
	npm ci --prefix tools/warcio-check --no-audit --no-fund

# ReplayWeb.page's engine (wabac.js) for the WACZ replay test (TestReplayDocSite).
replay: tools/replay-check/node_modules/.package-lock.json

tools/replay-check/node_modules/.package-lock.json: tools/replay-check/package-lock.json
	npm ci --prefix tools/replay-check --no-audit --no-fund

# The side-by-side comparison on the synthetic web (ours, our cluster, Colly,
# Scrapy: table, JSON, PNG of pages/s over time) at the small scale, then every
# package's microbenchmarks. bench-medium and bench-large are the other scales
# of docs/performance.md.
bench: bench-compare bench-micro

bench-compare:
	$(GO) run ./loadtest/cmd/bench -hosts 50 -pages 40 -delay 100ms -json bench.json -png bench.png

bench-medium:
	$(GO) run ./loadtest/cmd/bench -hosts 500 -pages 100 -delay 100ms -json bench-medium.json -png bench-medium.png

bench-large:
	$(GO) run ./loadtest/cmd/bench -hosts 10000 -pages 100 -delay 100ms -crawlers ours -max-pages 2000000 -timeout 40m -json bench-large.json -png bench-large.png

# CPU per page of the working tree's crawler against the previous commit's (HEAD
# with uncommitted changes, else HEAD~1; BASE=<rev> to choose), medium web, one
# run, the ratio printed (docs/performance.md, "The guard"; ~3 minutes a pair).
bench-guard:
	GO=$(GO) tools/bench-guard.sh

# The recrawl policy against the uniform baseline on a changing web, given the
# same number of requests (docs/recrawl.md, "What it measures"; ~10 minutes).
bench-freshness:
	$(GO) run ./loadtest/cmd/freshness -json bench-freshness.json

bench-micro:
	$(GO) test -short -run '^$$' -bench . -benchmem -count 1 $(PKGS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Short fuzzing pass over every fuzz target (every parser of untrusted input),
# FUZZTIME each; the first failure stops it and fails. CI runs it with
# FUZZTIME=5s. The targets are read from each package's test files as the
# build sees them (go list), so packages without one cost no test build;
# scripts/fuzz.sh builds each package's instrumented binary once. FUZZFLAGS
# goes to the test binary as go test's flags, e.g. FUZZFLAGS='-parallel 1'
# on a shared machine.
FUZZTIME ?= 20s
FUZZFLAGS ?=
fuzz:
	@scripts/fuzz.sh $(GO) $(FUZZTIME) '$(FUZZFLAGS)' $(PKGS)

# A real crawl of the project's synthetic web on loopback (no internet needed),
# audited from the servers' side when it finishes. The 15ms tolerance covers the
# server stamping its own end time late on a loaded machine; the crawler waits its
# delay plus 10ms from when it finished reading (see cmd/crawler's e2e tests).
# The console is served while it runs, on a free loopback port the crawler's
# log names ("the console is at http://..."); LISTEN=127.0.0.1:8080 picks the
# port, LISTEN= turns it off. At the end it says where the crawl is and how to
# open it, whatever the audit found.
LISTEN ?= 127.0.0.1:0
demo: build
	rm -rf $(DATA)
	@$(BIN)/synthweb -hosts 20 -addresses 5 -pages 50 -features -traps -agent crawlcluster \
		-default-delay 100ms -max-delay 2s -tolerance 15ms -ip-concurrency 2 -ip-delay 25ms -- \
		$(BIN)/crawler -data $(DATA) -seeds {seeds} -hosts-file {hosts-file} -allow-private-networks \
		-exit-when-idle -default-delay 100ms -max-delay 2s -robots-retry 1s $(if $(LISTEN),-listen $(LISTEN)); \
	status=$$?; \
	echo; \
	echo "The crawl is in $(DATA)/: pages in $(DATA)/warc/ (WARC), what was found of every URL in $(DATA)/crawl.db (SQLite)."; \
	echo "Its report: $(DATA)/report.html (open it in a browser; $(BIN)/crawler report -data $(DATA) writes it again)."; \
	echo "To browse it in the console: $(BIN)/crawler -data $(DATA) -listen 127.0.0.1:8080, then open http://127.0.0.1:8080/ (Ctrl-C stops it)."; \
	exit $$status

# Crawl whatever SEEDS names (a file) or URLS lists, into DATA.
run: build
	$(BIN)/crawler -data $(DATA) $(if $(SEEDS),-seeds $(SEEDS)) $(URLS)

clean:
	rm -rf $(BIN) $(DATA)
