package e2e

import (
	"syscall"
	"testing"
)

// TestDSClosedStreamAnswersOnlyItsCloser: on a closed stream, a Durable
// Streams producer's request, with data or without (a close), is refused
// as closed unless it repeats the request that closed the stream
// (§5.2.1), also after a restart, while Pico judges the producer first and
// acknowledges the same repeat as a duplicate. A close without producer
// headers is accepted again.
func TestDSClosedStreamAnswersOnlyItsCloser(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--ds-listen", "127.0.0.1:0"}})
	ds := dsURL(t, n)
	producer := func(seq string, more ...string) map[string][]string {
		return hdr(append([]string{"Content-Type", "text/plain", "Producer-Id", "p", "Producer-Epoch", "0", "Producer-Seq", seq}, more...)...)
	}
	send(t, "PUT", ds+"/c/s", hdr("Content-Type", "text/plain"), nil).wantStatus(t, 201)
	send(t, "POST", ds+"/c/s", producer("0"), []byte("a")).wantStatus(t, 200)
	send(t, "POST", ds+"/c/s", producer("1", "Stream-Closed", "true"), []byte("b")).wantStatus(t, 200)

	check := func(t *testing.T, ds string) {
		send(t, "POST", ds+"/c/s", producer("1", "Stream-Closed", "true"), []byte("b")).wantStatus(t, 204).
			wantHeaders(t, "Stream-Closed", "true", "Producer-Seq", "1")
		for _, seq := range []string{"0", "2", "9"} {
			send(t, "POST", ds+"/c/s", producer(seq), []byte("c")).wantStatus(t, 409).
				wantHeaders(t, "Stream-Closed", "true", "Stream-Next-Offset", dsOffset(2))
		}
		for _, stamp := range [][3]string{{"q", "0", "0"}, {"p", "0", "2"}, {"p", "1", "0"}} {
			send(t, "POST", ds+"/c/s", hdr("Producer-Id", stamp[0], "Producer-Epoch", stamp[1], "Producer-Seq", stamp[2],
				"Stream-Closed", "true"), nil).wantStatus(t, 409).
				wantHeaders(t, "Stream-Closed", "true", "Stream-Next-Offset", dsOffset(2), "Producer-Seq", "")
		}
		send(t, "POST", ds+"/c/s", producer("1", "Stream-Closed", "true"), nil).wantStatus(t, 204).
			wantHeaders(t, "Stream-Closed", "true", "Producer-Epoch", "0", "Producer-Seq", "1")
		send(t, "POST", ds+"/c/s", hdr("Stream-Closed", "true"), nil).wantStatus(t, 204).
			wantHeaders(t, "Stream-Closed", "true", "Stream-Next-Offset", dsOffset(2))
		send(t, "GET", ds+"/c/s?offset=-1", nil, nil).wantStatus(t, 200).wantBody(t, "ab")
	}
	t.Run("live", func(t *testing.T) { check(t, ds) })
	send(t, "POST", n.URL+"/c/s", hdr("Pico-Producer-Id", "p", "Pico-Producer-Epoch", "0", "Pico-Producer-Seq", "0"), []byte("a")).
		wantStatus(t, 200).wantHeaders(t, "Pico-Producer-Seq", "1")

	if code := n.Stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("pico serve exited with %d", code)
	}
	n = n.restart(t)
	t.Run("after a restart", func(t *testing.T) { check(t, dsURL(t, n)) })
}
