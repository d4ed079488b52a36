package linearize

import (
	"fmt"
	"strings"
)

// Kind is the kind of an operation on a stream.
type Kind uint8

// The operations.
const (
	Create Kind = iota + 1
	Append
	Read
	Head
	Trim
	Delete
)

var kindNames = [...]string{"?", "create", "append", "read", "head", "trim", "delete"}

func (k Kind) String() string { return nameOf(kindNames[:], int(k), "Kind") }

// nameOf is names[i], or type(i) for a value without a name.
func nameOf(names []string, i int, typ string) string {
	if i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, i)
}

// Stamp is an idempotent producer's stamp on an append.
type Stamp struct {
	ID         string
	Epoch, Seq uint64
}

// Input is one operation as a client issued it.
type Input struct {
	Stream string
	Kind   Kind
	// Append: the one record's body ("" with Close: a close without
	// records).
	Body string
	// Append: seal the stream after the record.
	Close bool
	// Append: idempotent producer stamp, nil for none.
	Producer *Stamp
	// Append: only if the stream's next offset is *Match.
	Match *uint64
	// Read: the offset read from.
	From uint64
	// Trim: drop records below To.
	To uint64
}

// Outcome is how an operation ended, as far as its client knows.
type Outcome uint8

// The outcomes.
const (
	// Unknown: the client never learned the result (a timeout, a reset
	// connection, a 5xx); the operation may or may not have taken effect.
	Unknown Outcome = iota
	OK
	// Duplicate: an idempotent producer's repeat, acknowledged unwritten.
	Duplicate
	// Gap: the producer's sequence skipped ahead, or a new epoch did not
	// start at 0.
	Gap
	// StaleEpoch: the producer's epoch is below the stream's.
	StaleEpoch
	// Closed: the stream is sealed.
	Closed
	// MatchFailed: the stream's next offset was not the append's Match.
	MatchFailed
	// NotFound: no such stream.
	NotFound
	// Exists: a create found the stream there.
	Exists
	// OutOfRange: a read from beyond the stream's tail.
	OutOfRange
)

var outcomeNames = [...]string{"unknown", "ok", "duplicate", "gap", "stale epoch", "closed",
	"match failed", "not found", "exists", "out of range"}

func (o Outcome) String() string { return nameOf(outcomeNames[:], int(o), "Outcome") }

// Output is an operation's result as its client saw it.
type Output struct {
	Outcome Outcome
	// Append OK or Duplicate: the record's offset (a close without records:
	// the tail).
	Offset uint64
	// Duplicate: the protocol does not report the original's offset, so
	// Offset says nothing.
	NoOffset bool
	// Append: the tail after; Read: the page's end; Head: the next offset;
	// Trim: the effective start.
	Next uint64
	// Read: the page's first offset (above the one asked when records were
	// trimmed).
	From uint64
	// Read: the records' bodies, offsets From..Next-1.
	Bodies []string
	// Head: the first offset kept.
	Start uint64
	// Read: sealed and the page reaches the tail; Head: sealed.
	Closed bool
}

func (in Input) String() string {
	var b strings.Builder
	b.WriteString(in.Kind.String())
	switch in.Kind {
	case Append:
		fmt.Fprintf(&b, "(%q", in.Body)
		if in.Close {
			b.WriteString(" close")
		}
		if p := in.Producer; p != nil {
			fmt.Fprintf(&b, " %s/%d/%d", p.ID, p.Epoch, p.Seq)
		}
		if in.Match != nil {
			fmt.Fprintf(&b, " match=%d", *in.Match)
		}
		b.WriteString(")")
	case Read:
		fmt.Fprintf(&b, "(%d)", in.From)
	case Trim:
		fmt.Fprintf(&b, "(%d)", in.To)
	}
	return b.String()
}

func (out Output) describe(k Kind) string {
	if out.Outcome != OK && out.Outcome != Duplicate {
		return out.Outcome.String()
	}
	switch k {
	case Append:
		return fmt.Sprintf("%s @%d next %d", out.Outcome, out.Offset, out.Next)
	case Read:
		return fmt.Sprintf("[%d,%d) %q closed=%v", out.From, out.Next, out.Bodies, out.Closed)
	case Head:
		return fmt.Sprintf("start %d next %d closed=%v", out.Start, out.Next, out.Closed)
	case Trim:
		return fmt.Sprintf("start %d", out.Next)
	}
	return out.Outcome.String()
}
