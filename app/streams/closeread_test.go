package streams

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/ports"
)

// heldLog is a metadata log whose appends wait while it is held: the
// metadata lags the engine for as long as a test wants.
type heldLog struct {
	*memlog.Log
	mu   sync.Mutex
	held chan struct{} // closed on release; nil when not held
}

func (l *heldLog) hold() {
	l.mu.Lock()
	l.held = make(chan struct{})
	l.mu.Unlock()
}

func (l *heldLog) release() {
	l.mu.Lock()
	close(l.held)
	l.held = nil
	l.mu.Unlock()
}

func (l *heldLog) Append(ctx context.Context, index uint64, payload []byte) error {
	l.mu.Lock()
	held := l.held
	l.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return l.Log.Append(ctx, index, payload)
}

// A reader waiting at the tail of a stream that an append closes is
// answered with that append's records and the closure together, never the
// records alone, however long the seal's record takes after the records
// are durable: the page's closure comes from where its records do, at the
// same moment. Head agrees with the reads throughout.
func TestReaderSeesTheClosingAppendWithTheClosure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records []string
	}{
		{"append and close", []string{"final"}},
		{"close without records", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &heldLog{Log: memlog.New()}
			p := start(t, log, memstore.New(), 1, newClock())
			ctx := context.Background()
			mustCreate(t, p, "/s")
			mustAppend(t, p, "/s", "a")
			page, err := p.svc.Read(ctx, "/s", 1, ports.ReadLimits{})
			if err != nil || len(page.Records) != 0 || !page.UpToDate || page.Closed {
				t.Fatalf("read at the tail: %+v, %v", page, err)
			}

			log.hold() // the seal's record waits; the records' WAL bulk does not
			appended := make(chan error, 1)
			go func() {
				_, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs(tc.records...), Close: true})
				appended <- err
			}()
			released := false
			for waited := 0; ; waited++ {
				select {
				case <-page.Changed:
				case <-time.After(100 * time.Millisecond):
					if released {
						t.Fatal("the reader was not woken by the close")
					}
				}
				if page, err = p.svc.Read(ctx, "/s", 1, ports.ReadLimits{}); err != nil {
					t.Fatalf("read: %v", err)
				}
				if head, err := p.svc.Head(ctx, "/s"); err != nil || head.Closed != page.Closed || (page.Closed && head.Next != page.Next) {
					t.Fatalf("head %+v, %v while a read at the tail finds %+v", head, err, page)
				}
				if page.Closed {
					break
				}
				if len(page.Records) > 0 {
					t.Fatalf("the closing append's records %q reached a reader without the closure: %+v", bodies(page.Records), page)
				}
				if !released && waited >= 2 {
					log.release()
					released = true
				}
			}
			if !released {
				log.release()
			}
			if err := <-appended; err != nil {
				t.Fatalf("append and close: %v", err)
			}
			if got := bodies(page.Records); !slices.Equal(got, tc.records) && !(len(got) == 0 && len(tc.records) == 0) {
				t.Fatalf("closed page %q, want %q", got, tc.records)
			}
			if want := 1 + uint64(len(tc.records)); !page.UpToDate || page.Next != want {
				t.Fatalf("closed page %+v, want up to date at %d", page, want)
			}
		})
	}
}
