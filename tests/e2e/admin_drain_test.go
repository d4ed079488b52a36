package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/tests/s3test"
)

// drainCluster starts node 2 on Postgres and versitygw, creates count
// streams /drain/s0 … on it (the only node, so that placement puts them
// there too), then starts nodes 1 and 3; flags go to each.
func drainCluster(t *testing.T, count int, flags ...string) (nodes []*picoNode, streams []string) {
	t.Helper()
	meta, storage := clusterMetaURL(t), "-2@"+s3test.URL(t)
	start := func(id int) *picoNode {
		return startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageURL: storage, nodeID: id, flags: flags})
	}
	second := start(2)
	for i := range count {
		streams = append(streams, fmt.Sprintf("/drain/s%d", i))
		mustCreate(t, second.URL+streams[i], "text/plain")
	}
	nodes = []*picoNode{start(1), second, start(3)}
	for _, s := range streams {
		if owner := streamOwner(t, nodes[0], s); owner != 2 {
			t.Fatalf("%s is on node %d, want 2", s, owner)
		}
	}
	return nodes, streams
}

// streamOwner is the node whose the stream is, as node n's admin listener
// shows it; 0 if none has it open.
func streamOwner(t *testing.T, n *picoNode, stream string) int {
	t.Helper()
	r := send(t, "GET", n.AdminURL+"/admin/streams"+stream, nil, nil).wantStatus(t, http.StatusOK)
	var st struct {
		Owner int  `json:"owner"`
		Open  bool `json:"open"`
	}
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("%s: %v", r.what, err)
	}
	if !st.Open {
		return 0
	}
	return st.Owner
}

// wantMovedOff checks that another node than from has each stream open,
// as node n shows it once it has applied the log that far (within a
// second or two).
func wantMovedOff(t *testing.T, n *picoNode, from int, streams []string) {
	t.Helper()
	for _, s := range streams {
		deadline := time.Now().Add(3 * time.Second)
		owner := streamOwner(t, n, s)
		for ; (owner == from || owner == 0) && time.Now().Before(deadline); owner = streamOwner(t, n, s) {
			time.Sleep(50 * time.Millisecond)
		}
		if owner == from || owner == 0 {
			t.Errorf("%s: open on node %d, want it open on another node than %d", s, owner, from)
		}
	}
}

// TestDrainUnderLoad drains node 2 through node 1's admin listener while
// clients append to every stream of node 2, retrying 503s and following
// 307s as clients of a cluster do, then stops node 2: every stream is on
// another node, every acknowledged record is there once, and no client saw
// an error, neither from the drain nor from node 2's exit.
func TestDrainUnderLoad(t *testing.T) {
	const count = 12
	// Node 2's stop is a plain one here: the drain alone moves its streams.
	nodes, streams := drainCluster(t, count, "--shutdown-transfer=false")
	appenders, stopLoad := startLoad(nodes[1].URL, streams)
	time.Sleep(time.Second)

	start := time.Now()
	run := runPico(t, nil, "", "admin", "drain", "2", "--wait", "--admin-endpoint", nodes[0].AdminURL)
	took := time.Since(start)
	if run.code != 0 || !strings.Contains(run.stderr, fmt.Sprintf("drain node 2: %d/%d streams moved\n", count, count)) ||
		!strings.Contains(run.stdout, "streams left  0\n") {
		t.Fatalf("drain --wait: %+v", run)
	}
	longest, during := longestAppend(appenders, start, start.Add(took))
	t.Logf("drained %d streams under load in %v; %d appends began meanwhile, the longest took %v",
		count, took.Round(time.Millisecond), during, longest.Round(time.Millisecond))
	wantMovedOff(t, nodes[0], 2, streams)

	time.Sleep(500 * time.Millisecond)
	if code := nodes[1].Stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("node 2 exited %d\nstderr:\n%s", code, nodes[1].Stderr)
	}
	time.Sleep(time.Second) // appends go on without node 2
	stopLoad()
	wantMovedOff(t, nodes[0], 2, streams)
	total := wantEveryAckedRecordOnce(t, nodes[0].URL, appenders)
	redirects, unavailable := retries(appenders)
	t.Logf("%d appends acknowledged in all, none lost or repeated; %d redirects followed, %d 503s retried", total, redirects, unavailable)
}

// TestShutdownTransferMovesStreamsBeforeExit stops node 2 with SIGTERM
// and --shutdown-transfer: its streams change hands before it exits (an
// idle one is open on another node with nobody having asked for it, which
// a handoff at the stop would leave closed), and clients appending
// meanwhile see no error.
func TestShutdownTransferMovesStreamsBeforeExit(t *testing.T) {
	const count = 8
	nodes, streams := drainCluster(t, count, "--shutdown-transfer")
	idle, busy := streams[:count/2], streams[count/2:]
	for _, s := range idle {
		mustAppend(t, nodes[1].URL+s, "text/plain", []byte("only"))
	}
	appenders, stopLoad := startLoad(nodes[1].URL, busy)
	time.Sleep(time.Second)

	start := time.Now()
	if code := nodes[1].Stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("node 2 exited %d\nstderr:\n%s", code, nodes[1].Stderr)
	}
	took := time.Since(start)
	longest, during := longestAppend(appenders, start, start.Add(took))
	t.Logf("node 2 moved its streams and stopped in %v; %d appends began meanwhile, the longest took %v",
		took.Round(time.Millisecond), during, longest.Round(time.Millisecond))
	if !strings.Contains(nodes[1].Stderr.String(), "moved this node's streams to the other nodes") {
		t.Errorf("node 2 did not log its transfers\nstderr:\n%s", nodes[1].Stderr)
	}
	wantMovedOff(t, nodes[0], 2, idle)
	time.Sleep(time.Second)
	stopLoad()
	wantMovedOff(t, nodes[0], 2, streams)
	total := wantEveryAckedRecordOnce(t, nodes[0].URL, appenders)
	redirects, unavailable := retries(appenders)
	t.Logf("%d appends acknowledged in all, none lost or repeated; %d redirects followed, %d 503s retried", total, redirects, unavailable)
	for _, s := range idle {
		wantBodies(t, s, readAllRecords(t, nodes[0].URL+s), 0, "only")
	}
}
