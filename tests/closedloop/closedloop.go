// Package closedloop runs a benchmark's load in which each worker starts
// its next operation when its last one has completed, as a client waiting
// for each acknowledgement does.
package closedloop

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Run runs op on workers goroutines, each calling op(worker) again while
// more says so, and returns every completed operation's latency and the
// time from the start to the last completion. The benchmark's timer runs
// only meanwhile. An error ends its worker and fails the benchmark.
func Run(b *testing.B, workers int, more func() bool, op func(worker int) error) ([]time.Duration, time.Duration) {
	lats := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for more() {
				t0 := time.Now()
				if err := op(w); err != nil {
					b.Error(err)
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	return slices.Concat(lats...), elapsed
}

// Count is a more for Run that allows n operations in all.
func Count(n int) func() bool {
	var started atomic.Int64
	return func() bool { return started.Add(1) <= int64(n) }
}

// For is a more for Run that allows operations for d from the first one.
func For(d time.Duration) func() bool {
	var deadline atomic.Int64
	return func() bool {
		deadline.CompareAndSwap(0, time.Now().Add(d).UnixNano())
		return time.Now().UnixNano() < deadline.Load()
	}
}

// ReportMs reports lat's p50 and p99 in milliseconds, named what.
func ReportMs(b *testing.B, what string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(q(0.50), what+"-p50-ms")
	b.ReportMetric(q(0.99), what+"-p99-ms")
}
