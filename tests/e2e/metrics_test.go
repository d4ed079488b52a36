package e2e

import (
	"net/http"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

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
	resp, err := http.Get(n.AdminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not in the Prometheus text format: %v", err)
	}
	value := func(name string) float64 {
		f, ok := families[name]
		if !ok || len(f.GetMetric()) != 1 {
			t.Fatalf("/metrics has no single %s", name)
		}
		m := f.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	puts, submissions := value("pico_wal_puts_total"), value("pico_wal_submissions_total")
	// One at a time, each append is a PUT of its own; the create may be
	// one more if it wrote a record (it does not).
	if submissions != appends || puts != appends {
		t.Fatalf("after %d lone appends: %v WAL PUTs holding %v appends, want %d of each", appends, puts, submissions, appends)
	}
	if got := value("pico_streams_written"); got != 1 {
		t.Fatalf("pico_streams_written %v, want 1", got)
	}
	if got := value("pico_streams"); got != 1 {
		t.Fatalf("pico_streams %v, want 1", got)
	}
	if _, ok := families["go_goroutines"]; !ok {
		t.Fatal("/metrics lacks the Go runtime's samples")
	}
}
