package wal

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/ports"
)

// BenchmarkClosedLoopAppenders: 64 appenders, each waiting for its
// acknowledgement before its next frame, against a store whose PUTs take
// 2 ms, with the linger off and on (see lingerSideBySide): frames per PUT and
// appends/s. An op is one append.
func BenchmarkClosedLoopAppenders(b *testing.B) {
	lingerSideBySide(b, func(b *testing.B, w *WAL) {
		var next atomic.Int64
		var wg sync.WaitGroup
		b.ResetTimer()
		for a := range 64 {
			wg.Go(func() {
				for off := uint64(0); next.Add(1) <= int64(b.N); off++ {
					if err := submitWait(b, w, frame(uint64(a), off, "x")); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	})
}

// BenchmarkOpenLoopAppends: appends arriving at a steady 10,000/s, each
// from a client that does not wait for the one before, against a store
// whose PUTs take 2 ms, with the linger off and on (see lingerSideBySide): what the
// linger costs such a flow in latency and saves in PUTs. An op is one
// append.
func BenchmarkOpenLoopAppends(b *testing.B) {
	lingerSideBySide(b, func(b *testing.B, w *WAL) {
		latency := make([]time.Duration, b.N)
		var wg sync.WaitGroup
		start := time.Now()
		for i := range b.N {
			// The i-th append is due i×100 µs after the start.
			if wait := time.Until(start.Add(time.Duration(i) * 100 * time.Microsecond)); wait > 0 {
				time.Sleep(wait)
			}
			wg.Add(1)
			t0 := time.Now()
			if err := w.Submit(frame(uint64(i%64), uint64(i/64), "x"), func(error) {
				latency[i] = time.Since(t0)
				wg.Done()
			}); err != nil {
				b.Fatal(err)
			}
		}
		wg.Wait()
		b.StopTimer()
		slices.Sort(latency)
		b.ReportMetric(float64(latency[b.N/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(latency[b.N*99/100].Microseconds()), "p99-µs")
	})
}

// lingerSideBySide runs load on a WAL over a store whose PUTs take 2 ms,
// with the linger off, with waits of up to one PUT latency and of up to
// two (the default, lingerPutTimes), and reports frames per PUT.
func lingerSideBySide(b *testing.B, load func(b *testing.B, w *WAL)) {
	for _, c := range []struct {
		name      string
		maxLinger time.Duration
		putTimes  int
	}{{"linger=off", -1, lingerPutTimes}, {"linger=1put", 0, 1}, {"linger=2puts", 0, 2}} {
		b.Run(c.name, func(b *testing.B) {
			store := &slowStore{ObjectStore: &discardStore{ObjectStore: memstore.New()}, delay: 2 * time.Millisecond}
			w := Open(Config{Store: store, Node: 1, Epoch: 1, MaxLinger: c.maxLinger})
			w.linger.putTimes = c.putTimes
			defer w.Close()
			load(b, w)
			st := w.Stats()
			b.ReportMetric(float64(st.Submissions)/float64(st.Puts), "frames/PUT")
		})
	}
}

// discardStore keeps keys but not bytes, so the in-memory store does not
// grow with the benchmark.
type discardStore struct{ ports.ObjectStore }

func (s *discardStore) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	return s.ObjectStore.PutIfAbsent(ctx, key, nil)
}
