package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// S3 Standard's request prices, in dollars a request: PUT, COPY, POST and
// LIST at $0.005 per 1,000, GET at $0.0004 per 1,000, DELETE free.
const (
	s3PutPrice = 0.005 / 1000
	s3GetPrice = 0.0004 / 1000
)

// storeCounts are the object-store requests the nodes had made, summed
// over their /metrics.
type storeCounts struct {
	puts, gets, lists, deletes, walPuts float64
}

// benchCost is what the counted appends cost in object-store requests.
type benchCost struct {
	Puts                 float64 `json:"puts"`
	Gets                 float64 `json:"gets"`
	Lists                float64 `json:"lists"`
	Deletes              float64 `json:"deletes"`
	WALPuts              float64 `json:"wal_puts"`
	RecordsPerWALPut     float64 `json:"records_per_wal_put"`
	PutsPerMillionAppend float64 `json:"puts_per_million_appends"`
	PutsPerMillionRecord float64 `json:"puts_per_million_records"`
	DollarsS3Standard    float64 `json:"dollars_s3_standard"`
}

// scrapeStore sums the object-store counters of every URL.
func scrapeStore(ctx context.Context, urls []string) (storeCounts, error) {
	var c storeCounts
	for _, url := range urls {
		if err := c.add(ctx, url); err != nil {
			return c, fmt.Errorf("--metrics %s: %w", url, err)
		}
	}
	return c, nil
}

func (c *storeCounts) add(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return fmt.Errorf("not Prometheus text: %w", err)
	}
	requests, ok := families["pico_object_store_requests_total"]
	if !ok {
		return fmt.Errorf("no pico_object_store_requests_total: is this a pico node's admin listener?")
	}
	for _, m := range requests.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() != "op" {
				continue
			}
			switch v := m.GetCounter().GetValue(); l.GetValue() {
			case "put":
				c.puts += v
			case "get":
				c.gets += v
			case "list":
				c.lists += v
			case "delete":
				c.deletes += v
			}
		}
	}
	if wal, ok := families["pico_wal_upload_duration_seconds"]; ok {
		for _, m := range wal.GetMetric() {
			c.walPuts += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return nil
}

// cost is what happened between before and c, for appends of records.
func (c storeCounts) cost(before storeCounts, appends, records int64) *benchCost {
	d := benchCost{Puts: c.puts - before.puts, Gets: c.gets - before.gets, Lists: c.lists - before.lists,
		Deletes: c.deletes - before.deletes, WALPuts: c.walPuts - before.walPuts}
	if d.WALPuts > 0 {
		d.RecordsPerWALPut = float64(records) / d.WALPuts
	}
	if appends > 0 {
		d.PutsPerMillionAppend = d.Puts / float64(appends) * 1e6
		d.PutsPerMillionRecord = d.Puts / float64(records) * 1e6
	}
	d.DollarsS3Standard = (d.Puts+d.Lists)*s3PutPrice + d.Gets*s3GetPrice
	return &d
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
