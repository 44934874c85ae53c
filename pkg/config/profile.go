package config

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
)

// Profile is a tier's -cpuprofile: the cluster's processes are profiled one
// by one (the bench's -cluster-profile), as the embedded crawler is with its
// own -cpuprofile.
type Profile struct {
	CPU string
}

// RegisterFlags registers -cpuprofile.
func (p *Profile) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&p.CPU, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
}

// Start starts the CPU profile, if asked for, and returns the function that
// writes it out; call that once, as the process ends.
func (p *Profile) Start() (stop func(), err error) {
	if p.CPU == "" {
		return func() {}, nil
	}
	f, err := os.Create(p.CPU)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile %s: %w", p.CPU, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
