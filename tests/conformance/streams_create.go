package conformance

import (
	"sync"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func streamsCreateCases(t *testing.T, open StreamsOpener) {
	t.Run("CreateMakesAStreamWithItsInitialRecords", func(t *testing.T) { testCreate(t, open) })
	t.Run("CreateAgainWithAnEqualConfigIsIdempotent", func(t *testing.T) { testCreateIdempotent(t, open) })
	t.Run("CreateWithAnotherConfigIsAConflict", func(t *testing.T) { testCreateConflict(t, open) })
	t.Run("CreateClosedSealsTheStream", func(t *testing.T) { testCreateClosed(t, open) })
	t.Run("ConcurrentCreatesMakeOneStream", func(t *testing.T) { testCreateRace(t, open) })
}

func testCreate(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	info := mustCreateStream(ctx, t, s, "/s", textPlain, "a", "b")
	if info.Name != "/s" || info.Start != 0 || info.Next != 2 || info.Closed || info.Config.ContentType != "text/plain" {
		t.Fatalf("Create(/s, 2 records) = %+v, want /s text/plain [0, 2) open", info)
	}
	head := mustHeadStream(ctx, t, s, "/s")
	if head.ID != info.ID || head.Next != 2 || head.Start != 0 {
		t.Fatalf("Head after Create = %+v, want ID %d and [0, 2)", head, info.ID)
	}
	expectBodies(ctx, t, s, "/s", "a", "b")
}

// An equal config is compared as the port's content types are
// (domain.SameContentType), and a repeat's records are not appended.
func testCreateIdempotent(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	first := mustCreateStream(ctx, t, s, "/s", textPlain, "a")
	info, created, err := s.Create(ctx, "/s", domain.StreamConfig{ContentType: "TEXT/plain; charset=utf-8"}, records("ignored"), false)
	if err != nil || created || info.ID != first.ID || info.Next != 1 {
		t.Fatalf("Create again = %+v created=%v %v; want the existing stream (ID %d, next 1), not created", info, created, err, first.ID)
	}
	expectBodies(ctx, t, s, "/s", "a")
}

func testCreateConflict(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain, "a")
	const future = 4_000_000_000_000 // 2096, ahead of any clock under test
	others := map[string]domain.StreamConfig{
		"content type": {ContentType: "application/json"},
		"TTL":          {ContentType: "text/plain", TTLSec: 60},
		"idle TTL":     {ContentType: "text/plain", IdleTTLSec: 60},
		"expiry":       {ContentType: "text/plain", ExpiresAtMs: future},
	}
	for what, cfg := range others {
		_, created, err := s.Create(ctx, "/s", cfg, nil, false)
		se := expectStreamError(t, err, ports.ErrStreamConflict, "Create with another "+what)
		if created || !se.HasNext || se.Next != 1 || se.Closed {
			t.Fatalf("Create with another %s: created=%v %+v; want a conflict reporting next 1, open", what, created, se)
		}
	}
	_, _, err := s.Create(ctx, "/s", textPlain, nil, true)
	if se := expectStreamError(t, err, ports.ErrStreamConflict, "Create closed over an open stream"); !se.HasNext || se.Next != 1 {
		t.Fatalf("Create closed over an open stream: %+v, want next 1", se)
	}
	if head := mustHeadStream(ctx, t, s, "/s"); head.Closed || head.Config.ContentType != "text/plain" {
		t.Fatalf("a refused Create changed the stream: %+v", head)
	}
	expectBodies(ctx, t, s, "/s", "a")
}

func testCreateClosed(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	info, created, err := s.Create(ctx, "/s", textPlain, records("a"), true)
	if err != nil || !created || !info.Closed || info.Next != 1 {
		t.Fatalf("Create closed with 1 record = %+v created=%v %v; want closed at next 1", info, created, err)
	}
	if head := mustHeadStream(ctx, t, s, "/s"); !head.Closed || head.Next != 1 {
		t.Fatalf("Head of a stream created closed = %+v", head)
	}
	_, err = s.Append(ctx, "/s", ports.AppendRequest{Records: records("b")})
	if se := expectStreamError(t, err, ports.ErrStreamClosed, "Append to a stream created closed"); !se.Closed || !se.HasNext || se.Next != 1 {
		t.Fatalf("Append to a stream created closed: %+v, want closed at next 1", se)
	}
	if _, created, err := s.Create(ctx, "/s", textPlain, nil, true); err != nil || created {
		t.Fatalf("Create closed again: created=%v %v; want the existing stream", created, err)
	}
	_, _, err = s.Create(ctx, "/s", textPlain, nil, false)
	if se := expectStreamError(t, err, ports.ErrStreamConflict, "Create open over a closed stream"); !se.Closed || se.Next != 1 {
		t.Fatalf("Create open over a closed stream: %+v, want closed at next 1", se)
	}
	expectBodies(ctx, t, s, "/s", "a")
}

func testCreateRace(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	const creators = 8
	infos, made, errs := make([]ports.StreamInfo, creators), make([]bool, creators), make([]error, creators)
	var wg sync.WaitGroup
	for i := range creators {
		wg.Go(func() { infos[i], made[i], errs[i] = s.Create(ctx, "/s", textPlain, records("a"), false) })
	}
	wg.Wait()
	creations := 0
	for i := range creators {
		if errs[i] != nil {
			t.Fatalf("creator %d: %v", i, errs[i])
		}
		if made[i] {
			creations++
		}
		if infos[i].ID != infos[0].ID {
			t.Fatalf("creators saw streams %d and %d", infos[0].ID, infos[i].ID)
		}
	}
	if creations != 1 {
		t.Fatalf("%d creators were told they created the stream, want 1", creations)
	}
	expectBodies(ctx, t, s, "/s", "a")
}
