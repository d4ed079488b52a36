package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// StreamsOpener returns a fresh implementation with no streams, serving
// every stream itself (Route answers ""), and the clock it reads, or nil
// when it reads none the suite can set. It registers any cleanup with
// t.Cleanup.
type StreamsOpener func(t *testing.T) (ports.Streams, *Clock)

// StreamsFeatures declares what an implementation does beyond the core of
// the port. The cases of a feature it lacks are not run, so they are
// neither reported as passed nor as skipped.
type StreamsFeatures struct {
	// Forks: Fork makes forks, and Delete of a forked source keeps it
	// soft-deleted until its forks are gone.
	Forks bool
	// Clock: record timestamps, idle TTLs and expiries follow the clock the
	// opener returns.
	Clock bool
}

// Streams runs the ports.Streams suite: the contract the port's doc
// comments state, case by case, each on a fresh implementation.
func Streams(t *testing.T, open StreamsOpener, has StreamsFeatures) {
	streamsCreateCases(t, open)
	streamsAppendCases(t, open)
	streamsProducerCases(t, open)
	streamsConditionCases(t, open)
	streamsCloseCases(t, open)
	streamsReadCases(t, open)
	streamsNameCases(t, open)
	t.Run("JSONStreamRefusesRecordsThatAreNotOneJSONValue", func(t *testing.T) { testJSONRecords(t, open) })
	if has.Forks {
		streamsForkCases(t, open)
	}
	if has.Clock {
		streamsClockCases(t, open)
	}
}

// openStreams opens a fresh implementation for a case that needs no clock.
func openStreams(t *testing.T, open StreamsOpener) ports.Streams {
	s, _ := open(t)
	return s
}

// textPlain is the config of most streams in the suite.
var textPlain = domain.StreamConfig{ContentType: "text/plain"}

func records(bodies ...string) []domain.Record {
	out := make([]domain.Record, len(bodies))
	for i, b := range bodies {
		out[i] = domain.Record{Body: []byte(b)}
	}
	return out
}

func bodiesOf(rs []domain.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Body)
	}
	return out
}

// numbered returns bodies "r<from>" .. "r<to-1>": a record's body names its
// offset, so a page read from anywhere can be checked.
func numbered(from, to uint64) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("r%d", i))
	}
	return out
}

func mustCreateStream(ctx context.Context, t *testing.T, s ports.Streams, name string, cfg domain.StreamConfig, initial ...string) ports.StreamInfo {
	t.Helper()
	info, created, err := s.Create(ctx, name, cfg, records(initial...), false)
	if err != nil || !created {
		t.Fatalf("Create(%s): created=%v %v", name, created, err)
	}
	return info
}

func mustAppend(ctx context.Context, t *testing.T, s ports.Streams, name string, req ports.AppendRequest) ports.AppendResult {
	t.Helper()
	res, err := s.Append(ctx, name, req)
	if err != nil {
		t.Fatalf("Append(%s, %d records): %v", name, len(req.Records), err)
	}
	return res
}

func mustAppendBodies(ctx context.Context, t *testing.T, s ports.Streams, name string, bodies ...string) ports.AppendResult {
	t.Helper()
	return mustAppend(ctx, t, s, name, ports.AppendRequest{Records: records(bodies...)})
}

func mustHeadStream(ctx context.Context, t *testing.T, s ports.Streams, name string) ports.StreamInfo {
	t.Helper()
	info, err := s.Head(ctx, name)
	if err != nil {
		t.Fatalf("Head(%s): %v", name, err)
	}
	return info
}

func mustReadStream(ctx context.Context, t *testing.T, s ports.Streams, name string, from uint64, lim ports.ReadLimits) ports.ReadResult {
	t.Helper()
	page, err := s.Read(ctx, name, from, lim)
	if err != nil {
		t.Fatalf("Read(%s, %d, %+v): %v", name, from, lim, err)
	}
	return page
}

// maxPages bounds readAll, so an implementation that never reports
// UpToDate fails instead of looping.
const maxPages = 1000

// readAll reads a stream page by page from offset 0 to its tail and
// returns the offset of the first record read and every record.
func readAll(ctx context.Context, t *testing.T, s ports.Streams, name string) (uint64, []domain.Record) {
	t.Helper()
	page := mustReadStream(ctx, t, s, name, 0, ports.ReadLimits{})
	first, recs := page.From, page.Records
	for range maxPages {
		if page.UpToDate {
			return first, recs
		}
		if page.Next <= page.From {
			t.Fatalf("Read(%s, %d) made no progress and is not up to date: %+v", name, page.From, page)
		}
		page = mustReadStream(ctx, t, s, name, page.Next, ports.ReadLimits{})
		recs = append(recs, page.Records...)
	}
	t.Fatalf("Read(%s) not up to date after %d pages", name, maxPages)
	return 0, nil
}

// expectBodies checks a stream holds exactly want, from offset 0.
func expectBodies(ctx context.Context, t *testing.T, s ports.Streams, name string, want ...string) {
	t.Helper()
	from, recs := readAll(ctx, t, s, name)
	if got := bodiesOf(recs); from != 0 || !slices.Equal(got, want) {
		t.Fatalf("%s holds %q from offset %d, want %q from 0", name, got, from, want)
	}
}

// expectStreamError checks err is of kind, as a *ports.StreamError, and
// returns it for its details.
func expectStreamError(t *testing.T, err, kind error, call string) *ports.StreamError {
	t.Helper()
	var se *ports.StreamError
	if !errors.Is(err, kind) || !errors.As(err, &se) {
		t.Fatalf("%s = %v, want a *ports.StreamError of kind %q", call, err, kind)
	}
	return se
}

// expectErrorIs checks err wraps kind, when its details do not matter.
func expectErrorIs(t *testing.T, err, kind error, call string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s = %v, want %q", call, err, kind)
	}
}

// expectChanged waits, bounded by wakeWait, for a read's Changed channel to
// close after what.
func expectChanged(ctx context.Context, t *testing.T, changed <-chan struct{}, what string) {
	t.Helper()
	if changed == nil {
		t.Fatalf("a read returned no Changed channel")
	}
	ctx, cancel := context.WithTimeout(ctx, wakeWait)
	defer cancel()
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatalf("Changed still open %v after %s", wakeWait, what)
	}
}

// expectUnchanged checks a read's Changed channel is still open: the stream
// has not changed since.
func expectUnchanged(t *testing.T, changed <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-changed:
		t.Fatalf("Changed is closed %s, with no change to the stream", what)
	default:
	}
}
