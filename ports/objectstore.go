package ports

import (
	"context"
	"errors"
)

// Sentinel errors of the object store.
var (
	// ErrNotFound: no object has the key.
	ErrNotFound = errors.New("object store: not found")
	// ErrPrecondition: PutIfAbsent found the key already taken. This is the
	// primitive fencing is built on: of several writers racing for one key,
	// exactly one succeeds.
	ErrPrecondition = errors.New("object store: key already exists")
)

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Key  string
	Size int64
}

// ObjectStore is a bucket of immutable objects addressed by string keys with
// "/" separators. Writes are atomic: a reader sees the whole object or
// nothing, never a partial one. A nil error from a write means the object is
// durable in the store (that is the acknowledgement point of everything built
// on it). Safe for concurrent use. Callers own the slices they pass and get.
type ObjectStore interface {
	// Put stores body under key, replacing any object there.
	Put(ctx context.Context, key string, body []byte) error

	// PutIfAbsent stores body under key only if no object has the key;
	// otherwise it returns ErrPrecondition and changes nothing. Exclusive
	// across processes sharing the store (S3 If-None-Match: *).
	PutIfAbsent(ctx context.Context, key string, body []byte) error

	// Get returns length bytes of the object from offset off; length < 0
	// reads to the end. A range that runs past the end returns the bytes
	// that exist. ErrNotFound if the key is absent.
	Get(ctx context.Context, key string, off, length int64) ([]byte, error)

	// List returns up to limit objects whose key starts with prefix and is
	// greater than after, in ascending key order (byte-wise). An empty
	// result means no more.
	List(ctx context.Context, prefix, after string, limit int) ([]ObjectInfo, error)

	// Delete removes key. Deleting an absent key is not an error.
	Delete(ctx context.Context, key string) error
}
