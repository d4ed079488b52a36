package main

import (
	"errors"
	"strconv"
	"time"
)

// secondsOrDuration is a duration flag that also takes a number of
// seconds, as the original's bench does (-d 60).
type secondsOrDuration struct{ d *time.Duration }

// maxBenchSeconds bounds a number of seconds so that it fits a Duration.
const maxBenchSeconds = 1e6

func (s secondsOrDuration) Set(v string) error {
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs >= 0 && secs <= maxBenchSeconds) {
			return errors.New("seconds must be from 0 to 1000000")
		}
		*s.d = time.Duration(secs * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return errors.New("want seconds (60) or a duration (1m30s)")
	}
	*s.d = d
	return nil
}

func (s secondsOrDuration) String() string {
	if s.d == nil {
		return ""
	}
	return s.d.String()
}
