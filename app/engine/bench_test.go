package engine

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// BenchmarkFastProducerSlowStore: 256 producers of 64 KiB records against a
// store whose PUTs take 50 ms, with uploads to data objects every 100 ms.
// Backpressure must keep the heap bounded; the peak is reported.
func BenchmarkFastProducerSlowStore(b *testing.B) {
	store := &slowStore{ObjectStore: &discardStore{ObjectStore: memstore.New()}, delay: 50 * time.Millisecond}
	p := startProcessB(b, store)
	ids := make([]uint64, 16)
	for i := range ids {
		ids[i] = p.createB(b, i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.engine.RunMaintenance(ctx, noLease{}, 100*time.Millisecond, time.Hour)
	var peak atomic.Uint64
	go samplePeakHeap(ctx, &peak)
	body := make([]byte, 64<<10)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range 256 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := p.engine.byID(ids[w%len(ids)]).appendRecords(ctx, []domain.Record{{Body: body}}, nil); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(b.N)*64/1024, "MiB-written")
}

func samplePeakHeap(ctx context.Context, peak *atomic.Uint64) {
	var m runtime.MemStats
	for ctx.Err() == nil {
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func startProcessB(b *testing.B, store *slowStore) *process {
	p := startProcessWAL(b, memlog.New(), store, 1, 1, wal.Config{RetryFor: time.Second, MaxBufferedBytes: 16 << 20})
	p.engine.cfg.TailRecords = 16
	p.engine.cfg.MaxUncommittedBytes = 32 << 20
	p.engine.cfg.MaxObjectBytes = 8 << 20
	return p
}

// discardStore keeps keys but not bytes, so the heap measures the engine,
// not the in-memory store.
type discardStore struct{ ports.ObjectStore }

func (s *discardStore) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	return s.ObjectStore.PutIfAbsent(ctx, key, nil)
}

type noLease struct{}

func (noLease) Held() (uint64, bool) { return 0, false }
