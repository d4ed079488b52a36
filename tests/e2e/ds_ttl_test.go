package e2e

import "testing"

// TestDSZeroTTLStreamExpiresAtOnce: Stream-TTL 0 is a sliding window of no
// time, so the stream is gone as soon as it is made (as on the reference
// server) and a later PUT, with any config, makes it anew.
func TestDSZeroTTLStreamExpiresAtOnce(t *testing.T) {
	_, ds := startBothProtocols(t)
	url := ds + "/v1/stream/ttl-zero"
	send(t, "PUT", url, hdr("Stream-TTL", "0"), nil).wantStatus(t, 201)
	send(t, "HEAD", url, nil, nil).wantStatus(t, 404)
	send(t, "POST", url, hdr("Content-Type", "application/octet-stream"), []byte("x")).wantStatus(t, 404)
	send(t, "GET", url+"?offset=-1", nil, nil).wantStatus(t, 404)
	send(t, "PUT", url, hdr("Stream-TTL", "0"), nil).wantStatus(t, 201)
	send(t, "PUT", url, nil, nil).wantStatus(t, 201)
	send(t, "PUT", url, nil, nil).wantStatus(t, 200) // this one lives
	send(t, "HEAD", url, nil, nil).wantStatus(t, 200)

	// A fork with TTL 0 is made and gone alike; its source stays.
	fork := ds + "/v1/stream/ttl-zero-fork"
	send(t, "PUT", fork, hdr("Stream-Forked-From", "/v1/stream/ttl-zero", "Stream-TTL", "0"), nil).wantStatus(t, 201)
	send(t, "HEAD", fork, nil, nil).wantStatus(t, 404)
	send(t, "HEAD", url, nil, nil).wantStatus(t, 200)
}
