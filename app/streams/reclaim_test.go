package streams

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// hookedStore runs a hook before each Put, PutIfAbsent and Get.
type hookedStore struct {
	*memstore.Store
	mu    sync.Mutex
	onPut func(key string)
	onGet func(key string) error
}

func (h *hookedStore) hooks() (func(string), func(string) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.onPut, h.onGet
}

func (h *hookedStore) Put(ctx context.Context, key string, body []byte) error {
	if put, _ := h.hooks(); put != nil {
		put(key)
	}
	return h.Store.Put(ctx, key, body)
}

func (h *hookedStore) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if put, _ := h.hooks(); put != nil {
		put(key)
	}
	return h.Store.PutIfAbsent(ctx, key, body)
}

func (h *hookedStore) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if _, get := h.hooks(); get != nil {
		if err := get(key); err != nil {
			return nil, err
		}
	}
	return h.Store.Get(ctx, key, off, n)
}

// A stream another node opened after the sweep found it idle, and then let
// go (recording its access) or lost (dying), is not deleted by the sweep's
// takeover: it is no longer as the sweep marked it.
func TestReclaimLeavesAStreamOpenedElsewhereSince(t *testing.T) {
	for _, dies := range []bool{false, true} {
		ctx := context.Background()
		b, third := idleWithThirdNode(t)
		id := mustStream(t, b, "/s").ID
		readElsewhere(t, third, b, "/s", dies)
		b.svc.reclaim(ctx, id, b.svc.unowned[id]) // the sweep, judging from its older view
		if !exists(b, "/s") {
			t.Fatalf("node 3 dies=%v: deleted a stream node 3 served a read of just before", dies)
		}
	}
}

// While the takeover recovers, the stream is held here without an access
// time: a read or a create of its name meanwhile must not drop it as
// expired, for the takeover may find it in use.
func TestReclaimedStreamIsNotExpiredDuringTheTakeover(t *testing.T) {
	ctx := context.Background()
	store := &hookedStore{Store: memstore.New()}
	a, b, c := deadWriterOn(t, memlog.New(), store, "/z")
	b.svc.sweepUnowned(ctx) // first found unowned
	c.advance(time.Second)
	mustAppend(t, a, "/z", "late") // acknowledged by the superseded process
	c.advance(1500 * time.Millisecond)
	var once sync.Once
	var created bool
	store.mu.Lock()
	store.onPut = func(key string) {
		if strings.HasPrefix(key, "data/") { // the takeover commits what it recovered
			once.Do(func() {
				_, created, _ = b.svc.Create(ctx, "/z", domain.StreamConfig{ContentType: "text/plain", IdleTTLSec: 2}, nil, false)
			})
		}
	}
	store.mu.Unlock()
	b.svc.sweepUnowned(ctx)
	if created {
		t.Fatal("a create during the takeover replaced the stream")
	}
	page, err := b.svc.Read(ctx, "/z", 0, ports.ReadLimits{})
	if err != nil || len(page.Records) != 2 {
		t.Fatalf("after the takeover: %v %v, want [x late]", bodies(page.Records), err)
	}
}

// A takeover whose recovery failed after its open applied is finished by a
// later sweep, and the idle stream then goes.
func TestReclaimFinishesAFailedTakeover(t *testing.T) {
	ctx := context.Background()
	store := &hookedStore{Store: memstore.New()}
	_, b, c := deadWriterOn(t, memlog.New(), store, "/f")
	b.svc.sweepUnowned(ctx) // first found unowned
	c.advance(2500 * time.Millisecond)
	var failed sync.Once
	store.mu.Lock()
	store.onGet = func(key string) (err error) {
		if strings.HasPrefix(key, domain.WALPrefix(1, 1)) {
			failed.Do(func() { err = errors.New("the store failed once") })
		}
		return err
	}
	store.mu.Unlock()
	b.svc.sweepUnowned(ctx) // the takeover's recovery fails
	if !exists(b, "/f") {
		t.Fatal("deleted without a takeover")
	}
	b.svc.sweepUnowned(ctx)
	if exists(b, "/f") {
		st := mustStream(t, b, "/f")
		v := b.plane.View()
		t.Fatalf("still there after the takeover was retried: epoch %d, open %v", st.Epoch, v.IsOpen(st))
	}
}

