package dshttp

import (
	"context"
	"sync/atomic"

	"github.com/picomq/pico/adapters/internal/server/streamsfake"
	"github.com/picomq/pico/ports"
)

// fakeStreams is the in-memory service both listeners' tests drive, with a
// knob only Durable Streams tests need.
type fakeStreams struct {
	*streamsfake.Streams
	// zeroProducerSeq makes accepted appends report producer sequence 0,
	// as a service that does not track the stamp of a bare close does.
	zeroProducerSeq bool
	// heads counts Head calls.
	heads atomic.Int64
	// beforeRead, when set, runs before each Read.
	beforeRead func(name string, from uint64)
}

func (f *fakeStreams) Read(ctx context.Context, name string, from uint64, lim ports.ReadLimits) (ports.ReadResult, error) {
	if f.beforeRead != nil {
		f.beforeRead(name, from)
	}
	return f.Streams.Read(ctx, name, from, lim)
}

func (f *fakeStreams) Head(ctx context.Context, name string) (ports.StreamInfo, error) {
	f.heads.Add(1)
	return f.Streams.Head(ctx, name)
}

func newFakeStreams() *fakeStreams { return &fakeStreams{Streams: streamsfake.New()} }

func (f *fakeStreams) Append(ctx context.Context, name string, req ports.AppendRequest) (ports.AppendResult, error) {
	res, err := f.Streams.Append(ctx, name, req)
	if err == nil && f.zeroProducerSeq && !res.Duplicate {
		res.ProducerSeq = 0
	}
	return res, err
}
