package streams

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// clock is a settable test clock.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(1_700_000_000_000)
	return c
}

func (c *clock) Now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func (c *clock) Held() (uint64, bool)    { return 1, true } // the lease, always held
var _ engine.LeaseHolder = (*clock)(nil)

// process is one node process: plane, WAL, engine and service.
type process struct {
	svc    *Service
	engine *engine.Engine
	plane  *meta.Plane
	clock  *clock
}

func start(t *testing.T, log ports.MetaLog, store ports.ObjectStore, node domain.NodeID, c *clock) *process {
	t.Helper()
	return startPlane(t, meta.Config{Log: log, PollInterval: 5 * time.Millisecond}, store, node, c)
}

// startLagging is start on a view that learns of others' rows only when
// it polls, every 200 ms: it gets no notifications.
func startLagging(t *testing.T, log ports.MetaLog, store ports.ObjectStore, node domain.NodeID, c *clock) *process {
	t.Helper()
	return startPlane(t, meta.Config{Log: struct{ ports.MetaLog }{log}, PollInterval: 200 * time.Millisecond}, store, node, c)
}

func startPlane(t *testing.T, pc meta.Config, store ports.ObjectStore, node domain.NodeID, c *clock) *process {
	t.Helper()
	ctx := context.Background()
	plane, err := meta.Open(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plane.Close() })
	addr := "http://node" + itoa(uint64(node))
	if r, err := plane.ProposeOne(ctx, &domain.RegisterNode{Node: node, Epoch: 1, Address: addr, Slots: 1}); err != nil || !r.OK() {
		t.Fatalf("register: %v %v", r, err)
	}
	by := domain.Proposer{Node: node, Epoch: 1}
	w := wal.Open(wal.Config{Store: store, Node: node, Epoch: 1, RetryFor: time.Second})
	t.Cleanup(func() { w.Close() })
	eng := engine.New(engine.Config{Plane: plane, By: by, Store: store, WAL: w, Now: c.Now})
	svc := New(Config{Plane: plane, Engine: eng, By: by, Address: addr, Now: c.Now})
	plane.OnApplied(func(index uint64, cmd domain.Command, r domain.Result) { // as a node does
		if ask, ok := cmd.(*domain.PutKV); ok && r.OK() {
			go svc.TakeTransferAsk(context.Background(), index, ask)
		}
	})
	return &process{svc: svc, engine: eng, plane: plane, clock: c}
}

func startOne(t *testing.T) *process {
	return start(t, memlog.New(), memstore.New(), 1, newClock())
}

func recs(bodies ...string) []domain.Record {
	out := make([]domain.Record, len(bodies))
	for i, b := range bodies {
		out[i] = domain.Record{Body: []byte(b)}
	}
	return out
}

func bodies(rs []domain.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Body)
	}
	return out
}

func text() domain.StreamConfig { return domain.StreamConfig{ContentType: "text/plain"} }

func mustCreate(t *testing.T, p *process, name string) {
	t.Helper()
	if _, created, err := p.svc.Create(context.Background(), name, text(), nil, false); err != nil || !created {
		t.Fatalf("create %s: created=%v %v", name, created, err)
	}
}

func mustAppend(t *testing.T, p *process, name string, bodies ...string) ports.AppendResult {
	t.Helper()
	r, err := p.svc.Append(context.Background(), name, ports.AppendRequest{Records: recs(bodies...)})
	if err != nil {
		t.Fatalf("append to %s: %v", name, err)
	}
	return r
}

// streamErr asserts err is a *ports.StreamError of kind and returns it.
func streamErr(t *testing.T, err error, kind error) *ports.StreamError {
	t.Helper()
	var se *ports.StreamError
	if !errors.As(err, &se) || !errors.Is(err, kind) {
		t.Fatalf("got %v, want a StreamError of kind %v", err, kind)
	}
	return se
}

func memlogAndStore() (ports.MetaLog, ports.ObjectStore, *clock) {
	return memlog.New(), memstore.New(), newClock()
}

// routedTo is the base URL p's Route sends a Pico client on name to, ""
// for p itself.
func routedTo(t *testing.T, p *process, name string) string {
	t.Helper()
	r, err := p.svc.Route(name)
	if err != nil {
		t.Fatalf("route %s: %v", name, err)
	}
	if r == nil {
		return ""
	}
	return r.To(domain.ProtocolPico)
}
