package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// storeCheckTimeout bounds the start's check of each object store.
const storeCheckTimeout = 10 * time.Second

// ErrStoreCheck: an object store failed the start's check; the node writes
// nothing to the metadata log then.
var ErrStoreCheck = errors.New("node: the object store fails its start check")

// checkStore proves, before the node writes anything, that the store does
// what the node needs of it: a conditional write, a second one refused
// (WAL fencing rests on it), a read of what was written, and a delete.
func checkStore(ctx context.Context, store ports.ObjectStore, key string) error {
	ctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	defer cancel()
	body := []byte("pico start check " + key)
	failed := func(step string, err error) error {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %v (is the endpoint reachable?): %w", storeCheckTimeout, err)
		}
		return fmt.Errorf("%w: %s %s: %w", ErrStoreCheck, step, key, err)
	}
	if err := store.PutIfAbsent(ctx, key, body); err != nil {
		return failed("conditional write of", err)
	}
	if step, err := checkWritten(ctx, store, key, body); err != nil {
		_ = store.Delete(context.WithoutCancel(ctx), key) // best effort: the check failed already
		return failed(step, err)
	}
	if err := store.Delete(ctx, key); err != nil {
		return failed("delete of", err)
	}
	return nil
}

// checkWritten checks that a second conditional write of key is refused
// and that key reads back as body; step names what failed.
func checkWritten(ctx context.Context, store ports.ObjectStore, key string, body []byte) (step string, err error) {
	switch err := store.PutIfAbsent(ctx, key, body[:len(body)-1]); {
	case err == nil:
		return "a second conditional write of", errors.New("the store took it: it ignores If-None-Match, which WAL fencing needs")
	case !errors.Is(err, ports.ErrPrecondition):
		return "a second conditional write of", err
	}
	got, err := store.Get(ctx, key, 0, -1)
	switch {
	case err != nil:
		return "read of", err
	case !bytes.Equal(got, body):
		return "read of", fmt.Errorf("got %d bytes back, wrote %d", len(got), len(body))
	}
	return "", nil
}

// checkStores checks the node's stores, the WAL's too when it has its own.
func checkStores(ctx context.Context, cfg Config) error {
	key := fmt.Sprintf("check/%d/%d", cfg.ID, cfg.Epoch)
	for _, s := range []ports.ObjectStore{cfg.Store, cfg.WALStore} {
		if s == nil {
			continue
		}
		if err := checkStore(ctx, s, key); err != nil {
			return err
		}
	}
	return nil
}

// checkClusterID refuses a metadata log that another cluster recorded
// already, before this node writes to it.
func checkClusterID(v *domain.State, id string) error {
	if id == "" {
		return nil
	}
	if cur, ok := v.KV(domain.SpaceRegistry, clusterKey); ok && string(cur.Value) != id {
		return fmt.Errorf("node: the metadata log belongs to cluster %q, not %q (--cluster-id)", cur.Value, id)
	}
	return nil
}
