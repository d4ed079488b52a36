package faultstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/conformance"
	"github.com/picomq/pico/tests/faultstore"
)

// everything puts the same faults on every operation.
func everything(seed uint64, f faultstore.Faults) faultstore.Config {
	return faultstore.Config{Seed: seed, Put: f, PutIfAbsent: f, Get: f, List: f, Delete: f}
}

func TestConformanceWithFaultsOff(t *testing.T) {
	var stores []*faultstore.Store
	conformance.ObjectStore(t, func(*testing.T) ports.ObjectStore {
		s := faultstore.New(memstore.New(), everything(1, faultstore.Faults{Fail: 0.5, Ambiguous: 0.5, Delay: 0.5, MaxDelay: time.Second}))
		s.SetEnabled(false)
		stores = append(stores, s)
		return s
	})
	for _, s := range stores {
		if c := s.Total(); c != (faultstore.Counts{}) {
			t.Fatalf("faults disabled, yet counts = %+v", c)
		}
	}
}

func TestConformanceWithZeroProbabilities(t *testing.T) {
	conformance.ObjectStore(t, func(*testing.T) ports.ObjectStore {
		return faultstore.New(memstore.New(), faultstore.Config{Seed: 1})
	})
}

func TestFailDoesNothing(t *testing.T) {
	ctx := t.Context()
	inner := memstore.New()
	s := faultstore.New(inner, everything(7, faultstore.Faults{Fail: 1}))
	for i := range 10 {
		key := fmt.Sprintf("k%d", i)
		if err := s.Put(ctx, key, []byte("x")); !errors.Is(err, faultstore.ErrInjected) {
			t.Fatalf("Put = %v, want ErrInjected", err)
		}
		if err := s.PutIfAbsent(ctx, key, []byte("x")); !errors.Is(err, faultstore.ErrInjected) {
			t.Fatalf("PutIfAbsent = %v, want ErrInjected", err)
		}
	}
	if infos, _ := inner.List(ctx, "", "", 100); len(infos) != 0 {
		t.Fatalf("failed puts stored %d objects", len(infos))
	}
	if c := s.Counts(faultstore.OpPut); c.Calls != 10 || c.Failed != 10 || c.Ambiguous != 0 {
		t.Fatalf("put counts = %+v, want 10 calls, 10 failed", c)
	}
	if err := inner.Put(ctx, "there", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "there"); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("Delete = %v, want ErrInjected", err)
	}
	if _, err := inner.Get(ctx, "there", 0, -1); err != nil {
		t.Fatalf("a failed Delete removed the object: %v", err)
	}
	if _, err := s.Get(ctx, "there", 0, -1); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("Get = %v, want ErrInjected", err)
	}
	if _, err := s.List(ctx, "", "", 10); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("List = %v, want ErrInjected", err)
	}
}

func TestAmbiguousDoesTheWork(t *testing.T) {
	ctx := t.Context()
	inner := memstore.New()
	s := faultstore.New(inner, everything(7, faultstore.Faults{Ambiguous: 1}))
	if err := s.Put(ctx, "put", []byte("p")); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("Put = %v, want ErrInjected", err)
	}
	if err := s.PutIfAbsent(ctx, "claim", []byte("c")); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("PutIfAbsent = %v, want ErrInjected", err)
	}
	for key, want := range map[string]string{"put": "p", "claim": "c"} {
		got, err := inner.Get(ctx, key, 0, -1)
		if err != nil || string(got) != want {
			t.Fatalf("inner Get(%s) = %q, %v; the ambiguous put should have stored %q", key, got, err, want)
		}
	}
	// A retry of the claim is refused by the inner store, and still reported as the injected fault.
	if err := s.PutIfAbsent(ctx, "claim", []byte("c")); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("second PutIfAbsent = %v, want ErrInjected", err)
	}
	if err := s.Delete(ctx, "put"); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("Delete = %v, want ErrInjected", err)
	}
	if _, err := inner.Get(ctx, "put", 0, -1); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("the ambiguous Delete did not delete: %v", err)
	}
	// An ambiguous delete of several keys deletes every second one.
	for _, k := range []string{"m/0", "m/1", "m/2", "m/3"} {
		if err := inner.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "m/0", "m/1", "m/2", "m/3"); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("Delete of four keys = %v, want ErrInjected", err)
	}
	if left, _ := inner.List(ctx, "m/", "", 10); len(left) != 2 || left[0].Key != "m/0" || left[1].Key != "m/2" {
		t.Fatalf("after a partial delete: %v, want m/0 and m/2", left)
	}
	if c := s.Counts(faultstore.OpPutIfAbsent); c.Calls != 2 || c.Ambiguous != 2 || c.Failed != 0 {
		t.Fatalf("put-if-absent counts = %+v, want 2 calls, 2 ambiguous", c)
	}
}

