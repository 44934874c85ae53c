//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// killGrace is how long the crawler has between SIGTERM and SIGKILL.
const killGrace = 10 * time.Second

// runCrawler runs name with args in its own process group, its output
// passed through to stdout and stderr, until it exits, timeout passes (0: no limit) or
// ctx ends. The whole group is stopped, so a wrapper such as "go run"
// cannot leave the real crawler behind.
func runCrawler(ctx context.Context, timeout time.Duration, name string, args []string, stdout, stderr io.Writer) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return signalGroup(cmd.Process, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	err := cmd.Wait()
	// Leftovers of the group (children that outlived their parent) must not
	// go on crawling a web that is about to close.
	_ = signalGroup(cmd.Process, syscall.SIGKILL)
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return fmt.Errorf("%s stopped after -timeout %v: %w", name, timeout, err)
		}
		return fmt.Errorf("%s stopped on signal: %w", name, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal process group %d: %w", p.Pid, err)
	}
	return nil
}