func mustStream(t *testing.T, p *process, name string) *domain.Stream {
	t.Helper()
	v := p.plane.View()
	st, ok := v.StreamByName(name)
	if !ok {
		t.Fatalf("no stream %s", name)
	}
	return st
}

// An append served on the lease holder after the takeover judged the stream
// unused, but before it refused requests, keeps the stream: the takeover
// judges again once it refuses them, and a create of the name meanwhile is
// told to try again rather than replace it.
func TestReclaimKeepsAStreamAppendedToWhileJudged(t *testing.T) {
	ctx := context.Background()
	_, b, c := deadWriter(t, "/r")
	b.svc.sweepUnowned(ctx) // first found unowned
	c.advance(2500 * time.Millisecond)
	b.svc.hooks.judged = func(uint64) { mustAppend(t, b, "/r", "client") }
	b.svc.hooks.refusing = func(uint64) {
		_, created, err := b.svc.Create(ctx, "/r", domain.StreamConfig{ContentType: "text/plain", IdleTTLSec: 2}, nil, false)
		if created || !errors.Is(err, ports.ErrUnavailable) {
			t.Errorf("a create while the takeover refuses requests: created=%v %v, want unavailable", created, err)
		}
		if _, err := b.svc.Read(ctx, "/r", 0, ports.ReadLimits{}); !errors.Is(err, ports.ErrUnavailable) {
			t.Errorf("a read while the takeover refuses requests: %v, want unavailable", err)
		}
	}
	b.svc.sweepUnowned(ctx)
	page, err := b.svc.Read(ctx, "/r", 0, ports.ReadLimits{})
	if err != nil || len(page.Records) != 2 {
		t.Fatalf("after the takeover: %v %v, want the acknowledged append kept", bodies(page.Records), err)
	}
}

// A takeover that finds the stream opened by someone else between its
// check and its own open holds the stream here with a fresh window: the
// holder does not then expire it from its creation time.
func TestReclaimThatLostTheStreamKeepsItsWindow(t *testing.T) {
	ctx := context.Background()
	b, third := idleWithThirdNode(t)
	c := b.clock
	b.svc.hooks.beforeOpen = func(uint64) { readElsewhere(t, third, b, "/s", false) }
	b.svc.sweepUnowned(ctx)
	c.advance(time.Second)
	b.svc.sweepLocal(ctx)
	if !exists(b, "/s") {
		t.Fatal("deleted 1 s after node 3 served a read of it")
	}
}

// readElsewhere has other read name (opening it there), then let it go
// (HandOff) or die (its node registers again), and holder see all of it.
func readElsewhere(t *testing.T, other, holder *process, name string, dies bool) {
	t.Helper()
	ctx := context.Background()
	if err := other.plane.WaitFor(ctx, holder.plane.Applied()); err != nil {
		t.Fatal(err)
	}
	if _, err := other.svc.Read(ctx, name, 0, ports.ReadLimits{}); err != nil {
		t.Fatal(err)
	}
	if dies {
		n := other.svc.cfg.By.Node
		if r, err := other.plane.ProposeOne(ctx, &domain.RegisterNode{Node: n, Epoch: 2, Address: "http://node" + itoa(uint64(n)), Slots: 1}); err != nil || !r.OK() {
			t.Fatalf("register again: %v %v", r, err)
		}
	} else if err := other.svc.HandOff(ctx); err != nil {
		t.Fatal(err)
	}
	if err := holder.plane.WaitFor(ctx, other.plane.Applied()); err != nil {
		t.Fatal(err)
	}
}

// idleWithThirdNode has a dead writer's stream /s found unowned by the lease
// holder b 2.5 s ago (past its idle TTL), with a third node on the cluster.
func idleWithThirdNode(t *testing.T) (b, third *process) {
	t.Helper()
	log, store := memlog.New(), memstore.New()
	_, b, c := deadWriterOn(t, log, store, "/s")
	third = start(t, log, store, 3, c)
	b.svc.sweepUnowned(context.Background()) // first found unowned
	c.advance(2500 * time.Millisecond)
	return b, third
}