func TestDelay(t *testing.T) {
	ctx := t.Context()
	s := faultstore.New(memstore.New(), faultstore.Config{Seed: 3, Get: faultstore.Faults{Delay: 1, MaxDelay: 20 * time.Millisecond}})
	if err := s.Put(ctx, "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 10 {
		if _, err := s.Get(ctx, "k", 0, -1); err != nil {
			t.Fatal(err)
		}
	}
	if elapsed := time.Since(start); elapsed < time.Millisecond || elapsed > 2*time.Second {
		t.Fatalf("10 gets delayed up to 20ms each took %v", elapsed)
	}
	if c := s.Counts(faultstore.OpGet); c.Delayed != 10 {
		t.Fatalf("get counts = %+v, want 10 delayed", c)
	}
	if c := s.Counts(faultstore.OpPut); c.Delayed != 0 || c.Calls != 1 {
		t.Fatalf("put counts = %+v, want 1 call, no delay", c)
	}
	slow := faultstore.New(memstore.New(), faultstore.Config{Seed: 3, Put: faultstore.Faults{Delay: 1, MaxDelay: time.Hour}})
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := slow.Put(short, "k", []byte("x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Put delayed past its deadline = %v, want DeadlineExceeded", err)
	}
	if _, err := slow.Inner().Get(ctx, "k", 0, -1); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("a Put that timed out in its delay stored the object: %v", err)
	}
}

// outcomes runs n Puts and returns which of them failed, and how.
func outcomes(t *testing.T, s *faultstore.Store, n int) []string {
	var out []string
	for i := range n {
		err := s.Put(t.Context(), fmt.Sprintf("k%d", i), []byte("x"))
		switch {
		case err == nil:
			out = append(out, "ok")
		case errors.Is(err, faultstore.ErrInjected):
			out = append(out, err.Error())
		default:
			t.Fatalf("Put: %v", err)
		}
	}
	return out
}

func TestSeedDeterminesFaults(t *testing.T) {
	f := faultstore.Faults{Fail: 0.3, Ambiguous: 0.3}
	a := outcomes(t, faultstore.New(memstore.New(), everything(42, f)), 200)
	b := outcomes(t, faultstore.New(memstore.New(), everything(42, f)), 200)
	c := outcomes(t, faultstore.New(memstore.New(), everything(43, f)), 200)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave different faults")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds gave the same 200 outcomes")
	}
}

func TestProbabilities(t *testing.T) {
	const n = 4000
	s := faultstore.New(memstore.New(), faultstore.Config{Seed: 9, Put: faultstore.Faults{Fail: 0.2, Ambiguous: 0.25}})
	outcomes(t, s, n)
	c := s.Counts(faultstore.OpPut)
	// Ambiguous applies to the calls that did not fail: 0.8 × 0.25 = 0.2.
	for name, got := range map[string]int64{"failed": c.Failed, "ambiguous": c.Ambiguous} {
		if got < n*15/100 || got > n*25/100 {
			t.Errorf("%s = %d of %d, want about 20%%", name, got, n)
		}
	}
	if infos, _ := s.Inner().List(t.Context(), "", "", n); int64(len(infos)) != n-c.Failed {
		t.Errorf("inner store holds %d objects, want %d (every call but the failed ones)", len(infos), n-c.Failed)
	}
}

func TestSwitchAtRuntime(t *testing.T) {
	ctx := t.Context()
	s := faultstore.New(memstore.New(), faultstore.Config{Seed: 1, Put: faultstore.Faults{Fail: 1}})
	if err := s.Put(ctx, "a", nil); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("enabled: Put = %v, want ErrInjected", err)
	}
	s.SetEnabled(false)
	if s.Enabled() {
		t.Fatal("Enabled after SetEnabled(false)")
	}
	if err := s.Put(ctx, "a", nil); err != nil {
		t.Fatalf("disabled: Put = %v", err)
	}
	s.SetEnabled(true)
	if err := s.Put(ctx, "b", nil); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("re-enabled: Put = %v, want ErrInjected", err)
	}
	if c := s.Counts(faultstore.OpPut); c.Calls != 2 || c.Failed != 2 {
		t.Fatalf("counts = %+v, want the 2 calls made while enabled, both failed", c)
	}
}

func TestAStallHoldsCallsUntilItEnds(t *testing.T) {
	ctx := context.Background()
	s := faultstore.New(memstore.New(), faultstore.Config{Seed: 1})
	s.SetStalled(true)
	done := make(chan error, 1)
	go func() { done <- s.Put(ctx, "k", []byte("v")) }()
	select {
	case err := <-done:
		t.Fatalf("a put during a stall returned %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := s.Get(short, "k", 0, -1); err == nil {
		t.Fatal("a get during a stall ended by its context succeeded")
	}
	s.SetStalled(false)
	if err := <-done; err != nil {
		t.Fatalf("the held put, once the stall ended: %v", err)
	}
	if body, err := s.Get(ctx, "k", 0, -1); err != nil || string(body) != "v" {
		t.Fatalf("get after the stall: %q %v", body, err)
	}
}
