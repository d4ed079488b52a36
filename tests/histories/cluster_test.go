package histories

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/tests/faultlog"
	"github.com/picomq/pico/tests/faultstore"
)

// faults are the probabilities of the faults a history's processes see.
type faults struct {
	store, log float64
	seed       uint64
}

// process is one node process: its own way to the shared log and store,
// each of which the test can fail or cut.
type process struct {
	id    domain.NodeID
	node  *node.Node
	log   *faultlog.Log
	store *faultstore.Store // drawn faults, on the way to outage
	// outage fails every write of this process alone, as a crashed or
	// cut-off process's writes never arrive.
	outage *faultstore.Store
}

// cluster is the processes of one history on one metadata log and one
// object store. Clients reach a node by its address, which names its
// newest process; an older one of the same node is a zombie that only
// clients already holding it still reach.
type cluster struct {
	t       fatalf
	log     *memlog.Log
	objects *memstore.Store
	faults  faults
	timing  timing

	mu      sync.Mutex
	current map[domain.NodeID]*process
	all     []*process
	starts  uint64
	closed  chan struct{} // closed by close: supervision stops
	errs    []error
}

// timing is a history's failover settings: off, or fast enough that a
// partition of a few hundred milliseconds fences a node.
type timing struct {
	failoverAfter, beatEvery time.Duration
	releaseIdle              time.Duration
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newCluster(t fatalf, f faults, tm timing, nodes int) *cluster {
	c := &cluster{t: t, log: memlog.New(), objects: memstore.New(), faults: f, timing: tm,
		current: map[domain.NodeID]*process{}, closed: make(chan struct{})}
	for id := 1; id <= nodes; id++ {
		if err := c.start(domain.NodeID(id)); err != nil {
			t.Fatalf("%v", err)
		}
	}
	return c
}

func address(id domain.NodeID) string { return fmt.Sprintf("http://node%d", id) }

// start runs a new process of node id, fencing the previous one.
func (c *cluster) start(id domain.NodeID) error {
	c.mu.Lock()
	c.starts++
	seed := c.faults.seed*1000 + c.starts
	c.mu.Unlock()
	p := &process{id: id}
	p.outage = faultstore.Outage(c.objects)
	p.store = faultstore.New(p.outage, faultstore.Config{Seed: seed, Put: storeFaults(c.faults.store),
		PutIfAbsent: storeFaults(c.faults.store), Get: storeFaults(c.faults.store / 2)})
	p.log = faultlog.New(c.log, faultlog.Config{Seed: seed,
		Append: faultstore.Faults{Fail: c.faults.log, Ambiguous: c.faults.log, Delay: 2 * c.faults.log, MaxDelay: 5 * time.Millisecond},
		Read:   faultstore.Faults{Fail: c.faults.log / 2}})
	// A start that fails its store check or registration stops; faults
	// begin once the process runs.
	p.store.SetEnabled(false)
	p.log.SetEnabled(false)
	defer p.store.SetEnabled(true)
	defer p.log.SetEnabled(true)
	n, err := node.Start(context.Background(), node.Config{
		ID: id, Address: address(id), Slots: 1, Logger: quiet,
		Log: p.log, Lease: faultlog.Lease{Inner: c.log.Lease(), Log: p.log},
		Heartbeats:    faultlog.Heartbeats{Inner: c.log.Heartbeats(), Log: p.log},
		FailoverAfter: c.timing.failoverAfter, BeatEvery: c.timing.beatEvery,
		Store: p.store, UploadEvery: 10 * time.Millisecond, RetentionEvery: 50 * time.Millisecond,
		WAL:    wal.Config{RetryFor: 300 * time.Millisecond, MaxLinger: 2 * time.Millisecond},
		Engine: engine.Config{AppendTimeout: time.Second, TailRecords: 4, ReleaseIdleAfter: c.timing.releaseIdle},
	})
	if err != nil {
		return fmt.Errorf("start node %d: %w", id, err)
	}
	p.node = n
	c.mu.Lock()
	select {
	case <-c.closed:
		c.mu.Unlock()
		n.Close()
		return nil
	default:
	}
	c.current[id] = p
	c.all = append(c.all, p)
	c.mu.Unlock()
	go c.supervise(p)
	return nil
}

// failed records an error of the test's own machinery, which fails it.
func (c *cluster) failed(err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}

// supervise replaces p once it finds itself fenced, as the binary exits
// then and its supervisor starts it again.
func (c *cluster) supervise(p *process) {
	select {
	case <-c.closed:
		return
	case <-p.node.Fenced():
	}
	c.mu.Lock()
	current := c.current[p.id] == p
	c.mu.Unlock()
	if current {
		c.failed(c.start(p.id))
	}
}

func storeFaults(p float64) faultstore.Faults {
	return faultstore.Faults{Fail: p, Ambiguous: p, Delay: 2 * p, MaxDelay: 10 * time.Millisecond}
}

// at returns the process clients reach at node id's address.
func (c *cluster) at(id domain.NodeID) *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current[id]
}

// nodeOf returns the node an address names, if any.
func (c *cluster) nodeOf(addr string) (domain.NodeID, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.current {
		if address(id) == addr {
			return id, true
		}
	}
	return 0, false
}

// crash stops node id's process as a kill does: from now on nothing it
// writes arrives and no client reaches it. A new process takes its place.
func (c *cluster) crash(id domain.NodeID) {
	old := c.at(id)
	old.log.SetCut(true)
	old.outage.SetEnabled(true)
	c.failed(c.start(id))
}

// partition cuts node id's process off from the metadata log for d and
// holds its store calls meanwhile, as a pause does: clients still reach
// it, and what it had begun goes on when the partition ends.
func (c *cluster) partition(id domain.NodeID, d time.Duration) {
	p := c.at(id)
	p.log.SetCut(true)
	p.store.SetStalled(true)
	time.Sleep(d)
	p.store.SetStalled(false)
	p.log.SetCut(false)
}

// heal stops every drawn fault; cut processes stay cut.
func (c *cluster) heal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.all {
		p.store.SetEnabled(false)
		p.log.SetEnabled(false)
	}
}

// close stops every process and returns the errors of the machinery.
func (c *cluster) close() error {
	c.mu.Lock()
	close(c.closed)
	all := c.all
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range all {
		if p.log.Cut() {
			// A crashed process's handoff can only fail, and it may wait
			// seconds to: it ends in the background.
			go p.node.Close()
			continue
		}
		wg.Go(func() { p.node.Close() })
	}
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.errs...)
}

// transfer moves stream name to node to, asking the process that writes it.
func (c *cluster) transfer(ctx context.Context, name string, to domain.NodeID) error {
	from := c.at(to)
	v := from.node.View()
	if st, ok := v.StreamByName(name); ok {
		if owner := c.at(st.Owner); owner != nil {
			from = owner
		}
	}
	return from.node.Transfer(ctx, name, to)
}
