# syntax=docker/dockerfile:1
#
# One image holding every binary of the crawler: crawler (embedded, one process),
# frontier, fetcher, parser, renderer and broker (the dev Kafka broker). Pick one
# with the command, e.g. `docker run IMAGE frontier -broker kafka://... -db postgres://...`;
# every flag can also be given as a CRAWLER_* environment variable.
#
#   docker build --build-arg VERSION=0.1.0 --build-arg COMMIT=$(git rev-parse --short HEAD) -t crawlcluster/crawler:0.1.0 .
#   docker build --target renderer --build-arg VERSION=0.1.0 --build-arg COMMIT=... -t crawlcluster/crawler:0.1.0-renderer .
#
# Static binaries (CGO_ENABLED=0; SQLite is the pure-Go modernc.org/sqlite) built
# once, in one stage, and copied into two runtime targets:
#
# - the default (last) target, for the frontier, fetcher and parser tiers:
#   distroless/static: CA certificates, tzdata, /etc/passwd with a nonroot user
#   (65532), /tmp, and nothing else: no shell, no package manager. The fetcher
#   talks to arbitrary web servers, so the less there is to exploit in the image
#   the better.
# - `--target renderer`, for the render tier (and an embedded crawler that
#   renders): the renderer drives a headless Chromium, a few hundred MB of shared
#   libraries, fonts and a browser that runs other people's JavaScript. Distroless
#   static cannot hold it, and putting it in the one image would hand every
#   fetcher a browser, a shell and an apt it never uses. So it is a second target
#   on Debian bookworm-slim with Debian's chromium (security updates come from
#   bookworm-security at build time: rebuild it often), the same binaries, and
#   the same non-root user 65532, so the chart's securityContext fits both.
#   One Dockerfile and one build stage keep the binaries of both images the same
#   build of the same commit.
#
# Healthchecks therefore probe from outside (Kubernetes httpGet probes on /-/healthy
# and /-/ready); compose gates on the backends' health instead.

# Pinned by tag; must be at least the go directive of go.mod (GOTOOLCHAIN=local
# below makes an older one fail instead of downloading a toolchain).
ARG GO_IMAGE=golang:1.26.8-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot
# The renderer's base: the Debian release distroless/static-debian12 and the Go
# image are built on. Pinned to the release, not a point release: chromium and
# its libraries come from bookworm-security at build time either way.
ARG RENDERER_IMAGE=debian:bookworm-slim

FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS build
WORKDIR /src
ENV GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ARG COMMIT=unknown
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/crawlcluster/crawler/internal/version.Version=${VERSION} -X github.com/crawlcluster/crawler/internal/version.Commit=${COMMIT}" \
      -o /out/bin/ ./cmd/crawler ./cmd/frontier ./cmd/fetcher ./cmd/parser ./cmd/renderer ./cmd/broker \
 && mkdir -p /out/data

# --target renderer: Debian with Chromium. Not the last stage, so a plain
# `docker build` still gives the distroless image.
FROM ${RENDERER_IMAGE} AS renderer
ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="crawlcluster crawler (renderer)" \
      org.opencontainers.image.source="https://github.com/crawlcluster/crawler" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"
# chromium and fonts-liberation (metric-compatible Arial/Times/Courier, so text
# lays out as sites expect), CA certificates for S3 over TLS, tzdata; no
# recommends (no X11 extras, no GPU drivers). The same nonroot user as distroless
# (65532), with HOME in /tmp: Chromium writes its font cache and crash files
# under HOME, and /tmp is the one writable folder on a read-only root filesystem.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 nonroot \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin nonroot \
 && chromium --version
ENV HOME=/tmp CRAWLER_BROWSER=/usr/bin/chromium
COPY --from=build /out/bin/ /usr/local/bin/
COPY --from=build --chown=65532:65532 /out/data /data
WORKDIR /data
USER 65532:65532
# renderer metrics and probes (-listen :9104); crawler -listen.
EXPOSE 9104 8080
CMD ["renderer", "-version"]

# The default target: distroless, no browser (frontier, fetcher, parser).
FROM ${RUNTIME_IMAGE} AS runtime
ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="crawlcluster crawler" \
      org.opencontainers.image.source="https://github.com/crawlcluster/crawler" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"
COPY --from=build /out/bin/ /usr/local/bin/
# The working folder: the embedded crawler's -data, the parser's WARC spool. Owned by
# the nonroot user so it is writable without a volume (mount one to keep it).
COPY --from=build --chown=65532:65532 /out/data /data
WORKDIR /data
USER 65532:65532
# frontier REST API and metrics, fetcher and parser metrics, crawler -listen.
EXPOSE 8080 9101 9102
# Exec form, no shell: the first word of the command picks the binary.
CMD ["crawler", "-version"]
