package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/tests/picoproc"
	"github.com/picomq/pico/tests/s3test"
)

// TestFailoverWithoutOperator runs two nodes on one metadata log (Postgres)
// and one object store (versitygw) with the default failover settings. The
// owner of a stream stops (SIGSTOP: to the cluster it is dead, though it
// may come back); the other node, once the owner's heartbeat has been
// silent for the failover window, fences it and serves the stream itself
// with every record the owner acknowledged, here still only in the owner's
// WAL, with nobody running a command or asking for the stream. When the
// owner resumes it finds itself fenced and exits non-zero, so that a
// supervisor restarts it at a fresh epoch.
func TestFailoverWithoutOperator(t *testing.T) {
	meta := clusterMetaURL(t)
	storage := "-2@" + s3test.URL(t)
	judge := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageURL: storage, nodeID: 1})
	owner := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageURL: storage, nodeID: 2,
		flags: []string{"--wal-upload-interval-ms", "3600000"}}) // appends stay in its WAL

	const path = "/failover/orders"
	mustCreateOn(t, owner, nil, path, "text/plain")
	mustAppend(t, owner.URL+path, "text/plain", []byte("a"))
	// Both beat: past twice the default window (2 s), the owner still
	// serves the stream.
	time.Sleep(4 * time.Second)
	if status := picoproc.Status(owner.AdminURL + "/ready"); status != http.StatusOK {
		t.Fatalf("the live owner's /ready: %d after the failover window\nstderr:\n%s", status, owner.Stderr)
	}
	awaitAnswer(t, judge.URL+path, http.StatusTemporaryRedirect, http.StatusNotFound, 10*time.Second)
	mustAppend(t, owner.URL+path, "text/plain", []byte("b"))
	mustAppend(t, owner.URL+path, "text/plain", []byte("c"))

	if err := owner.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// With nobody asking for the stream, the judge takes it over once it
	// has fenced the owner: the records only the owner's WAL held are
	// committed, where listings and subscriptions see them.
	awaitListedNext(t, judge.URL, path, 3, 60*time.Second)
	t.Logf("committed by the other node %v after the owner stopped", time.Since(stopped).Round(100*time.Millisecond))
	page := send(t, "GET", judge.URL+path+"?seq=0", nil, nil).wantStatus(t, http.StatusOK)
	wantBodies(t, page.what, page.records(t), 0, "a", "b", "c")
	mustAppend(t, judge.URL+path, "text/plain", []byte("d")).wantHeaders(t, "Pico-Next-Seq", "4")
	if !strings.Contains(judge.Stderr.String(), "fenced a node whose heartbeat stopped") {
		t.Errorf("the judge did not log the fence\nstderr:\n%s", judge.Stderr)
	}
	// The pass counts its takeovers once it has closed every stream it took
	// over, a moment after the listing shows the records committed.
	if m, err := awaitMetric(judge.Process, "pico_dead_wal_takeovers_total", 1, 10*time.Second); err != nil || m["pico_nodes_fenced_total"] != 1 ||
		m["pico_heartbeat_failing"] != 0 || m["pico_dead_wal_takeovers_total"] != 1 {
		t.Errorf("the judge's /metrics: pico_nodes_fenced_total %v, pico_heartbeat_failing %v, pico_dead_wal_takeovers_total %v (%v); want 1, 0, 1",
			m["pico_nodes_fenced_total"], m["pico_heartbeat_failing"], m["pico_dead_wal_takeovers_total"], err)
	}

	// A request that reaches the paused owner is served when it resumes,
	// fenced by then: from its stale state this producer's seq 5 is a gap,
	// a final 409; it must answer 503 (retry), or nothing at all.
	stale := make(chan string, 1)
	go func() {
		h := http.Header{"Pico-Producer-Id": {"p"}, "Pico-Producer-Epoch": {"0"}, "Pico-Producer-Seq": {"5"},
			"Content-Type": {"text/plain"}}
		r, err := do("POST", owner.URL+path, h, []byte("late"))
		switch {
		case err != nil:
			stale <- ""
		case r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "":
			stale <- fmt.Sprintf("%s: %d %s", r.what, r.status, clipBody(r.body))
		default:
			stale <- ""
		}
	}()
	time.Sleep(200 * time.Millisecond) // the request waits in the paused owner's backlog
	if err := owner.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if answer := <-stale; answer != "" {
		t.Errorf("the fenced owner answered from its stale state: %s", answer)
	}
	if code := owner.AwaitExit(t, 30*time.Second); code == 0 {
		t.Fatalf("the fenced owner exited 0\nstderr:\n%s", owner.Stderr)
	}
	if !strings.Contains(owner.Stderr.String(), "was fenced: the cluster found its heartbeat stopped") {
		t.Errorf("the fenced owner did not say why it stopped\nstderr:\n%s", owner.Stderr)
	}
	page = send(t, "GET", judge.URL+path+"?seq=0", nil, nil).wantStatus(t, 200)
	wantBodies(t, page.what, page.records(t), 0, "a", "b", "c", "d")
}

// awaitListedNext polls the stream listing of base's node until stream name
// shows next_seq next. A listing opens no stream: it shows committed offsets.
func awaitListedNext(t *testing.T, base, name string, next uint64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := send(t, "GET", rootURL(base)+"/?prefix="+url.QueryEscape(name), nil, nil).wantStatus(t, http.StatusOK)
		var page listPage
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatalf("%s: %s: %v", r.what, clipBody(r.body), err)
		}
		if len(page.Streams) == 1 && page.Streams[0].NextSeq == next {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s after %v, want %s at next_seq %d", r.what, clipBody(r.body), within, name, next)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// awaitMetric reads p's /metrics until series reaches want or within has
// passed, and returns the last reading.
func awaitMetric(p *picoproc.Process, series string, want float64, within time.Duration) (map[string]float64, error) {
	deadline := time.Now().Add(within)
	for {
		m, err := p.Metrics()
		if (err == nil && m[series] >= want) || time.Now().After(deadline) {
			return m, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
