package domain

import "strings"

// WriteRequest is one append to a stream: records written atomically with
// consecutive offsets and one timestamp, qualified by the options below.
type WriteRequest struct {
	Records []Record
	// Producer makes the append idempotent (nil: none).
	Producer *ProducerStamp
	// MatchNext, when set, makes the append conditional on the stream's
	// next offset being exactly *MatchNext.
	MatchNext *uint64
	// Close seals the stream after these records (which may be none).
	Close bool
	// WriterSeq, when set, must sort bytewise above the last writer
	// sequence accepted on the stream; it is kept with the records.
	WriterSeq string
	// ContentType, when set, is the records' media type, which must be the
	// stream's (SameContentType).
	ContentType string
}

// WriteState is what a stream's single writer knows to judge an append:
// the rules below read it, and only Accept changes it.
type WriteState struct {
	Next   uint64 // the offset the next record gets
	LastTs int64  // the last record's timestamp
	Sealed bool
	// Closer names the request that sealed the stream, when known.
	Closer    Closer
	Producers map[string]ProducerState
	WriterSeq string // the last accepted writer sequence, "" for none
}

// Outcome is what the write rules decide of a request.
type Outcome uint8

const (
	// Accepted: the request is written at [First, Next) (nothing for a
	// close without records).
	Accepted Outcome = iota
	// Duplicate: a producer's repeat, acknowledged without writing;
	// First/Next are those of the producer's last accepted request (the
	// original, when the repeat is of the last one): only that is kept.
	Duplicate
	// ProducerGap: the producer's sequence skipped ahead (Expected,
	// Received), or a new epoch did not start at 0 (NewEpoch).
	ProducerGap
	// StaleEpoch: the producer's epoch is below the stream's (Epoch).
	StaleEpoch
	// MatchFailed: the stream's tail is not the request's MatchNext.
	MatchFailed
	// WriterSeqBehind: the writer sequence is not above LastWriterSeq.
	WriterSeqBehind
	// StreamClosed: the stream is sealed.
	StreamClosed
	// Unfit: the request's records or content type do not suit the stream
	// (found by the caller, who holds the reason).
	Unfit
)

var outcomeNames = [...]string{"accepted", "duplicate", "producer gap", "stale epoch", "match failed",
	"writer sequence behind", "stream closed", "unfit"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown outcome"
}

// Verdict is the decision on one request with every fact either protocol
// reports about it.
type Verdict struct {
	Outcome Outcome
	// First and Next bound the offsets written, or the original's on a
	// Duplicate.
	First, Next uint64
	// Tail is the stream's next offset after the decision.
	Tail        uint64
	TimestampMs int64
	// ProducerSeq is the producer's last accepted sequence.
	ProducerSeq uint64
	// Closed: the stream is sealed after the decision.
	Closed bool
	// RepeatsClose, on a Duplicate of a closed stream: the request repeats
	// the one that sealed it, or that one is not known (a seal recorded
	// without naming its request).
	RepeatsClose bool
	// Epoch is the producer's current epoch on StaleEpoch.
	Epoch uint64
	// Expected and Received are the sequences of a ProducerGap; NewEpoch
	// says the gap opens a new epoch of a known producer.
	Expected, Received uint64
	NewEpoch           bool
	// LastWriterSeq is the stream's last accepted writer sequence on
	// WriterSeqBehind.
	LastWriterSeq string
}

// Written reports whether the verdict writes the request's records or seal.
func (v Verdict) Written() bool { return v.Outcome == Accepted }

// Decide judges req against the stream's state, nowMs being the writer's
// clock. unfit says the caller found the request's records or content type
// wrong for the stream.
//
// The order is the rules': closure comes before the request's own faults;
// then the producer stamp, so that a producer's retry is a duplicate
// whatever else holds; then closure again, the match and the writer
// sequence. A close without records of a closed stream is idempotent
// when its condition holds and it is not another producer's request
// (mayRepeatClose); every other request on a closed stream is refused.
func (w *WriteState) Decide(req WriteRequest, unfit bool, nowMs int64) Verdict {
	v := Verdict{Tail: w.Next, Closed: w.Sealed}
	if unfit {
		return w.refuse(v, Unfit)
	}
	if p := req.Producer; p != nil {
		if out, decided := w.judgeProducer(p, &v); decided {
			v.Outcome = out
			return v
		}
	}
	matched := req.MatchNext == nil || *req.MatchNext == w.Next
	switch {
	case w.Sealed && req.Close && len(req.Records) == 0 && matched && (req.Producer == nil || w.mayRepeatClose(req.Producer)):
		return w.accept(v, req, nowMs)
	case w.Sealed:
		return w.refuse(v, StreamClosed)
	case !matched:
		v.Expected = *req.MatchNext
		return w.refuse(v, MatchFailed)
	case req.WriterSeq != "" && strings.Compare(req.WriterSeq, w.WriterSeq) <= 0:
		v.LastWriterSeq = w.WriterSeq
		return w.refuse(v, WriterSeqBehind)
	}
	return w.accept(v, req, nowMs)
}

