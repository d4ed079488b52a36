package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// countingStore counts ranged GETs and can slow them down.
type countingStore struct {
	ports.ObjectStore
	gets  atomic.Int64
	delay time.Duration
}

func (s *countingStore) Get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	s.gets.Add(1)
	time.Sleep(s.delay)
	return s.ObjectStore.Get(ctx, key, off, length)
}

// TestColdReadersShareOneFetch: 32 readers of the same cold section cause
// one fetch of it (an index GET plus a section GET), not 32.
func TestColdReadersShareOneFetch(t *testing.T) {
	store := &countingStore{ObjectStore: memstore.New()}
	p := startProcess(t, memlog.New(), store, 1, 1)
	p.engine.cfg.TailRecords = 1
	id := p.create(t, "/s")
	ctx := context.Background()
	for i := range 10 {
		p.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(i)), nil)
	}
	if _, err := p.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	store.gets.Store(0)
	store.delay = 20 * time.Millisecond
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := p.engine.byID(id).Read(ctx, 0, 5)
			recs := r.Records
			if err != nil || len(recs) != 5 || string(recs[0].Body) != "0" {
				t.Errorf("read: %d records, %v", len(recs), err)
			}
		}()
	}
	wg.Wait()
	if got := store.gets.Load(); got > 2 {
		t.Fatalf("%d GETs for 32 readers of one section, want 2", got)
	}
}

func TestBlockCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newBlockCache(3 * (100 + 16 + 64))
	frame := func() domain.Frame { return domain.Frame{Records: []domain.Record{{Body: make([]byte, 100)}}} }
	loads := 0
	load := func() (domain.Frame, error) { loads++; return frame(), nil }
	ctx := context.Background()
	for i := range uint64(3) {
		c.get(ctx, blockKey{i, 1}, load)
	}
	c.get(ctx, blockKey{0, 1}, load) // 0 is now the most recent
	c.get(ctx, blockKey{3, 1}, load) // evicts 1
	if loads != 4 || !c.has(blockKey{0, 1}) || c.has(blockKey{1, 1}) || !c.has(blockKey{3, 1}) {
		t.Fatalf("loads %d, cached 0:%v 1:%v 3:%v", loads, c.has(blockKey{0, 1}), c.has(blockKey{1, 1}), c.has(blockKey{3, 1}))
	}
	if c.size > c.max {
		t.Fatalf("cache holds %d bytes over its %d bound", c.size, c.max)
	}
	failing := func() (domain.Frame, error) { return domain.Frame{}, errors.New("boom") }
	if _, err := c.get(ctx, blockKey{9, 1}, failing); err == nil || c.has(blockKey{9, 1}) {
		t.Fatal("a failed load was cached")
	}
}
