package picoproc

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics scrapes the process's /metrics and returns the value of every
// counter and gauge sample by name and labels, name{a="1",b="2"}, and a
// summary's count as NAME_count{...}; a metric with a single sample is
// also there by its bare name.
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
		for _, m := range f.GetMetric() {
			v, suffix, ok := sample(m)
			if !ok {
				continue
			}
			values[name+suffix+labels(m)] = v
			if len(f.GetMetric()) == 1 {
				values[name+suffix] = v
			}
		}
	}
	return values, nil
}

// sample is m's value: a counter's or gauge's, or a summary's count (named
// with suffix "_count").
func sample(m *dto.Metric) (v float64, suffix string, ok bool) {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue(), "", true
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue(), "", true
	case m.GetSummary() != nil:
		return float64(m.GetSummary().GetSampleCount()), "_count", true
	}
	return 0, "", false
}

// labels is m's labels as Prometheus writes them, {a="1",b="2"}, or ""
// when it has none.
func labels(m *dto.Metric) string {
	if len(m.GetLabel()) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+strconv.Quote(l.GetValue()))
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ",") + "}"
}
