package e2e

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestConnIdleKeepAliveClosed: a keep-alive connection idle past
// --idle-timeout is closed by the node, on both protocols.
func TestConnIdleKeepAliveClosed(t *testing.T) {
	_, bases := bothListeners(t, "--idle-timeout", "1s")
	for proto, base := range bases {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			c := dialRaw(t, base)
			c.writeHead(t, "GET", "/conn/missing", 0)
			if resp, _ := c.response(t, 5*time.Second); resp.StatusCode != http.StatusNotFound || resp.Close {
				t.Fatalf("%s, close %v: want a kept-alive 404", resp.Status, resp.Close)
			}
			start := time.Now()
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := c.r.Read(make([]byte, 1)); err != io.EOF {
				t.Fatalf("idle connection: read %d, %v after %s, want EOF (closed by the node)", n, err, time.Since(start))
			}
			if took := time.Since(start); took < 800*time.Millisecond || took > 3*time.Second {
				t.Errorf("closed after %s, want about 1s", took)
			}
		})
	}
}

// TestConnMaxConnections: past --max-connections, counted over both
// listeners, a new connection is answered 503 with Retry-After; once one
// closes, the node serves again.
func TestConnMaxConnections(t *testing.T) {
	n, bases := bothListeners(t, "--max-connections", "4")
	var held []*rawConn
	for _, proto := range []string{"pico", "pico", "ds", "ds"} {
		c := dialRaw(t, bases[proto])
		c.writeHead(t, "GET", "/conn/missing", 0)
		if resp, _ := c.response(t, 5*time.Second); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("held %s connection: %s", proto, resp.Status)
		}
		held = append(held, c)
	}
	for proto, base := range bases {
		c := dialRaw(t, base)
		c.writeHead(t, "GET", "/conn/missing", 0)
		resp, _ := c.response(t, 5*time.Second)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s over the cap: %s, Retry-After %q; want 503 with Retry-After", proto, resp.Status, resp.Header.Get("Retry-After"))
		}
	}
	m, err := n.Metrics()
	if err != nil || m["pico_http_max_connections"] != 4 || m["pico_http_refused_connections_total"] != 2 || m["pico_http_open_connections"] != 4 {
		t.Errorf("metrics %v: max %v, refused %v, open %v; want 4, 2, 4", err, m["pico_http_max_connections"],
			m["pico_http_refused_connections_total"], m["pico_http_open_connections"])
	}
	if m["process_max_fds"] <= 0 || m["process_open_fds"] <= 0 {
		t.Errorf("process_max_fds %v, process_open_fds %v", m["process_max_fds"], m["process_open_fds"])
	}
	held[0].Close()
	awaitGauge(t, n, "pico_http_open_connections", 3)
	c := dialRaw(t, bases["ds"])
	c.writeHead(t, "GET", "/conn/missing", 0)
	if resp, _ := c.response(t, 5*time.Second); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("after one closed: %s, want the node serving again", resp.Status)
	}
}

// TestConnMaxLiveReaders: past --max-live-readers, counted over both
// protocols and both modes, a live read is answered 503 with Retry-After;
// once one leaves, another parks.
func TestConnMaxLiveReaders(t *testing.T) {
	n, bases := bothListeners(t, "--max-live-readers", "2", "--long-poll-timeout-sec", "20", "--sse-max-duration-sec", "20")
	live := map[string]string{
		"pico long-poll": bases["pico"] + "/conn/s?seq=0&live=long-poll",
		"pico sse":       bases["pico"] + "/conn/s?seq=0&live=sse",
		"ds long-poll":   bases["ds"] + "/conn/s?offset=now&live=long-poll",
		"ds sse":         bases["ds"] + "/conn/s?offset=-1&live=sse",
	}
	leavePico := parkLive(t, live["pico long-poll"])
	parkLive(t, live["ds sse"])
	awaitGauge(t, n, "pico_live_readers_parked", 2)
	for what, url := range live {
		r := send(t, "GET", url, nil, nil)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Errorf("%s over the cap: %d, Retry-After %q; want 503 with Retry-After", what, r.status, r.header.Get("Retry-After"))
		}
	}
	if m, err := n.Metrics(); err != nil || m["pico_live_readers_max"] != 2 {
		t.Errorf("pico_live_readers_max %v (%v), want 2", m["pico_live_readers_max"], err)
	}
	leavePico()
	awaitGauge(t, n, "pico_live_readers_parked", 1)
	parkLive(t, live["ds long-poll"])
	awaitGauge(t, n, "pico_live_readers_parked", 2)
}

// parkLive starts a live read on a connection of its own and returns what
// ends it (the test's end, too).
func parkLive(t *testing.T, url string) (leave func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	go func() {
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	return cancel
}
