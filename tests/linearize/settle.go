package linearize

import (
	"slices"

	"github.com/anishathalye/porcupine"
)

// settle narrows what the pending appends of ops may have done, from what
// reads saw. Each pending append may land anywhere after its call, so a
// history with a dozen of them is more than the search can finish; most
// are settled by the reads:
//
//   - a pending append whose record was read took effect at the offset it
//     was read at, since no other append writes its body;
//   - one whose record the final reads of an undeleted stream do not show
//     (or show as written by a retry of it) took no effect before them,
//     and nothing after them could see it, so it is left out. If the
//     stream was trimmed, every offset below its start must be one an
//     acknowledged append reported, in one incarnation of the stream, and
//     the record must have no other writer: then it cannot hide there.
//     A delete no create follows does not count: the final reads found
//     the stream.
//
// Each keeps every linearization a correct run has, and so judges the same
// histories legal; a record written twice is still read at two offsets.
func settle(ops []porcupine.Operation) []porcupine.Operation {
	seen := recordsRead(ops)
	complete := completelyRead(ops)
	writers, acked, offsets := map[record]int{}, map[record]uint64{}, map[string]map[uint64]bool{}
	for _, op := range ops {
		in, out := op.Input.(Input), op.Output.(Output)
		if in.Kind != Append || in.Body == "" {
			continue
		}
		r := record{in.Stream, in.Body}
		writers[r]++
		if out.Outcome == OK {
			acked[r] = out.Offset
			if offsets[in.Stream] == nil {
				offsets[in.Stream] = map[uint64]bool{}
			}
			offsets[in.Stream][out.Offset] = true
		}
	}
	out := ops[:0:0]
	for _, op := range ops {
		in := op.Input.(Input)
		if in.Kind != Append || op.Output.(Output).Outcome != Unknown {
			out = append(out, op)
			continue
		}
		r := record{in.Stream, in.Body}
		at := seen[r]
		end, ok := complete[in.Stream]
		whole := ok && !end.deletedAfter(op.Call) && // the final reads come after every other call
			(end.start == 0 || !end.recreated && writers[r] <= 1 && coversBelow(offsets[in.Stream], end.start))
		if in.Body != "" && len(at) == 1 && writers[r] == 1 {
			op.Output = Output{Outcome: OK, Offset: at[0], Next: at[0] + 1}
		} else if whole && unwritten(in, at, end, acked) {
			continue
		}
		out = append(out, op)
	}
	return out
}

// unwritten: a pending append of a stream read whole wrote nothing those
// reads show, and so may be left out. Its record is not there, or it is
// there once and another append of the same body (a producer's retry) was
// acknowledged at its offset.
func unwritten(in Input, at []uint64, end finalRead, acked map[record]uint64) bool {
	if in.Body == "" {
		return !end.closed
	}
	if len(at) == 0 {
		return true
	}
	k, ok := acked[record{in.Stream, in.Body}]
	return len(at) == 1 && ok && k == at[0]
}

// record is one append's body in its stream.
type record struct{ stream, body string }

// recordsRead maps each record read to the offsets it was read at.
func recordsRead(ops []porcupine.Operation) map[record][]uint64 {
	seen := map[record][]uint64{}
	for _, op := range ops {
		in, out := op.Input.(Input), op.Output.(Output)
		if in.Kind != Read || out.Outcome != OK {
			continue
		}
		for i, body := range out.Bodies {
			r, at := record{in.Stream, body}, out.From+uint64(i)
			if !slices.Contains(seen[r], at) {
				seen[r] = append(seen[r], at)
			}
		}
	}
	return seen
}

// finalRead is what the reads that end a stream's history saw.
type finalRead struct {
	closed    bool    // the tail was sealed
	start     uint64  // the first offset they show: above 0 if trimmed
	deletes   []int64 // the calls of the stream's deletes that a create follows
	recreated bool    // some delete is followed by a create
}

func (f finalRead) deletedAfter(call int64) bool {
	return slices.ContainsFunc(f.deletes, func(d int64) bool { return d > call })
}

// coversBelow: every offset below start is in offsets.
func coversBelow(offsets map[uint64]bool, start uint64) bool {
	if uint64(len(offsets)) < start {
		return false
	}
	for k := range start {
		if !offsets[k] {
			return false
		}
	}
	return true
}

// completelyRead finds the streams whose history ends in successful reads
// that begin after every other operation on the stream has begun and every
// answered one has ended, and that read the whole stream from offset 0 to
// its tail: nothing had been trimmed, and every record written before them
// is in them.
func completelyRead(ops []porcupine.Operation) map[string]finalRead {
	byStream := map[string][]porcupine.Operation{}
	for _, op := range ops {
		name := op.Input.(Input).Stream
		byStream[name] = append(byStream[name], op)
	}
	done := map[string]finalRead{}
	for name, sops := range byStream {
		if f, ok := finalReads(sops); ok {
			done[name] = f
		}
	}
	return done
}

func finalReads(ops []porcupine.Operation) (finalRead, bool) {
	slices.SortFunc(ops, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
	// The final reads are the longest run of successful reads at the end
	// that overlaps nothing before it.
	first := len(ops)
	for first > 0 && isRead(ops[first-1]) && startsAfterAll(ops[first-1], ops[:first-1]) {
		first--
	}
	if first == len(ops) {
		return finalRead{}, false
	}
	var f finalRead
	f.deletes = undoneDeletes(ops[:first])
	f.recreated = len(f.deletes) > 0
	// The pages read from offset 0 on, each from where the one before
	// ended, down to the tail; other reads among them are left aside.
	covered, tail, sealed := uint64(0), false, false
	for _, op := range ops[first:] {
		in, out := op.Input.(Input), op.Output.(Output)
		if in.From > covered || tail {
			continue
		}
		if out.From > in.From {
			if covered > 0 {
				return finalRead{}, false // trimmed between pages
			}
			f.start = out.From
		}
		covered = max(covered, out.Next)
		// A page reaches the tail if it is empty there, or sealed (a
		// sealed page ends at the tail).
		if out.Next == covered && (out.Next == out.From || out.Closed) {
			tail, sealed = true, out.Closed
		}
	}
	f.closed = sealed
	return f, tail
}

// undoneDeletes are the calls of the deletes in ops that a create may
// have undone, one that had not returned when the delete began: only
// those can hide a record from final reads that found the stream.
func undoneDeletes(ops []porcupine.Operation) []int64 {
	var out []int64
	for _, d := range ops {
		if d.Input.(Input).Kind != Delete {
			continue
		}
		if slices.ContainsFunc(ops, func(c porcupine.Operation) bool {
			return c.Input.(Input).Kind == Create && (c.Return == never || c.Return > d.Call)
		}) {
			out = append(out, d.Call)
		}
	}
	return out
}

func isRead(op porcupine.Operation) bool {
	return op.Input.(Input).Kind == Read && op.Output.(Output).Outcome == OK
}

// startsAfterAll: op began after each of earlier began and every answered
// one ended.
func startsAfterAll(op porcupine.Operation, earlier []porcupine.Operation) bool {
	for _, e := range earlier {
		if e.Return != never && e.Return > op.Call {
			return false
		}
	}
	return true
}