// refuse is a refusal of kind out, unless the stream is closed: closure
// answers first.
func (w *WriteState) refuse(v Verdict, out Outcome) Verdict {
	v.Outcome = out
	if w.Sealed {
		v.Outcome = StreamClosed
	}
	v.First, v.Next = w.Next, w.Next
	return v
}

// judgeProducer applies the idempotent-producer rules: a stale epoch is
// fenced, a repeated sequence is a duplicate, a skipped one is a gap.
// Sequences start at 0 for each new epoch. decided is false when the stamp
// may proceed.
func (w *WriteState) judgeProducer(p *ProducerStamp, v *Verdict) (out Outcome, decided bool) {
	cur, known := w.Producers[p.ID]
	switch {
	case !known || p.Epoch > cur.Epoch:
		if p.Seq != 0 {
			v.Expected, v.Received, v.NewEpoch = 0, p.Seq, known
			return ProducerGap, true
		}
	case p.Epoch < cur.Epoch:
		v.Epoch, v.Received = cur.Epoch, p.Seq
		return StaleEpoch, true
	case p.Seq <= cur.Seq:
		v.First, v.Next, v.ProducerSeq = cur.First, cur.Next, cur.Seq
		v.RepeatsClose = w.Sealed && w.mayRepeatClose(p)
		return Duplicate, true
	case p.Seq > cur.Seq+1:
		v.Expected, v.Received = cur.Seq+1, p.Seq
		return ProducerGap, true
	}
	return Accepted, false
}

// mayRepeatClose reports whether a request stamped p may be the retry of
// the one that sealed the stream: it is that one, or that one is not known
// (a seal recorded without naming its request). A stamped close without
// records is then a close again; any other producer, epoch or sequence is
// refused as closed, so that no producer is told a close it did not make
// was its own. The retry of the closer counts even when its producer state
// is gone: a close without records leaves no frame to carry that state, and
// a takeover restores only what frames carried.
func (w *WriteState) mayRepeatClose(p *ProducerStamp) bool {
	return !w.Closer.Known || w.Closer.RepeatedBy(p)
}

// accept is the verdict that writes req: its records get the next offsets
// and one timestamp, monotonic per stream even if the clock steps back.
func (w *WriteState) accept(v Verdict, req WriteRequest, nowMs int64) Verdict {
	n := uint64(len(req.Records))
	v.Outcome, v.First, v.Next, v.Tail = Accepted, w.Next, w.Next+n, w.Next+n
	v.TimestampMs = w.LastTs
	if n > 0 {
		v.TimestampMs = max(nowMs, w.LastTs)
	}
	if req.Producer != nil {
		v.ProducerSeq = req.Producer.Seq
	}
	v.Closed = w.Sealed || req.Close
	return v
}

// Accept applies an Accepted verdict on req to the state; other verdicts
// change nothing.
//
// A request without records (a close) counts for its producer like any
// other, so that a retry of it is a duplicate and a lower epoch is fenced,
// but leaves the writer sequence alone: no frame carries it.
func (w *WriteState) Accept(req WriteRequest, v Verdict) {
	if v.Outcome != Accepted {
		return
	}
	if req.Close && !w.Sealed {
		w.Sealed, w.Closer = true, Closer{Known: true, Producer: req.Producer.Clone()}
	}
	if p := req.Producer; p != nil {
		if w.Producers == nil {
			w.Producers = map[string]ProducerState{}
		}
		w.Producers[p.ID] = ProducerState{ID: p.ID, Epoch: p.Epoch, Seq: p.Seq, First: v.First, Next: v.Next}
	}
	if len(req.Records) == 0 {
		return
	}
	w.Next, w.LastTs = v.Next, v.TimestampMs
	if req.WriterSeq != "" {
		w.WriterSeq = req.WriterSeq
	}
}
