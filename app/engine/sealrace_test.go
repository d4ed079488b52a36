package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// An append that seals its stream records the seal only once its records
// are durable, outside the gate. A close that takes the gate in between (a
// dead-WAL takeover lets the streams it recovers go at once; a shutdown
// hands them all back) records the seal with the close, so the append,
// whose own SealStream then finds the stream closed, succeeds, and the
// stream stays sealed after its records.
func TestACloseBetweenAnAppendAndItsSealKeepsTheSeal(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		close func(*process, uint64) error
	}{
		{"Close", func(p *process, id uint64) error { return p.engine.Close(ctx, id) }},
		{"CloseAll", func(p *process, _ uint64) error { return p.engine.CloseAll(ctx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
			id := p.create(t, "/s")
			s, _ := p.engine.local(id)
			res := submitDurable(t, p, s, true)
			if err := tc.close(p, id); err != nil {
				t.Fatalf("close: %v", err)
			}
			// Its second half.
			if err := p.engine.recordSeal(ctx, s); err != nil {
				t.Fatalf("the append's seal, after the close: %v", err)
			}
			if st := p.stream(t, id); !st.Sealed || st.Open || st.End != res.Next {
				t.Fatalf("stream after the close: sealed %v, open %v, end %d; want sealed and closed at %d", st.Sealed, st.Open, st.End, res.Next)
			}
			p.mustOpen(t, id)
			if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("b")}); !errors.Is(err, ports.ErrStreamClosed) {
				t.Fatalf("append after the seal: %v, want ports.ErrStreamClosed", err)
			}
			p.wantReads(t, id, "[a]")
		})
	}
}

// A seal refused for any other reason still fails the append: here the
// close found no seal to record (the append did not seal), so a refused
// SealStream means the stream was let go without it.
func TestASealRefusedWithoutTheCloseRecordingItFails(t *testing.T) {
	ctx := context.Background()
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	id := p.create(t, "/s")
	s, _ := p.engine.local(id)
	submitDurable(t, p, s, false)
	if err := p.engine.Close(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := p.engine.recordSeal(ctx, s); !errors.Is(err, ErrFenced) {
		t.Fatalf("a seal the close did not record: %v, want ErrFenced", err)
	}
}

// A fenced writer's seal, refused, stays refused even when the stream is
// sealed at the same committed end by its successor: the successor's
// records after it are not committed yet, so only this writer's own close
// could have recorded its seal. Here the writer's frame does not say it
// seals (a node of the cluster is of a release before LevelSealFrames),
// so the successor does not record the seal either.
func TestAFencedWritersSealIsNotTakenForItsSuccessors(t *testing.T) {
	ctx := context.Background()
	log, store := memlog.New(), memstore.New()
	old := startProcess(t, log, store, 1, 1)
	declareLevel(t, old, domain.LevelPlacement)
	id := old.create(t, "/s")
	s, _ := old.engine.local(id)
	submitDurable(t, old, s, true)
	successor := takeOver(t, log, store, 1, 2, old)
	successor.mustOpen(t, id) // recovers "a"; the seal was never recorded
	if _, err := successor.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := successor.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("b"), Close: true}); err != nil {
		t.Fatal(err)
	}
	old.plane.WaitFor(ctx, successor.plane.Applied())
	if err := old.engine.recordSeal(ctx, s); !errors.Is(err, ErrFenced) {
		t.Fatalf("the fenced writer's seal after its records: %v, want ErrFenced (the stream goes on with b)", err)
	}
}

// A writer that dies between its sealing append's durability and the
// seal's record leaves a frame that says it seals: the takeover records
// the seal before anyone reads the records, so they and the closure are
// one write, and the stream takes no more.
func TestATakeoverRecordsTheSealItsPredecessorsFrameCarries(t *testing.T) {
	ctx := context.Background()
	log, store := memlog.New(), memstore.New()
	old := startProcess(t, log, store, 1, 1)
	id := old.create(t, "/s")
	s, _ := old.engine.local(id)
	submitDurable(t, old, s, true)
	successor := takeOver(t, log, store, 1, 2, old)
	successor.mustOpen(t, id)
	if st := successor.stream(t, id); !st.Sealed {
		t.Fatal("the takeover did not record the seal its predecessor's frame carries")
	}
	h := successor.engine.byID(id)
	wantPage(t, h, 1, []string{"a"}, true)
	if _, err := h.Append(ctx, ports.AppendRequest{Records: records("b")}); !errors.Is(err, ports.ErrStreamClosed) {
		t.Fatalf("append after the recovered seal: %v, want ports.ErrStreamClosed", err)
	}
	if err := old.engine.recordSeal(ctx, s); err == nil {
		t.Fatal("the fenced writer recorded its seal")
	}
}

// declareLevel declares p's node of feature level l, as a node of an
// older release does.
func declareLevel(t *testing.T, p *process, l domain.Level) {
	t.Helper()
	if r, err := p.plane.ProposeOne(context.Background(), domain.DeclareLevel(p.by, l)); err != nil || !r.OK() {
		t.Fatalf("declare level %d: %v %v", l, r, err)
	}
}

// submitDurable is an append's first half: record "a" (and the seal, if
// asked) decided under s's gate, then durable; the seal is not recorded.
func submitDurable(t *testing.T, p *process, s *stream, seal bool) domain.Verdict {
	t.Helper()
	res, done, err := p.engine.submit(s, ports.AppendRequest{Records: records("a"), Close: seal}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRefusalsWaitForWhatTheyJudged: while a closing append's bulk is not
// stored, a later append is refused neither as closed nor as a failed
// match: that would be an answer from state the failure of that bulk
// undoes. Once the seal is recorded, the refusal comes at once.
func TestRefusalsWaitForWhatTheyJudged(t *testing.T) {
	store := &slowStore{ObjectStore: memstore.New()}
	p := startProcess(t, memlog.New(), store, 1, 1)
	id := p.create(t, "/s")
	hold, done := make(chan struct{}), make(chan error, 1)
	store.hold = hold
	go func() {
		_, err := p.engine.byID(id).Append(context.Background(), ports.AppendRequest{Records: records("x"), Close: true})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	zero := uint64(0)
	for _, req := range []ports.AppendRequest{{Records: records("y")}, {Records: records("y"), MatchNext: &zero}} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := p.engine.byID(id).Append(ctx, req)
		cancel()
		if errors.Is(err, ports.ErrStreamClosed) || errors.Is(err, ports.ErrMatchFailed) || err == nil {
			t.Fatalf("append while the close is not stored: %v, want no answer yet", err)
		}
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatalf("the closing append: %v", err)
	}
	if _, err := p.engine.byID(id).Append(context.Background(), ports.AppendRequest{Records: records("y")}); !errors.Is(err, ports.ErrStreamClosed) {
		t.Fatalf("append once the seal is recorded: %v, want closed", err)
	}
}
