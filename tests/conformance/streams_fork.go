package conformance

import (
	"context"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func streamsForkCases(t *testing.T, open StreamsOpener) {
	t.Run("ForkReadsTheSourceBelowTheForkPoint", func(t *testing.T) { testForkReads(t, open) })
	t.Run("ForkAgainIsIdempotentAnotherForkIsAConflict", func(t *testing.T) { testForkIdempotent(t, open) })
	t.Run("ForkDefaultsToTheSourceTailAndConfig", func(t *testing.T) { testForkDefaults(t, open) })
	t.Run("ForkSubOffsetCutsARecordOrCountsJSONRecords", func(t *testing.T) { testForkSubOffset(t, open) })
	t.Run("ForkOfAMissingSourceOrBeyondItsTailIsRefused", func(t *testing.T) { testForkRefused(t, open) })
	t.Run("DeleteOfAForkedSourceIsSoftUntilItsForksAreGone", func(t *testing.T) { testForkSoftDelete(t, open) })
}

func offset(v uint64) *uint64 { return &v }

func mustFork(ctx context.Context, t *testing.T, s ports.Streams, name string, req ports.ForkRequest) ports.StreamInfo {
	t.Helper()
	info, created, err := s.Fork(ctx, name, req)
	if err != nil || !created {
		t.Fatalf("Fork(%s, %+v): created=%v %v", name, req, created, err)
	}
	return info
}

// A fork's offsets continue from the fork point: below it, the source's
// records; later appends to either stream stay their own.
func testForkReads(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/src", textPlain, "s0", "s1", "s2")
	info := mustFork(ctx, t, s, "/f", ports.ForkRequest{Source: "/src", At: offset(2), Initial: records("f2")})
	if info.Next != 3 || info.Closed || info.Config.ContentType != "text/plain" {
		t.Fatalf("Fork at 2 with one record = %+v, want next 3, open, text/plain", info)
	}
	mustAppendBodies(ctx, t, s, "/src", "s3")
	if res := mustAppendBodies(ctx, t, s, "/f", "f3"); res.First != 3 {
		t.Fatalf("Append to the fork = %+v, want first 3", res)
	}
	expectBodies(ctx, t, s, "/f", "s0", "s1", "f2", "f3")
	expectBodies(ctx, t, s, "/src", "s0", "s1", "s2", "s3")
	closed := mustFork(ctx, t, s, "/g", ports.ForkRequest{Source: "/src", At: offset(1), Close: true})
	if !closed.Closed || closed.Next != 1 {
		t.Fatalf("Fork closed at 1 = %+v, want closed at next 1", closed)
	}
	_, err := s.Append(ctx, "/g", ports.AppendRequest{Records: records("x")})
	expectStreamError(t, err, ports.ErrStreamClosed, "Append to a fork made closed")
}

func testForkIdempotent(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/src", textPlain, "s0", "s1")
	first := mustFork(ctx, t, s, "/f", ports.ForkRequest{Source: "/src", At: offset(1)})
	info, created, err := s.Fork(ctx, "/f", ports.ForkRequest{Source: "/src", At: offset(1)})
	if err != nil || created || info.ID != first.ID {
		t.Fatalf("Fork again = %+v created=%v %v; want the existing fork %d", info, created, err, first.ID)
	}
	mustCreateStream(ctx, t, s, "/other", textPlain)
	for _, c := range []struct {
		what, name string
		req        ports.ForkRequest
	}{
		{"at another point", "/f", ports.ForkRequest{Source: "/src", At: offset(0)}},
		{"of another source", "/f", ports.ForkRequest{Source: "/other"}},
		{"with another content type", "/f", ports.ForkRequest{Source: "/src", At: offset(1), Config: domain.StreamConfig{ContentType: "application/json"}}},
		{"with a TTL the fork lacks", "/f", ports.ForkRequest{Source: "/src", At: offset(1), Config: domain.StreamConfig{TTLSec: 60}}},
		{"closed over an open fork", "/f", ports.ForkRequest{Source: "/src", At: offset(1), Close: true}},
		{"over a stream that is no fork", "/other", ports.ForkRequest{Source: "/src", At: offset(1)}},
	} {
		_, _, err := s.Fork(ctx, c.name, c.req)
		expectStreamError(t, err, ports.ErrStreamConflict, "Fork "+c.what)
	}
	_, _, err = s.Create(ctx, "/f", textPlain, nil, false)
	expectStreamError(t, err, ports.ErrStreamConflict, "Create over a fork")
	expectBodies(ctx, t, s, "/f", "s0")
}

func testForkDefaults(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	cfg := domain.StreamConfig{ContentType: "text/plain", TTLSec: 3600}
	mustCreateStream(ctx, t, s, "/src", cfg, "s0", "s1")
	info := mustFork(ctx, t, s, "/f", ports.ForkRequest{Source: "/src"})
	if info.Next != 2 || info.Config.ContentType != "text/plain" || info.Config.TTLSec != 3600 {
		t.Fatalf("Fork at no point = %+v, want next 2 with the source's content type and TTL", info)
	}
	mustAppendBodies(ctx, t, s, "/src", "s2") // the fork point stays 2
	if _, created, err := s.Fork(ctx, "/f", ports.ForkRequest{Source: "/src"}); err != nil || created {
		t.Fatalf("Fork again at no point: created=%v %v; want the existing fork", created, err)
	}
	expectBodies(ctx, t, s, "/f", "s0", "s1")
}

// A sub-offset into a JSON source counts records past the fork point; into
// any other, it keeps that many bytes of the record there as the fork's
// first own record.
func testForkSubOffset(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/src", textPlain, "s0", "hello")
	if info := mustFork(ctx, t, s, "/f", ports.ForkRequest{Source: "/src", At: offset(1), SubOffset: 3}); info.Next != 2 {
		t.Fatalf("Fork at 1 + 3 bytes = %+v, want next 2", info)
	}
	expectBodies(ctx, t, s, "/f", "s0", "hel")
	mustCreateStream(ctx, t, s, "/j", domain.StreamConfig{ContentType: "application/json"}, `1`, `2`, `3`)
	if info := mustFork(ctx, t, s, "/jf", ports.ForkRequest{Source: "/j", At: offset(0), SubOffset: 2}); info.Next != 2 {
		t.Fatalf("JSON fork at 0 + 2 records = %+v, want next 2", info)
	}
	expectBodies(ctx, t, s, "/jf", `1`, `2`)
	for what, req := range map[string]ports.ForkRequest{
		"past the record's bytes": {Source: "/src", At: offset(1), SubOffset: 6},
		"past the JSON records":   {Source: "/j", At: offset(0), SubOffset: 4},
	} {
		_, _, err := s.Fork(ctx, "/bad", req)
		expectErrorIs(t, err, ports.ErrBadRequest, "Fork with a sub-offset "+what)
	}
}

func testForkRefused(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/src", textPlain, "s0")
	_, _, err := s.Fork(ctx, "/f", ports.ForkRequest{Source: "/missing"})
	expectErrorIs(t, err, ports.ErrStreamNotFound, "Fork of a missing source")
	_, _, err = s.Fork(ctx, "/f", ports.ForkRequest{Source: "/src", At: offset(2)})
	expectErrorIs(t, err, ports.ErrBadRequest, "Fork beyond the source's tail")
	_, err = s.Head(ctx, "/f")
	expectErrorIs(t, err, ports.ErrStreamNotFound, "Head after refused forks")
}

// A deleted source with forks answers gone while its fork still reads its
// records; once the last fork is deleted the source is gone for good.
func testForkSoftDelete(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/src", textPlain, "s0", "s1")
	mustFork(ctx, t, s, "/f", ports.ForkRequest{Source: "/src"})
	if err := s.Delete(ctx, "/src"); err != nil {
		t.Fatalf("Delete of a forked source: %v", err)
	}
	_, err := s.Head(ctx, "/src")
	expectErrorIs(t, err, ports.ErrStreamGone, "Head of a deleted source with a fork")
	_, err = s.Read(ctx, "/src", 0, ports.ReadLimits{})
	expectErrorIs(t, err, ports.ErrStreamGone, "Read of a deleted source with a fork")
	expectBodies(ctx, t, s, "/f", "s0", "s1")
	if err := s.Delete(ctx, "/f"); err != nil {
		t.Fatalf("Delete of the fork: %v", err)
	}
	_, err = s.Head(ctx, "/src")
	expectErrorIs(t, err, ports.ErrStreamNotFound, "Head of the source after its last fork is deleted")
	mustCreateStream(ctx, t, s, "/src", textPlain)
}
