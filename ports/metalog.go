package ports

import (
	"context"
	"errors"
)

// Sentinel errors shared by the metadata log and the lease. Adapters translate
// vendor errors into these; callers test them with errors.Is.
var (
	// ErrConflict: the log already holds a row at the index given to Append.
	// Another writer won that slot; the caller re-reads the tail and retries.
	ErrConflict = errors.New("metadata log: index already taken")
	// ErrTruncated: rows the caller asked for were removed by Truncate; the
	// caller must install the snapshot and continue from its index.
	ErrTruncated = errors.New("metadata log: rows truncated, install the snapshot")
	// ErrNoSnapshot: no snapshot has been stored yet.
	ErrNoSnapshot = errors.New("metadata log: no snapshot")
	// ErrLeaseHeld: another holder owns an unexpired lease.
	ErrLeaseHeld = errors.New("lease: held by another node")
	// ErrLeaseLost: the lease expired or was taken over; the holder must stop
	// lease-gated work at once.
	ErrLeaseLost = errors.New("lease: lost")
)

// Row is one entry of the metadata log: an opaque payload (a batch of encoded
// commands) at a 1-based index.
type Row struct {
	Index   uint64
	Payload []byte
}

// Snapshot is an encoded state with the index of the last row it contains.
type Snapshot struct {
	Index   uint64
	Payload []byte
}

// MetaLog is the ordered, shared command log: one table of (index, payload)
// rows. Indexes start at 1 and have no holes below the last index, because
// writers only ever append at LastIndex()+1. All methods are safe for
// concurrent use, including by several processes sharing one database.
// Returned slices belong to the caller.
type MetaLog interface {
	// Append stores payload at index. It returns ErrConflict when a row at
	// index already exists (whoever wrote it, with whatever payload). A nil
	// error means the row is durable in the database. Appending at an index
	// other than LastIndex()+1 is a caller bug.
	Append(ctx context.Context, index uint64, payload []byte) error

	// Read returns up to limit rows with Index > after, in ascending index
	// order with no holes. It returns ErrTruncated when some row in
	// (after, LastIndex] was removed by Truncate. An empty result means the
	// caller is at the tail.
	Read(ctx context.Context, after uint64, limit int) ([]Row, error)

	// LastIndex returns the highest index ever written: the maximum of the last
	// row and the stored snapshot's index (0 for a new log).
	LastIndex(ctx context.Context) (uint64, error)

	// PutSnapshot stores s unless a snapshot with an equal or higher index is
	// already stored (then it is a no-op, not an error): snapshots never
	// regress. Idempotent.
	PutSnapshot(ctx context.Context, s Snapshot) error

	// Snapshot returns the stored snapshot, or ErrNoSnapshot.
	Snapshot(ctx context.Context) (Snapshot, error)

	// Truncate removes every row with Index <= through. The caller must have
	// stored a snapshot at or above through first. Idempotent; never raises
	// the truncation point above LastIndex.
	Truncate(ctx context.Context, through uint64) error

	// Close releases connections. Further calls fail.
	Close() error
}

// LogNotifier is implemented by logs that can wake tailers when a row is
// appended anywhere (Postgres LISTEN/NOTIFY, or in-process for memory and
// SQLite). Tailers still poll as a fallback: a notification is a hint, it may
// be lost, duplicated or coalesced.
type LogNotifier interface {
	// Notifications returns a channel that receives a value soon after rows are
	// appended. The channel is closed when ctx ends or the log is closed.
	Notifications(ctx context.Context) (<-chan struct{}, error)
}
