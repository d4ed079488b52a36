// Package e2e runs the real pico binary.
package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/tests/picoproc"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type cluster struct {
	AppliedIndex uint64        `json:"appliedIndex"`
	FeatureLevel int           `json:"featureLevel"`
	Nodes        []clusterNode `json:"nodes"`
}

// clusterNode is one node of GET /admin/cluster, as the tests read it.
type clusterNode struct {
	ID           uint32 `json:"id"`
	Epoch        uint64 `json:"epoch"`
	Slots        int    `json:"slots"`
	Assigned     int    `json:"assignedStreams"`
	FeatureLevel int    `json:"featureLevel"`
}

// assigned is each node's stream count, by id.
func (c cluster) assigned() map[int]int {
	out := map[int]int{}
	for _, n := range c.Nodes {
		out[int(n.ID)] = n.Assigned
	}
	return out
}

func startServe(t *testing.T, bin, dir, admin string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--admin-listen", admin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + admin + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node never became ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func clusterView(t *testing.T, admin string) cluster {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/admin/cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c cluster
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServeDefaultsRestartAndFence runs plain `pico serve` (SQLite under
// ./data), stops it with SIGTERM, and restarts it: the restart must register
// at a higher epoch over the persisted log.
func TestServeDefaultsRestartAndFence(t *testing.T) {
	bin, dir, admin := picoproc.Binary(t), t.TempDir(), freeAddr(t)
	first := startServe(t, bin, dir, admin)
	c1 := clusterView(t, admin)
	if len(c1.Nodes) != 1 || c1.Nodes[0].ID != 1 {
		t.Fatalf("nodes after first start: %+v", c1.Nodes)
	}
	first.Process.Signal(syscall.SIGTERM)
	if err := first.Wait(); err != nil {
		t.Fatalf("SIGTERM exit: %v", err)
	}
	for _, p := range []string{"meta.db", "objects"} {
		if _, err := os.Stat(filepath.Join(dir, "data", p)); err != nil {
			t.Fatalf("no %s under ./data: %v", p, err)
		}
	}
	startServe(t, bin, dir, admin, "PICO_NODE_EPOCH=0")
	c2 := clusterView(t, admin)
	if len(c2.Nodes) != 1 || c2.Nodes[0].Epoch <= c1.Nodes[0].Epoch || c2.AppliedIndex <= c1.AppliedIndex {
		t.Fatalf("after restart %+v, before %+v: want a higher epoch on the same log", c2, c1)
	}
}

// TestServeRefusesStaleEpoch: an explicit epoch at or below the registered
// one is a fenced predecessor and must not start.
func TestServeRefusesStaleEpoch(t *testing.T) {
	bin, dir, admin := picoproc.Binary(t), t.TempDir(), freeAddr(t)
	first := startServe(t, bin, dir, admin)
	epoch := clusterView(t, admin).Nodes[0].Epoch
	first.Process.Signal(syscall.SIGINT)
	first.Wait()
	cmd := exec.Command(bin, "serve", "--admin-listen", admin, "--node-epoch", fmt.Sprint(epoch-1))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a stale epoch started:\n%s", out)
	}
}
