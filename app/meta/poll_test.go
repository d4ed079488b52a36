package meta_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// silentLog is a log that sends no notifications (as SQLite's does not)
// and counts its reads.
type silentLog struct {
	ports.MetaLog // only: the notifier of the log underneath stays hidden
	reads         atomic.Int64
}

func (l *silentLog) Read(ctx context.Context, after uint64, limit int) ([]ports.Row, error) {
	l.reads.Add(1)
	return l.MetaLog.Read(ctx, after, limit)
}

// An idle tailer polls less and less often, and still finds the rows
// another process writes without telling it, within the longest interval.
func TestIdleTailerBacksOffAndStillFindsRows(t *testing.T) {
	shared := memlog.New()
	log := &silentLog{MetaLog: shared}
	p := openPlane(t, log, 0) // polls every 5 ms, at most every 100 ms
	time.Sleep(100 * time.Millisecond)
	before := log.reads.Load()
	time.Sleep(500 * time.Millisecond)
	// Every 5 ms that is a hundred reads; backed off, about five.
	if reads := log.reads.Load() - before; reads > 20 {
		t.Fatalf("an idle tailer read the log %d times in 500 ms", reads)
	}
	other := openPlane(t, shared, 0)
	by := register(t, other, 1, 10)
	written := time.Now()
	if _, err := other.ProposeOne(context.Background(), putKey(by, "k")); err != nil {
		t.Fatal(err)
	}
	for {
		v := p.View()
		if _, ok := v.KV(domain.SpaceRegistry, "k"); ok {
			break
		}
		if time.Since(written) > time.Second {
			t.Fatal("the idle tailer did not find a row written without a notification within a second")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
