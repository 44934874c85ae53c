// Package backend opens the crawler's backends from the URLs every binary takes
// (DESIGN.md, "Configuration"), so one flag picks embedded or real:
//
//	--broker embedded:///data/kafka | kafka://b1:9092,b2:9092
//	--db     sqlite:///data/crawl.db | postgres://user:pass@host/db
//	--blobs  file:///data/warc | s3://bucket/prefix?endpoint=...&region=...
//	--cache  memory:// | redis://host:6379/0
package backend

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/blob"
	"github.com/crawlcluster/crawler/pkg/cache"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/postgres"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// Which backends a binary uses.
const (
	Broker = 1 << iota
	DB
	Blobs
	Cache
)

// Config holds the backend URLs.
type Config struct {
	Broker, DB, Blobs, Cache string
	// BrokerCompression is the codec this process's producers compress with.
	BrokerCompression string
}

// RegisterFlags registers the flags of the backends in which.
func (c *Config) RegisterFlags(fs *flag.FlagSet, which int) {
	if which&Broker != 0 {
		fs.StringVar(&c.Broker, "broker", "", "Kafka: kafka://host:9092,host2:9092 (or embedded:///DIR for a single process)")
		fs.StringVar(&c.BrokerCompression, "broker-compression", queue.DefaultCompression,
			"codec of the record batches this process produces: "+strings.Join(queue.CompressionNames, ", ")+" (consumers read any)")
	}
	if which&DB != 0 {
		fs.StringVar(&c.DB, "db", "", "metadata store: postgres://user:pass@host:5432/db or sqlite:///PATH")
	}
	if which&Blobs != 0 {
		fs.StringVar(&c.Blobs, "blobs", "", "WARC storage: s3://bucket/prefix?endpoint=http://host:9000&region=us-east-1 or file:///DIR")
	}
	if which&Cache != 0 {
		fs.StringVar(&c.Cache, "cache", "memory://", "shared cache: redis://host:6379/0 or memory://")
	}
}

// Validate checks that the URLs the binary needs are set.
func (c *Config) Validate(which int) error {
	var errs []error
	if which&Broker != 0 && c.Broker == "" {
		errs = append(errs, errors.New("-broker is required"))
	}
	if which&Broker != 0 {
		if _, err := queue.Compression(c.BrokerCompression); err != nil {
			errs = append(errs, fmt.Errorf("-broker-compression: %w", err))
		}
	}
	if which&DB != 0 && c.DB == "" {
		errs = append(errs, errors.New("-db is required"))
	}
	if which&Blobs != 0 && c.Blobs == "" {
		errs = append(errs, errors.New("-blobs is required"))
	}
	return errors.Join(errs...)
}

// OpenStore opens the metadata store a --db URL names.
func OpenStore(ctx context.Context, raw string) (store.Store, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--db: not a URL")
	}
	switch u.Scheme {
	case "sqlite":
		path := u.Path
		if u.Host != "" { // sqlite://relative/path
			path = u.Host + u.Path
		}
		if path == "" {
			return nil, fmt.Errorf("--db %s: sqlite needs a file path, e.g. sqlite:///data/crawl.db", raw)
		}
		return sqlite.Open(ctx, path)
	case "postgres", "postgresql":
		return postgres.Open(ctx, raw)
	}
	return nil, fmt.Errorf("--db: unknown scheme %q (want postgres or sqlite)", u.Scheme)
}

// Brokers is an opened --broker: the seed addresses, and the in-process broker to
// close for embedded:// (nil otherwise).
type Brokers struct {
	Seeds       []string
	compression kgo.Opt
	embedded    *queue.Embedded
}

// ClientOptions returns queue.ClientOptions with the -broker-compression chosen.
func (b *Brokers) ClientOptions(log *slog.Logger) []kgo.Opt {
	opts := queue.ClientOptions(b.Seeds, log)
	if b.compression != nil {
		opts = append(opts, b.compression) // the last ProducerBatchCompression wins
	}
	return opts
}

// Close stops an embedded broker.
func (b *Brokers) Close() {
	if b.embedded != nil {
		b.embedded.Close()
	}
}

// OpenBroker starts the embedded broker or returns the external seeds; its
// clients produce with the compression codec named (empty: the default).
func OpenBroker(raw, compression string) (*Brokers, error) {
	b, err := queue.ParseBroker(raw)
	if err != nil {
		return nil, err
	}
	var codec kgo.Opt
	if compression != "" {
		if codec, err = queue.Compression(compression); err != nil {
			return nil, err
		}
	}
	if !b.Embedded {
		return &Brokers{Seeds: b.Seeds, compression: codec}, nil
	}
	e, err := queue.StartEmbedded(b.DataDir)
	if err != nil {
		return nil, err
	}
	return &Brokers{Seeds: e.Addrs(), compression: codec, embedded: e}, nil
}

// OpenBlobs opens the WARC storage a --blobs URL names.
func OpenBlobs(ctx context.Context, raw string, opts ...blob.Option) (blob.Store, error) {
	return blob.Open(ctx, raw, opts...)
}

// IsLocalBlobs reports whether --blobs names a local folder, where segments can be
// written in place instead of uploaded.
func IsLocalBlobs(raw string) (dir string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" {
		return "", false
	}
	return u.Path, true
}

// OpenCache opens the shared cache a --cache URL names.
func OpenCache(ctx context.Context, raw string, opts ...cache.Option) (cache.Cache, error) {
	if strings.TrimSpace(raw) == "" {
		raw = "memory://"
	}
	return cache.Open(ctx, raw, opts...)
}

// Core is what every tier process opens first: its metrics registry (with the Go
// and process collectors), the metadata store and the brokers.
type Core struct {
	Registry *prometheus.Registry
	Store    store.Store
	Brokers  *Brokers
}

// OpenCore opens the registry, the --db store and the --broker.
func OpenCore(ctx context.Context, c Config) (*Core, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	st, err := OpenStore(ctx, c.DB)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	brokers, err := OpenBroker(c.Broker, c.BrokerCompression)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("open broker: %w", err)
	}
	return &Core{Registry: reg, Store: st, Brokers: brokers}, nil
}

// Close closes the store and an embedded broker.
func (c *Core) Close() {
	c.Store.Close()
	c.Brokers.Close()
}
