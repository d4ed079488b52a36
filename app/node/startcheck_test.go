package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/faultstore"
)

// blindStore ignores If-None-Match, as some S3 servers do.
type blindStore struct{ ports.ObjectStore }

func (s blindStore) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	return s.Put(ctx, key, body)
}

// unreadableStore takes writes and fails every read.
type unreadableStore struct{ ports.ObjectStore }

func (unreadableStore) Get(context.Context, string, int64, int64) ([]byte, error) {
	return nil, errors.New("read refused")
}

// A node whose store fails the start check does not start, says which step
// failed, writes no metadata row and leaves no check object behind.
func TestStartChecksTheStore(t *testing.T) {
	for name, tc := range map[string]struct {
		store func(ports.ObjectStore) ports.ObjectStore
		says  string
	}{
		"ignores If-None-Match": {func(s ports.ObjectStore) ports.ObjectStore { return blindStore{s} }, "ignores If-None-Match"},
		"fails reads":           {func(s ports.ObjectStore) ports.ObjectStore { return unreadableStore{s} }, "read of check/1/"},
	} {
		t.Run(name, func(t *testing.T) {
			log, inner := memlog.New(), memstore.New()
			_, err := Start(context.Background(), Config{ID: 1, Address: "x", Slots: 1, Log: log, Lease: log.Lease(), Store: tc.store(inner)})
			if !errors.Is(err, ErrStoreCheck) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Start: %v, want ErrStoreCheck saying %q", err, tc.says)
			}
			wantNoRows(t, log)
			if objs, _ := inner.List(context.Background(), "", "", 10); len(objs) != 0 {
				t.Errorf("the check left %v in the store", objs)
			}
		})
	}
	log, store := memlog.New(), memstore.New()
	n, err := Start(context.Background(), Config{ID: 1, Address: "x", Slots: 1, Log: log, Lease: log.Lease(), Store: store})
	if err != nil {
		t.Fatalf("a sound store: %v", err)
	}
	n.Close()
	if objs, _ := store.List(context.Background(), "check/", "", 10); len(objs) != 0 {
		t.Errorf("the check left %v in a sound store", objs)
	}
}

// A node of another cluster refuses the log before writing to it.
func TestStartRefusesAnotherClustersLog(t *testing.T) {
	log := memlog.New()
	n, err := Start(context.Background(), Config{ID: 1, Address: "x", Slots: 1, Log: log, Lease: log.Lease(), ClusterID: "east"})
	if err != nil {
		t.Fatal(err)
	}
	n.Close()
	before := rows(t, log)
	_, err = Start(context.Background(), Config{ID: 2, Address: "y", Slots: 1, Log: log, Lease: log.Lease(), ClusterID: "west"})
	if err == nil || !strings.Contains(err.Error(), `belongs to cluster "east", not "west"`) {
		t.Fatalf("Start of cluster west on east's log: %v", err)
	}
	if after := rows(t, log); after != before {
		t.Errorf("the refused node wrote %d rows", after-before)
	}
}

func rows(t *testing.T, log ports.MetaLog) int {
	t.Helper()
	got, err := log.Read(context.Background(), 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return len(got)
}

func wantNoRows(t *testing.T, log ports.MetaLog) {
	t.Helper()
	if n := rows(t, log); n != 0 {
		t.Errorf("a refused start wrote %d metadata rows", n)
	}
}

// While the store refuses the WAL's writes for longer than the bound, the
// node is not ready, and says why; once the store is back, it is ready
// again and the append that waited is durable.
func TestReadyFailsWhileTheStoreRefusesWrites(t *testing.T) {
	log, store := memlog.New(), faultstore.Outage(memstore.New())
	n, err := Start(context.Background(), Config{ID: 1, Address: "x", Slots: 1, Log: log, Lease: log.Lease(), Store: store,
		StoreFailingReady: 100 * time.Millisecond, WAL: wal.Config{RetryFor: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx := context.Background()
	if _, _, err := n.Streams().Create(ctx, "/s", domain.StreamConfig{}, nil, false); err != nil {
		t.Fatal(err)
	}
	store.SetEnabled(true)
	appended := make(chan error, 1)
	go func() {
		_, err := n.Streams().Append(ctx, "/s", ports.AppendRequest{Records: []domain.Record{{Body: []byte("x")}}})
		appended <- err
	}()
	waitFor(t, "not ready", func() bool {
		err := n.Ready()
		return errors.Is(err, ErrNotReady) && strings.Contains(err.Error(), "refused the WAL's writes")
	})
	store.SetEnabled(false)
	if err := <-appended; err != nil {
		t.Fatalf("the append that waited out the outage: %v", err)
	}
	if err := n.Ready(); err != nil {
		t.Fatalf("ready once the store is back: %v", err)
	}
}
