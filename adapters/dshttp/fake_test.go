package dshttp

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// fakeStreams is an in-memory ports.Streams: enough of the service's rules
// (seal, producers, writer sequences, trim, incarnations, wake-ups) to
// drive every protocol path. Idle expiry is the service's job; the fake
// only counts the accesses that would renew it.
type fakeStreams struct {
	// forks records the fork requests received (the fake creates no fork).
	forks   []ports.ForkRequest
	mu      sync.Mutex
	streams map[string]*fakeStream
	clock   int64
	nextID  uint64
	// owners maps a name to the address Route returns for it.
	owners map[string]string
	// routeErr, when set, is what Route returns.
	routeErr error
	// fail, when set, is returned by every method but Route.
	fail error
	// zeroProducerSeq makes accepted appends report producer sequence 0,
	// as a service that does not track the stamp of a bare close does.
	zeroProducerSeq bool
	// accesses counts, per name, the calls that renew an idle TTL (all
	// but Head and Route).
	accesses map[string]int
}

type fakeStream struct {
	id        uint64
	cfg       domain.StreamConfig
	start     uint64
	records   []domain.Record // records[i] has offset i; below start are dropped
	closed    bool
	created   int64
	producers map[string]*fakeProducer
	writerSeq string
	changed   chan struct{}
}

type fakeProducer struct {
	epoch, seq  uint64
	first, next uint64
}

func newFakeStreams() *fakeStreams {
	return &fakeStreams{streams: map[string]*fakeStream{}, owners: map[string]string{},
		accesses: map[string]int{}, clock: 1_700_000_000_000}
}

// reset forgets every stream (the fuzz target reuses one fake).
func (f *fakeStreams) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, st := range f.streams {
		close(st.changed)
	}
	f.streams = map[string]*fakeStream{}
	f.accesses = map[string]int{}
}

func (st *fakeStream) next() uint64 { return uint64(len(st.records)) }

// wake closes the current Changed channel and arms a new one.
func (st *fakeStream) wake() {
	close(st.changed)
	st.changed = make(chan struct{})
}

func (st *fakeStream) info(name string) ports.StreamInfo {
	return ports.StreamInfo{ID: st.id, Name: name, Config: st.cfg, Start: st.start, Next: st.next(), Closed: st.closed, CreatedMs: st.created}
}

func (f *fakeStreams) Route(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.routeErr != nil {
		return "", f.routeErr
	}
	return f.owners[name], nil
}

// lookup returns the stream or the error every method reports; f.mu is held.
func (f *fakeStreams) lookup(name string) (*fakeStream, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	st, ok := f.streams[name]
	if !ok {
		return nil, ports.Errorf(ports.ErrStreamNotFound, "stream %s not found", name)
	}
	return st, nil
}

// access looks a stream up as a call that renews its idle TTL; f.mu is held.
func (f *fakeStreams) access(name string) (*fakeStream, error) {
	f.accesses[name]++
	return f.lookup(name)
}

func (f *fakeStreams) Create(_ context.Context, name string, cfg domain.StreamConfig, initial []domain.Record, close bool) (ports.StreamInfo, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return ports.StreamInfo{}, false, f.fail
	}
	f.accesses[name]++
	if st, ok := f.streams[name]; ok {
		if !domain.SameContentType(st.cfg.ContentType, cfg.ContentType) || st.cfg.TTLSec != cfg.TTLSec ||
			st.cfg.ExpiresAtMs != cfg.ExpiresAtMs || st.cfg.IdleTTLSec != cfg.IdleTTLSec || st.closed != close {
			err := ports.Errorf(ports.ErrStreamConflict, "stream exists with content type %s", st.cfg.ContentType)
			err.Next, err.HasNext, err.Closed = st.next(), true, st.closed
			return ports.StreamInfo{}, false, err
		}
		return st.info(name), false, nil
	}
	f.clock++
	f.nextID++
	st := &fakeStream{id: f.nextID, cfg: cfg, created: f.clock, producers: map[string]*fakeProducer{}, changed: make(chan struct{})}
	for _, r := range initial {
		r.TimestampMs = f.clock
		st.records = append(st.records, r)
	}
	st.closed = close
	f.streams[name] = st
	return st.info(name), true, nil
}

func (f *fakeStreams) Append(_ context.Context, name string, req ports.AppendRequest) (ports.AppendResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.access(name)
	if err != nil {
		return ports.AppendResult{}, err
	}
	if len(req.Records) == 0 && !req.Close {
		return ports.AppendResult{}, ports.Errorf(ports.ErrBadRequest, "nothing to append")
	}
	if p := req.Producer; p != nil {
		if res, done, err := st.checkProducer(p); done || err != nil {
			return res, err
		}
	}
	if st.closed {
		if len(req.Records) == 0 {
			return ports.AppendResult{First: st.next(), Next: st.next(), Closed: true}, nil
		}
		err := ports.Errorf(ports.ErrStreamClosed, "stream is closed")
		err.Next, err.HasNext, err.Closed = st.next(), true, true
		return ports.AppendResult{}, err
	}
	if req.WriterSeq != "" {
		if req.WriterSeq <= st.writerSeq {
			err := ports.Errorf(ports.ErrWriterSeq, "writer sequence %q is not above %q", req.WriterSeq, st.writerSeq)
			err.WriterSeq = st.writerSeq
			return ports.AppendResult{}, err
		}
		st.writerSeq = req.WriterSeq
	}
	return f.write(st, req), nil
}

