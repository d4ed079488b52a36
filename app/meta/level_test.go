package meta_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func openAtLevel(ctx context.Context, log ports.MetaLog, level domain.Level) (*meta.Plane, error) {
	return meta.Open(ctx, meta.Config{Log: log, SnapshotEvery: 4, TruncateDelay: -1,
		PollInterval: 5 * time.Millisecond, AppendTimeout: 2 * time.Second, Level: level})
}

// placedLog is a log holding a PlaceStream, a command of LevelPlacement.
func placedLog(t *testing.T) ports.MetaLog {
	t.Helper()
	log := memlog.New()
	p := openPlane(t, log, 0)
	by := register(t, p, 1, 10)
	if r, err := p.ProposeOne(context.Background(), &domain.PlaceStream{By: by, Name: "/placed"}); err != nil || !r.OK() {
		t.Fatalf("place: %v %v", r, err)
	}
	return log
}

func TestAnOlderLevelRefusesALogPastIt(t *testing.T) {
	log := placedLog(t)
	_, err := openAtLevel(context.Background(), log, domain.LevelBase)
	if !errors.Is(err, meta.ErrHalted) || !strings.Contains(err.Error(), "needs feature level 2") ||
		!strings.Contains(err.Error(), "reads up to level 1") {
		t.Fatalf("open at the base level over a log with a placement: %v, want a halt naming levels 2 and 1", err)
	}
	p, err := openAtLevel(context.Background(), log, domain.LevelPlacement)
	if err != nil {
		t.Fatalf("open at the placement level: %v", err)
	}
	p.Close()
}

func TestAnOlderLevelHaltsAtTheFirstCommandPastIt(t *testing.T) {
	log := memlog.New()
	old, err := openAtLevel(context.Background(), log, domain.LevelBase)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	current := openPlane(t, log, 0)
	by := register(t, current, 1, 10)
	if r, err := current.ProposeOne(context.Background(), &domain.PlaceStream{By: by, Name: "/placed"}); err != nil || !r.OK() {
		t.Fatalf("place: %v %v", r, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for old.Health() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := old.Health(); !errors.Is(err, meta.ErrHalted) || !strings.Contains(err.Error(), "PlaceStream") {
		t.Fatalf("older plane after a placement: %v, want halted, naming the command", err)
	}
}

// TestSnapshotsFollowTheClusterLevel has a current node write snapshots
// while an older node is registered: they are of the older version, which
// that node reads, until the cluster's level rises.
func TestSnapshotsFollowTheClusterLevel(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	p, err := openAtLevel(ctx, log, domain.LevelCurrent)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	by := register(t, p, 1, 10) // declares nothing: counts as the base level
	for range 8 {
		if _, err := p.ProposeOne(ctx, putKey(by, "k")); err != nil {
			t.Fatal(err)
		}
	}
	snapshotLevel := func() domain.Level {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			snap, err := log.Snapshot(ctx)
			if err == nil && snap.Index >= p.Applied()-4 {
				return domain.SnapshotLevel(snap.Payload)
			}
			if time.Now().After(deadline) {
				t.Fatalf("no recent snapshot: %v", err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if got := snapshotLevel(); got != domain.LevelBase {
		t.Fatalf("snapshot with a base-level node registered needs level %d, want %d", got, domain.LevelBase)
	}
	if _, err := p.ProposeOne(ctx, domain.DeclareLevel(by, domain.LevelCurrent)); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		if _, err := p.ProposeOne(ctx, putKey(by, "k")); err != nil {
			t.Fatal(err)
		}
	}
	want := domain.SnapshotLevel([]byte{domain.SnapshotVersionAt(domain.LevelCurrent)})
	if got := snapshotLevel(); got != want || want == domain.LevelBase {
		t.Fatalf("snapshot once every node declared level %d needs level %d, want %d", domain.LevelCurrent, got, want)
	}
}
