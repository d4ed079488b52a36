package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
)

// previousRelease runs this build as the release before placements: it
// reads and declares feature level 1.
var previousRelease = []string{"PICO_FEATURE_LEVEL=1"}

// TestRollingUpgradeUnderLoad restarts the three nodes of a cluster of the
// previous release one at a time onto this one, while idempotent producers
// append through them. Until the last node is upgraded the cluster stays at
// level 1 and streams are made where they are asked; then it reaches level
// 2 and creates are placed. No producer sees a final error, and every
// stream holds each acknowledged record once. A node of the previous
// release then refuses to start on the log, naming the level it needs.
func TestRollingUpgradeUnderLoad(t *testing.T) {
	nodes := startCluster(t, previousRelease, 1, 1, 1)
	urls := []string{nodes[0].URL, nodes[1].URL, nodes[2].URL}
	var streams []string
	for i := range 6 {
		name := fmt.Sprintf("/roll/%d", i)
		send(t, "PUT", urls[i%3]+name, hdr("Content-Type", "text/plain"), nil).wantStatus(t, http.StatusCreated)
		streams = append(streams, name)
	}
	if got := assignedOnceAll(t, nodes[0], 6); readCluster(t, nodes[0]).FeatureLevel != 1 || !slices.Equal(mapValues(got), []int{2, 2, 2}) {
		t.Fatalf("cluster of the previous release: %v streams per node, want level 1 and each node holding the streams made through it", got)
	}
	appenders, stop := startLoadOn(urls, streams)
	time.Sleep(time.Second)
	started := time.Now()
	for i, n := range nodes {
		if code := n.Stop(t, syscall.SIGTERM); code != 0 {
			t.Fatalf("node %d exited %d on SIGTERM\nstderr:\n%s", n.id(), code, n.Stderr)
		}
		cfg := n.cfg
		cfg.env = nil // this release
		up := (&picoNode{Process: n.Process, cfg: cfg}).restart(t)
		nodes[i] = up
		if i < len(nodes)-1 {
			if got := readCluster(t, up).FeatureLevel; got != 1 {
				t.Fatalf("cluster level %d with %d nodes upgraded, want 1", got, i+1)
			}
			before := readCluster(t, up).assigned()
			send(t, "PUT", up.URL+fmt.Sprintf("/roll/made-on-%d", up.id()), hdr("Content-Type", "text/plain"), nil).wantStatus(t, http.StatusCreated)
			if after := readCluster(t, up).assigned(); after[up.id()] != before[up.id()]+1 {
				t.Errorf("a create on upgraded node %d at level 1 went elsewhere: %v, then %v", up.id(), before, after)
			}
		}
		time.Sleep(time.Second)
	}
	rolled := time.Since(started)
	awaitClusterLevel(t, nodes[0], int(domain.LevelCurrent))
	time.Sleep(time.Second)
	stop()
	total := wantEveryAckedRecordOnce(t, nodes[0].URL, appenders)
	worst, during := longestAppend(appenders, started, started.Add(rolled))
	redirects, unavailable := retries(appenders)
	t.Logf("rolled 3 nodes in %v under %d idempotent producers (%d records, %d during the roll; %d redirects, %d 503s retried); the largest append latency during the roll was %v",
		rolled.Round(100*time.Millisecond), len(streams), total, during, redirects, unavailable, worst.Round(time.Millisecond))

	before := assignedOnceAll(t, nodes[0], 8)
	for i := range 9 {
		send(t, "PUT", nodes[0].URL+fmt.Sprintf("/roll/placed-%d", i), hdr("Content-Type", "text/plain"), nil).wantStatus(t, http.StatusCreated)
	}
	after, spread := assignedOnceAll(t, nodes[0], 17), 0
	for id := range after {
		if after[id] > before[id] {
			spread++
		}
	}
	if spread < 2 {
		t.Errorf("9 creates through node 1 at level 2 went to %d node(s) (%v, then %v), want them placed over the cluster", spread, before, after)
	}

	old := nodeConfig{dataDir: t.TempDir(), metaURL: nodes[0].cfg.metaURL, storageURL: nodes[0].cfg.storageURL, nodeID: 4}
	serveRefusedIn(t, previousRelease, old.args(), "needs feature level 2", "reads up to level 1", "upgrade this node")
}

// mapValues is m's values in key order.
func mapValues(m map[int]int) []int {
	var keys []int
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []int
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}
