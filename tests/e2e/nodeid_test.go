package e2e

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/tests/picoproc"
)

// TestSecondProcessWithALiveNodeIDExits: a process given the node id of a
// live node at another address watches that node's heartbeat, exits
// non-zero with an error that says so, and leaves the live node serving
// (without the check it would fence it, and be fenced in turn).
func TestSecondProcessWithALiveNodeIDExits(t *testing.T) {
	meta, storage := clusterMetaURL(t), t.TempDir()
	live := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 1})
	second := nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, picoproc.Binary(t), append([]string{"serve"}, second.args()...)...)
	cmd.Env = picoproc.Env()
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the second process with node id 1 did not exit with an error (%v, %v):\n%s", err, ctx.Err(), out)
	}
	if !strings.Contains(string(out), "node id in use") || !strings.Contains(string(out), live.Advertised) {
		t.Fatalf("the error does not say the node id is in use at %s:\n%s", live.Advertised, out)
	}
	if got := picoproc.Status(live.AdminURL + "/ready"); got != http.StatusOK {
		t.Fatalf("the live node's /ready answers %d after the refused start, want 200", got)
	}
}
