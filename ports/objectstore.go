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
//
// Keys are valid UTF-8 of at most 1024 bytes without NUL, made of segments
// separated by "/" of which none is empty, "." or ".."; adapters refuse other
// keys with an error. A key should not also be a "/"-prefix of another
// (both a/b and a/b/c): stores on a file system cannot hold both.
//
// A failed write may still have happened (a lost response): callers that
// retry a PutIfAbsent must be ready for ErrPrecondition caused by their own
// earlier attempt, or write bodies that let them recognise their own object.
type ObjectStore interface {
	// Put stores body under key, replacing any object there.
	Put(ctx context.Context, key string, body []byte) error

	// PutIfAbsent stores body under key only if no object has the key;
	// otherwise it returns ErrPrecondition and changes nothing. Exclusive
	// across processes sharing the store (S3 If-None-Match: *).
	PutIfAbsent(ctx context.Context, key string, body []byte) error

	// Get returns length bytes of the object from offset off; length < 0
	// reads to the end. A range that runs past the end returns the bytes
	// that exist (none when off is at or past the end). ErrNotFound if the
	// key is absent. off < 0 is an error.
	Get(ctx context.Context, key string, off, length int64) ([]byte, error)

	// List returns up to limit objects whose key starts with prefix and is
	// greater than after, in ascending key order (byte-wise). An empty
	// result means no more. limit < 1 is an error.
	List(ctx context.Context, prefix, after string, limit int) ([]ObjectInfo, error)

	// Delete removes the keys; an absent key is not an error. Many keys
	// may go in one request (S3 DeleteObjects), in no particular order: if
	// Delete fails, any of them may be gone.
	Delete(ctx context.Context, keys ...string) error
}
