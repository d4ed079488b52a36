package metaplane

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/tests/pgtest"
)

// TestPostgresRestartLosesNothing restarts Postgres (immediate mode, so
// connections die mid-statement) while proposers run. Every acknowledged
// write must be in the state, no proposal may appear twice in the log, and
// both the proposing plane and a second tailing plane must resume.
func TestPostgresRestartLosesNothing(t *testing.T) {
	url := pgtest.URL(t)
	noSnapshots := meta.Config{SnapshotEvery: 1 << 40, AppendTimeout: 30 * time.Second, PollInterval: 20 * time.Millisecond}
	p := openPlane(t, openLog(t, url), noSnapshots)
	tail := openPlane(t, openLog(t, url), noSnapshots)
	by := register(t, p, 1, 1)

	var acked sync.Map // key -> attempt value acknowledged
	var errorsSeen atomic.Int64
	stop := make(chan struct{})
	failures := make(chan string, 1000)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				proposeUntilKnown(failures, p, by, fmt.Sprintf("w%d/%05d", w, i), &acked, &errorsSeen)
			}
		}()
	}
	time.Sleep(time.Second)
	pgtest.Restart(t)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	last, err := openLog(t, url).LastIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range []*meta.Plane{p, tail} {
		if err := pl.WaitFor(ctx, last); err != nil {
			t.Fatalf("plane did not resume after the restart: %v", err)
		}
	}
	v := p.View()
	n := 0
	acked.Range(func(k, val any) bool {
		n++
		if e, ok := v.KV(domain.SpaceRegistry, k.(string)); !ok || string(e.Value) != val.(string) {
			t.Errorf("acknowledged %s=%s, state has %q (%v)", k, val, e.Value, ok)
		}
		return true
	})
	if n < 100 {
		t.Fatalf("only %d writes acknowledged", n)
	}
	tv := tail.View()
	if v.Hash() != tv.Hash() {
		t.Fatal("the tailing plane diverged")
	}
	checkNoProposalTwice(t, url)
	t.Logf("%d writes acknowledged, %d errors seen by proposers, %d rows", n, errorsSeen.Load(), last)
}

// proposeUntilKnown writes key once per attempt (value key#attempt) and
// retries until an outcome is known: OK, or a revision mismatch that proves
// an earlier attempt committed.
func proposeUntilKnown(failures chan<- string, p *meta.Plane, by domain.Proposer, key string, acked *sync.Map, errs *atomic.Int64) {
	var unknown []string
	for attempt := 0; attempt < 200; attempt++ {
		val := fmt.Sprintf("%s#%d", key, attempt)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		r, err := p.ProposeOne(ctx, &domain.PutKVIf{By: by, Space: domain.SpaceRegistry, Key: key, Value: []byte(val)})
		cancel()
		switch {
		case err == nil && r.Code == domain.ResultOK:
			acked.Store(key, val)
			return
		case err == nil && r.Code == domain.ResultRevMismatch && len(unknown) > 0:
			v := p.View()
			e, _ := v.KV(domain.SpaceRegistry, key)
			acked.Store(key, string(e.Value)) // an earlier attempt won
			return
		case err == nil:
			failures <- fmt.Sprintf("put %s attempt %d: unexpected %v", key, attempt, r)
			return
		case errors.Is(err, meta.ErrHalted):
			failures <- err.Error()
			return
		}
		errs.Add(1)
		unknown = append(unknown, val)
		time.Sleep(50 * time.Millisecond)
	}
}

// checkNoProposalTwice scans the whole log: every value (one per attempt)
// may appear at most once.
func checkNoProposalTwice(t *testing.T, url string) {
	t.Helper()
	log := openLog(t, url)
	seen := map[string]uint64{}
	var after uint64
	for {
		rows, err := log.Read(context.Background(), after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			return
		}
		for _, row := range rows {
			cmds, err := domain.DecodeRow(row.Payload)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cmds {
				put, ok := c.(*domain.PutKVIf)
				if !ok {
					continue
				}
				if prev, dup := seen[string(put.Value)]; dup {
					t.Errorf("proposal %s written twice, rows %d and %d", put.Value, prev, row.Index)
				}
				seen[string(put.Value)] = row.Index
				if !strings.Contains(string(put.Value), "#") {
					t.Errorf("unexpected value %q", put.Value)
				}
			}
			after = row.Index
		}
	}
}
