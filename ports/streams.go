package ports

import (
	"context"
	"errors"
	"fmt"

	"github.com/picomq/pico/domain"
)

// Sentinel errors of the stream service. Every error a Streams method
// returns wraps one of these (usually inside a *StreamError that carries the
// details a protocol reports), or is an internal failure (a 5xx).
var (
	ErrStreamNotFound = errors.New("no such stream")
	// ErrStreamGone: the stream was deleted but is kept, read-only, for
	// the streams forked from it (Durable Streams answers 410).
	ErrStreamGone = errors.New("stream is deleted")
	// ErrStreamConflict: a create found the name taken with another config.
	ErrStreamConflict = errors.New("stream exists with a different configuration")
	// ErrStreamClosed: the stream is sealed; nothing more can be appended.
	ErrStreamClosed = errors.New("stream is closed")
	// ErrMatchFailed: a conditional append found another tail.
	ErrMatchFailed = errors.New("match failed")
	// ErrProducerFenced: the producer epoch is below the stream's current one.
	ErrProducerFenced = errors.New("producer epoch is stale")
	// ErrProducerGap: the producer sequence skipped ahead.
	ErrProducerGap = errors.New("producer sequence gap")
	// ErrWriterSeq: a writer sequence (Durable Streams Stream-Seq) not
	// above the last accepted one.
	ErrWriterSeq = errors.New("writer sequence regression")
	// ErrBadRequest: the request is malformed or not allowed (a 400).
	ErrBadRequest = errors.New("bad request")
	// ErrUnavailable: the node cannot serve the request right now (a 503),
	// for example while it shuts down or its metadata writes fail.
	ErrUnavailable = errors.New("unavailable")
)

// StreamError is a service error with the details protocols report. Kind is
// one of the sentinels above; errors.Is matches it.
type StreamError struct {
	Kind    error
	Message string
	// Next is the stream's next offset when HasNext (conflict, closed, match).
	Next    uint64
	HasNext bool
	// Closed: the stream is sealed (reported on conflicts and closed errors).
	Closed bool
	// Write is the write rules' verdict on a refused append (nil for other
	// errors): the producer's epoch and sequences, the last writer
	// sequence, and whether the stream was closed when it was judged.
	Write *domain.Verdict
}

func (e *StreamError) Error() string {
	if e.Message == "" {
		return e.Kind.Error()
	}
	return e.Message
}

func (e *StreamError) Unwrap() error { return e.Kind }

// Verdict is the write rules' verdict the error carries, or the zero
// verdict when it carries none.
func (e *StreamError) Verdict() domain.Verdict {
	if e.Write == nil {
		return domain.Verdict{}
	}
	return *e.Write
}

