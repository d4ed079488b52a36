package domain

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// writeModel is a naive reference for the write rules: it keeps every
// accepted request and answers each question by scanning that history, so
// that it shares no state, and no shortcut, with WriteState.
type writeModel struct {
	// legacySeal: the stream starts sealed by a request nobody recorded.
	legacySeal bool
	accepted   []acceptedWrite
}

type acceptedWrite struct {
	req         WriteRequest
	first, next uint64
	ts          int64
}

func (m *writeModel) tail() uint64 {
	var n uint64
	for _, a := range m.accepted {
		n += uint64(len(a.req.Records))
	}
	return n
}

func (m *writeModel) lastTs() int64 {
	var ts int64
	for _, a := range m.accepted {
		if len(a.req.Records) > 0 {
			ts = a.ts
		}
	}
	return ts
}

// closer is the accepted request that first closed the stream.
func (m *writeModel) closer() (acceptedWrite, bool) {
	for _, a := range m.accepted {
		if a.req.Close {
			return a, true
		}
	}
	return acceptedWrite{}, false
}

func (m *writeModel) sealed() bool {
	_, ok := m.closer()
	return ok || m.legacySeal
}

// lastOf is the producer's last accepted request.
func (m *writeModel) lastOf(id string) (acceptedWrite, bool) {
	for i := len(m.accepted) - 1; i >= 0; i-- {
		if p := m.accepted[i].req.Producer; p != nil && p.ID == id {
			return m.accepted[i], true
		}
	}
	return acceptedWrite{}, false
}

func (m *writeModel) writerSeq() string {
	seq := ""
	for _, a := range m.accepted {
		if len(a.req.Records) > 0 && a.req.WriterSeq != "" {
			seq = a.req.WriterSeq
		}
	}
	return seq
}

func (m *writeModel) judge(req WriteRequest, unfit bool, now int64) Verdict {
	tail, sealed := m.tail(), m.sealed()
	v := Verdict{Tail: tail, Closed: sealed}
	refused := func(out Outcome) Verdict {
		v.Outcome, v.First, v.Next = out, tail, tail
		if sealed {
			v.Outcome = StreamClosed
		}
		return v
	}
	if unfit {
		return refused(Unfit)
	}
	if p := req.Producer; p != nil {
		last, known := m.lastOf(p.ID)
		newEpoch := !known || p.Epoch > last.req.Producer.Epoch
		switch {
		case newEpoch && p.Seq != 0:
			v.Outcome, v.Expected, v.Received, v.NewEpoch = ProducerGap, 0, p.Seq, known
			return v
		case newEpoch:
		case p.Epoch < last.req.Producer.Epoch:
			v.Outcome, v.Epoch, v.Received = StaleEpoch, last.req.Producer.Epoch, p.Seq
			return v
		case p.Seq <= last.req.Producer.Seq:
			v.Outcome, v.First, v.Next, v.ProducerSeq = Duplicate, last.first, last.next, last.req.Producer.Seq
			c, named := m.closer()
			named = named && !m.legacySeal // the unrecorded seal came first
			v.RepeatsClose = sealed && (!named || (c.req.Producer != nil && *c.req.Producer == *p))
			return v
		case p.Seq != last.req.Producer.Seq+1:
			v.Outcome, v.Expected, v.Received = ProducerGap, last.req.Producer.Seq+1, p.Seq
			return v
		}
	}
	matched := req.MatchNext == nil || *req.MatchNext == tail
	// A closed stream takes only a close again, whose condition holds, and
	// which carries no producer stamp or the closer's, when that is known.
	c, named := m.closer()
	named = named && !m.legacySeal
	closer := req.Producer == nil || !named || (c.req.Producer != nil && *c.req.Producer == *req.Producer)
	reclose := sealed && req.Close && len(req.Records) == 0 && matched && closer
	if sealed && !reclose {
		return refused(StreamClosed)
	}
	if !matched {
		v.Expected = *req.MatchNext
		return refused(MatchFailed)
	}
	if !reclose && req.WriterSeq != "" && req.WriterSeq <= m.writerSeq() {
		v.LastWriterSeq = m.writerSeq()
		return refused(WriterSeqBehind)
	}
	n := uint64(len(req.Records))
	v.Outcome, v.First, v.Next, v.Tail, v.Closed = Accepted, tail, tail+n, tail+n, sealed || req.Close
	v.TimestampMs = m.lastTs()
	if n > 0 && now > v.TimestampMs {
		v.TimestampMs = now
	}
	if req.Producer != nil {
		v.ProducerSeq = req.Producer.Seq
	}
	return v
}

func (m *writeModel) accept(req WriteRequest, v Verdict) {
	if v.Outcome == Accepted {
		m.accepted = append(m.accepted, acceptedWrite{req: req, first: v.First, next: v.Next, ts: v.TimestampMs})
	}
}

