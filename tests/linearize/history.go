package linearize

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// never is the return time of an operation whose result is unknown.
const never = math.MaxInt64

// History records operations as clients issue and finish them. Safe for
// concurrent use.
type History struct {
	mu  sync.Mutex
	ops []porcupine.Operation
	// tick orders every call and return: taken under mu, it is the real
	// order in which clients saw them.
	tick int64
	// ids maps a client to its current porcupine client: a client whose
	// operation never returns goes on as a new one, so that no two of one
	// client's operations overlap in the visualisation.
	ids    map[int]int
	nextID int
}

// Call is an operation begun and not yet ended.
type Call struct {
	h *History
	i int
}

// Stats counts a history's operations.
type Stats struct {
	Ops, Pending int
	// Acked counts appends the server acknowledged (OK or Duplicate).
	Acked int
	// Unsettled counts the pending appends the reads do not settle (see
	// settle): those the search has to place.
	Unsettled int
}

// NewHistory returns an empty history.
func NewHistory() *History { return &History{ids: map[int]int{}} }

// Begin records the call of in by client, a small index per concurrent
// client, from 0; a client runs one operation at a time.
func (h *History) Begin(client int, in Input) *Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, ok := h.ids[client]
	if !ok {
		id = h.newID(client)
	}
	h.tick++
	h.ops = append(h.ops, porcupine.Operation{ClientId: id, Input: in, Call: h.tick, Return: never})
	return &Call{h: h, i: len(h.ops) - 1}
}

func (h *History) newID(client int) int {
	id := h.nextID
	h.nextID++
	h.ids[client] = id
	return id
}

// End records the operation's output. An Unknown outcome leaves it pending
// forever.
func (c *Call) End(out Output) {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	op := &h.ops[c.i]
	op.Output = out
	if out.Outcome == Unknown {
		for client, id := range h.ids {
			if id == op.ClientId {
				h.newID(client)
			}
		}
		return
	}
	h.tick++
	op.Return = h.tick
}

// operations returns the history so far; a call not ended is pending.
// Without observations, a pending one that cannot change the stream (a
// read, a head) constrains nothing and is left out, as it would only slow
// the search.
func (h *History) operations(observations bool) []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	ops := make([]porcupine.Operation, 0, len(h.ops))
	for _, op := range h.ops {
		if op.Output == nil {
			op.Output = Output{}
		}
		kind := op.Input.(Input).Kind
		if !observations && op.Output.(Output).Outcome == Unknown && (kind == Read || kind == Head) {
			continue
		}
		ops = append(ops, op)
	}
	return ops
}

// Stats counts the operations so far.
func (h *History) Stats() Stats {
	var s Stats
	for _, op := range h.operations(true) {
		s.Ops++
		out := op.Output.(Output)
		switch {
		case out.Outcome == Unknown:
			s.Pending++
		case op.Input.(Input).Kind == Append && (out.Outcome == OK || out.Outcome == Duplicate):
			s.Acked++
		}
	}
	for _, op := range settle(h.operations(false)) {
		if op.Output.(Output).Outcome == Unknown && op.Input.(Input).Kind == Append {
			s.Unsettled++
		}
	}
	return s
}

// Linearizable checks the history, within timeout. When it is not
// linearizable, the visualisation is written to an HTML file, in
// $PICOMQ_ARTIFACTS or else the system's temporary directory, whose path
// it returns.
func (h *History) Linearizable(name string, timeout time.Duration) (porcupine.CheckResult, string, error) {
	ops := settle(h.operations(false))
	// The verbose search explores every partition to its longest prefix:
	// it runs only to draw a history already found illegal.
	if res := porcupine.CheckOperationsTimeout(Model, ops, timeout); res != porcupine.Illegal {
		return res, "", nil
	}
	res, info := porcupine.CheckOperationsVerbose(Model, ops, timeout)
	if res != porcupine.Illegal {
		return porcupine.Illegal, "", fmt.Errorf("the search for the visualisation ended %v", res)
	}
	path, err := writeVisualisation(name, info)
	return res, path, err
}

func writeVisualisation(name string, info porcupine.LinearizationInfo) (string, error) {
	dir := os.Getenv("PICOMQ_ARTIFACTS")
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+"-*.html")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := porcupine.Visualize(Model, info, f); err != nil {
		return "", err
	}
	return filepath.Clean(f.Name()), nil
}

// String lists the operations in call order, one per line, for a failure
// message beside the visualisation.
func (h *History) String() string {
	var b strings.Builder
	for _, op := range h.operations(true) {
		in, out := op.Input.(Input), op.Output.(Output)
		ret := fmt.Sprint(op.Return)
		if op.Return == never {
			ret = "never"
		}
		fmt.Fprintf(&b, "client %d [%d, %s] %s %s → %s\n", op.ClientId, op.Call, ret, in.Stream, in, out.describe(in.Kind))
	}
	return b.String()
}
