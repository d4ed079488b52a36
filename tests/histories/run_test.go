package histories

import (
	"context"
	"sync"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/tests/linearize"
)

// backoff is a client's pause after an operation whose outcome it did not
// learn.
const backoff = 50 * time.Millisecond

// fatalf is the part of a test a run needs.
type fatalf interface {
	Fatalf(format string, args ...any)
}

// runPlan runs p on a new cluster and returns its history, ending with a
// read of every stream once the faults have stopped.
func runPlan(t fatalf, p plan) *linearize.History {
	c := newCluster(t, p.faults, p.timing, p.nodes)
	defer func() {
		if err := c.close(); err != nil {
			t.Fatalf("%v", err)
		}
	}()
	h := linearize.NewHistory()
	setup := len(p.clients)
	for _, name := range p.streams {
		in := linearize.Input{Stream: name, Kind: linearize.Create}
		call := h.Begin(setup, in)
		call.End(c.do(1, in, 0))
	}
	var wg sync.WaitGroup
	for i, steps := range p.clients {
		wg.Go(func() { runClient(c, h, i, steps) })
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	runNemesis(c, p.nemesis, done)
	<-done
	c.heal()
	for _, name := range p.streams {
		readToEnd(c, h, setup, name)
	}
	return h
}

func runClient(c *cluster, h *linearize.History, client int, steps []step) {
	seen := map[string]uint64{}
	for _, s := range steps {
		time.Sleep(s.pause)
		in := s.in
		switch {
		case in.Kind == linearize.Read:
			in.From = []uint64{0, seen[in.Stream], seen[in.Stream] + 1}[s.readAt]
		case s.match:
			at := seen[in.Stream]
			in.Match = &at
		}
		call := h.Begin(client, in)
		out := c.do(s.via, in, s.limit)
		call.End(out)
		switch {
		case out.Outcome == linearize.Unknown:
			// Likely an outage: a client backs off rather than pile up
			// operations no one learns the outcome of.
			time.Sleep(backoff)
		case out.Outcome == linearize.OK && in.Kind != linearize.Trim:
			seen[in.Stream] = out.Next
		}
	}
}

// runNemesis runs events in order until they are done or the clients are.
func runNemesis(c *cluster, events []event, done <-chan struct{}) {
	for _, e := range events {
		select {
		case <-done:
			return
		case <-time.After(e.pause):
		}
		switch e.kind {
		case transfer:
			ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
			c.transfer(ctx, e.stream, e.node) // a refused or failed transfer is an outcome too
			cancel()
		case partition:
			c.partition(e.node, e.length)
		case crash:
			c.crash(e.node)
		}
	}
}

// readToEnd reads name page by page from offset 0 as one more client,
// retrying what fails until the stream answers (it may have to be taken
// over first).
func readToEnd(c *cluster, h *linearize.History, client int, name string) {
	deadline := time.Now().Add(20 * time.Second)
	for from := uint64(0); time.Now().Before(deadline); {
		in := linearize.Input{Stream: name, Kind: linearize.Read, From: from}
		call := h.Begin(client, in)
		out := c.do(domain.NodeID(1), in, 0)
		call.End(out)
		switch {
		case out.Outcome == linearize.Unknown:
			time.Sleep(20 * time.Millisecond)
		case out.Outcome != linearize.OK || out.Next == out.From:
			return
		default:
			from = out.Next
		}
	}
}
