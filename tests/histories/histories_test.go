package histories

import (
	"flag"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
)

// checkTimeout bounds porcupine's search per history.
const checkTimeout = 30 * time.Second

// checkProperty checks histories drawn for v: checks of them, unless the
// command line sets -rapid.checks.
func checkProperty(t *testing.T, v variant, checks int) {
	t.Parallel()
	if !flagSet("rapid.checks") {
		prev := flag.Lookup("rapid.checks").Value.String()
		flag.Set("rapid.checks", strconv.Itoa(checks))
		defer flag.Set("rapid.checks", prev)
	}
	rapid.Check(t, func(rt *rapid.T) {
		p := drawPlan(rt, v)
		h := runPlan(rt, p)
		res, path, err := h.Linearizable(t.Name(), checkTimeout)
		switch {
		case res == porcupine.Unknown:
			rt.Fatalf("linearizability undecided within %v: %+v (nemesis %v)\n%s", checkTimeout, h.Stats(), p.nemesis, h)
		case res == porcupine.Illegal:
			rt.Fatalf("not linearizable (%+v, nemesis %v): see %s %v\n%s", h.Stats(), p.nemesis, path, err, h)
		}
	})
}

// TestHistoriesUnderStoreAndLogFaults: two nodes on one log and store,
// whose calls fail, stall, and succeed while reported failed.
func TestHistoriesUnderStoreAndLogFaults(t *testing.T) {
	checkProperty(t, variant{storeFaults: true, logFaults: true, releaseIdle: true}, 100)
}

// TestHistoriesAcrossTransfers: streams move between the nodes mid-traffic.
func TestHistoriesAcrossTransfers(t *testing.T) {
	checkProperty(t, variant{storeFaults: true, events: []eventKind{transfer}, releaseIdle: true}, 100)
}

// TestHistoriesAcrossFailovers: a node is cut off from the metadata log,
// long enough to be fenced or not, or crashes and is restarted, while
// streams also move between the nodes.
func TestHistoriesAcrossFailovers(t *testing.T) {
	checkProperty(t, variant{storeFaults: true, events: []eventKind{partition, crash, transfer}, failover: true}, 30)
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