// drawWrite draws a request over few producers, epochs and sequences, so
// that duplicates, gaps and stale epochs are frequent.
func drawWrite(t *rapid.T, tail uint64) WriteRequest {
	var req WriteRequest
	for range rapid.IntRange(0, 2).Draw(t, "records") {
		req.Records = append(req.Records, Record{Body: []byte("r")})
	}
	if rapid.IntRange(0, 2).Draw(t, "stamped") > 0 {
		req.Producer = &ProducerStamp{ID: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "producer"),
			Epoch: rapid.Uint64Range(0, 2).Draw(t, "epoch"), Seq: rapid.Uint64Range(0, 3).Draw(t, "seq")}
	}
	if rapid.IntRange(0, 4).Draw(t, "match") == 0 {
		m := tail + rapid.Uint64Range(0, 1).Draw(t, "matchAhead")
		req.MatchNext = &m
	}
	req.Close = rapid.IntRange(0, 6).Draw(t, "close") == 0
	req.WriterSeq = rapid.SampledFrom([]string{"", "", "1", "2", "3"}).Draw(t, "writerSeq")
	return req
}

func cloneWriteState(w WriteState) WriteState {
	w.Producers = maps.Clone(w.Producers)
	if p := w.Closer.Producer; p != nil {
		stamp := *p
		w.Closer.Producer = &stamp
	}
	return w
}

// TestWriteRulesMatchTheNaiveModel drives the write rules and the model
// with the same requests, clock readings and faults: every verdict must be
// the same, field by field, and Decide must leave the state as it was.
func TestWriteRulesMatchTheNaiveModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		legacy := rapid.IntRange(0, 9).Draw(t, "legacySeal") == 0
		w := WriteState{Sealed: legacy}
		m := &writeModel{legacySeal: legacy}
		now := int64(1000)
		for i := range rapid.IntRange(1, 40).Draw(t, "steps") {
			req := drawWrite(t, m.tail())
			unfit := rapid.IntRange(0, 9).Draw(t, "unfit") == 0
			now += rapid.Int64Range(-3, 3).Draw(t, "clockStep") // it may step back
			before := cloneWriteState(w)
			got := w.Decide(req, unfit, now)
			if !reflect.DeepEqual(w, before) {
				t.Fatalf("step %d: Decide changed the state: %+v, was %+v", i, w, before)
			}
			if want := m.judge(req, unfit, now); got != want {
				t.Fatalf("step %d: %s (unfit %v)\n got %+v\nwant %+v\nafter %s", i, describeWrite(req), unfit, got, want, m)
			}
			w.Accept(req, got)
			m.accept(req, got)
			if w.Next != m.tail() || w.Sealed != m.sealed() || w.WriterSeq != m.writerSeq() {
				t.Fatalf("step %d: state %+v, model tail %d sealed %v writer seq %q", i, w, m.tail(), m.sealed(), m.writerSeq())
			}
		}
	})
}

// The cases a reader of the rules looks for first, each spelled out.
func TestWriteRulesExamples(t *testing.T) {
	stamp := func(epoch, seq uint64) *ProducerStamp { return &ProducerStamp{ID: "p", Epoch: epoch, Seq: seq} }
	one := []Record{{Body: []byte("x")}}
	w := WriteState{}
	step := func(req WriteRequest, unfit bool) Verdict {
		v := w.Decide(req, unfit, 5)
		w.Accept(req, v)
		return v
	}
	if v := step(WriteRequest{Records: one, Producer: stamp(1, 0)}, false); v.Outcome != Accepted || v.First != 0 || v.Next != 1 {
		t.Fatalf("first append: %+v", v)
	}
	if v := step(WriteRequest{Records: one, Producer: stamp(1, 0)}, false); v.Outcome != Duplicate || v.First != 0 || v.Tail != 1 {
		t.Fatalf("retry: %+v", v)
	}
	if v := step(WriteRequest{Records: one, Producer: stamp(1, 2)}, false); v.Outcome != ProducerGap || v.Expected != 1 || v.Received != 2 {
		t.Fatalf("gap: %+v", v)
	}
	if v := step(WriteRequest{Records: one, Producer: stamp(2, 1)}, false); v.Outcome != ProducerGap || !v.NewEpoch {
		t.Fatalf("new epoch at 1: %+v", v)
	}
	if v := step(WriteRequest{Records: one, Producer: stamp(0, 0)}, false); v.Outcome != StaleEpoch || v.Epoch != 1 {
		t.Fatalf("stale epoch: %+v", v)
	}
	closing := WriteRequest{Records: one, Producer: stamp(1, 1), Close: true}
	if v := step(closing, false); v.Outcome != Accepted || !v.Closed || !w.Sealed {
		t.Fatalf("close: %+v", v)
	}
	if v := step(closing, false); v.Outcome != Duplicate || !v.RepeatsClose {
		t.Fatalf("retry of the close: %+v", v)
	}
	if v := step(WriteRequest{Records: one, Producer: stamp(1, 0)}, false); v.Outcome != Duplicate || v.RepeatsClose {
		t.Fatalf("retry of an earlier request on the closed stream: %+v", v)
	}
	if v := step(WriteRequest{Records: one}, true); v.Outcome != StreamClosed || v.Tail != 2 {
		t.Fatalf("an unfit request on a closed stream: %+v", v)
	}
	if v := step(WriteRequest{Close: true}, false); v.Outcome != Accepted {
		t.Fatalf("closing again: %+v", v)
	}
}

