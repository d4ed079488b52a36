package linearize

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// stream is the model's state of one stream name. Steps never change a
// state in place: porcupine keeps earlier ones to backtrack to.
type stream struct {
	exists  bool
	records []string
	closed  bool
	// The first offset kept lies in [startLo, startHi]: a trim whose
	// result is unknown widens the range, an observed start fixes it.
	startLo, startHi uint64
	producers        []producer // sorted by id
}

// producer is an idempotent producer's last accepted append.
type producer struct {
	id         string
	epoch, seq uint64
	offset     uint64
}

func (s stream) next() uint64 { return uint64(len(s.records)) }

// Model is the porcupine model of a history of Inputs and Outputs,
// partitioned by stream.
var Model = porcupine.Model{
	Partition: partitionByStream,
	Init:      func() any { return stream{} },
	Step: func(state, input, output any) (bool, any) {
		return step(state.(stream), input.(Input), output.(Output))
	},
	Equal: func(a, b any) bool { return equal(a.(stream), b.(stream)) },
	Hash:  func(s any) uint64 { return hash(s.(stream)) },
	DescribeOperation: func(input, output any) string {
		in := input.(Input)
		return fmt.Sprintf("%s → %s", in, output.(Output).describe(in.Kind))
	},
	DescribeState: func(s any) string { return describe(s.(stream)) },
}

func partitionByStream(history []porcupine.Operation) [][]porcupine.Operation {
	var names []string
	parts := map[string][]porcupine.Operation{}
	for _, op := range history {
		name := op.Input.(Input).Stream
		if _, ok := parts[name]; !ok {
			names = append(names, name)
		}
		parts[name] = append(parts[name], op)
	}
	out := make([][]porcupine.Operation, 0, len(names))
	for _, name := range names {
		out = append(out, parts[name])
	}
	return out
}

// step applies in to s. The result is legal when the client's output is
// what the model gives, or unknown; either way the model's effect applies
// (for an unknown result porcupine also tries the operation last, which is
// as if it never happened).
func step(s stream, in Input, out Output) (bool, stream) {
	switch {
	case in.Kind == Create:
		return create(s, out)
	case !s.exists:
		return out.Outcome == Unknown || out.Outcome == NotFound, s
	}
	switch in.Kind {
	case Delete:
		return out.Outcome == Unknown || out.Outcome == OK, stream{}
	case Append:
		return appendTo(s, in, out)
	case Read:
		return read(s, in, out)
	case Head:
		return head(s, out)
	case Trim:
		return trim(s, in, out)
	}
	return false, s
}

func create(s stream, out Output) (bool, stream) {
	if s.exists {
		return out.Outcome == Unknown || out.Outcome == Exists, s
	}
	return out.Outcome == Unknown || out.Outcome == OK, stream{exists: true}
}

// appendTo judges an append as the protocol states it: the producer stamp
// first (a retry is a duplicate whatever else holds), then the seal (only a
// close without records, without a new producer request, repeats it), then
// the match.
func appendTo(s stream, in Input, out Output) (bool, stream) {
	outcome, offset, next := decide(s, in)
	if out.Outcome == Unknown {
		return true, next
	}
	if out.Outcome != outcome {
		return false, s
	}
	switch outcome {
	case OK:
		return out.Offset == offset && out.Next == next.next(), next
	case Duplicate:
		p, _ := s.producer(in.Producer.ID)
		return in.Producer.Seq != p.seq || out.NoOffset || out.Offset == p.offset, s
	}
	return true, s
}

// decide returns what the model does with in: the outcome, the record's
// offset and the state after.
func decide(s stream, in Input) (Outcome, uint64, stream) {
	stamp := in.Producer
	if stamp != nil {
		if out := judgeProducer(s, stamp); out != OK {
			return out, 0, s
		}
	}
	matched := in.Match == nil || *in.Match == s.next()
	closeOnly := in.Close && in.Body == ""
	switch {
	case s.closed && closeOnly && matched && stamp == nil:
		return OK, s.next(), s
	case s.closed:
		return Closed, 0, s
	case !matched:
		return MatchFailed, 0, s
	}
	offset := s.next()
	after := s
	if !closeOnly {
		after.records = append(slices.Clip(s.records), in.Body)
	}
	after.closed = in.Close
	if stamp != nil {
		after.producers = withProducer(s.producers, producer{stamp.ID, stamp.Epoch, stamp.Seq, offset})
	}
	return OK, offset, after
}

