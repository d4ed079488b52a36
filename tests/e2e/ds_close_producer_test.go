package e2e

import "testing"

// TestDSClosedStreamAnswersOnlyItsCloser: on a closed stream, a Durable
// Streams producer's request is refused as closed unless it repeats the
// request that closed the stream (§5.2.1), while Pico judges the producer
// first and acknowledges the same repeat as a duplicate.
func TestDSClosedStreamAnswersOnlyItsCloser(t *testing.T) {
	pico, ds := startBothProtocols(t)
	producer := func(seq string, more ...string) map[string][]string {
		return hdr(append([]string{"Content-Type", "text/plain", "Producer-Id", "p", "Producer-Epoch", "0", "Producer-Seq", seq}, more...)...)
	}
	send(t, "PUT", ds+"/c/s", hdr("Content-Type", "text/plain"), nil).wantStatus(t, 201)
	send(t, "POST", ds+"/c/s", producer("0"), []byte("a")).wantStatus(t, 200)
	send(t, "POST", ds+"/c/s", producer("1", "Stream-Closed", "true"), []byte("b")).wantStatus(t, 200)

	send(t, "POST", ds+"/c/s", producer("1", "Stream-Closed", "true"), []byte("b")).wantStatus(t, 204).
		wantHeaders(t, "Stream-Closed", "true", "Producer-Seq", "1")
	for _, seq := range []string{"0", "2", "9"} {
		send(t, "POST", ds+"/c/s", producer(seq), []byte("c")).wantStatus(t, 409).
			wantHeaders(t, "Stream-Closed", "true", "Stream-Next-Offset", dsOffset(2))
	}
	send(t, "POST", pico+"/c/s", hdr("Pico-Producer-Id", "p", "Pico-Producer-Epoch", "0", "Pico-Producer-Seq", "0"), []byte("a")).
		wantStatus(t, 200).wantHeaders(t, "Pico-Producer-Seq", "1")
	send(t, "GET", ds+"/c/s?offset=-1", nil, nil).wantStatus(t, 200).wantBody(t, "ab")
}
