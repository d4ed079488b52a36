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
	if err := ports.Unfit(cfg, ports.AppendRequest{Records: initial}); err != nil {
		return ports.StreamInfo{}, false, err
	}
	if st, ok := f.streams[name]; ok {
		if !domain.SameContentType(st.cfg.ContentType, cfg.ContentType) || st.cfg.TTLSec != cfg.TTLSec ||
			st.cfg.ExpiresAtMs != cfg.ExpiresAtMs || st.cfg.IdleTTLSec != cfg.IdleTTLSec || st.write.Sealed != close {
			err := ports.Errorf(ports.ErrStreamConflict, "stream exists with content type %s", st.cfg.ContentType)
			err.Next, err.HasNext, err.Closed = st.next(), true, st.write.Sealed
			return ports.StreamInfo{}, false, err
		}
		return st.info(name), false, nil
	}
	f.clock++
	f.nextID++
	st := &stream{id: f.nextID, cfg: cfg, created: f.clock, changed: make(chan struct{})}
	f.streams[name] = st
	if len(initial) > 0 || close {
		f.write(st, ports.AppendRequest{Records: initial, Close: close}, nil)
	}
	return st.info(name), true, nil
}

func (f *Streams) Append(_ context.Context, name string, req ports.AppendRequest) (ports.AppendResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.access(name)
	if err != nil {
		return ports.AppendResult{}, err
	}
	return f.write(st, req, ports.Unfit(st.cfg, req))
}

// write judges req by the write rules and writes it if they accept it;
// f.mu is held.
func (f *Streams) write(st *stream, req ports.AppendRequest, unfit error) (ports.AppendResult, error) {
	f.clock++
	v := st.write.Decide(req, unfit != nil, f.clock)
	st.write.Accept(req, v)
	if v.Written() {
		for _, r := range req.Records {
			r.TimestampMs = v.TimestampMs
			st.records = append(st.records, r)
		}
		st.wake()
	}
	return ports.AppendOutcome(req, v, unfit)
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
