package main

import (
	"testing"
	"time"
)

func TestBenchDurationsAreSecondsOrGoDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{"60": time.Minute, "1.5": 1500 * time.Millisecond, "0": 0,
		"1m30s": 90 * time.Second, "250ms": 250 * time.Millisecond} {
		var d time.Duration
		if err := (secondsOrDuration{&d}).Set(in); err != nil || d != want {
			t.Errorf("%q: %v, %v; want %v", in, d, err, want)
		}
	}
	for _, in := range []string{"-1", "1e7", "NaN", "soon", ""} {
		var d time.Duration
		if err := (secondsOrDuration{&d}).Set(in); err == nil {
			t.Errorf("%q accepted as %v", in, d)
		}
	}
}
