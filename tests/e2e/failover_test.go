package e2e

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/tests/picoproc"
)

// TestFailoverWithoutOperator runs two nodes on one metadata log and one
// object store. The owner of a stream stops (SIGSTOP: to the cluster it is
// dead, though it may come back); the other node, once the owner's
// heartbeat has been silent for --failover-after-sec, fences it and serves
// the stream itself with every record the owner acknowledged, with nobody
// running a command. When the owner resumes it finds itself fenced and
// exits non-zero, so a supervisor restarts it at a fresh epoch.
func TestFailoverWithoutOperator(t *testing.T) {
	meta := clusterMetaURL(t)
	storage := t.TempDir()
	flags := []string{"--failover-after-sec", "2"}
	judge := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 1, flags: flags})
	owner := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 2, flags: flags})

	const path = "/failover/orders"
	mustCreate(t, owner.URL+path, "text/plain")
	for _, body := range []string{"a", "b", "c"} {
		mustAppend(t, owner.URL+path, "text/plain", []byte(body))
	}
	// Both beat: well past the window, the owner still serves the stream.
	time.Sleep(5 * time.Second)
	if status := picoproc.Status(owner.AdminURL + "/ready"); status != http.StatusOK {
		t.Fatalf("the live owner's /ready: %d after the failover window\nstderr:\n%s", status, owner.Stderr)
	}
	awaitRedirect(t, judge.URL+path, 10*time.Second)

	if err := owner.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	page := awaitServed(t, judge.URL+path+"?seq=0", 30*time.Second)
	t.Logf("served by the other node %v after the owner stopped", time.Since(stopped).Round(100*time.Millisecond))
	wantBodies(t, page.what, page.records(t), 0, "a", "b", "c")
	mustAppend(t, judge.URL+path, "text/plain", []byte("d")).wantHeaders(t, "Pico-Next-Seq", "4")
	if !strings.Contains(judge.Stderr.String(), "fenced a node whose heartbeat stopped") {
		t.Errorf("the judge did not log the fence\nstderr:\n%s", judge.Stderr)
	}

	if err := owner.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := owner.AwaitExit(t, 30*time.Second); code == 0 {
		t.Fatalf("the fenced owner exited 0\nstderr:\n%s", owner.Stderr)
	}
	if !strings.Contains(owner.Stderr.String(), "was fenced") {
		t.Errorf("the fenced owner did not say why it stopped\nstderr:\n%s", owner.Stderr)
	}
	page = send(t, "GET", judge.URL+path+"?seq=0", nil, nil).wantStatus(t, 200)
	wantBodies(t, page.what, page.records(t), 0, "a", "b", "c", "d")
}

// awaitServed polls url until the node serves it itself (200, not a
// redirect to another node).
func awaitServed(t *testing.T, url string, within time.Duration) reply {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := send(t, "GET", url, nil, nil)
		if r.status == http.StatusOK {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d after %v, want 200", url, r.status, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
