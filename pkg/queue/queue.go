// Package queue is the crawler's Kafka transport: topic names, the host-to-partition
// mapping every producer must use, the versioned record formats carried on the
// topics, and client construction for an embedded (kfake) or external broker.
//
// Kafka is the transport and buffer, not the system of record: URLs are durable in the
// metadata store once a fetcher admits them, and offsets are committed only after what
// a record carries is durable downstream.
package queue

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Topic names.
const (
	TopicURLs       = "crawl.urls"       // URL candidates, key = host, partition = PartitionOf(host)
	TopicPages      = "crawl.pages"      // fetch results, key = URL
	TopicDeadLetter = "crawl.deadletter" // records that could not be decoded, with the reason
	// TopicRender carries fetch results the parser tier sent to be rendered
	// in a browser, key = URL like crawl.pages and with as many partitions;
	// the renderer tier hands each back to crawl.pages with its rendered DOM.
	TopicRender = "crawl.render"
)

// Partitions is the partition count of crawl.urls. Changing it moves hosts between
// fetchers, so it is fixed.
const Partitions = 256

// PagesPartitions is the partition count of crawl.pages in a cluster: the most
// parsers that can share the work.
const PagesPartitions = 32

// EmbeddedPagesPartitions is the partition count of crawl.pages in the embedded
// crawler, whose parsers run in one process (each parallel over every core) and
// number a few. The fetcher produces each result as it completes, so a batch
// holds what one partition collects over the producer linger: at 4,000 pages/s
// about one record over 32 partitions and ten over 4, and the broker pays per
// batch (a segment write, a compression frame, a CRC; and a segment file and
// folder per partition at the first write).
const EmbeddedPagesPartitions = 4

// Consumer groups.
const (
	GroupFetchers  = "fetchers"
	GroupParsers   = "parsers"
	GroupRenderers = "renderers"
)

// PartitionOf maps a host to its crawl.urls partition. It is Kafka's default keyed
// partitioner (murmur2 of the key, positive, modulo the partition count), so an
// external producer that keys records by host lands on the same partition.
func PartitionOf(host string) int32 {
	return int32((murmur2([]byte(host)) & 0x7fffffff) % Partitions)
}

// murmur2 is the variant Kafka's Java client uses for keyed partitioning.
func murmur2(b []byte) uint32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	h := seed ^ uint32(len(b))
	for len(b) >= 4 {
		k := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
		b = b[4:]
	}
	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// Broker is a parsed --broker URL.
type Broker struct {
	Embedded bool
	DataDir  string   // embedded: where the broker keeps its log
	Seeds    []string // external: host:port list
}

// ErrBrokerURL is returned for a --broker value that is not understood.
var ErrBrokerURL = errors.New("invalid broker URL")

// ParseBroker parses "embedded:///data/kafka" or "kafka://b1:9092,b2:9092".
func ParseBroker(s string) (Broker, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Broker{}, fmt.Errorf("%w %q: %v", ErrBrokerURL, s, err)
	}
	switch u.Scheme {
	case "embedded":
		if u.Path == "" {
			return Broker{}, fmt.Errorf("%w %q: embedded needs a data folder, e.g. embedded:///data/kafka", ErrBrokerURL, s)
		}
		return Broker{Embedded: true, DataDir: u.Path}, nil
	case "kafka":
		var seeds []string
		for _, h := range strings.Split(u.Host, ",") {
			if h = strings.TrimSpace(h); h != "" {
				seeds = append(seeds, h)
			}
		}
		if len(seeds) == 0 {
			return Broker{}, fmt.Errorf("%w %q: no brokers listed", ErrBrokerURL, s)
		}
		return Broker{Seeds: seeds}, nil
	default:
		return Broker{}, fmt.Errorf("%w %q: scheme must be embedded or kafka", ErrBrokerURL, s)
	}
}

// PagePartitionOf spreads fetch results over n partitions of crawl.pages by URL,
// so that every fetch of a URL is processed in order.
func PagePartitionOf(url string, n int32) int32 {
	return int32((murmur2([]byte(url)) & 0x7fffffff) % uint32(n))
}
