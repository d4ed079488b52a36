package main

import (
	"testing"
	"time"
)

func TestGuardFlags(t *testing.T) {
	f, err := parseServe(nil)
	if err != nil {
		t.Fatal(err)
	}
	if conns, live := f.caps(20000); conns != 16000 || live != 8000 {
		t.Errorf("auto caps of 20000 files: %d connections, %d live readers; want 16000, 8000", conns, live)
	}
	if conns, live := f.caps(0); conns != 0 || live != 0 {
		t.Errorf("auto caps of an unknown limit: %d, %d; want none", conns, live)
	}
	if l := f.bodyLimits(); l.MinRate != 1024 || l.Grace != 5*time.Second || l.Idle != 10*time.Second || f.idleTimeout != time.Minute {
		t.Errorf("defaults: %+v, idle %s", l, f.idleTimeout)
	}
	f, err = parseServe([]string{"--max-connections", "10", "--max-live-readers", "0", "--min-body-rate", "0", "--read-idle-timeout", "0"})
	if err != nil {
		t.Fatal(err)
	}
	if conns, live := f.caps(20000); conns != 10 || live != 0 {
		t.Errorf("given caps: %d, %d; want 10, 0", conns, live)
	}
	if _, err := parseServe([]string{"--max-connections", "lots"}); err == nil {
		t.Error("--max-connections lots was taken")
	}
	if _, err := parseServe([]string{"--idle-timeout", "-1s"}); err == nil {
		t.Error("a negative --idle-timeout was taken")
	}
	for _, share := range []string{"0", "1.5", "-1"} {
		if _, err := parseServe([]string{"--catchup-share", share}); err == nil {
			t.Errorf("--catchup-share %s was taken", share)
		}
	}
	f, err = parseServe([]string{"--catchup-share", "0.25", "--catchup-bytes-per-second", "1000"})
	if l := f.catchUpLimits(); err != nil || l.Share != 0.25 || l.BytesPerSecond != 1000 {
		t.Errorf("catch-up flags: %+v, %v", l, err)
	}
}
