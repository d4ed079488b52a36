package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
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
			// The append's first half: its records and the seal, decided
			// under the gate, then durable.
			res, done, err := p.engine.submit(s, records("a"), AppendOptions{Seal: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if err := tc.close(p, id); err != nil {
				t.Fatalf("close: %v", err)
			}
			// Its second half.
			if err := p.engine.recordSeal(ctx, s, res.Next); err != nil {
				t.Fatalf("the append's seal, after the close: %v", err)
			}
			if st := p.stream(t, id); !st.Sealed || st.Open || st.End != res.Next {
				t.Fatalf("stream after the close: sealed %v, open %v, end %d; want sealed and closed at %d", st.Sealed, st.Open, st.End, res.Next)
			}
			p.mustOpen(t, id)
			if _, err := p.engine.AppendWith(ctx, id, records("b"), AppendOptions{}); !errors.Is(err, ErrSealed) {
				t.Fatalf("append after the seal: %v, want ErrSealed", err)
			}
			p.wantReads(t, id, "[a]")
		})
	}
}

// A seal refused for any other reason still fails the append: the stream
// was closed without it (here, by a close that predates the append's
// records), so it is not sealed after them.
func TestASealRefusedWithoutTheCloseRecordingItFails(t *testing.T) {
	ctx := context.Background()
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	id := p.create(t, "/s")
	s, _ := p.engine.local(id)
	res, done, err := p.engine.submit(s, records("a"), AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := p.engine.Close(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := p.engine.recordSeal(ctx, s, res.Next); !errors.Is(err, ErrFenced) {
		t.Fatalf("a seal the close did not record: %v, want ErrFenced", err)
	}
}
