package prommetrics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/picomq/pico/ports"
)

// errStore answers every request with err.
type errStore struct {
	ports.ObjectStore
	err error
}

func (s errStore) PutIfAbsent(context.Context, string, []byte) error { return s.err }
func (s errStore) Get(context.Context, string, int64, int64) ([]byte, error) {
	return nil, s.err
}

// TestStoreResults: each sentinel the port defines gets its own result,
// wrapped or not, so an alert on "error" sees only real failures.
func TestStoreResults(t *testing.T) {
	m := New()
	cases := []struct {
		err    error
		result string
	}{
		{nil, "ok"},
		{fmt.Errorf("get x: %w", ports.ErrNotFound), "not_found"},
		{ports.ErrPrecondition, "precondition"},
		{context.Canceled, "canceled"},
		{errors.New("connection reset"), "error"},
	}
	for _, c := range cases {
		s := m.Store(errStore{err: c.err})
		_ = s.PutIfAbsent(context.Background(), "k", nil)
		_, _ = s.Get(context.Background(), "k", 0, -1)
		for _, op := range []string{"put", "get"} {
			if got := testutil.ToFloat64(m.store[slices.Index(storeOpNames[:], op)][slices.Index(resultNames[:], c.result)]); got < 1 {
				t.Errorf("%v: %s %s = %v, want 1", c.err, op, c.result, got)
			}
		}
	}
	if n := testutil.CollectAndCount(m.Registry(), "pico_object_store_request_duration_seconds"); n != numStoreOps {
		t.Errorf("%d duration series, want one per operation (%d)", n, numStoreOps)
	}
}
