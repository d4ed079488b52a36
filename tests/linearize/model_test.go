package linearize

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// op is one step of a scripted history: client begins in, and ends it with
// out once every step listed before its end has run.
type op struct {
	client int
	in     Input
	out    Output
}

// sequential records ops one after the other.
func sequential(ops ...op) *History {
	h := NewHistory()
	for _, o := range ops {
		h.Begin(o.client, o.in).End(o.out)
	}
	return h
}

func app(body string) Input { return Input{Stream: "s", Kind: Append, Body: body} }

func stamped(body, id string, epoch, seq uint64) Input {
	in := app(body)
	in.Producer = &Stamp{ID: id, Epoch: epoch, Seq: seq}
	return in
}

func created() op { return op{0, Input{Stream: "s", Kind: Create}, Output{Outcome: OK}} }

func acked(at uint64) Output { return Output{Outcome: OK, Offset: at, Next: at + 1} }

func page(from uint64, closed bool, bodies ...string) Output {
	return Output{Outcome: OK, From: from, Next: from + uint64(len(bodies)), Bodies: bodies, Closed: closed}
}

func readFrom(from uint64) Input { return Input{Stream: "s", Kind: Read, From: from} }

func linearizable(h *History) bool {
	res, _, _ := h.Linearizable("model-test", 10*time.Second)
	return res == porcupine.Ok
}

func TestModelAcceptsLegalHistories(t *testing.T) {
	cases := map[string]*History{
		"appends and a read": sequential(created(), op{0, app("a"), acked(0)}, op{1, app("b"), acked(1)},
			op{2, readFrom(0), page(0, false, "a", "b")}),
		"a producer's retry is a duplicate": sequential(created(), op{0, stamped("a", "p", 0, 0), acked(0)},
			op{0, stamped("a", "p", 0, 0), Output{Outcome: Duplicate, Offset: 0}}, op{0, stamped("b", "p", 0, 2), Output{Outcome: Gap}}),
		"a lost answer may have landed": sequential(created(), op{0, app("a"), Output{}},
			op{1, readFrom(0), page(0, false, "a")}),
		"a lost answer may not have landed": sequential(created(), op{0, app("a"), Output{}},
			op{1, readFrom(0), page(0, false)}),
		"a close is reported by the read that reaches the tail": sequential(created(),
			op{0, Input{Stream: "s", Kind: Append, Body: "z", Close: true}, acked(0)},
			op{1, app("late"), Output{Outcome: Closed}}, op{1, readFrom(0), page(0, true, "z")}),
		"a trim may be clamped": sequential(created(), op{0, app("a"), acked(0)}, op{0, app("b"), acked(1)},
			op{0, Input{Stream: "s", Kind: Trim, To: 2}, Output{Outcome: OK, Next: 1}},
			op{0, readFrom(0), page(1, false, "b")}),
		"a re-created stream starts empty": sequential(created(), op{0, app("a"), acked(0)},
			op{0, Input{Stream: "s", Kind: Delete}, Output{Outcome: OK}}, op{0, app("x"), Output{Outcome: NotFound}},
			created(), op{0, readFrom(0), page(0, false)}),
	}
	for name, h := range cases {
		if !linearizable(h) {
			t.Errorf("%s: judged not linearizable", name)
		}
	}
}

