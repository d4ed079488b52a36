package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestConnSlowBodyCut: a body sent at 1 byte/s is cut off with 408 once
// its grace has passed, on both protocols, and nothing is appended.
func TestConnSlowBodyCut(t *testing.T) {
	_, bases := bothListeners(t, "--min-body-rate", "1024", "--min-body-rate-grace", "1s", "--read-idle-timeout", "30s")
	for proto, base := range bases {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			c := dialRaw(t, base)
			c.writeHead(t, "POST", "/conn/s", 100)
			stop := make(chan struct{})
			defer close(stop)
			start := time.Now()
			go c.trickleBody(time.Second, stop)
			resp, body := c.response(t, 6*time.Second)
			took := time.Since(start)
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "slower than") {
				t.Fatalf("%s %q, want 408 for a slow body", resp.Status, body)
			}
			if took < 900*time.Millisecond || took > 4*time.Second {
				t.Errorf("cut after %s, want just after the 1s grace", took)
			}
			t.Logf("cut after %s: %s", took.Round(time.Millisecond), strings.TrimSpace(body))
		})
	}
}

// TestConnStalledBodyCut: a body that stops arriving is cut off after
// --read-idle-timeout; live reads, which have no body, outlast it.
func TestConnStalledBodyCut(t *testing.T) {
	_, bases := bothListeners(t, "--min-body-rate", "0", "--read-idle-timeout", "1s", "--long-poll-timeout-sec", "2.5")
	for proto, base := range bases {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			c := dialRaw(t, base)
			c.writeHead(t, "POST", "/conn/s", 100)
			if _, err := c.Write(bytes.Repeat([]byte("x"), 10)); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			resp, body := c.response(t, 6*time.Second)
			if took := time.Since(start); resp.StatusCode != http.StatusRequestTimeout || took < 900*time.Millisecond || took > 4*time.Second {
				t.Fatalf("%s %q after %s, want 408 after the 1s idle timeout", resp.Status, body, took)
			}
		})
	}
	t.Run("long-poll outlasts it", func(t *testing.T) {
		start := time.Now()
		r := send(t, "GET", bases["pico"]+"/conn/s?seq=0&live=long-poll", nil, nil)
		if r.status != http.StatusNoContent || time.Since(start) < 2*time.Second {
			t.Fatalf("long-poll: %d after %s, want 204 after its 2.5s", r.status, time.Since(start))
		}
	})
}

// TestConnLargeUploadAccepted: a 64 MiB body at full speed passes the
// rate checks on both protocols, under a short grace.
func TestConnLargeUploadAccepted(t *testing.T) {
	const size = 64 << 20
	_, bases := bothListeners(t, "--max-body-size", "80000000", "--wal-cache-size", "300000000",
		"--min-body-rate-grace", "100ms", "--read-idle-timeout", "2s")
	body := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	for _, proto := range []string{"pico", "ds"} {
		start := time.Now()
		r := send(t, "POST", bases[proto]+"/conn/s", hdr("Content-Type", "application/octet-stream"), body)
		if r.status != http.StatusOK && r.status != http.StatusNoContent {
			t.Fatalf("%s: %d %s", proto, r.status, clipBody(r.body))
		}
		t.Logf("%s: 64 MiB appended in %s", proto, time.Since(start).Round(time.Millisecond))
	}
}
