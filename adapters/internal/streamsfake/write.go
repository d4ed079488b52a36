package streamsfake

import (
	"context"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func (f *Streams) Create(_ context.Context, name string, cfg domain.StreamConfig, initial []domain.Record, close bool) (ports.StreamInfo, bool, error) {
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
	st := &stream{id: f.nextID, cfg: cfg, created: f.clock, producers: map[string]*producer{}, changed: make(chan struct{})}
	for _, r := range initial {
		r.TimestampMs = f.clock
		st.records = append(st.records, r)
	}
	st.closed = close
	f.streams[name] = st
	return st.info(name), true, nil
}

func (f *Streams) Append(_ context.Context, name string, req ports.AppendRequest) (ports.AppendResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.access(name)
	if err != nil {
		return ports.AppendResult{}, err
	}
	if req.ContentType != "" && !domain.SameContentType(req.ContentType, st.cfg.ContentType) {
		if st.closed {
			err := ports.Errorf(ports.ErrStreamClosed, "stream is closed")
			err.Next, err.HasNext, err.Closed = st.next(), true, true
			return ports.AppendResult{}, err
		}
		return ports.AppendResult{}, ports.Errorf(ports.ErrStreamConflict, "Content-Type %s does not match the stream's %s", req.ContentType, st.cfg.ContentType)
	}
	return f.appendChecked(st, req)
}

// appendChecked is Append once the stream is found and the content type
// matches; f.mu is held.
func (f *Streams) appendChecked(st *stream, req ports.AppendRequest) (ports.AppendResult, error) {
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
	if req.MatchNext != nil && *req.MatchNext != st.next() {
		err := ports.Errorf(ports.ErrMatchFailed, "match failed: expected tail %d, actual %d", *req.MatchNext, st.next())
		err.Next, err.HasNext = st.next(), true
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
func (f *Streams) write(st *stream, req ports.AppendRequest) ports.AppendResult {
	f.clock++
	res := ports.AppendResult{First: st.next(), TimestampMs: f.clock}
	for _, r := range req.Records {
		r.TimestampMs = f.clock
		st.records = append(st.records, r)
	}
	res.Next = st.next()
	if req.Close && !st.closed {
		st.closed, st.closer = true, domain.Closer{Known: true, Producer: req.Producer}
	}
	res.Closed = st.closed
	if p := req.Producer; p != nil {
		st.producers[p.ID] = &producer{epoch: p.Epoch, seq: p.Seq, first: res.First, next: res.Next}
		res.ProducerSeq = p.Seq
	}
	st.wake()
	return res
}

// checkProducer applies the idempotent-producer rules: done reports a
// duplicate, acknowledged without writing.
func (st *stream) checkProducer(p *domain.ProducerStamp) (ports.AppendResult, bool, error) {
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
		return ports.AppendResult{First: last.first, Next: last.next, Duplicate: true, ProducerSeq: last.seq, Closed: st.closed,
			NotTheClose: st.closed && !st.closer.RepeatedBy(p)}, true, nil
	case p.Seq != last.seq+1:
		err := ports.Errorf(ports.ErrProducerGap, "producer sequence gap: expected %d, got %d", last.seq+1, p.Seq)
		err.ExpectedSeq, err.ReceivedSeq = last.seq+1, p.Seq
		return ports.AppendResult{}, false, err
	}
	return ports.AppendResult{}, false, nil
}

func (f *Streams) Trim(_ context.Context, name string, seq uint64) (uint64, error) {
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

func (f *Streams) Delete(_ context.Context, name string) error {
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

// Fork records the request and refuses it: the fake does not copy streams.
func (f *Streams) Fork(_ context.Context, _ string, req ports.ForkRequest) (ports.StreamInfo, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forks = append(f.forks, req)
	return ports.StreamInfo{}, false, ports.Errorf(ports.ErrBadRequest, "the fake does not fork")
}
