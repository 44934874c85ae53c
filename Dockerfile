# syntax=docker/dockerfile:1
#
# One image holding every binary of the crawler: crawler (embedded, one process),
# frontier, fetcher, parser and broker (the dev Kafka broker). Pick one with the
# command, e.g. `docker run IMAGE frontier -broker kafka://... -db postgres://...`;
# every flag can also be given as a CRAWLER_* environment variable.
#
#   docker build --build-arg VERSION=0.1.0 --build-arg COMMIT=$(git rev-parse --short HEAD) -t crawlcluster/crawler:0.1.0 .
#
# Static binaries (CGO_ENABLED=0; SQLite is the pure-Go modernc.org/sqlite) on
# distroless/static: CA certificates, tzdata, /etc/passwd with a nonroot user
# (65532), /tmp, and nothing else: no shell, no package manager. The fetcher talks
# to arbitrary web servers, so the less there is to exploit in the image the better.
# Healthchecks therefore probe from outside (Kubernetes httpGet probes on /-/healthy
# and /-/ready); compose gates on the backends' health instead.

# Pinned by tag; must be at least the go directive of go.mod (GOTOOLCHAIN=local
# below makes an older one fail instead of downloading a toolchain).
ARG GO_IMAGE=golang:1.26.8-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

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
      -o /out/bin/ ./cmd/crawler ./cmd/frontier ./cmd/fetcher ./cmd/parser ./cmd/broker \
 && mkdir -p /out/data

FROM ${RUNTIME_IMAGE}
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
