package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/picomq/pico/tests/netfault"
	"github.com/picomq/pico/tests/pgtest"
	"github.com/picomq/pico/tests/picoproc"
	"github.com/picomq/pico/tests/s3fault"
)

// nemesis injects one fault at a time, drawn from its seed, and counts
// them by kind.
type nemesis struct {
	c    *cluster
	bin  string
	rnd  *rand.Rand
	mu   sync.Mutex
	done map[string]int
	errs []string // faults that could not be injected or undone
}

func newNemesis(c *cluster, bin string, seed uint64) *nemesis {
	return &nemesis{c: c, bin: bin, rnd: rand.New(rand.NewPCG(seed, 0x6e656d)), done: map[string]int{}}
}

// fault is one kind of fault: it runs to its end, healing what it broke.
type fault struct {
	key    string // its name in -nemesis.faults
	kind   string
	weight int
	run    func(*nemesis, *round) error
}

var faults = []fault{
	{"kill", "kill -9", 25, func(n *nemesis, _ *round) error {
		return n.c.crash(n.node(), n.between(0, 2*time.Second))
	}},
	{"stop", "SIGSTOP", 15, func(n *nemesis, _ *round) error {
		return n.c.freeze(n.node(), n.between(3*time.Second, 5*time.Second)) // past the 2 s failover window
	}},
	{"stop-held", "SIGSTOP, writes held", 10, func(n *nemesis, _ *round) error {
		// The store takes the node's last writes only after the cluster
		// has fenced it and a takeover has read its WAL: the fence alone
		// keeps them from being acknowledged.
		n.c.proxy.Set(s3fault.Faults{HoldWrites: 3500 * time.Millisecond})
		time.AfterFunc(3*time.Second, func() { n.c.proxy.Set(s3fault.Faults{}) })
		time.Sleep(100 * time.Millisecond)
		return n.c.freeze(n.node(), n.between(3*time.Second, 5*time.Second))
	}},
	{"partition", "partition from postgres", 8, cut(true, false)},
	{"partition", "partition from the store", 8, cut(false, true)},
	{"partition", "partition from both", 8, cut(true, true)},
	{"transfer", "transfer", 20, func(n *nemesis, r *round) error {
		name := r.streams[n.rnd.IntN(len(r.streams))]
		return n.admin("admin", "transfer", name, "--to-node", fmt.Sprint(n.node().id))
	}},
	{"drain", "drain", 10, func(n *nemesis, _ *round) error {
		id := fmt.Sprint(n.node().id)
		err := n.admin("admin", "drain", id, "--wait")
		if undo := n.admin("admin", "set-slots", id, "--slots", "1"); undo != nil {
			return undo
		}
		return err
	}},
	{"store", "store faults", 15, func(n *nemesis, _ *round) error {
		n.c.proxy.Set(s3fault.Faults{Delay: 50 * time.Millisecond, Error: 0.05, Reset: 0.03, LostAnswer: 0.03, SlowBody: 0.05})
		time.Sleep(n.between(2*time.Second, 5*time.Second))
		n.c.proxy.Set(s3fault.Faults{})
		return nil
	}},
	{"pg-pause", "postgres paused", 10, func(n *nemesis, _ *round) error {
		return pgtest.Pause(n.between(time.Second, 4*time.Second))
	}},
	{"pg", "postgres restart", 15, func(*nemesis, *round) error {
		restart := os.Getenv(pgtest.EnvRestart)
		if restart == "" {
			return fmt.Errorf("%s is not set", pgtest.EnvRestart)
		}
		out, err := exec.Command("sh", "-c", restart).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}},
}

// runUntil injects faults, with pauses between them, until stop is
// closed.
func (n *nemesis) runUntil(r *round, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(n.between(500*time.Millisecond, 3*time.Second)):
		}
		f := n.draw()
		err := f.run(n, r)
		n.mu.Lock()
		n.done[f.kind]++
		if err != nil {
			n.errs = append(n.errs, fmt.Sprintf("%s: %v", f.kind, err))
		}
		n.mu.Unlock()
	}
}

// draw picks one of the faults -nemesis.faults allows, by weight.
func (n *nemesis) draw() fault {
	allowed := slices.DeleteFunc(slices.Clone(faults), func(f fault) bool { return !n.allows(f.key) })
	total := 0
	for _, f := range allowed {
		total += f.weight
	}
	x := n.rnd.IntN(total)
	for _, f := range allowed {
		if x < f.weight {
			return f
		}
		x -= f.weight
	}
	panic("unreachable")
}

// cut is the fault that cuts a node drawn from the database, the store or
// both, for up to 5 s: past the failover window or not.
func cut(toPG, toS3 bool) func(*nemesis, *round) error {
	return func(n *nemesis, _ *round) error {
		target := n.node()
		var links []*netfault.Link
		if toPG {
			links = append(links, target.toPG)
		}
		if toS3 {
			links = append(links, target.toS3)
		}
		return n.c.partition(target, links, n.between(500*time.Millisecond, 5*time.Second))
	}
}

func (n *nemesis) allows(key string) bool {
	return *faultsFlag == "" || slices.Contains(strings.Split(*faultsFlag, ","), key)
}

func (n *nemesis) node() *node { return n.c.nodes[n.rnd.IntN(nodes)] }

func (n *nemesis) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(n.rnd.Int64N(int64(hi-lo)+1))
}

// admin runs a pico admin command through a live node. A command the
// cluster refuses mid-fault is not the nemesis's error: only one that
// cannot run at all is.
func (n *nemesis) admin(args ...string) error {
	live := n.c.live()
	if len(live) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args = append(args, "--admin-endpoint", live[n.rnd.IntN(len(live))].adminURL())
	cmd := exec.CommandContext(ctx, n.bin, args...)
	cmd.Env = picoproc.Env()
	out, err := cmd.CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// counts returns the faults injected so far by kind.
func (n *nemesis) counts() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]int{}
	for k, v := range n.done {
		out[k] = v
	}
	return out
}
