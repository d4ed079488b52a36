//go:build linux

package e2e

import (
	"syscall"
	"testing"
)

// TestConnFileLimitRaised: the node runs at its hard open-file limit, and
// --max-connections auto is 80% of it, half of that for live readers.
func TestConnFileLimitRaised(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	m, err := n.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	conns := float64(int(float64(lim.Max) * 0.8))
	if m["process_max_fds"] != float64(lim.Max) || m["pico_http_max_connections"] != conns || m["pico_live_readers_max"] != float64(int(conns)/2) {
		t.Errorf("process_max_fds %v, pico_http_max_connections %v, pico_live_readers_max %v; want %d, %v, %v",
			m["process_max_fds"], m["pico_http_max_connections"], m["pico_live_readers_max"], lim.Max, conns, float64(int(conns)/2))
	}
}
