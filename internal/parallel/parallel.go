// Package parallel runs independent, CPU-bound steps of a batch on every core.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(0) .. fn(n-1), each exactly once, on up to GOMAXPROCS
// goroutines, and returns when all calls have. A goroutine is started only per
// minPerWorker items, so small batches run on the caller's goroutine. fn must
// be safe to call concurrently for different i.
func For(n, minPerWorker int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(minPerWorker, 1))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
