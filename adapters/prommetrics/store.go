package prommetrics

import (
	"context"
	"errors"
	"time"

	"github.com/picomq/pico/ports"
)

const (
	storePut = iota
	storeGet
	storeList
	storeDelete
	numStoreOps
)

var storeOpNames = [numStoreOps]string{"put", "get", "list", "delete"}

const (
	resultOK = iota
	resultError
	resultNotFound
	resultPrecondition
	resultCanceled
	numResults
)

// canceled is its own result so that readers hanging up do not look like
// a failing store to an alert on errors.
var resultNames = [numResults]string{"ok", "error", "not_found", "precondition", "canceled"}

// Store wraps an object store with the object-store series. Every store
// the node uses goes through it, so the adapters need no metrics of their
// own.
func (m *Metrics) Store(s ports.ObjectStore) ports.ObjectStore { return &store{s, m} }

type store struct {
	ports.ObjectStore
	m *Metrics
}

func (s *store) done(op int, start time.Time, err error) {
	s.m.storeDur[op].Observe(time.Since(start).Seconds())
	res := resultOK
	switch {
	case err == nil:
	case errors.Is(err, ports.ErrNotFound):
		res = resultNotFound
	case errors.Is(err, ports.ErrPrecondition):
		res = resultPrecondition
	case errors.Is(err, context.Canceled):
		res = resultCanceled
	default:
		res = resultError
	}
	s.m.store[op][res].Inc()
}

func (s *store) Put(ctx context.Context, key string, body []byte) error {
	start := time.Now()
	err := s.ObjectStore.Put(ctx, key, body)
	s.done(storePut, start, err)
	return err
}

func (s *store) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	start := time.Now()
	err := s.ObjectStore.PutIfAbsent(ctx, key, body)
	s.done(storePut, start, err)
	return err
}

func (s *store) Get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	start := time.Now()
	b, err := s.ObjectStore.Get(ctx, key, off, length)
	s.done(storeGet, start, err)
	return b, err
}

func (s *store) List(ctx context.Context, prefix, after string, limit int) ([]ports.ObjectInfo, error) {
	start := time.Now()
	l, err := s.ObjectStore.List(ctx, prefix, after, limit)
	s.done(storeList, start, err)
	return l, err
}

func (s *store) Delete(ctx context.Context, keys ...string) error {
	start := time.Now()
	err := s.ObjectStore.Delete(ctx, keys...)
	s.done(storeDelete, start, err)
	return err
}
