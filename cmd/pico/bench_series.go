package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// benchSample is one second of a run: what was acknowledged in it, and the
// appends in flight at its end.
type benchSample struct {
	at       time.Duration // from the start of the warmup to the second's end
	appends  float64       // per second
	records  float64       // per second
	mib      float64       // per second
	inFlight int64
	p50, p99 float64 // ms, of the appends acknowledged in the second
	warmup   bool
}

// line is the sample as the progress line on stderr.
func (s benchSample) line() string {
	phase := ""
	if s.warmup {
		phase = " (warmup)"
	}
	return fmt.Sprintf("[%3.0fs] %.0f appends/s, %.0f records/s, %.1f MiB/s, %d in flight, p50 %.2f ms, p99 %.2f ms%s",
		s.at.Seconds(), s.appends, s.records, s.mib, s.inFlight, s.p50, s.p99, phase)
}

var benchCSVHeader = []string{"second", "appends_per_sec", "records_per_sec", "mib_per_sec", "in_flight", "p50_ms", "p99_ms", "warmup"}

// writeCSV writes the samples as --output's CSV, one row a second.
func writeCSV(w io.Writer, samples []benchSample) error {
	out := csv.NewWriter(w)
	if err := out.Write(benchCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, s := range samples {
		row := []string{f(s.at.Seconds()), f(s.appends), f(s.records), f(s.mib), strconv.FormatInt(s.inFlight, 10),
			f(s.p50), f(s.p99), strconv.FormatBool(s.warmup)}
		if err := out.Write(row); err != nil {
			return err
		}
	}
	out.Flush()
	return out.Error()
}

// writeSeries writes --output's CSV and --plot's SVG, where asked.
func (b *bench) writeSeries(samples []benchSample) error {
	if path := b.o.output; path != "" {
		if err := writeFileWith(path, func(w io.Writer) error { return writeCSV(w, samples) }); err != nil {
			return fmt.Errorf("--output: %w", err)
		}
	}
	if path := b.o.plot; path != "" {
		if err := writeFileWith(path, func(w io.Writer) error { return plotSeries(w, samples, b.title()) }); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	return nil
}

// title names the run's settings, for the plot.
func (b *bench) title() string {
	o := b.o
	t := fmt.Sprintf("pico bench: %d stream(s), %d in flight, %d x %d B", o.streams, o.window, o.batch, o.recordSize)
	if o.rate > 0 {
		t += fmt.Sprintf(", %.0f records/s offered", o.rate)
	}
	return t
}

func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
