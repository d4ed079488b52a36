package e2e

import (
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/tests/s3test"
)

// TestStoreOutage cuts a node off from its object store and brings the
// store back, twice. While it is gone, an append is answered 503 with
// Retry-After within --append-timeout-sec and /ready fails; once it is
// back, the node takes appends again without a restart, and an idempotent
// producer's retry is written once. Cut off again, the node still exits
// soon after SIGTERM, and a restart finds every acknowledged record.
func TestStoreOutage(t *testing.T) {
	storage, proxy := throughProxy(t, s3test.URL(t))
	cfg := nodeConfig{dataDir: t.TempDir(), storageURL: "-2@" + storage,
		flags: []string{"--append-timeout-sec", "2", "--wal-cache-size", "4096"}}
	n := startNode(t, cfg)
	const path = "/outage/orders"
	mustCreate(t, n.URL+path, "text/plain")
	mustAppend(t, n.URL+path, "text/plain", []byte("a"))
	mustCreate(t, n.URL+"/outage/bulk", "text/plain")
	stamp := func(seq string) []string {
		return []string{"Pico-Producer-Id", "p", "Pico-Producer-Epoch", "0", "Pico-Producer-Seq", seq}
	}

	proxy.Drop()
	start := time.Now()
	r := send(t, "POST", n.URL+path, hdr(append([]string{"Content-Type", "text/plain"}, stamp("0")...)...), []byte("b"))
	took := time.Since(start)
	r.wantStatus(t, http.StatusServiceUnavailable).wantHeaders(t, "Retry-After", "1")
	t.Logf("with the store gone, an append was answered 503 after %v", took.Round(10*time.Millisecond))
	if took > 8*time.Second {
		t.Errorf("the 503 took %v, want about --append-timeout-sec (2 s)", took)
	}
	awaitStatus(t, n.AdminURL+"/ready", http.StatusServiceUnavailable, 15*time.Second)
	// Appends that find the WAL's buffer (4 KiB here) full of what the
	// store has not taken are answered at the same bound, not held.
	start = time.Now()
	var bulk []<-chan asyncReply
	for range 4 {
		bulk = append(bulk, sendAsync("POST", n.URL+"/outage/bulk", hdr("Content-Type", "text/plain"), make([]byte, 3000)))
	}
	for _, c := range bulk {
		if r := <-c; r.err != nil || r.status != http.StatusServiceUnavailable {
			t.Fatalf("an append with the WAL's buffer full: %v %d, want 503", r.err, r.status)
		}
	}
	t.Logf("4 appends of 3 KB with the 4 KiB buffer full were answered 503 within %v", time.Since(start).Round(10*time.Millisecond))
	if took := time.Since(start); took > 12*time.Second {
		t.Errorf("the appends behind a full buffer took %v, want about --append-timeout-sec each at most", took)
	}

	proxy.Heal()
	back := time.Now()
	deadline := back.Add(30 * time.Second)
	for {
		r := send(t, "POST", n.URL+path, hdr(append([]string{"Content-Type", "text/plain"}, stamp("0")...)...), []byte("b"))
		if r.status == http.StatusOK {
			break
		}
		if r.status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after the store came back: %s %d, want 200 within 30 s", r.what, r.status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the node took appends again %v after the store came back", time.Since(back).Round(10*time.Millisecond))
	awaitStatus(t, n.AdminURL+"/ready", http.StatusOK, 15*time.Second)
	mustAppend(t, n.URL+path, "text/plain", []byte("c"))
	wantBodies(t, path, send(t, "GET", n.URL+path+"?seq=0&format=json", nil, nil).records(t), 0, "a", "b", "c")

	proxy.Drop()
	stopped := time.Now()
	code := n.Stop(t, syscall.SIGTERM)
	t.Logf("with the store gone, SIGTERM ended the node in %v (exit %d)", time.Since(stopped).Round(10*time.Millisecond), code)
	if d := time.Since(stopped); d > 20*time.Second {
		t.Errorf("SIGTERM took %v with the store gone, want a bounded shutdown", d)
	}
	proxy.Heal()
	again := n.restart(t)
	wantBodies(t, path, send(t, "GET", again.URL+path+"?seq=0&format=json", nil, nil).records(t), 0, "a", "b", "c")
}
