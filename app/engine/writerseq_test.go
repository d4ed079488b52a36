package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// appendSeq appends one record carrying writer sequence seq.
func appendSeq(p *process, id uint64, seq string) (ports.AppendResult, error) {
	return p.engine.byID(id).Append(context.Background(), ports.AppendRequest{Records: records("r" + seq), WriterSeq: seq})
}

// mustAppendSeq appends one record carrying seq and fails the test if it is
// refused.
func mustAppendSeq(t *testing.T, p *process, id uint64, seq string) {
	t.Helper()
	if _, err := appendSeq(p, id, seq); err != nil {
		t.Fatalf("writer seq %q: %v", seq, err)
	}
}

// wantWriterSeqRefused checks that an append was refused as a writer
// sequence regression against last, with the stream's tail next.
func wantWriterSeqRefused(t *testing.T, res ports.AppendResult, err error, last string, next uint64) {
	t.Helper()
	var se *ports.StreamError
	if !errors.As(err, &se) || !errors.Is(err, ports.ErrWriterSeq) || se.Write == nil || se.Write.LastWriterSeq != last {
		t.Fatalf("got %v, want a writer sequence regression against %q", err, last)
	}
	if !se.HasNext || se.Next != next || res != (ports.AppendResult{}) {
		t.Fatalf("refused append reports next %d (%v) and %+v, want the tail %d and no result", se.Next, se.HasNext, res, next)
	}
}

func TestWriterSeqMustIncreaseBytewise(t *testing.T) {
	cases := []struct {
		accepted []string
		refused  string
	}{
		{[]string{"5"}, "4"},             // regression
		{[]string{"5"}, "5"},             // equal
		{[]string{"09", "10"}, "09"},     // padded: "09" < "10"
		{[]string{"2"}, "10"},            // unpadded: "10" < "2"
		{[]string{"a", "ab", "b"}, "az"}, // a prefix sorts first
	}
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	for i, c := range cases {
		t.Run(fmt.Sprint(c.accepted, c.refused), func(t *testing.T) {
			id := p.create(t, fmt.Sprintf("/s/%d", i))
			for _, seq := range c.accepted {
				mustAppendSeq(t, p, id, seq)
			}
			res, err := appendSeq(p, id, c.refused)
			n := uint64(len(c.accepted))
			wantWriterSeqRefused(t, res, err, c.accepted[len(c.accepted)-1], n)
			if r, _ := p.engine.byID(id).Read(context.Background(), 0, 10); len(r.Records) != len(c.accepted) {
				t.Fatalf("a refused append was written: %v", bodies(r.Records))
			}
		})
	}
}

// TestAppendWithoutWriterSeqKeepsTheLast: an append without a writer
// sequence is not checked and does not reset the last accepted one.
func TestAppendWithoutWriterSeqKeepsTheLast(t *testing.T) {
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	id := p.create(t, "/s")
	mustAppendSeq(t, p, id, "5")
	if _, err := p.engine.byID(id).Append(context.Background(), ports.AppendRequest{Records: records("plain")}); err != nil {
		t.Fatal(err)
	}
	res, err := appendSeq(p, id, "5")
	wantWriterSeqRefused(t, res, err, "5", 2)
}

// TestProducerRetryWithWriterSeqIsADuplicate: the producer check comes
// first, so a retry carrying the same writer sequence is acknowledged as a
// duplicate, while a new producer sequence is still held to the rule.
func TestProducerRetryWithWriterSeqIsADuplicate(t *testing.T) {
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	id := p.create(t, "/s")
	ctx := context.Background()
	stamped := func(body string, seq uint64, writerSeq string) ports.AppendRequest {
		return ports.AppendRequest{Records: records(body), Producer: &domain.ProducerStamp{ID: "p", Epoch: 1, Seq: seq}, WriterSeq: writerSeq}
	}
	if _, err := p.engine.byID(id).Append(ctx, stamped("a", 0, "07")); err != nil {
		t.Fatal(err)
	}
	r, err := p.engine.byID(id).Append(ctx, stamped("a", 0, "07"))
	if err != nil || !r.Duplicate || r.First != 0 || r.Next != 1 {
		t.Fatalf("retry: %+v %v, want a duplicate of [0, 1)", r, err)
	}
	r, err = p.engine.byID(id).Append(ctx, stamped("b", 1, "07"))
	wantWriterSeqRefused(t, r, err, "07", 1)
}

// TestBareSealCarriesNoWriterSeq: a seal without records writes no frame,
// so its writer sequence is checked but not recorded.
func TestBareSealCarriesNoWriterSeq(t *testing.T) {
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	id := p.create(t, "/s")
	ctx := context.Background()
	mustAppendSeq(t, p, id, "5")
	r, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Close: true, WriterSeq: "4"})
	wantWriterSeqRefused(t, r, err, "5", 1)
	if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Close: true, WriterSeq: "6"}); err != nil {
		t.Fatal(err)
	}
	s, _ := p.engine.local(id)
	if s.write.WriterSeq != "5" {
		t.Fatalf("after a bare seal the writer seq is %q, want 5", s.write.WriterSeq)
	}
}

