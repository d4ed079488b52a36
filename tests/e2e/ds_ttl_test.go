package e2e

import "testing"

// TestDSZeroTTLStreamExpiresAtOnce: Stream-TTL 0 is a sliding window of no
// time, so the stream is gone as soon as it is made (as on the reference
// server) and a later PUT, with any config, makes it anew.
func TestDSZeroTTLStreamExpiresAtOnce(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--ds-listen", "127.0.0.1:0"}})
	m := dsLine.FindStringSubmatch(n.Stdout.String())
	if m == nil {
		t.Fatalf("no ds listener in the banner:\n%s", n.Stdout)
	}
	url := m[1] + "/v1/stream/ttl-zero"
	send(t, "PUT", url, hdr("Stream-TTL", "0"), nil).wantStatus(t, 201)
	send(t, "HEAD", url, nil, nil).wantStatus(t, 404)
	send(t, "POST", url, hdr("Content-Type", "application/octet-stream"), []byte("x")).wantStatus(t, 404)
	send(t, "GET", url+"?offset=-1", nil, nil).wantStatus(t, 404)
	send(t, "PUT", url, hdr("Stream-TTL", "0"), nil).wantStatus(t, 201)
	send(t, "PUT", url, nil, nil).wantStatus(t, 201)
	send(t, "PUT", url, nil, nil).wantStatus(t, 200) // this one lives
	send(t, "HEAD", url, nil, nil).wantStatus(t, 200)

	// A fork with TTL 0 is made and gone alike; its source stays.
	fork := m[1] + "/v1/stream/ttl-zero-fork"
	send(t, "PUT", fork, hdr("Stream-Forked-From", "/v1/stream/ttl-zero", "Stream-TTL", "0"), nil).wantStatus(t, 201)
	send(t, "HEAD", fork, nil, nil).wantStatus(t, 404)
	send(t, "HEAD", url, nil, nil).wantStatus(t, 200)
}
