package e2e

import "testing"

// TestMetricsCountWALPuts: /metrics on the admin listener counts this
// process's WAL PUTs and the appends in them, in the Prometheus format.
func TestMetricsCountWALPuts(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	u := n.URL + "/metrics-test/s"
	mustCreate(t, u, "text/plain")
	const appends = 5
	for range appends {
		mustAppend(t, u, "text/plain", []byte("x"))
	}
	m, err := n.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	// One at a time, each append is a PUT of its own (creating the stream
	// wrote no record).
	if puts, in := m["pico_wal_puts_total"], m["pico_wal_submissions_total"]; puts != appends || in != appends {
		t.Fatalf("after %d lone appends: %v WAL PUTs holding %v appends, want %d of each", appends, puts, in, appends)
	}
	if m["pico_streams_written"] != 1 || m["pico_streams"] != 1 {
		t.Fatalf("pico_streams_written %v, pico_streams %v, want 1 and 1", m["pico_streams_written"], m["pico_streams"])
	}
	if _, ok := m["go_goroutines"]; !ok {
		t.Fatal("/metrics lacks the Go runtime's samples")
	}
}