// TestWriterSeqSurvivesWALRecovery: a process that takes over from a
// vanished one restores the writer sequence from its WAL frames (on top of
// the last data object's), and the process after it from the frame the
// first rewrote.
func TestWriterSeqSurvivesWALRecovery(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	old := startProcess(t, log, store, 1, 1)
	committed, walOnly := old.create(t, "/committed"), old.create(t, "/wal")
	mustAppendSeq(t, old, committed, "03")
	mustAppendSeq(t, old, walOnly, "03")
	if _, err := old.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	// /committed: "03" lives only in its data object; /wal: "05" in the WAL.
	if _, err := old.engine.byID(committed).appendRecords(ctx, records("no seq"), nil); err != nil {
		t.Fatal(err)
	}
	mustAppendSeq(t, old, walOnly, "05")

	want := map[uint64]string{committed: "03", walOnly: "05"}
	next := takeOverAndCheck(t, log, store, old, want)
	third := takeOverAndCheck(t, log, store, next, want)
	if s, _ := third.engine.local(walOnly); s.durableWriterSeq != "05" {
		t.Fatalf("the next data object would carry writer seq %q, want 05", s.durableWriterSeq)
	}
}

// takeOverAndCheck starts the next process of prev's node, which opens
// every stream of want (fencing prev) and must refuse its last accepted
// writer sequence again.
func takeOverAndCheck(t *testing.T, log ports.MetaLog, store ports.ObjectStore, prev *process, want map[uint64]string) *process {
	t.Helper()
	ctx := context.Background()
	p := startProcess(t, log, store, prev.by.Node, prev.by.Epoch+1)
	p.plane.WaitFor(ctx, prev.plane.Applied())
	for id, last := range want {
		if _, err := p.engine.Open(ctx, id); err != nil {
			t.Fatal(err)
		}
		res, err := appendSeq(p, id, last)
		wantWriterSeqRefused(t, res, err, last, 2)
	}
	return p
}

// TestWriterSeqSurvivesCloseAndReopen: a cleanly closed stream is reopened
// from the metadata and its last data object alone, which carries the
// writer sequence.
func TestWriterSeqSurvivesCloseAndReopen(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	old := startProcess(t, log, store, 1, 1)
	id := old.create(t, "/s")
	mustAppendSeq(t, old, id, "07")
	if err := old.engine.Close(ctx, id); err != nil {
		t.Fatal(err)
	}
	next := takeOver(t, log, store, 2, 1, old)
	next.mustOpen(t, id)
	if len(next.engine.fenced) != 0 {
		t.Fatal("a cleanly closed stream needed fencing")
	}
	res, err := appendSeq(next, id, "07")
	wantWriterSeqRefused(t, res, err, "07", 1)
	mustAppendSeq(t, next, id, "08")
}

// TestUploadWritesTheDurableWriterSeq: an object carries the writer
// sequence as of its end, not one still in flight or refused by the WAL.
func TestUploadWritesTheDurableWriterSeq(t *testing.T) {
	s := newStream(1, 1, 0)
	ok := &domain.Frame{Offset: 0, WriterSeq: "1", Records: records("a")}
	failed := &domain.Frame{Offset: 1, WriterSeq: "2", Records: records("b")}
	s.durable(ok, nil)
	s.durable(failed, errors.New("lost"))
	if st := s.durableState(); st.WriterSeq != "1" {
		t.Fatalf("durable writer seq %q, want 1", st.WriterSeq)
	}
}

// TestCompactionKeepsWriterSeq: the merged object carries the writer
// sequence of the last object it replaces, and a reopen restores it.
func TestCompactionKeepsWriterSeq(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	p := startProcess(t, log, store, 1, 1)
	id := p.create(t, "/s")
	for i := range compactMinObjects + 2 {
		mustAppendSeq(t, p, id, fmt.Sprintf("%02d", i))
		if _, err := p.engine.Upload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := p.engine.Compact(ctx, id); err != nil || n != compactMinObjects+2 {
		t.Fatalf("compacted %d objects, %v", n, err)
	}
	v := p.plane.View()
	st, _ := v.Stream(id)
	if st.Objects.Len() != 1 {
		t.Fatalf("%d objects after compaction", st.Objects.Len())
	}
	last := fmt.Sprintf("%02d", compactMinObjects+1)
	if sec, err := p.engine.lastSection(ctx, st); err != nil || sec.WriterSeq != last {
		t.Fatalf("writer seq after compaction: %q %v, want %s", sec.WriterSeq, err, last)
	}
	if err := p.engine.Close(ctx, id); err != nil {
		t.Fatal(err)
	}
	next := takeOver(t, log, store, 2, 1, p)
	next.mustOpen(t, id)
	res, err := appendSeq(next, id, last)
	wantWriterSeqRefused(t, res, err, last, compactMinObjects+2)
}
