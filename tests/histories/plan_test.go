package histories

import (
	"fmt"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/tests/linearize"
	"pgregory.net/rapid"
)

// plan is one history to run: drawn in full before anything runs, so that
// rapid can shrink it.
type plan struct {
	faults  faults
	timing  timing
	nodes   int
	streams []string
	clients [][]step
	nemesis []event
}

// step is one client operation. Offsets a client cannot know when the plan
// is drawn (where to read from, what to match) are taken from what it has
// seen when the step runs.
type step struct {
	in    linearize.Input
	via   domain.NodeID
	pause time.Duration
	// readAt: 0 reads from offset 0, 1 from the last offset the client
	// saw, 2 from one past it.
	readAt int
	// match conditions an append on the last offset the client saw.
	match bool
	limit int
}

// event is one fault or operator action, after pause.
type event struct {
	pause  time.Duration
	kind   eventKind
	node   domain.NodeID
	stream string
	length time.Duration
}

type eventKind int

const (
	transfer  eventKind = iota // stream to node
	partition                  // node from the metadata log, for length
	crash                      // node's process, replaced by a new one
)

func (k eventKind) String() string {
	return [...]string{"transfer", "partition", "crash"}[k]
}

func (e event) String() string {
	return fmt.Sprintf("+%v %s node %d %s %v", e.pause, e.kind, e.node, e.stream, e.length)
}

// variant says which faults a property draws.
type variant struct {
	storeFaults, logFaults bool
	events                 []eventKind
	failover               bool
	releaseIdle            bool
}

func drawPlan(t *rapid.T, v variant) plan {
	p := plan{nodes: 2}
	p.faults.seed = rapid.Uint64().Draw(t, "seed")
	if v.storeFaults {
		p.faults.store = rapid.SampledFrom([]float64{0, 0.05, 0.2}).Draw(t, "store faults")
	}
	if v.logFaults {
		p.faults.log = rapid.SampledFrom([]float64{0, 0.05, 0.15}).Draw(t, "log faults")
	}
	if v.failover {
		p.timing.failoverAfter, p.timing.beatEvery = 200*time.Millisecond, 40*time.Millisecond
	}
	if v.releaseIdle && rapid.Bool().Draw(t, "release idle streams") {
		p.timing.releaseIdle = 20 * time.Millisecond
	}
	for i := range rapid.IntRange(1, 2).Draw(t, "streams") {
		p.streams = append(p.streams, fmt.Sprintf("/s%d", i))
	}
	clients := rapid.IntRange(2, 4).Draw(t, "clients")
	for c := range clients {
		p.clients = append(p.clients, drawSteps(t, p, c))
	}
	if len(v.events) > 0 {
		p.nemesis = rapid.SliceOfN(drawEvent(p, v.events), 0, 3).Draw(t, "nemesis")
	}
	return p
}

func drawSteps(t *rapid.T, p plan, client int) []step {
	n := rapid.IntRange(2, 12).Draw(t, fmt.Sprintf("client %d steps", client))
	producer := fmt.Sprintf("p%d", client)
	// The first stamp's sequence wraps to 0.
	epoch, seq := uint64(0), ^uint64(0)
	steps := make([]step, n)
	for i := range steps {
		s := step{
			via:   domain.NodeID(rapid.IntRange(1, p.nodes).Draw(t, "via")),
			pause: time.Duration(rapid.IntRange(0, 3).Draw(t, "pause")) * time.Millisecond,
			in:    linearize.Input{Stream: rapid.SampledFrom(p.streams).Draw(t, "stream")},
		}
		switch k := rapid.IntRange(0, 99).Draw(t, "kind"); {
		case k < 55:
			s.in.Kind = linearize.Append
			s.in.Body = fmt.Sprintf("c%d-%d", client, i)
			s.match = rapid.IntRange(0, 9).Draw(t, "match") == 0
			if rapid.Bool().Draw(t, "stamped") {
				epoch, seq = nextStamp(t, epoch, seq)
				s.in.Producer = &linearize.Stamp{ID: producer, Epoch: epoch, Seq: seq}
			}
		case k < 75:
			s.in.Kind = linearize.Read
			s.readAt = rapid.IntRange(0, 2).Draw(t, "read at")
			s.limit = rapid.SampledFrom([]int{0, 1, 3}).Draw(t, "limit")
		case k < 85:
			s.in.Kind = linearize.Head
		case k < 89:
			s.in.Kind, s.in.Close = linearize.Append, true
			if rapid.Bool().Draw(t, "close with a record") {
				s.in.Body = fmt.Sprintf("c%d-%d", client, i)
			}
		case k < 95:
			s.in.Kind, s.in.To = linearize.Trim, uint64(rapid.IntRange(0, 6).Draw(t, "trim to"))
		case k < 97:
			s.in.Kind = linearize.Delete
		default:
			s.in.Kind = linearize.Create
		}
		steps[i] = s
	}
	return steps
}

// nextStamp is a producer's next stamp: mostly the next sequence, now and
// then a retry, a gap or a new epoch.
func nextStamp(t *rapid.T, epoch, seq uint64) (uint64, uint64) {
	switch rapid.IntRange(0, 19).Draw(t, "stamp") {
	case 0:
		return epoch, seq // a retry
	case 1:
		return epoch, seq + 2 // a gap
	case 2:
		return epoch + 1, 0
	}
	return epoch, seq + 1
}

func drawEvent(p plan, kinds []eventKind) *rapid.Generator[event] {
	return rapid.Custom(func(t *rapid.T) event {
		return event{
			pause:  time.Duration(rapid.IntRange(0, 30).Draw(t, "event pause")) * time.Millisecond,
			kind:   rapid.SampledFrom(kinds).Draw(t, "event"),
			node:   domain.NodeID(rapid.IntRange(1, p.nodes).Draw(t, "event node")),
			stream: rapid.SampledFrom(p.streams).Draw(t, "event stream"),
			length: time.Duration(rapid.IntRange(50, 400).Draw(t, "event length")) * time.Millisecond,
		}
	})
}
