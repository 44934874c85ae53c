// Command broker runs a Kafka-compatible broker with its log on disk: franz-go's
// kfake, as the embedded mode uses it, in a process of its own. It gives the dev
// cluster and the cluster tests a Kafka broker on loopback without Docker or a JVM.
//
//	broker -listen 127.0.0.1:9092 -data DIR [-brokers N] [-sync-writes]
//
// Once it accepts connections it prints one line to standard output,
//
//	listening 127.0.0.1:9092[,127.0.0.1:9093...]
//
// naming the seed brokers to give clients (the same comma-separated form as
// --broker kafka://...). Logs go to standard error. SIGINT or SIGTERM stops it
// cleanly: the listeners close, then the log segments and the topic and group state
// are flushed to -data, and the exit code is 0. A second signal exits at once. A
// broker started again on the same -data resumes with its topics, records and
// committed offsets; without -sync-writes, writes reach the disk through the page
// cache, so a SIGKILL loses nothing but a machine crash may lose the last batches.
//
// It is a development and test broker, not a production one: every partition has
// one replica, and -brokers N only spreads partition leadership over N listeners of
// one process. Each flag can also be set by an environment variable
// CRAWLER_BROKER_<NAME> (-sync-writes -> CRAWLER_BROKER_SYNC_WRITES), prefixed so
// they never collide with the crawler's own CRAWLER_LISTEN or CRAWLER_DATA.
//
// For fault testing, -inject-errors fails a share of produce, fetch and offset
// commit requests with retriable errors (see injectKinds), chosen by a seed; the
// count of failed requests of each kind is logged when the broker stops.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/crawlcluster/crawler/internal/version"
	"github.com/crawlcluster/crawler/pkg/config"
	"github.com/crawlcluster/crawler/pkg/queue"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Config is the broker's configuration.
type Config struct {
	Listen         string         // comma-separated host:port, one per broker, or one to count up from
	DataDir        string         // where the log, topics and groups live
	Brokers        int            // listeners (broker node IDs) in the cluster
	SyncWrites     bool           // fsync every produced batch
	BrokerConfigs  brokerConfigs  // kfake broker-level configs, key=value
	LogLevel       string         // debug, info, warn, error
	LogFormat      string         // text or json
	StopOnStdinEOF bool           // stop when standard input closes (brokertest uses it)
	InjectErrors   errorInjection // fault testing: requests to fail with retriable errors

	listenAddrs []string   // Listen expanded to one address per broker, set by Validate
	level       slog.Level // LogLevel parsed by Validate
}

// RegisterFlags registers the broker's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.BrokerConfigs = brokerConfigs{}
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:9092", "address to listen on: host:port for the first broker (others count up from the port; port 0 picks free ports), or a comma-separated host:port per broker")
	fs.StringVar(&c.DataDir, "data", "", "data folder for the log, topics and committed offsets (required)")
	fs.IntVar(&c.Brokers, "brokers", 1, "number of brokers (listeners) in the cluster")
	fs.BoolVar(&c.SyncWrites, "sync-writes", false, "fsync every produced batch, so even a machine crash loses nothing acknowledged (slower)")
	fs.Var(c.BrokerConfigs, "config", "broker config key=value[,key=value...], repeatable (e.g. group.consumer.session.timeout.ms=10000); message.max.bytes defaults to the crawler's record limit")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error (debug includes kfake's request log)")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&c.StopOnStdinEOF, "stop-on-stdin-eof", false, "stop cleanly when standard input closes, so a parent process that dies takes the broker with it")
	fs.Var(&c.InjectErrors, "inject-errors", "for fault testing only: fail this share (0 to 1) of produce, fetch and offset commit requests with retriable errors, e.g. produce=0.1,fetch=0.05,commit=0.2,seed=7; "+
		"produce fails with NOT_LEADER_OR_FOLLOWER or REQUEST_TIMED_OUT (after appending), fetch with NOT_LEADER_OR_FOLLOWER or KAFKA_STORAGE_ERROR, commit with COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR or REQUEST_TIMED_OUT (after committing); "+
		"which requests fail follows from the seed and their order")
}

// Validate checks the configuration and expands -listen to one address per broker.
func (c *Config) Validate() error {
	if c.DataDir == "" {
		return errors.New("-data is required")
	}
	if err := c.level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("-log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("-log-format %q: want text or json", c.LogFormat)
	}
	addrs, err := expandListen(c.Listen, c.Brokers)
	if err != nil {
		return err
	}
	c.listenAddrs = addrs
	return nil
}

