package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"
)

// Paced, appends are due one interval apart from the start, whatever the
// writers' speed, and none is due at or past the deadline.
func TestBenchRateSpacesAppendsByTheirDueTime(t *testing.T) {
	tally := newBenchTally(func() {}, time.Now(), 100) // every 10 ms
	deadline := tally.start.Add(55 * time.Millisecond)
	var due []time.Time
	for {
		at, ok := tally.next(context.Background(), deadline)
		if !ok {
			break
		}
		due = append(due, at)
	}
	if len(due) != 6 {
		t.Fatalf("%d appends due within 55 ms at 100 a second, want 6", len(due))
	}
	for i, at := range due {
		if got := at.Sub(tally.start); got != time.Duration(i)*10*time.Millisecond {
			t.Fatalf("append %d due at %v, want %v", i, got, time.Duration(i)*10*time.Millisecond)
		}
	}
	if time.Since(due[5]) < 0 {
		t.Fatal("next returned before the append was due")
	}
}

// A second's sample gives the rate and the latency of that second only,
// and the appends still in flight.
func TestBenchSampleIsOneSecond(t *testing.T) {
	tally := newBenchTally(func() {}, time.Now(), 0)
	for range 3 {
		tally.next(context.Background(), time.Now().Add(time.Hour))
	}
	tally.acked(time.Now().Add(-40 * time.Millisecond))
	tally.acked(time.Now().Add(-40 * time.Millisecond))
	now := tally.start.Add(time.Second)
	s, n := tally.sample(now, tally.start, 0, benchOptions{batch: 2, recordSize: 512})
	if n != 2 || s.appends != 2 || s.records != 4 || s.inFlight != 1 || s.p50 < 39 || s.p50 > 41 {
		t.Fatalf("sample %+v after 2 of 3 appends, 40 ms each", s)
	}
	if s, _ = tally.sample(now.Add(time.Second), now, n, benchOptions{batch: 2}); s.appends != 0 || s.p99 != 0 {
		t.Fatalf("the next second, with nothing acknowledged, sampled %+v", s)
	}
}

// --output's CSV has a header and a row a second; --plot's SVG draws.
func TestBenchSeriesFiles(t *testing.T) {
	samples := []benchSample{{at: time.Second, appends: 10, records: 20, mib: 0.5, inFlight: 4, p50: 1.5, p99: 9, warmup: true},
		{at: 2 * time.Second, appends: 12, records: 24, mib: 0.6, inFlight: 4, p50: 1.25, p99: 8}}
	var out bytes.Buffer
	if err := writeCSV(&out, samples); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil || len(rows) != 3 || strings.Join(rows[0], ",") != strings.Join(benchCSVHeader, ",") ||
		rows[2][0] != "2.000" || rows[2][2] != "24.000" || rows[2][6] != "8.000" || rows[1][7] != "true" {
		t.Fatalf("CSV %q, %v", rows, err)
	}
	var svg bytes.Buffer
	if err := plotSeries(&svg, samples, "test"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "<svg") || !strings.Contains(svg.String(), "records/s") {
		t.Fatalf("plot is not an SVG with its labels: %.200s", svg.String())
	}
}
