package meta_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// openPlane opens a plane that snapshots every snapshotEvery rows and
// truncates at once (production keeps rows for TruncateDelay).
func openPlane(t *testing.T, log ports.MetaLog, snapshotEvery uint64) *meta.Plane {
	t.Helper()
	p, err := meta.Open(context.Background(), meta.Config{Log: log, SnapshotEvery: snapshotEvery,
		TruncateDelay: -1, PollInterval: 5 * time.Millisecond, AppendTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("open plane: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func register(t *testing.T, p *meta.Plane, node domain.NodeID, epoch uint64) domain.Proposer {
	t.Helper()
	r, err := p.ProposeOne(context.Background(), &domain.RegisterNode{Node: node, Epoch: epoch, Address: "a", Slots: 1})
	if err != nil || !r.OK() {
		t.Fatalf("register node %d: %v %v", node, r, err)
	}
	return domain.Proposer{Node: node, Epoch: epoch}
}

func putKey(by domain.Proposer, key string) domain.Command {
	return &domain.PutKV{By: by, Space: domain.SpaceRegistry, Key: key, Value: []byte(key)}
}

func TestProposeReadsItsOwnWrite(t *testing.T) {
	p := openPlane(t, memlog.New(), 0)
	by := register(t, p, 1, 10)
	for i := range 20 {
		key := fmt.Sprintf("k%d", i)
		r, err := p.ProposeOne(context.Background(), putKey(by, key))
		if err != nil || r.Code != domain.ResultOK {
			t.Fatalf("put %s: %v %v", key, r, err)
		}
		view := p.View()
		if e, ok := view.KV(domain.SpaceRegistry, key); !ok || string(e.Value) != key || e.Rev != r.Value {
			t.Fatalf("view after put %s: %+v %v", key, e, ok)
		}
	}
}

func TestRejectedCommandsReturnResultsNotErrors(t *testing.T) {
	p := openPlane(t, memlog.New(), 0)
	register(t, p, 1, 10)
	res, err := p.Propose(context.Background(),
		putKey(domain.Proposer{Node: 1, Epoch: 9}, "stale"),
		&domain.RegisterNode{Node: 1, Epoch: 5, Address: "a", Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Code != domain.ResultNodeFenced || res[1].Code != domain.ResultNodeFenced {
		t.Fatalf("results %v, want both node-fenced", res)
	}
}

func TestGroupCommitBatchesConcurrentProposals(t *testing.T) {
	log := memlog.New()
	p := openPlane(t, log, 0)
	by := register(t, p, 1, 1)
	const n = 512
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := p.ProposeOne(context.Background(), putKey(by, fmt.Sprintf("k%03d", i)))
			if err == nil && r.Code != domain.ResultOK {
				err = fmt.Errorf("result %v", r)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	last, _ := log.LastIndex(context.Background())
	if last >= n {
		t.Fatalf("%d proposals took %d rows: no grouping", n, last)
	}
	v := p.View()
	count := 0
	v.KVFrom(domain.SpaceRegistry, "", func(string, domain.KVEntry) bool { count++; return true })
	if count != n {
		t.Fatalf("view holds %d keys, want %d", count, n)
	}
	t.Logf("%d proposals in %d rows", n, last)
}

// putUntilKnown writes key, re-proposing while the outcome is unknown (a
// lagging plane reinstalled a snapshot that folded its row in) and the view
// does not show the key.
func putUntilKnown(p *meta.Plane, by domain.Proposer, key string) error {
	for range 100 {
		_, err := p.ProposeOne(context.Background(), putKey(by, key))
		if !errors.Is(err, meta.ErrOutcomeUnknown) {
			return err
		}
		v := p.View()
		if _, ok := v.KV(domain.SpaceRegistry, key); ok {
			return nil
		}
	}
	return fmt.Errorf("put %s: outcome never known", key)
}

// TestTwoPlanesOnOneLogConverge races two planes that snapshot and truncate
// aggressively, so the slower one regularly reinstalls snapshots mid-flight.
func TestTwoPlanesOnOneLogConverge(t *testing.T) {
	log := memlog.New()
	a, b := openPlane(t, log, 16), openPlane(t, log, 16)
	byA, byB := register(t, a, 1, 1), register(t, b, 2, 1)
	var wg sync.WaitGroup
	for _, side := range []struct {
		p  *meta.Plane
		by domain.Proposer
	}{{a, byA}, {b, byB}} {
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 25 {
					key := fmt.Sprintf("n%d-w%d-%d", side.by.Node, w, i)
					if err := putUntilKnown(side.p, side.by, key); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	last, _ := log.LastIndex(context.Background())
	for _, p := range []*meta.Plane{a, b} {
		if err := p.WaitFor(context.Background(), last); err != nil {
			t.Fatal(err)
		}
	}
	va, vb := a.View(), b.View()
	if va.Hash() != vb.Hash() {
		t.Fatalf("views differ at index %d/%d", va.Index, vb.Index)
	}
	if err := va.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotTruncatesAndColdStartMatches(t *testing.T) {
	log := memlog.New()
	p := openPlane(t, log, 8)
	by := register(t, p, 1, 1)
	for i := range 100 {
		if _, err := p.ProposeOne(context.Background(), putKey(by, fmt.Sprintf("k%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	for {
		snap, err := log.Snapshot(ctx)
		_, rerr := log.Read(ctx, 0, 1)
		if err == nil && snap.Index >= 16 && errors.Is(rerr, ports.ErrTruncated) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot+truncation: snapshot %d (%v), read from 0: %v", snap.Index, err, rerr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cold := openPlane(t, log, 8)
	want := p.View()
	if err := cold.WaitFor(ctx, want.Index); err != nil {
		t.Fatal(err)
	}
	got := cold.View()
	if got.Hash() != want.Hash() {
		t.Fatalf("cold start differs from the live plane at %d", want.Index)
	}
}

// gatedLog blocks reads while gated, to hold a tailer behind.
type gatedLog struct {
	*memlog.Log
	gate sync.RWMutex
}

func (l *gatedLog) Read(ctx context.Context, after uint64, limit int) ([]ports.Row, error) {
	l.gate.RLock()
	defer l.gate.RUnlock()
	return l.Log.Read(ctx, after, limit)
}

func TestLaggingPlaneReinstallsSnapshotAfterGap(t *testing.T) {
	shared := memlog.New()
	p := openPlane(t, shared, 4)
	by := register(t, p, 1, 1)
	ctx := context.Background()
	slow := &gatedLog{Log: shared}
	late := openPlane(t, slow, 1<<20)
	if err := late.WaitFor(ctx, p.Applied()); err != nil {
		t.Fatal(err)
	}
	slow.gate.Lock() // the late plane's tailer stalls here
	gated := true
	t.Cleanup(func() {
		if gated {
			slow.gate.Unlock()
		}
	})
	for i := range 40 {
		if _, err := p.ProposeOne(ctx, putKey(by, fmt.Sprintf("k%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := shared.Read(ctx, late.Applied(), 1); errors.Is(err, ports.ErrTruncated) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("log never truncated past the late plane")
		}
		time.Sleep(5 * time.Millisecond)
	}
	slow.gate.Unlock()
	gated = false
	if err := late.WaitFor(ctx, p.Applied()); err != nil {
		t.Fatal(err)
	}
	lv, pv := late.View(), p.View()
	if lv.Hash() != pv.Hash() {
		t.Fatal("late plane differs after installing the snapshot")
	}
}

func TestUndecodableRowHaltsWritesInsteadOfForking(t *testing.T) {
	log := memlog.New()
	p := openPlane(t, log, 0)
	by := register(t, p, 1, 1)
	ctx := context.Background()
	last, _ := log.LastIndex(ctx)
	if err := log.Append(ctx, last+1, []byte{0xff, 0x01}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.Health() == nil {
		if time.Now().After(deadline) {
			t.Fatal("plane still healthy after a corrupt row")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !errors.Is(p.Health(), meta.ErrHalted) {
		t.Fatalf("health %v, want ErrHalted", p.Health())
	}
	if _, err := p.ProposeOne(ctx, putKey(by, "after")); !errors.Is(err, meta.ErrHalted) {
		t.Fatalf("propose after halt: %v, want ErrHalted", err)
	}
	if v := p.View(); v.Index != last {
		t.Fatalf("view moved to %d past the corrupt row %d", v.Index, last+1)
	}
}

// ambiguousLog stores the row and then reports a failure, like a connection
// lost after the database committed; it can also fail the reads of one row
// that resolve such a failure (the tailer reads more at a time).
type ambiguousLog struct {
	*memlog.Log
	mu            sync.Mutex
	fails         int
	readBackFails int
}

func (l *ambiguousLog) Read(ctx context.Context, after uint64, limit int) ([]ports.Row, error) {
	l.mu.Lock()
	fail := limit == 1 && l.readBackFails > 0
	if fail {
		l.readBackFails--
	}
	l.mu.Unlock()
	if fail {
		return nil, errors.New("connection reset")
	}
	return l.Log.Read(ctx, after, limit)
}

func (l *ambiguousLog) Append(ctx context.Context, idx uint64, payload []byte) error {
	err := l.Log.Append(ctx, idx, payload)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && l.fails > 0 {
		l.fails--
		return errors.New("connection reset")
	}
	return err
}

func TestAmbiguousAppendIsNotWrittenTwice(t *testing.T) {
	t.Run("read back at once", func(t *testing.T) { testAmbiguousAppend(t, 0) })
	// The retried append at the same index finds the row there (a
	// conflict); until it can be read back, that is no proof that another
	// process wrote it.
	t.Run("read back after failures", func(t *testing.T) { testAmbiguousAppend(t, 2) })
}

func testAmbiguousAppend(t *testing.T, readBackFails int) {
	log := &ambiguousLog{Log: memlog.New()}
	p := openPlane(t, log, 0)
	by := register(t, p, 1, 1)
	log.mu.Lock()
	log.fails, log.readBackFails = 3, readBackFails
	log.mu.Unlock()
	ctx := context.Background()
	for i := range 3 {
		r, err := p.ProposeOne(ctx, putKey(by, fmt.Sprintf("k%d", i)))
		if err != nil || r.Code != domain.ResultOK {
			t.Fatalf("put %d: %v %v", i, r, err)
		}
	}
	rows, err := log.Read(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4 (register + 3 puts, none duplicated)", len(rows))
	}
}

func TestLeaseKeeperAcquiresRenewsAndStepsDown(t *testing.T) {
	lease := memlog.NewLease()
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	a := &meta.LeaseKeeper{Lease: lease, Holder: "a", Now: clock}
	b := &meta.LeaseKeeper{Lease: lease, Holder: "b", Now: clock}
	ctx := context.Background()
	a.Tick(ctx)
	b.Tick(ctx)
	ea, ha := a.Held()
	if _, hb := b.Held(); !ha || hb {
		t.Fatalf("held a=%v b=%v, want only a", ha, hb)
	}
	now = now.Add(9 * time.Second)
	a.Tick(ctx) // renew before expiry
	now = now.Add(9 * time.Second)
	b.Tick(ctx)
	if _, hb := b.Held(); hb {
		t.Fatal("b took a lease that a renewed")
	}
	now = now.Add(11 * time.Second) // a stopped renewing; the lease expired
	b.Tick(ctx)
	eb, hb := b.Held()
	if !hb || eb <= ea {
		t.Fatalf("b held=%v epoch %d, want a higher epoch than %d", hb, eb, ea)
	}
	a.Tick(ctx)
	if _, ha := a.Held(); ha {
		t.Fatal("a still believes it holds the lease after b took over")
	}
	// b's successor (b restarted) takes the lease while b's is unexpired;
	// b steps down at its next renewal.
	now = now.Add(time.Second)
	c := &meta.LeaseKeeper{Lease: lease, Holder: "c", Predecessor: "b", Now: clock}
	c.Tick(ctx)
	if ec, hc := c.Held(); !hc || ec <= eb {
		t.Fatalf("b's successor held=%v epoch %d, want a higher epoch than %d at once", hc, ec, eb)
	}
	now = now.Add(time.Second)
	b.Tick(ctx)
	if _, hb := b.Held(); hb {
		t.Fatal("b still believes it holds the lease after its successor took it")
	}
}

// TestLargeStateIsNotRewrittenForSmallRows: with a big snapshot, a few
// small rows do not trigger a rewrite; rows adding up to an eighth of its
// size do.
func TestLargeStateIsNotRewrittenForSmallRows(t *testing.T) {
	log := memlog.New()
	ctx := context.Background()
	st := domain.NewState()
	by := domain.Proposer{Node: 1, Epoch: 1}
	st.ApplyRow(1, []domain.Command{&domain.RegisterNode{Node: 1, Epoch: 1, Slots: 1}})
	for i := range 20000 {
		st.Apply(&domain.CreateStream{By: by, Name: fmt.Sprintf("/s/%06d", i), Open: true})
	}
	big := domain.EncodeState(&st)
	if err := log.PutSnapshot(ctx, ports.Snapshot{Index: 1, Payload: big}); err != nil {
		t.Fatal(err)
	}
	p := openPlane(t, log, 4)
	for i := range 12 {
		if _, err := p.ProposeOne(ctx, putKey(by, fmt.Sprintf("small%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if snap, _ := log.Snapshot(ctx); snap.Index != 1 {
		t.Fatalf("a %d-byte state was rewritten after 12 small rows (snapshot at %d)", len(big), snap.Index)
	}
	value := make([]byte, 64<<10)
	for i := 0; i < len(big)/len(value)/8+2; i++ {
		if _, err := p.ProposeOne(ctx, &domain.PutKV{By: by, Space: domain.SpaceRegistry, Key: fmt.Sprintf("big%d", i), Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if snap, _ := log.Snapshot(ctx); snap.Index > 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot after rows worth an eighth of the state")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An append that may have stored its row and could never find out gives up
// with ErrOutcomeUnknown (the row may yet apply), not a plain failure a
// caller could take as "not written" and retry.
func TestAmbiguousAppendThatCannotBeResolvedIsOutcomeUnknown(t *testing.T) {
	log := &ambiguousLog{Log: memlog.New()}
	p := openPlane(t, log, 0)
	by := register(t, p, 1, 1)
	log.mu.Lock()
	log.fails, log.readBackFails = 1, 1<<30
	log.mu.Unlock()
	_, err := p.ProposeOne(context.Background(), putKey(by, "k"))
	if !errors.Is(err, meta.ErrOutcomeUnknown) {
		t.Fatalf("propose: %v, want ErrOutcomeUnknown", err)
	}
}
