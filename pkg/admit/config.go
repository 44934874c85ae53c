package admit

import (
	"errors"
	"flag"
	"fmt"
	"time"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultMaxPathDepth       = 16
	DefaultMaxRepeatedSegment = 2
	DefaultMaxQueryParams     = 16
	DefaultLevels             = 4
)

// Config holds the admission rules. For the trap limits (MaxPathDepth,
// MaxRepeatedSegment, MaxQueryParams) zero means the default and a negative
// value turns the rule off. The calendar window (CalendarPast,
// CalendarFuture) is off unless set: the URL-pattern budgets (package
// pattern) bound calendars by what their pages turn out to be, where a fixed
// window let hundreds of near-identical months through and cut real archives
// older than it.
type Config struct {
	Scope                        Scope
	MaxDepth                     int // link depth from a seed; 0 = unlimited
	MaxPathDepth                 int // path segments; default 16
	MaxRepeatedSegment           int // the same path segment repeated more than this many times -> trap; default 2
	MaxHostPages                 int // per-host page budget; 0 = unlimited
	MaxQueryParams               int // default 16
	CalendarPast, CalendarFuture time.Duration
	Levels                       int // number of front-queue priority levels; default 4
}

// RegisterFlags registers the configuration under prefix (e.g. "admit.").
func (c *Config) RegisterFlags(fs *flag.FlagSet, prefix string) {
	fs.Var(&c.Scope, prefix+"scope", "which hosts discovered links may lead to: all, host (seed hosts) or domain (seed registrable domains)")
	fs.IntVar(&c.MaxDepth, prefix+"max-depth", 0, "maximum link depth from a seed (0 = unlimited)")
	fs.IntVar(&c.MaxPathDepth, prefix+"max-path-depth", DefaultMaxPathDepth, "maximum number of path segments (negative = no limit)")
	fs.IntVar(&c.MaxRepeatedSegment, prefix+"max-repeated-segment", DefaultMaxRepeatedSegment, "maximum occurrences of one path segment (negative = no limit)")
	fs.IntVar(&c.MaxHostPages, prefix+"max-host-pages", 0, "per-host page budget (0 = unlimited)")
	fs.IntVar(&c.MaxQueryParams, prefix+"max-query-params", DefaultMaxQueryParams, "maximum number of query parameters (negative = no limit)")
	fs.DurationVar(&c.CalendarPast, prefix+"calendar-past", 0, "dates in URLs further back than this are calendar traps (0 = no limit; the pattern budgets bound calendars anyway)")
	fs.DurationVar(&c.CalendarFuture, prefix+"calendar-future", 0, "dates in URLs further ahead than this are calendar traps (0 = no limit)")
	fs.IntVar(&c.Levels, prefix+"levels", DefaultLevels, "number of front-queue priority levels")
}

// Validate reports settings New cannot honour. Zero and negative trap limits
// are valid (default and off).
func (c *Config) Validate() error {
	var errs []error
	switch c.Scope {
	case ScopeAll, ScopeHost, ScopeDomain:
	default:
		errs = append(errs, fmt.Errorf("admit scope %v: %w", c.Scope, ErrScope))
	}
	if c.MaxDepth < 0 {
		errs = append(errs, fmt.Errorf("admit max depth %d: must not be negative (0 = unlimited)", c.MaxDepth))
	}
	if c.MaxHostPages < 0 {
		errs = append(errs, fmt.Errorf("admit max host pages %d: must not be negative (0 = unlimited)", c.MaxHostPages))
	}
	if c.Levels < 0 {
		errs = append(errs, fmt.Errorf("admit levels %d: must not be negative (0 = default %d)", c.Levels, DefaultLevels))
	}
	return errors.Join(errs...)
}

// withDefaults fills zero fields. Negative trap limits stay negative: they
// mean "off".
func (c Config) withDefaults() Config {
	if c.MaxPathDepth == 0 {
		c.MaxPathDepth = DefaultMaxPathDepth
	}
	if c.MaxRepeatedSegment == 0 {
		c.MaxRepeatedSegment = DefaultMaxRepeatedSegment
	}
	if c.MaxQueryParams == 0 {
		c.MaxQueryParams = DefaultMaxQueryParams
	}
	if c.Levels <= 0 {
		c.Levels = DefaultLevels
	}
	return c
}
