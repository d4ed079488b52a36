package picoproc

import (
	"fmt"
	"net/http"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics scrapes the process's /metrics and returns the value of every
// counter and gauge that has a single sample, by name, and a single
// summary's count as NAME_count.
func (p *Process) Metrics() (map[string]float64, error) {
	req, err := http.NewRequest(http.MethodGet, p.AdminURL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	if p.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("/metrics is not in the Prometheus text format: %w", err)
	}
	values := map[string]float64{}
	for name, f := range families {
		if len(f.GetMetric()) != 1 {
			continue
		}
		m := f.GetMetric()[0]
		switch {
		case m.GetCounter() != nil:
			values[name] = m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			values[name] = m.GetGauge().GetValue()
		case m.GetSummary() != nil:
			values[name+"_count"] = float64(m.GetSummary().GetSampleCount())
		}
	}
	return values, nil
}