func judgeProducer(s stream, p *Stamp) Outcome {
	cur, known := s.producer(p.ID)
	switch {
	case !known || p.Epoch > cur.epoch:
		if p.Seq != 0 {
			return Gap
		}
	case p.Epoch < cur.epoch:
		return StaleEpoch
	case p.Seq <= cur.seq:
		return Duplicate
	case p.Seq > cur.seq+1:
		return Gap
	}
	return OK
}

func (s stream) producer(id string) (producer, bool) {
	i, ok := slices.BinarySearchFunc(s.producers, id, func(p producer, id string) int { return strings.Compare(p.id, id) })
	if !ok {
		return producer{}, false
	}
	return s.producers[i], true
}

func withProducer(ps []producer, p producer) []producer {
	out := slices.Clone(ps)
	i, ok := slices.BinarySearchFunc(out, p.id, func(q producer, id string) int { return strings.Compare(q.id, id) })
	if ok {
		out[i] = p
		return out
	}
	return slices.Insert(out, i, p)
}

// read checks a page: it starts at the first offset kept at or above the
// one asked, holds the records there, is empty only at the tail, and says
// closed exactly when the stream is sealed and the page reaches the tail.
func read(s stream, in Input, out Output) (bool, stream) {
	switch {
	case out.Outcome == Unknown:
		return true, s
	case in.From > s.next():
		return out.Outcome == OutOfRange, s
	case out.Outcome != OK:
		return false, s
	}
	lo, hi := max(in.From, s.startLo), max(in.From, s.startHi)
	if out.From < lo || out.From > hi || out.Next < out.From || out.Next > s.next() ||
		uint64(len(out.Bodies)) != out.Next-out.From {
		return false, s
	}
	if out.Next == out.From && out.From < s.next() {
		return false, s
	}
	if !slices.Equal(out.Bodies, s.records[out.From:out.Next]) {
		return false, s
	}
	if out.Closed != (s.closed && out.Next == s.next()) {
		return false, s
	}
	after := s
	if out.From > in.From {
		after.startLo, after.startHi = out.From, out.From
	} else {
		after.startHi = min(after.startHi, in.From)
	}
	return true, after
}

func head(s stream, out Output) (bool, stream) {
	switch out.Outcome {
	case Unknown:
		return true, s
	case OK:
	default:
		return false, s
	}
	if out.Next != s.next() || out.Closed != s.closed || out.Start < s.startLo || out.Start > s.startHi {
		return false, s
	}
	after := s
	after.startLo, after.startHi = out.Start, out.Start
	return true, after
}

// trim raises the start to at most To, clamped by the server to what it
// has committed to data objects: any start from the current one up to
// min(To, tail) is legal.
func trim(s stream, in Input, out Output) (bool, stream) {
	ceiling := max(s.startHi, min(in.To, s.next()))
	switch out.Outcome {
	case Unknown:
		after := s
		after.startHi = ceiling
		return true, after
	case OK:
	default:
		return false, s
	}
	if out.Next < s.startLo || out.Next > ceiling {
		return false, s
	}
	after := s
	after.startLo, after.startHi = out.Next, out.Next
	return true, after
}

func equal(a, b stream) bool {
	return a.exists == b.exists && a.closed == b.closed && a.startLo == b.startLo && a.startHi == b.startHi &&
		slices.Equal(a.records, b.records) && slices.Equal(a.producers, b.producers)
}

func hash(s stream) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, s.exists, s.closed, s.startLo, s.startHi, len(s.records), s.producers)
	if n := len(s.records); n > 0 {
		h.Write([]byte(s.records[n-1]))
	}
	return h.Sum64()
}

func describe(s stream) string {
	if !s.exists {
		return "no stream"
	}
	return fmt.Sprintf("records %q closed=%v start [%d,%d] producers %v", s.records, s.closed, s.startLo, s.startHi, s.producers)
}