func describeWrite(r WriteRequest) string {
	s := fmt.Sprintf("%d records", len(r.Records))
	if p := r.Producer; p != nil {
		s += fmt.Sprintf(" by %s/%d/%d", p.ID, p.Epoch, p.Seq)
	}
	if r.MatchNext != nil {
		s += fmt.Sprintf(" if tail %d", *r.MatchNext)
	}
	if r.Close {
		s += " closing"
	}
	if r.WriterSeq != "" {
		s += " writer seq " + r.WriterSeq
	}
	return s
}

func (m *writeModel) String() string {
	s := fmt.Sprintf("legacy seal %v, accepted:", m.legacySeal)
	for _, a := range m.accepted {
		s += "\n  " + describeWrite(a.req)
	}
	return s
}

// A closed stream takes a close without records again only from a request
// without a producer stamp or from the one that closed it: a close stamped
// by another producer, epoch or sequence is refused as closed (Durable
// Streams §5.2.1), and changes nothing.
func TestClosingAClosedStreamAgain(t *testing.T) {
	stamp := func(id string, epoch, seq uint64) *ProducerStamp {
		return &ProducerStamp{ID: id, Epoch: epoch, Seq: seq}
	}
	one := []Record{{Body: []byte("x")}}
	for _, tc := range []struct {
		name  string
		close WriteRequest // the request that closes the stream
		again []WriteRequest
		want  []Outcome
	}{
		{
			name:  "closed by a producer's append",
			close: WriteRequest{Records: one, Producer: stamp("p", 1, 0), Close: true},
			again: []WriteRequest{
				{Close: true, Producer: stamp("q", 0, 0)}, // another producer
				{Close: true, Producer: stamp("p", 1, 1)}, // the closer's next sequence
				{Close: true, Producer: stamp("p", 2, 0)}, // the closer's next epoch
				{Close: true, Producer: stamp("p", 1, 0)}, // the close again: its retry
				{Close: true}, // no producer
			},
			want: []Outcome{StreamClosed, StreamClosed, StreamClosed, Duplicate, Accepted},
		},
		{
			name:  "closed by a producer's close without records",
			close: WriteRequest{Producer: stamp("p", 0, 0), Close: true},
			again: []WriteRequest{
				{Close: true, Producer: stamp("q", 0, 0)},
				{Close: true, Producer: stamp("p", 0, 1)},
				{Close: true, Producer: stamp("p", 0, 0)},
				{Close: true},
			},
			want: []Outcome{StreamClosed, StreamClosed, Duplicate, Accepted},
		},
		{
			name:  "closed without a producer",
			close: WriteRequest{Close: true},
			again: []WriteRequest{
				{Close: true, Producer: stamp("q", 0, 0)},
				{Close: true},
			},
			want: []Outcome{StreamClosed, Accepted},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := WriteState{}
			if v := w.Decide(tc.close, false, 5); v.Outcome != Accepted {
				t.Fatalf("close: %+v", v)
			}
			w.Accept(tc.close, w.Decide(tc.close, false, 5))
			for i, req := range tc.again {
				before := cloneWriteState(w)
				v := w.Decide(req, false, 6)
				w.Accept(req, v)
				if v.Outcome != tc.want[i] || !v.Closed {
					t.Errorf("%s: %+v, want %v on a closed stream", describeWrite(req), v, tc.want[i])
				}
				if v.Outcome == StreamClosed && !reflect.DeepEqual(w, before) {
					t.Errorf("%s: refused, yet the state changed to %+v", describeWrite(req), w)
				}
				if v.Outcome == Duplicate && !v.RepeatsClose {
					t.Errorf("%s: a duplicate that does not repeat the close: %+v", describeWrite(req), v)
				}
			}
		})
	}
	// A seal that named no request (recorded before seals named theirs)
	// takes any close again: it may be the close's retry, whose producer
	// state a close without records does not make durable.
	w := WriteState{Sealed: true}
	if v := w.Decide(WriteRequest{Close: true, Producer: stamp("q", 0, 0)}, false, 5); v.Outcome != Accepted {
		t.Errorf("a stamped close of a stream sealed by an unnamed request: %+v", v)
	}
	// The closer's retry is its close also once its producer state is
	// gone (a takeover restores only what frames carried).
	w = WriteState{Sealed: true, Closer: Closer{Known: true, Producer: stamp("p", 0, 3)},
		Producers: map[string]ProducerState{"p": {ID: "p", Epoch: 0, Seq: 2}}}
	if v := w.Decide(WriteRequest{Close: true, Producer: stamp("p", 0, 3)}, false, 5); v.Outcome != Accepted || !v.Closed {
		t.Errorf("the closer's retry after a takeover: %+v", v)
	}
}