// TestModelCatchesViolations: each history breaks one promise, and the
// checker must say so.
func TestModelCatchesViolations(t *testing.T) {
	cases := map[string]*History{
		"an acknowledged record is lost": sequential(created(), op{0, app("a"), acked(0)},
			op{1, readFrom(0), page(0, false)}),
		"two appends at one offset": sequential(created(), op{0, app("a"), acked(0)}, op{1, app("b"), acked(0)}),
		"a stale read after an ack": sequential(created(), op{0, app("a"), acked(0)}, op{0, app("b"), acked(1)},
			op{1, readFrom(1), page(1, false)}),
		"a record past the acknowledged ones": sequential(created(), op{0, app("a"), acked(0)},
			op{1, readFrom(0), page(0, false, "a", "ghost")}),
		"a producer's records out of order": sequential(created(), op{0, stamped("a", "p", 0, 0), acked(0)},
			op{0, stamped("b", "p", 0, 1), acked(1)}, op{1, readFrom(0), page(0, false, "b", "a")}),
		"a retry written twice": sequential(created(), op{0, stamped("a", "p", 0, 0), acked(0)},
			op{0, stamped("a", "p", 0, 0), acked(1)}),
		"an append after the close": sequential(created(),
			op{0, Input{Stream: "s", Kind: Append, Close: true}, acked(0)}, op{1, app("late"), acked(0)}),
		"a read at the tail of a closed stream not closed": sequential(created(),
			op{0, Input{Stream: "s", Kind: Append, Body: "z", Close: true}, acked(0)}, op{1, readFrom(0), page(0, false, "z")}),
		"trimmed records read back": sequential(created(), op{0, app("a"), acked(0)}, op{0, app("b"), acked(1)},
			op{0, Input{Stream: "s", Kind: Trim, To: 1}, Output{Outcome: OK, Next: 1}}, op{0, readFrom(0), page(0, false, "a", "b")}),
		"a deleted stream's records": sequential(created(), op{0, app("a"), acked(0)},
			op{0, Input{Stream: "s", Kind: Delete}, Output{Outcome: OK}}, created(), op{0, readFrom(0), page(0, false, "a")}),
	}
	for name, h := range cases {
		if linearizable(h) {
			t.Errorf("%s: judged linearizable", name)
		}
	}
}

// TestModelOrdersByRealTime: two appends that overlap may land in either
// order, but one that ended before the other began lands first.
func TestModelOrdersByRealTime(t *testing.T) {
	overlapping := NewHistory()
	overlapping.Begin(0, Input{Stream: "s", Kind: Create}).End(Output{Outcome: OK})
	a, b := overlapping.Begin(0, app("a")), overlapping.Begin(1, app("b"))
	b.End(acked(0))
	a.End(acked(1))
	if !linearizable(overlapping) {
		t.Error("overlapping appends in either order: judged not linearizable")
	}
	ordered := sequential(created(), op{0, app("a"), acked(1)}, op{1, app("b"), acked(0)})
	if linearizable(ordered) {
		t.Error("an earlier append at a later offset: judged linearizable")
	}
}

func TestCheckWritesTheVisualisation(t *testing.T) {
	t.Setenv("PICOMQ_ARTIFACTS", t.TempDir())
	h := sequential(created(), op{0, app("a"), acked(0)}, op{1, readFrom(0), page(0, false)})
	res, path, err := h.Linearizable(t.Name(), 10*time.Second)
	if res != porcupine.Illegal || err != nil || path == "" {
		t.Fatalf("Linearizable: %v %q %v", res, path, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("the visualisation %s: %v", path, err)
	}
	if s := h.Stats(); s.Ops != 3 || s.Acked != 1 || s.Pending != 0 {
		t.Errorf("Stats: %+v", s)
	}
}

// TestSettlingDecidesManyLostAnswers: a history with more appends of
// unknown outcome than the search can order, most of them read back or
// shown unwritten by the final reads, is decided, whether those end at an
// empty page or at a sealed one.
func TestSettlingDecidesManyLostAnswers(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		h := NewHistory()
		h.Begin(0, Input{Stream: "s", Kind: Create}).End(Output{Outcome: OK})
		var landed []string
		for i := range 24 {
			body := string(rune('a' + i))
			h.Begin(i, app(body)).End(Output{})
			if i%3 == 0 {
				landed = append(landed, body)
			}
		}
		n := uint64(len(landed))
		if sealed {
			h.Begin(0, Input{Stream: "s", Kind: Append, Close: true}).End(Output{Outcome: OK, Offset: n, Next: n})
			h.Begin(0, readFrom(0)).End(page(0, true, landed...))
		} else {
			h.Begin(0, readFrom(0)).End(page(0, false, landed...))
			h.Begin(0, readFrom(n)).End(page(n, false))
		}
		res, _, _ := h.Linearizable(t.Name(), 10*time.Second)
		if res != porcupine.Ok {
			t.Fatalf("sealed %v: Linearizable: %v", sealed, res)
		}
		h.Begin(1, readFrom(0)).End(page(0, sealed, landed[1:]...))
		if linearizable(h) {
			t.Errorf("sealed %v: a later read without a record read before: judged linearizable", sealed)
		}
	}
}

