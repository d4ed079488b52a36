package faultlog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/tests/faultstore"
)

func TestAmbiguousAppendsLandAndFailedOnesDoNot(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		faults faultstore.Faults
		lands  bool
	}{{"failed", faultstore.Faults{Fail: 1}, false}, {"ambiguous", faultstore.Faults{Ambiguous: 1}, true}} {
		inner := memlog.New()
		l := New(inner, Config{Seed: 1, Append: tc.faults})
		if err := l.Append(ctx, 1, []byte("x")); !errors.Is(err, faultstore.ErrInjected) {
			t.Fatalf("%s append: %v, want an injected fault", tc.name, err)
		}
		if last, _ := inner.LastIndex(ctx); (last == 1) != tc.lands {
			t.Errorf("%s append: the log's last index is %d", tc.name, last)
		}
		if c := l.Counts(); c.Calls != 1 || c.Failed+c.Ambiguous != 1 {
			t.Errorf("%s append: counts %+v", tc.name, c)
		}
	}
}

func TestCutFailsEveryCallUntilRestored(t *testing.T) {
	ctx := context.Background()
	inner := memlog.New()
	l := New(inner, Config{Seed: 1})
	beats := Heartbeats{Inner: inner.Heartbeats(), Log: l}
	l.SetCut(true)
	if err := l.Append(ctx, 1, []byte("x")); !errors.Is(err, ErrCut) {
		t.Fatalf("append while cut: %v", err)
	}
	if err := beats.Beat(ctx, 1, 1, testNow); !errors.Is(err, ErrCut) {
		t.Fatalf("beat while cut: %v", err)
	}
	if _, err := l.Read(ctx, 0, 10); !errors.Is(err, ErrCut) {
		t.Fatalf("read while cut: %v", err)
	}
	l.SetCut(false)
	if err := l.Append(ctx, 1, []byte("x")); err != nil {
		t.Fatalf("append once restored: %v", err)
	}
	if rows, err := l.Read(ctx, 0, 10); err != nil || len(rows) != 1 {
		t.Fatalf("read once restored: %v %v", rows, err)
	}
	if c := l.Counts(); c.Cut != 3 {
		t.Errorf("cut calls counted %d, want 3", c.Cut)
	}
}

var testNow = time.UnixMilli(1_700_000_000_000)
