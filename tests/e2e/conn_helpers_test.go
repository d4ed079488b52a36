package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawConn is one client connection of its own, outside every pool, so a
// test decides exactly what the node holds.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, base string) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawConn{Conn: conn, r: bufio.NewReader(conn)}
}

// writeHead sends a request head; a PUT or POST declares octet-stream
// and length body bytes.
func (c *rawConn) writeHead(t *testing.T, method, path string, length int) {
	t.Helper()
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: pico\r\n", method, path)
	if method == "POST" || method == "PUT" {
		head += fmt.Sprintf("Content-Type: application/octet-stream\r\nContent-Length: %d\r\n", length)
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
}

// response reads one response within d, its body whole.
func (c *rawConn) response(t *testing.T, d time.Duration) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatalf("no response within %s: %v", d, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// trickleBody writes one byte every gap until the node stops reading or
// stop closes.
func (c *rawConn) trickleBody(gap time.Duration, stop <-chan struct{}) {
	for {
		if _, err := c.Write([]byte{'x'}); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(gap):
		}
	}
}

// bothListeners starts a node serving Pico and Durable Streams with
// flags, and creates the octet-stream /conn/s through Pico, which both
// protocols then serve.
func bothListeners(t *testing.T, flags ...string) (n *picoNode, bases map[string]string) {
	t.Helper()
	n = startNode(t, nodeConfig{dataDir: t.TempDir(), flags: append([]string{"--ds-listen", "127.0.0.1:0"}, flags...)})
	bases = map[string]string{"pico": n.URL, "ds": dsURL(t, n)}
	c := dialRaw(t, n.URL)
	c.writeHead(t, "PUT", "/conn/s", 0)
	if resp, body := c.response(t, 5*time.Second); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %s %s", resp.Status, body)
	}
	c.Close()
	return n, bases
}

// awaitGauge waits until the node's gauge name is want, up or down.
func awaitGauge(t *testing.T, n *picoNode, name string, want float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := n.Metrics()
		if err == nil && m[name] == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v (%v), want %v", name, m[name], err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