// write appends req's records and seal; f.mu is held.
func (f *fakeStreams) write(st *fakeStream, req ports.AppendRequest) ports.AppendResult {
	f.clock++
	res := ports.AppendResult{First: st.next(), TimestampMs: f.clock}
	for _, r := range req.Records {
		r.TimestampMs = f.clock
		st.records = append(st.records, r)
	}
	res.Next = st.next()
	st.closed = st.closed || req.Close
	res.Closed = st.closed
	if p := req.Producer; p != nil {
		st.producers[p.ID] = &fakeProducer{epoch: p.Epoch, seq: p.Seq, first: res.First, next: res.Next}
		if !f.zeroProducerSeq {
			res.ProducerSeq = p.Seq
		}
	}
	st.wake()
	return res
}

// checkProducer applies the idempotent-producer rules: done reports a
// duplicate, acknowledged without writing.
func (st *fakeStream) checkProducer(p *domain.ProducerStamp) (ports.AppendResult, bool, error) {
	last, known := st.producers[p.ID]
	switch {
	case (!known || p.Epoch > last.epoch) && p.Seq != 0:
		err := ports.Errorf(ports.ErrProducerGap, "a new producer epoch must start at sequence 0")
		err.ExpectedSeq, err.ReceivedSeq, err.ProducerNewEpoch = 0, p.Seq, known
		return ports.AppendResult{}, false, err
	case !known || p.Epoch > last.epoch:
		return ports.AppendResult{}, false, nil
	case p.Epoch < last.epoch:
		err := ports.Errorf(ports.ErrProducerFenced, "producer epoch %d is stale; the current one is %d", p.Epoch, last.epoch)
		err.ProducerEpoch = last.epoch
		return ports.AppendResult{}, false, err
	case p.Seq <= last.seq:
		return ports.AppendResult{First: last.first, Next: last.next, Duplicate: true, ProducerSeq: last.seq, Closed: st.closed}, true, nil
	case p.Seq != last.seq+1:
		err := ports.Errorf(ports.ErrProducerGap, "producer sequence gap: expected %d, got %d", last.seq+1, p.Seq)
		err.ExpectedSeq, err.ReceivedSeq = last.seq+1, p.Seq
		return ports.AppendResult{}, false, err
	}
	return ports.AppendResult{}, false, nil
}

func (f *fakeStreams) Trim(_ context.Context, name string, seq uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.access(name)
	if err != nil {
		return 0, err
	}
	seq = min(seq, st.next())
	if seq > st.start {
		for i := st.start; i < seq; i++ {
			st.records[i] = domain.Record{}
		}
		st.start = seq
		st.wake()
	}
	return st.start, nil
}

func (f *fakeStreams) Read(_ context.Context, name string, from uint64, lim ports.ReadLimits) (ports.ReadResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.access(name)
	if err != nil {
		return ports.ReadResult{}, err
	}
	if from > st.next() {
		return ports.ReadResult{}, ports.Errorf(ports.ErrBadRequest, "offset %d is beyond the tail %d", from, st.next())
	}
	from = max(from, st.start)
	res := ports.ReadResult{From: from, Next: from, Tail: st.next(), Closed: st.closed, Config: st.cfg, ID: st.id, Changed: st.changed}
	size := 0
	for i := from; i < st.next(); i++ {
		r := st.records[i]
		if len(res.Records) > 0 && ((lim.Count > 0 && len(res.Records) >= lim.Count) || size+len(r.Body) > lim.Bytes) {
			break
		}
		res.Records = append(res.Records, r)
		size += len(r.Body)
		res.Next = i + 1
	}
	res.UpToDate = res.Next == res.Tail
	return res, nil
}

func (f *fakeStreams) Head(_ context.Context, name string) (ports.StreamInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.lookup(name)
	if err != nil {
		return ports.StreamInfo{}, err
	}
	return st.info(name), nil
}

func (f *fakeStreams) Delete(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.access(name)
	if err != nil {
		return err
	}
	delete(f.streams, name)
	close(st.changed)
	return nil
}

// Fork is not served by this listener yet.
func (f *fakeStreams) Fork(_ context.Context, _ string, req ports.ForkRequest) (ports.StreamInfo, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forks = append(f.forks, req)
	return ports.StreamInfo{}, false, ports.Errorf(ports.ErrBadRequest, "the fake does not fork")
}

func (f *fakeStreams) List(_ context.Context, prefix, startAfter string, limit int) (ports.ListPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return ports.ListPage{}, f.fail
	}
	var names []string
	for name := range f.streams {
		if strings.HasPrefix(name, prefix) && name > startAfter {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var page ports.ListPage
	if len(names) > limit {
		names, page.HasMore = names[:limit], true
	}
	for _, name := range names {
		page.Streams = append(page.Streams, f.streams[name].info(name))
	}
	return page, nil
}

// records returns a copy of a stream's records from start (for assertions).
func (f *fakeStreams) records(name string) []domain.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.streams[name]
	if !ok {
		return nil
	}
	return slices.Clone(st.records[st.start:])
}

// accessCount returns how many TTL-renewing calls name has seen.
func (f *fakeStreams) accessCount(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.accesses[name]
}

var _ ports.Streams = (*fakeStreams)(nil)