// Errorf returns a *StreamError of kind with a formatted message.
func Errorf(kind error, format string, args ...any) *StreamError {
	return &StreamError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// StreamInfo describes a stream as a protocol shows it.
type StreamInfo struct {
	// ID identifies this incarnation of the name (a re-created stream gets
	// a new one): for ETags.
	ID     uint64
	Name   string
	Config domain.StreamConfig
	// Start is the first offset still kept; Next the offset the next append
	// gets (the durable tail on the owner; the committed end elsewhere).
	Start, Next uint64
	Closed      bool
	CreatedMs   int64
}

// AppendRequest is one append (see domain.WriteRequest). A ContentType
// other than the stream's is ErrStreamConflict, and a record of a JSON
// stream that is not one JSON value (domain.ValidJSON) ErrBadRequest; both
// are answered after closure and before the producer stamp is judged.
type AppendRequest = domain.WriteRequest

// AppendResult says where an append landed.
type AppendResult struct {
	// First and Next bound the offsets written, [First, Next); equal when
	// nothing was written (a close without records).
	First, Next uint64
	// Tail is the stream's next offset after the append: Next, except on
	// a Duplicate.
	Tail        uint64
	TimestampMs int64
	// Duplicate: an idempotent producer's repeat, acknowledged without
	// writing; First/Next are those of the producer's last accepted
	// append (the original, when the repeat is of the last request).
	Duplicate bool
	// ProducerSeq echoes the producer's last accepted sequence.
	ProducerSeq uint64
	Closed      bool
	// RepeatsClose, on a Duplicate of a closed stream: it repeats the
	// request that closed it, or that request is not known (a seal
	// recorded by a version before SealStreamBy).
	RepeatsClose bool
}

// ReadResult is a page of records.
type ReadResult struct {
	// Records hold offsets [From, Next); From may be above the requested
	// offset when records below it were trimmed.
	Records    []domain.Record
	From, Next uint64
	// Tail is the stream's durable next offset: UpToDate means Next == Tail.
	Tail     uint64
	UpToDate bool
	// Closed: the stream is sealed and this page reaches its tail. A page
	// with the records of the append that sealed the stream says so too:
	// a reader waiting at the tail learns both from one read.
	Closed bool
	// Config is the stream's configuration (its content type for raw reads).
	Config domain.StreamConfig
	// ID identifies this incarnation of the stream (see StreamInfo.ID).
	ID uint64
	// Changed is closed when the stream next changes (a durable append, a
	// close or a delete): a long-poll waits on it and reads again.
	Changed <-chan struct{}
}

// ReadLimits bound a read: at most Count records and about Bytes of bodies
// (0: no limit of that kind; at least one record is always returned).
type ReadLimits struct {
	Count int
	Bytes int
}

// ListPage is one page of a listing in name order.
type ListPage struct {
	Streams []StreamInfo
	HasMore bool
}

// Streams is the name-level stream service the protocol listeners drive.
// Names are opaque strings (a URL path). Every method is safe for concurrent
// use. A method on a stream owned by another live node fails with a
// *RedirectError naming that node's address, unless the service serves every
// stream locally; listeners call Route first to answer with a redirect.
type Streams interface {
	// Route returns nil when this node serves name, or the redirect to
	// the node that does.
	Route(name string) (*RedirectError, error)
	// Create makes a stream, idempotently: created is false when a stream
	// with an equal config exists (its info is returned); a different config
	// is ErrStreamConflict. Initial records, if any, are appended when the
	// stream is created (not when it already existed). close seals it.
	Create(ctx context.Context, name string, cfg domain.StreamConfig, initial []domain.Record, close bool) (info StreamInfo, created bool, err error)
	// Append writes records; it returns once they are durable.
	Append(ctx context.Context, name string, req AppendRequest) (AppendResult, error)
	// Trim drops records below seq, clamped to what is committed to data
	// objects, and returns the effective start.
	Trim(ctx context.Context, name string, seq uint64) (uint64, error)
	// Read returns durable records from offset from (ErrBadRequest beyond the
	// tail). It never waits: a caught-up reader waits on Changed.
	Read(ctx context.Context, name string, from uint64, lim ReadLimits) (ReadResult, error)
	// ReadTail reads at the tail, whatever it is: an empty page whose Next
	// is the tail and whose Changed closes when the stream grows. Unlike
	// Head it is an access (it renews an idle TTL), in one call.
	ReadTail(ctx context.Context, name string) (ReadResult, error)
	// Head returns the stream's info with live offsets. It does not count
	// as an access for the idle TTL; every other method on a stream does.
	Head(ctx context.Context, name string) (StreamInfo, error)
	// Delete removes a stream; its name is free at once. A stream with
	// forks is only soft-deleted (ErrStreamGone from then on) until its
	// last fork is deleted.
	Delete(ctx context.Context, name string) error
	// Fork creates a stream that starts as a copy of another up to a fork
	// point and continues on its own (see ForkRequest), idempotently like
	// Create.
	Fork(ctx context.Context, name string, req ForkRequest) (info StreamInfo, created bool, err error)
	// List returns streams whose names start with prefix and sort after
	// startAfter, up to limit.
	List(ctx context.Context, prefix, startAfter string, limit int) (ListPage, error)
}

// RedirectError says another node serves the stream.
type RedirectError struct {
	// Address is the node's registered base URL, its main listener's.
	Address string
	// Listeners holds the base URL of each listener by protocol
	// (domain.ProtocolPico, domain.ProtocolDS), nil when the node
	// declared none.
	Listeners map[string]string
}

func (e *RedirectError) Error() string { return "stream is served by " + e.Address }

// To is the base URL a client speaking protocol is redirected to: the
// node's listener for it, "" if it has none, or its Address when it
// declared no listeners.
func (e *RedirectError) To(protocol string) string {
	if e.Listeners == nil {
		return e.Address
	}
	return e.Listeners[protocol]
}

// ForkRequest describes a fork. Offsets below the fork point read the
// source's records; appends to the fork continue from there.
type ForkRequest struct {
	// Source names the stream forked from.
	Source string
	// Config of the fork: an empty content type inherits the source's (a
	// different one is ErrStreamConflict); with no TTL, idle TTL or expiry
	// given the fork inherits the source's.
	Config domain.StreamConfig
	// At is the fork point; nil means the source's tail.
	At *uint64
	// SubOffset refines the fork point past At: for a JSON source, that
	// many more records; otherwise the first SubOffset bytes of the record
	// at At, which become the fork's first own record.
	SubOffset uint64
	// Initial records are appended after the fork point; Close seals the
	// fork.
	Initial []domain.Record
	Close   bool
}
