// Package config gives every binary the same configuration scheme: each flag can
// also be set by an environment variable CRAWLER_<NAME>, where NAME is the flag name
// upper-cased with '-' and '.' turned into '_' (-default-delay ->
// CRAWLER_DEFAULT_DELAY). A flag given on the command line wins over the
// environment, which wins over the default, so a container image can be configured
// by environment and still be overridden by arguments.
package config

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// Prefix starts every environment variable the crawler reads.
const Prefix = "CRAWLER_"

// EnvName returns the environment variable of a flag.
func EnvName(flagName string) string {
	r := strings.NewReplacer("-", "_", ".", "_")
	return Prefix + strings.ToUpper(r.Replace(flagName))
}

// ApplyEnv sets every flag of fs not given on the command line from its environment
// variable, if that is set. Call it after fs.Parse. lookup is os.LookupEnv outside
// tests.
func ApplyEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		v, ok := lookup(EnvName(f.Name))
		if !ok {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", EnvName(f.Name), v, err))
		}
	})
	return errors.Join(errs...)
}

// Usage appends the environment variable to every flag's help text.
func Usage(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		f.Usage += " [$" + EnvName(f.Name) + "]"
	})
}
