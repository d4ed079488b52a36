// Package enginefaults runs the engine on an object store that fails,
// stalls and loses responses, from fixed seeds, and checks that no
// acknowledged record is lost or duplicated.
package enginefaults

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/faultstore"
)

type process struct {
	plane  *meta.Plane
	engine *engine.Engine
}

func start(t *testing.T, log ports.MetaLog, store ports.ObjectStore, epoch uint64) *process {
	t.Helper()
	ctx := context.Background()
	plane, err := meta.Open(ctx, meta.Config{Log: log, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plane.Close() })
	if r, err := plane.ProposeOne(ctx, &domain.RegisterNode{Node: 1, Epoch: epoch, Slots: 1}); err != nil || !r.OK() {
		t.Fatalf("register: %v %v", r, err)
	}
	by := domain.Proposer{Node: 1, Epoch: epoch}
	w := wal.Open(wal.Config{Store: store, Node: 1, Epoch: epoch, RetryFor: 20 * time.Second})
	return &process{plane: plane, engine: engine.New(engine.Config{Plane: plane, By: by, Store: store, WAL: w, TailRecords: 8})}
}

// createStreams creates n streams "0", "1", … written by p, the process of
// node 1 at epoch 1, and returns their ids.
func createStreams(t *testing.T, p *process, n int) []uint64 {
	t.Helper()
	ids := make([]uint64, n)
	for i := range ids {
		r, err := p.plane.ProposeOne(context.Background(), &domain.CreateStream{By: domain.Proposer{Node: 1, Epoch: 1},
			Name: fmt.Sprint(i), Open: true})
		if err != nil || r.Code != domain.ResultOK {
			t.Fatalf("create: %v %v", r, err)
		}
		ids[i] = r.Value
	}
	return ids
}

func TestFaultyStoreLosesNothing(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runFaulty(t, seed) })
	}
}

func runFaulty(t *testing.T, seed uint64) {
	ctx := context.Background()
	log, inner := memlog.New(), memstore.New()
	store := faultstore.New(inner, faultstore.Config{Seed: seed,
		PutIfAbsent: faultstore.Faults{Fail: 0.2, Ambiguous: 0.2, Delay: 0.3, MaxDelay: 20 * time.Millisecond},
		Get:         faultstore.Faults{Fail: 0.1, Delay: 0.2, MaxDelay: 10 * time.Millisecond},
		List:        faultstore.Faults{Fail: 0.1},
		Delete:      faultstore.Faults{Fail: 0.2, Ambiguous: 0.2},
	})
	p := start(t, log, store, 1)
	ids := createStreams(t, p, 4)
	for _, id := range ids {
		if _, err := p.engine.Open(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	acked := appendUnderFaults(t, p, ids)
	if store.Total().Failed == 0 || store.Total().Ambiguous == 0 {
		t.Fatalf("no faults injected: %+v", store.Total())
	}
	// Restart on a healthy store: everything acknowledged must be there once.
	store.SetEnabled(false)
	next := start(t, log, inner, 2)
	next.plane.WaitFor(ctx, p.plane.Applied())
	for i, id := range ids {
		if _, err := next.engine.Open(ctx, id); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, next.engine, id)
		if strings.Join(got, ",") != strings.Join(acked[i], ",") {
			t.Fatalf("stream %d holds %d records, %d acknowledged:\n got %v\nwant %v", id, len(got), len(acked[i]), got, acked[i])
		}
	}
	t.Logf("faults: %+v", store.Total())
}

// appendUnderFaults appends from one writer per stream while uploads run,
// and returns what each stream acknowledged, in order.
func appendUnderFaults(t *testing.T, p *process, ids []uint64) [][]string {
	ctx := context.Background()
	acked := make([][]string, len(ids))
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				p.engine.Upload(ctx) // errors are retried by the next pass
			}
		}
	}()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 100 {
				body := fmt.Sprintf("%d-%d", i, n)
				if _, err := appendHeld(ctx, p.engine, id, ports.AppendRequest{Records: []domain.Record{{Body: []byte(body)}}}); err != nil {
					t.Errorf("append %s: %v", body, err)
					return
				}
				acked[i] = append(acked[i], body)
			}
		}()
	}
	wg.Wait()
	close(stop)
	return acked
}

func readAll(t *testing.T, e *engine.Engine, id uint64) []string {
	h, ok := e.Held(id)
	if !ok {
		t.Fatalf("stream %d is not open", id)
	}
	var out []string
	for off := uint64(0); ; {
		r, err := h.Read(context.Background(), off, 100)
		recs := r.Records
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			return out
		}
		for _, r := range recs {
			out = append(out, string(r.Body))
		}
		off += uint64(len(recs))
	}
}

// appendHeld appends to stream id if it is open here, as the service does
// with the handle it opened.
func appendHeld(ctx context.Context, e *engine.Engine, id uint64, req ports.AppendRequest) (ports.AppendResult, error) {
	h, ok := e.Held(id)
	if !ok {
		return ports.AppendResult{}, engine.ErrNotLocal
	}
	return h.Append(ctx, req)
}
