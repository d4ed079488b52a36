// Package memstore is an in-memory ports.ObjectStore, for tests and for
// running without any storage. Objects live only as long as the Store.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/picomq/pico/adapters/internal/storage/objkey"
	"github.com/picomq/pico/ports"
)

// Store is an in-memory object store, safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	objects map[string][]byte
	keys    []string // sorted, so List is a binary search and a scan
}

var _ ports.ObjectStore = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{objects: map[string][]byte{}}
}

// Put implements ports.ObjectStore.
func (s *Store) Put(ctx context.Context, key string, body []byte) error {
	if err := check(ctx, "put", key); err != nil {
		return err
	}
	stored := slices.Clone(body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.insertLocked(key, stored)
	return nil
}

// PutIfAbsent implements ports.ObjectStore.
func (s *Store) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if err := check(ctx, "put-if-absent", key); err != nil {
		return err
	}
	stored := slices.Clone(body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; ok {
		return fmt.Errorf("memstore: put-if-absent %s: %w", key, ports.ErrPrecondition)
	}
	s.insertLocked(key, stored)
	return nil
}

func (s *Store) insertLocked(key string, body []byte) {
	if body == nil {
		body = []byte{} // a nil entry would read as absent
	}
	if _, ok := s.objects[key]; !ok {
		i, _ := slices.BinarySearch(s.keys, key)
		s.keys = slices.Insert(s.keys, i, key)
	}
	s.objects[key] = body
}

// Get implements ports.ObjectStore.
func (s *Store) Get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := check(ctx, "get", key); err != nil {
		return nil, err
	}
	if off < 0 {
		return nil, fmt.Errorf("memstore: get %s: negative offset %d", key, off)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	body, ok := s.objects[key]
	if !ok {
		return nil, fmt.Errorf("memstore: get %s: %w", key, ports.ErrNotFound)
	}
	size := int64(len(body))
	if off >= size {
		return []byte{}, nil
	}
	end := size
	if length >= 0 && length < size-off {
		end = off + length
	}
	return slices.Clone(body[off:end:end]), nil
}

// List implements ports.ObjectStore.
func (s *Store) List(ctx context.Context, prefix, after string, limit int) ([]ports.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: list %s: %w", prefix, err)
	}
	if limit < 1 {
		return nil, fmt.Errorf("memstore: list %s: limit %d is not positive", prefix, limit)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	// The first candidate is the first key that is both >= prefix and > after.
	i, _ := slices.BinarySearch(s.keys, prefix)
	if after >= prefix {
		j, found := slices.BinarySearch(s.keys, after)
		if found {
			j++
		}
		i = j
	}
	var out []ports.ObjectInfo
	for ; i < len(s.keys) && len(out) < limit; i++ {
		key := s.keys[i]
		if !strings.HasPrefix(key, prefix) {
			break
		}
		out = append(out, ports.ObjectInfo{Key: key, Size: int64(len(s.objects[key]))})
	}
	return out, nil
}

// Delete implements ports.ObjectStore.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	for _, key := range keys {
		if err := check(ctx, "delete", key); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range keys {
		if _, ok := s.objects[key]; !ok {
			continue
		}
		delete(s.objects, key)
		i, _ := slices.BinarySearch(s.keys, key)
		s.keys = slices.Delete(s.keys, i, i+1)
	}
	return nil
}

func check(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: %s %s: %w", op, key, err)
	}
	if err := objkey.Check(key); err != nil {
		return fmt.Errorf("memstore: %s: %w", op, err)
	}
	return nil
}