// expandListen turns -listen and -brokers into one address per broker. kfake
// advertises each listener's own address in metadata, so a wildcard host would
// send clients to 0.0.0.0; it is refused.
func expandListen(listen string, brokers int) ([]string, error) {
	if brokers < 1 {
		return nil, fmt.Errorf("-brokers %d: want at least 1", brokers)
	}
	var addrs []string
	for _, a := range strings.Split(listen, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	switch {
	case len(addrs) == 0:
		return nil, errors.New("-listen is empty")
	case len(addrs) > 1 && len(addrs) != brokers:
		return nil, fmt.Errorf("-listen names %d addresses for %d brokers", len(addrs), brokers)
	}
	out := make([]string, 0, brokers)
	for i := range brokers {
		a := addrs[min(i, len(addrs)-1)]
		host, portStr, err := net.SplitHostPort(a)
		if err != nil {
			return nil, fmt.Errorf("-listen %q: %w", a, err)
		}
		port, err := strconv.Atoi(portStr)
		if err != nil || port < 0 || port > 65535 {
			return nil, fmt.Errorf("-listen %q: bad port", a)
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			return nil, fmt.Errorf("-listen %q: the broker advertises the address it listens on, so it needs a specific host, not a wildcard", a)
		}
		if len(addrs) == 1 && port != 0 {
			port += i
			if port > 65535 {
				return nil, fmt.Errorf("-listen %q: %d brokers do not fit below port 65535", a, brokers)
			}
		}
		out = append(out, net.JoinHostPort(host, strconv.Itoa(port)))
	}
	return out, nil
}

// brokerConfigs collects -config key=value pairs.
type brokerConfigs map[string]string

func (b brokerConfigs) String() string {
	var parts []string
	for k, v := range b {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

func (b brokerConfigs) Set(s string) error {
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return fmt.Errorf("want key=value, got %q", kv)
		}
		b[k] = v
	}
	return nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cfg Config
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.RegisterFlags(fs)
	showVersion := version.Flag(fs)
	fs.VisitAll(func(f *flag.Flag) { f.Usage += " [$" + envName(f.Name) + "]" })
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: broker -listen 127.0.0.1:9092 -data DIR [-brokers N] [-sync-writes] [flags]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	err := applyEnv(fs, os.LookupEnv)
	if err == nil && *showVersion {
		version.Print(stdout, "broker")
		return 0
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "broker: %v\n", err)
		return 2
	}
	log := newLogger(stderr, cfg)

	unlock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		log.Error("lock data folder", "dir", cfg.DataDir, "err", err)
		return 1
	}
	defer unlock()

	c, err := start(cfg, log)
	if err != nil {
		log.Error("start broker", "err", err)
		return 1
	}
	addrs := c.ListenAddrs()
	log.Info("broker started", "addrs", strings.Join(addrs, ","), "data", cfg.DataDir, "sync_writes", cfg.SyncWrites)
	var injected func() string
	if cfg.InjectErrors.enabled() {
		injected = cfg.InjectErrors.install(c)
		log.Warn("injecting errors for fault testing", "inject_errors", cfg.InjectErrors.String())
	}
	fmt.Fprintf(stdout, "listening %s\n", strings.Join(addrs, ","))

	stop := make(chan string, 2)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			stop <- s.String()
		}
	}()
	if cfg.StopOnStdinEOF {
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			stop <- "standard input closed"
		}()
	}
	why := <-stop
	log.Info("stopping broker", "reason", why)
	if injected != nil {
		log.Info("injected errors", "failed_requests", injected())
	}
	done := make(chan struct{})
	go func() {
		c.Close() // closes the listeners, then flushes segments and state to -data
		close(done)
	}()
	select {
	case <-done:
		log.Info("broker stopped")
		return 0
	case why := <-stop:
		log.Error("broker stopped without flushing its log", "reason", why)
		return 1
	}
}

// envName returns the environment variable of a flag: CRAWLER_BROKER_<NAME>.
func envName(flagName string) string {
	return strings.Replace(config.EnvName(flagName), config.Prefix, config.Prefix+"BROKER_", 1)
}

// applyEnv sets every flag not given on the command line from its environment
// variable, as config.ApplyEnv does for the crawler's own binaries.
func applyEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := lookup(envName(f.Name)); ok && !given[f.Name] {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", envName(f.Name), v, err))
			}
		}
	})
	return errors.Join(errs...)
}

// start builds the kfake cluster. kfake listens on 127.0.0.1 by itself; the
// ListenFn puts each broker on its configured address instead.
func start(cfg Config, log *slog.Logger) (*kfake.Cluster, error) {
	ports := make([]int, len(cfg.listenAddrs))
	for i, a := range cfg.listenAddrs {
		_, p, _ := net.SplitHostPort(a)
		ports[i], _ = strconv.Atoi(p)
	}
	next := 0
	listen := func(network, _ string) (net.Listener, error) {
		if next >= len(cfg.listenAddrs) {
			return nil, fmt.Errorf("broker %d has no -listen address", next)
		}
		addr := cfg.listenAddrs[next]
		next++
		ln, err := net.Listen(network, addr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		return ln, nil
	}
	bcfg := map[string]string{"message.max.bytes": strconv.Itoa(queue.MaxRecordBytes)}
	for k, v := range cfg.BrokerConfigs {
		bcfg[k] = v
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(cfg.Brokers),
		kfake.Ports(ports...),
		kfake.ListenFn(listen),
		kfake.DataDir(cfg.DataDir),
		kfake.BrokerConfigs(bcfg),
		kfake.WithLogger(kfakeLogger{log, cfg.level}),
	}
	if cfg.SyncWrites {
		opts = append(opts, kfake.SyncWrites())
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start kfake on %s with data in %s: %w", strings.Join(cfg.listenAddrs, ","), cfg.DataDir, err)
	}
	return c, nil
}

// newLogger builds the broker's logger and routes the standard log package
// to it (config.RouteStdLog).
func newLogger(w io.Writer, cfg Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	l := slog.New(h)
	config.RouteStdLog(l)
	return l
}

// kfakeLogger routes kfake's printf-style log to slog. kfake logs every request at
// info, so that level maps to debug here; its warnings and errors pass through.
type kfakeLogger struct {
	log *slog.Logger
	min slog.Level
}

func (k kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	var l slog.Level
	switch level {
	case kfake.LogLevelError:
		l = slog.LevelError
	case kfake.LogLevelWarn:
		l = slog.LevelWarn
	case kfake.LogLevelNone:
		return
	default:
		l = slog.LevelDebug
	}
	if l < k.min {
		return
	}
	k.log.Log(context.Background(), l, fmt.Sprintf(format, args...), "component", "kfake")
}
