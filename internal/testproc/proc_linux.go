package testproc

import (
	"os/exec"
	"runtime"
	"syscall"
)

// PR_SET_PDEATHSIG fires when the thread that started the child ends, not
// the process, and Go may end threads. So every server is started from one
// goroutine locked to its thread for the life of the process: the signal then
// fires exactly when the test process is gone.
var spawn = make(chan spawnReq)

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func init() {
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for r := range spawn {
			r.done <- r.cmd.Start()
		}
	}()
}

// Start starts cmd so that the kernel kills it with SIGKILL when this
// process dies.
func Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	done := make(chan error)
	spawn <- spawnReq{cmd, done}
	return <-done
}