// TestSettlingDecidesLostAnswersOnATrimmedStream: the final reads start
// at a trimmed start, every offset below it was acknowledged, and a lost
// delete was followed by no create: 20 lost answers are settled, which
// the search alone does not decide within its time. With one offset
// below the start unaccounted for, or the delete followed by a lost
// create, each lost answer may hide there, and stays in the search.
func TestSettlingDecidesLostAnswersOnATrimmedStream(t *testing.T) {
	history := func(ackedBelow int, recreate bool) *History {
		h := NewHistory()
		h.Begin(0, Input{Stream: "s", Kind: Create}).End(Output{Outcome: OK})
		for i := range 3 {
			out := Output{}
			if i < ackedBelow {
				out = acked(uint64(i))
			}
			h.Begin(1, app(fmt.Sprintf("x%d", i))).End(out)
		}
		for i := range 20 {
			h.Begin(2+i, app(fmt.Sprintf("lost%d", i))).End(Output{})
		}
		h.Begin(30, Input{Stream: "s", Kind: Delete}).End(Output{})
		if recreate {
			h.Begin(31, Input{Stream: "s", Kind: Create}).End(Output{})
		}
		h.Begin(1, Input{Stream: "s", Kind: Trim, To: 3}).End(Output{Outcome: OK, Next: 3})
		h.Begin(1, app("x3")).End(acked(3))
		h.Begin(0, readFrom(0)).End(page(3, false, "x3"))
		h.Begin(0, readFrom(4)).End(page(4, false))
		return h
	}
	if got := len(settle(history(3, false).ops)); got != 9 { // create, x0-x3, delete, trim and the two reads
		t.Fatalf("%d operations left after settling, want the 20 lost appends gone", got)
	}
	if res, _, _ := history(3, false).Linearizable(t.Name(), 10*time.Second); res != porcupine.Ok {
		t.Fatalf("Linearizable: %v", res)
	}
	for _, h := range []*History{history(2, false), history(3, true)} {
		if n := len(settle(h.ops)); n < 20 {
			t.Errorf("%d operations left: lost appends that may hide below the start were settled", n)
		}
	}
}

// TestSettlingKeepsWhatReadsCannotRuleOut: a lost answer is left in the
// search where a trim or a delete may hide its record, and a record read
// at two offsets is still a violation.
func TestSettlingKeepsWhatReadsCannotRuleOut(t *testing.T) {
	legal := map[string]*History{
		"a lost answer trimmed away": sequential(created(), op{0, app("a"), Output{}}, op{1, app("b"), acked(1)},
			op{1, Input{Stream: "s", Kind: Trim, To: 1}, Output{Outcome: OK, Next: 1}},
			op{1, readFrom(0), page(1, false, "b")}, op{1, readFrom(2), page(2, false)}),
		"a lost answer deleted": sequential(created(), op{0, app("a"), Output{}}, op{1, app("b"), acked(1)},
			op{1, Input{Stream: "s", Kind: Delete}, Output{Outcome: OK}}, created(),
			op{1, readFrom(0), page(0, false)}),
		"a lost close seen at the tail": sequential(created(), op{0, Input{Stream: "s", Kind: Append, Close: true}, Output{}},
			op{1, app("b"), Output{Outcome: Closed}}, op{1, readFrom(0), page(0, true)}),
		"a lost answer's retry acknowledged": sequential(created(), op{0, stamped("a", "p", 0, 0), Output{}},
			op{0, stamped("a", "p", 0, 0), acked(0)}, op{1, readFrom(0), page(0, false, "a")}, op{1, readFrom(1), page(1, false)}),
	}
	for name, h := range legal {
		if !linearizable(h) {
			t.Errorf("%s: judged not linearizable", name)
		}
	}
	twice := sequential(created(), op{0, app("a"), Output{}}, op{1, app("b"), acked(1)},
		op{1, readFrom(0), page(0, false, "a", "b", "a")}, op{1, readFrom(3), page(3, false)})
	if linearizable(twice) {
		t.Error("a lost answer's record read twice: judged linearizable")
	}
	retriedTwice := sequential(created(), op{0, stamped("a", "p", 0, 0), Output{}}, op{0, stamped("a", "p", 0, 0), acked(1)},
		op{1, readFrom(0), page(0, false, "a", "a")}, op{1, readFrom(2), page(2, false)})
	if linearizable(retriedTwice) {
		t.Error("a retry written beside its lost original: judged linearizable")
	}
}
