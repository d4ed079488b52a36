package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/tests/s3test"
)

func readCluster(t *testing.T, n *picoNode) cluster {
	t.Helper()
	return clusterView(t, strings.TrimPrefix(n.AdminURL, "http://"))
}

// assignedOnceAll is n's count of streams per node once its view holds
// total streams (creates through other nodes reach it a moment later).
func assignedOnceAll(t *testing.T, n *picoNode, total int) map[int]int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, sum := readCluster(t, n).assigned(), 0
		for _, c := range got {
			sum += c
		}
		if sum == total {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d's view holds %d streams (%v) after 10s, want %d", n.id(), sum, got, total)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startCluster starts nodes 1..len(slots) on one Postgres log and one S3
// bucket, node i with slots[i-1], each with extra flags and environment.
func startCluster(t *testing.T, env []string, slots ...int) []*picoNode {
	t.Helper()
	meta, storage := clusterMetaURL(t), "-2@"+s3test.URL(t)
	nodes := make([]*picoNode, len(slots))
	for i, s := range slots {
		nodes[i] = startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageURL: storage, nodeID: i + 1,
			flags: []string{"--slots", fmt.Sprint(s)}, env: env})
	}
	return nodes
}

// TestCreatesArePlacedBySlots creates streams through one node of three
// with slots 1, 1 and 2: they spread 25/25/50 %, whichever node is asked;
// a create with records placed on another node is redirected there and
// keeps them; a node set to zero slots takes no new streams and keeps
// serving its own.
func TestCreatesArePlacedBySlots(t *testing.T) {
	nodes := startCluster(t, nil, 1, 1, 2)
	for i := range 40 {
		send(t, "PUT", nodes[i%2].URL+fmt.Sprintf("/placed/%d", i), hdr("Content-Type", "text/plain"), nil).wantStatus(t, http.StatusCreated)
	}
	got := assignedOnceAll(t, nodes[2], 40)
	for id, want := range map[int]float64{1: 25, 2: 25, 3: 50} {
		if share := float64(got[id]) * 100 / 40; share < want-5 || share > want+5 {
			t.Errorf("node %d holds %.0f%% of the streams (%v), want %.0f%% ± 5", id, share, got, want)
		}
	}

	// With records, through every node: each create is answered by the
	// stream's node, which holds the records.
	for i := range 6 {
		url := nodes[i%3].URL + fmt.Sprintf("/placed/with-records-%d", i)
		req, err := http.NewRequest("PUT", url, strings.NewReader("first"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "text/plain")
		resp, err := followingClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readReply(t, "PUT "+url, resp).wantStatus(t, http.StatusCreated)
		wantBodies(t, "GET "+url, readAllRecords(t, url), 0, "first")
	}

	before := assignedOnceAll(t, nodes[0], 46)
	if r := runPico(t, nil, "", "admin", "set-slots", "3", "--slots", "0", "--admin-endpoint", nodes[0].AdminURL); r.code != 0 {
		t.Fatalf("set-slots: %+v", r)
	}
	for i := range 20 {
		send(t, "PUT", nodes[2].URL+fmt.Sprintf("/after/%d", i), hdr("Content-Type", "text/plain"), nil).wantStatus(t, http.StatusCreated)
	}
	after := assignedOnceAll(t, nodes[0], 66)
	if after[3] != before[3] || after[1]+after[2] != before[1]+before[2]+20 {
		t.Errorf("streams per node before %v, after 20 creates with node 3 at zero slots %v: want none new on node 3", before, after)
	}
	// Node 3 still serves what it holds: placement is deterministic (ties
	// go to the lowest id), and put the third and fourth creates there.
	mustAppend(t, nodes[2].URL+"/placed/3", "text/plain", []byte("still served"))
}

// awaitClusterLevel polls n's view of the cluster's feature level.
func awaitClusterLevel(t *testing.T, n *picoNode, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := readCluster(t, n).FeatureLevel
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster feature level %d after 10s, want %d", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
