package nemesis

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/picomq/pico/tests/linearize"
	"github.com/picomq/pico/tests/picoproc"
)

var (
	durationFlag = flag.Duration("nemesis.duration", 60*time.Second, "traffic time of the whole run, in rounds of -nemesis.round")
	roundFlag    = flag.Duration("nemesis.round", 30*time.Second, "traffic time of one round, checked on its own")
	seedFlag     = flag.Uint64("nemesis.seed", 1, "the run's seed; 0 draws one (printed)")
	faultsFlag   = flag.String("nemesis.faults", "", "the faults to draw from, comma-separated among kill, stop, stop-held, partition, transfer, drain, store, pg, pg-pause; empty: all")
)

// streamsPerRound is how many streams each round writes.
const streamsPerRound = 4

// checkTimeout bounds porcupine's search on one round.
const checkTimeout = 2 * time.Minute

func TestMain(m *testing.M) {
	code := m.Run()
	picoproc.RemoveBinary()
	os.Exit(code)
}

// tally is the run's summary.
type tally struct {
	rounds                      int
	ops, acked, pending, unsure int
	lost                        int
	violations                  []string
}

// TestNemesis runs rounds of traffic under faults against three pico
// processes and checks each: see the package doc.
func TestNemesis(t *testing.T) {
	for key := range strings.SplitSeq(*faultsFlag, ",") {
		if *faultsFlag != "" && !slices.ContainsFunc(faults, func(f fault) bool { return f.key == key }) {
			t.Fatalf("-nemesis.faults: no fault %q", key)
		}
	}
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("nemesis seed %d (replay with -nemesis.seed=%d)", seed, seed)
	c := startCluster(t, seed)
	ends := map[int]endpoints{}
	for _, n := range c.nodes {
		ends[n.id] = endpointsOf(n)
	}
	nem := newNemesis(c, picoproc.Binary(t), seed)
	var sum tally
	for start := time.Now(); sum.rounds == 0 || time.Since(start) < *durationFlag; sum.rounds++ {
		r := newRound(c, ends, sum.rounds, streamsPerRound)
		if err := runRound(t, r, nem, seed+uint64(sum.rounds)); err != nil {
			sum.violations = append(sum.violations, fmt.Sprintf("round %d: %v", sum.rounds, err))
			break
		}
		sum.add(t, r)
	}
	report(t, seed, sum, nem, c)
	if len(sum.violations) > 0 {
		t.Fatalf("%d violations (seed %d):\n%s", len(sum.violations), seed, strings.Join(sum.violations, "\n"))
	}
}

// runRound creates the round's streams, runs traffic and faults for a
// round's time, heals the cluster and closes every stream.
func runRound(t *testing.T, r *round, nem *nemesis, seed uint64) error {
	rnd := rand.New(rand.NewPCG(seed, 0xc105e))
	for _, name := range r.streams {
		if err := r.create(rnd, name); err != nil {
			return err
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range workers {
		cl := newClient(r, i, seed)
		wg.Go(func() { cl.runUntil(stop) })
	}
	wg.Go(func() { nem.runUntil(r, stop) })
	time.Sleep(*roundFlag)
	close(stop)
	wg.Wait()
	if err := r.c.heal(); err != nil {
		return fmt.Errorf("healing: %w", err)
	}
	for _, n := range r.c.nodes {
		nem.admin("admin", "set-slots", fmt.Sprint(n.id), "--slots", "1") // a drain cut short
	}
	return r.closeAll(rnd)
}

// create creates name, retried until the answer is known.
func (r *round) create(rnd *rand.Rand, name string) error {
	deadline := time.Now().Add(settleFor)
	for {
		out := r.do(finalClient, rnd, pico, linearize.Input{Stream: name, Kind: linearize.Create})
		if out.Outcome != linearize.Unknown {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("creating %s: no answer within %v", name, settleFor)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// add checks round r and counts it in.
func (s *tally) add(t *testing.T, r *round) {
	rnd := rand.New(rand.NewPCG(uint64(s.rounds), 0xf1a1))
	violations, lost := r.finalState(rnd)
	s.lost += lost
	for _, v := range violations {
		s.violations = append(s.violations, fmt.Sprintf("round %d: %s", s.rounds, v))
	}
	for _, u := range r.unexpected {
		s.violations = append(s.violations, fmt.Sprintf("round %d: unexpected answer: %s", s.rounds, u))
	}
	st := r.h.Stats()
	s.ops, s.acked, s.pending = s.ops+st.Ops, s.acked+st.Acked, s.pending+st.Pending
	res, path, err := r.h.Linearizable(fmt.Sprintf("nemesis-round-%d", s.rounds), checkTimeout)
	switch res {
	case porcupine.Illegal:
		s.violations = append(s.violations, fmt.Sprintf("round %d: not linearizable (%+v): see %s %v", s.rounds, st, path, err))
	case porcupine.Unknown:
		s.unsure++
		s.violations = append(s.violations, fmt.Sprintf("round %d: linearizability undecided within %v (%+v)", s.rounds, checkTimeout, st))
	}
	t.Logf("round %d: %d operations, %d acknowledged appends, %d pending (%d not settled by reads); linearizable: %v",
		s.rounds, st.Ops, st.Acked, st.Pending, st.Unsettled, res == porcupine.Ok)
}

// report logs the summary table.
func report(t *testing.T, seed uint64, s tally, nem *nemesis, c *cluster) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "seed\t%d\n", seed)
	fmt.Fprintf(w, "rounds\t%d\n", s.rounds)
	fmt.Fprintf(w, "operations\t%d\n", s.ops)
	fmt.Fprintf(w, "acknowledged appends\t%d\n", s.acked)
	fmt.Fprintf(w, "pending (outcome unknown)\t%d\n", s.pending)
	faults := nem.counts()
	for _, k := range slices.Sorted(maps.Keys(faults)) {
		fmt.Fprintf(w, "fault: %s\t%d\n", k, faults[k])
	}
	store := c.proxy.Counts()
	for _, k := range slices.Sorted(maps.Keys(store)) {
		fmt.Fprintf(w, "store fault: %s\t%d\n", k, store[k])
	}
	fmt.Fprintf(w, "faults not injected\t%d\n", len(nem.errs))
	fmt.Fprintf(w, "acknowledged records lost\t%d\n", s.lost)
	fmt.Fprintf(w, "violations\t%d\n", len(s.violations))
	w.Flush()
	t.Logf("summary\n%s", b.String())
	for _, e := range nem.errs {
		t.Logf("fault not injected: %s", e)
	}
}
