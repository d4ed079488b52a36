package streams

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func TestCreateIsIdempotentAndReportsConflicts(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	info, created, err := p.svc.Create(ctx, "/s", text(), recs("first"), false)
	if err != nil || !created || info.Next != 1 {
		t.Fatalf("create with a body: %+v created=%v %v", info, created, err)
	}
	info, created, err = p.svc.Create(ctx, "/s", domain.StreamConfig{ContentType: "TEXT/plain; charset=utf-8"}, recs("ignored"), false)
	if err != nil || created || info.Next != 1 {
		t.Fatalf("same config again: %+v created=%v %v (the body of a repeat is not appended)", info, created, err)
	}
	_, _, err = p.svc.Create(ctx, "/s", domain.StreamConfig{ContentType: "application/json"}, nil, false)
	if se := streamErr(t, err, ports.ErrStreamConflict); !se.HasNext || se.Next != 1 {
		t.Fatalf("conflict without the tail: %+v", se)
	}
	_, _, err = p.svc.Create(ctx, "/s", domain.StreamConfig{ContentType: "text/plain", TTLSec: 5}, nil, false)
	streamErr(t, err, ports.ErrStreamConflict)
	_, _, err = p.svc.Create(ctx, "/s", text(), nil, true)
	streamErr(t, err, ports.ErrStreamConflict)
}

func TestAppendReadHeadAndLimits(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/s")
	if r := mustAppend(t, p, "/s", "a", "bb", "ccc"); r.First != 0 || r.Next != 3 || r.TimestampMs != p.clock.Now().UnixMilli() {
		t.Fatalf("append: %+v", r)
	}
	p.clock.advance(time.Second)
	if r := mustAppend(t, p, "/s", "d"); r.First != 3 || r.Next != 4 {
		t.Fatalf("second append: %+v", r)
	}
	page, err := p.svc.Read(ctx, "/s", 1, ports.ReadLimits{Bytes: 3})
	if err != nil || fmt.Sprint(bodies(page.Records)) != "[bb]" || page.From != 1 || page.Next != 2 || page.UpToDate {
		t.Fatalf("3-byte read from 1: %+v %v", page, err)
	}
	page, err = p.svc.Read(ctx, "/s", 0, ports.ReadLimits{Count: 10})
	if err != nil || len(page.Records) != 4 || !page.UpToDate || page.Tail != 4 || page.Closed {
		t.Fatalf("full read: %+v %v", page, err)
	}
	if page.Records[0].TimestampMs >= page.Records[3].TimestampMs {
		t.Fatalf("timestamps not increasing: %d then %d", page.Records[0].TimestampMs, page.Records[3].TimestampMs)
	}
	page, err = p.svc.Read(ctx, "/s", 0, ports.ReadLimits{Bytes: 1})
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("a read returns at least one record: %+v %v", page, err)
	}
	_, err = p.svc.Read(ctx, "/s", 5, ports.ReadLimits{})
	streamErr(t, err, ports.ErrBadRequest)
	info, err := p.svc.Head(ctx, "/s")
	if err != nil || info.Next != 4 || info.Start != 0 || info.Config.ContentType != "text/plain" {
		t.Fatalf("head: %+v %v", info, err)
	}
	_, err = p.svc.Head(ctx, "/missing")
	streamErr(t, err, ports.ErrStreamNotFound)
	_, err = p.svc.Append(ctx, "/missing", ports.AppendRequest{Records: recs("x")})
	streamErr(t, err, ports.ErrStreamNotFound)
}

// ReadTail reads at the tail in one call: an empty page there, even if the
// stream grows right after.
func TestReadTail(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/s")
	mustAppend(t, p, "/s", "a", "b")
	page, err := p.svc.ReadTail(ctx, "/s")
	if err != nil || len(page.Records) != 0 || page.From != 2 || page.Next != 2 || page.Tail != 2 || !page.UpToDate {
		t.Fatalf("read from the tail: %+v %v", page, err)
	}
	mustAppend(t, p, "/s", "c")
	select {
	case <-page.Changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the page read at the tail was not told of the next append")
	}
	_, err = p.svc.ReadTail(ctx, "/missing")
	streamErr(t, err, ports.ErrStreamNotFound)
}

func TestSealRefusesAppendsAndWakesReaders(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/s")
	mustAppend(t, p, "/s", "a")
	page, err := p.svc.Read(ctx, "/s", 1, ports.ReadLimits{})
	if err != nil || len(page.Records) != 0 || page.Closed {
		t.Fatalf("caught-up read: %+v %v", page, err)
	}
	r, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("last"), Close: true})
	if err != nil || !r.Closed || r.Next != 2 {
		t.Fatalf("append and close: %+v %v", r, err)
	}
	select {
	case <-page.Changed:
	case <-time.After(5 * time.Second):
		t.Fatal("a waiting reader was not woken by the closing append")
	}
	_, err = p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("late")})
	if se := streamErr(t, err, ports.ErrStreamClosed); se.Next != 2 || !se.Closed {
		t.Fatalf("append after close: %+v", se)
	}
	if r, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Close: true}); err != nil || !r.Closed || r.Next != 2 {
		t.Fatalf("closing again is idempotent: %+v %v", r, err)
	}
	page, err = p.svc.Read(ctx, "/s", 0, ports.ReadLimits{})
	if err != nil || !page.Closed || fmt.Sprint(bodies(page.Records)) != "[a last]" {
		t.Fatalf("read of a closed stream: %+v %v", page, err)
	}
	if info, _ := p.svc.Head(ctx, "/s"); !info.Closed {
		t.Fatal("head does not report the seal")
	}
	v := p.plane.View()
	if st, _ := v.StreamByName("/s"); !st.Sealed {
		t.Fatal("the seal is not in the metadata")
	}
}

// An append that names its content type is checked against the stream's,
// by the stream's identity: a stream deleted and created again with another
// type refuses records meant for the first.
func TestAppendContentTypeIsChecked(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/s") // text/plain
	r, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("a"), ContentType: "TEXT/plain; charset=utf-8"})
	if err != nil || r.Next != 1 {
		t.Fatalf("matching append: %+v %v", r, err)
	}
	_, err = p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("{}"), ContentType: "application/json"})
	streamErr(t, err, ports.ErrStreamConflict)
	if err := p.svc.Delete(ctx, "/s"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.svc.Create(ctx, "/s", domain.StreamConfig{ContentType: "application/json"}, nil, false); err != nil {
		t.Fatal(err)
	}
	_, err = p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("raw"), ContentType: "text/plain"})
	streamErr(t, err, ports.ErrStreamConflict)
	// Closure comes first.
	if _, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("1"), Close: true}); err != nil {
		t.Fatal(err)
	}
	_, err = p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("raw"), ContentType: "text/plain"})
	if se := streamErr(t, err, ports.ErrStreamClosed); !se.Closed || se.Next != 1 {
		t.Fatalf("mismatched append to a closed stream: %+v", se)
	}
}

func TestBareCloseWakesAWaitingReader(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/s")
	page, _ := p.svc.Read(ctx, "/s", 0, ports.ReadLimits{})
	if _, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Close: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-page.Changed:
	case <-time.After(5 * time.Second):
		t.Fatal("close without records did not wake the reader")
	}
	if page, _ := p.svc.Read(ctx, "/s", 0, ports.ReadLimits{}); !page.Closed {
		t.Fatal("closed empty stream not reported closed")
	}
}

func TestConditionalAndProducerAppends(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/s")
	mustAppend(t, p, "/s", "a")
	wrong, right := uint64(0), uint64(1)
	_, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("b"), MatchNext: &wrong})
	if se := streamErr(t, err, ports.ErrMatchFailed); se.Next != 1 {
		t.Fatalf("match failure reports next %d", se.Next)
	}
	if _, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("b"), MatchNext: &right}); err != nil {
		t.Fatal(err)
	}
	stamp := func(epoch, seq uint64) *domain.ProducerStamp {
		return &domain.ProducerStamp{ID: "p", Epoch: epoch, Seq: seq}
	}
	r, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("c"), Producer: stamp(1, 0)})
	if err != nil || r.Duplicate || r.First != 2 {
		t.Fatalf("first producer append: %+v %v", r, err)
	}
	r, err = p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("c"), Producer: stamp(1, 0)})
	if err != nil || !r.Duplicate || r.First != 2 || r.ProducerSeq != 0 {
		t.Fatalf("repeat: %+v %v", r, err)
	}
	_, err = p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("e"), Producer: stamp(1, 5)})
	if se := streamErr(t, err, ports.ErrProducerGap); se.Write.Expected != 1 || se.Write.Received != 5 {
		t.Fatalf("gap: %+v", se)
	}
	if _, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("f"), Producer: stamp(2, 0)}); err != nil {
		t.Fatal(err)
	}
	_, err = p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("g"), Producer: stamp(1, 1)})
	if se := streamErr(t, err, ports.ErrProducerFenced); se.Write.Epoch != 2 {
		t.Fatalf("fenced: %+v", se)
	}
	page, _ := p.svc.Read(ctx, "/s", 0, ports.ReadLimits{})
	if fmt.Sprint(bodies(page.Records)) != "[a b c f]" {
		t.Fatalf("stream holds %v", bodies(page.Records))
	}
}

func TestProducerCloseReplayIsAcknowledged(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/s")
	req := ports.AppendRequest{Records: recs("x"), Producer: &domain.ProducerStamp{ID: "p", Epoch: 1}, Close: true}
	if _, err := p.svc.Append(ctx, "/s", req); err != nil {
		t.Fatal(err)
	}
	r, err := p.svc.Append(ctx, "/s", req)
	if err != nil || !r.Duplicate || !r.Closed {
		t.Fatalf("replayed closing append: %+v %v", r, err)
	}
}

func TestTrimListAndDelete(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	for _, n := range []string{"/a/1", "/a/2", "/a/3", "/b/1"} {
		mustCreate(t, p, n)
	}
	mustAppend(t, p, "/a/1", "0", "1", "2", "3")
	start, err := p.svc.Trim(ctx, "/a/1", 2)
	if err != nil || start != 2 {
		t.Fatalf("trim to 2: start %d %v", start, err)
	}
	if start, _ := p.svc.Trim(ctx, "/a/1", 99); start != 4 {
		t.Fatalf("trim past the tail is clamped to it: %d", start)
	}
	page, err := p.svc.Read(ctx, "/a/1", 0, ports.ReadLimits{})
	if err != nil || page.From != 4 || len(page.Records) != 0 {
		t.Fatalf("read below the start: %+v %v", page, err)
	}
	list, err := p.svc.List(ctx, "/a/", "/a/1", 1)
	if err != nil || len(list.Streams) != 1 || list.Streams[0].Name != "/a/2" || !list.HasMore {
		t.Fatalf("list page: %+v %v", list, err)
	}
	list, _ = p.svc.List(ctx, "/a/", "/a/2", 10)
	if len(list.Streams) != 1 || list.Streams[0].Name != "/a/3" || list.HasMore {
		t.Fatalf("last page: %+v", list)
	}
	reader, _ := p.svc.Read(ctx, "/a/2", 0, ports.ReadLimits{})
	if err := p.svc.Delete(ctx, "/a/2"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reader.Changed:
	case <-time.After(5 * time.Second):
		t.Fatal("delete did not wake a waiting reader")
	}
	streamErr(t, p.svc.Delete(ctx, "/a/2"), ports.ErrStreamNotFound)
	if _, created, err := p.svc.Create(ctx, "/a/2", domain.StreamConfig{ContentType: "application/json"}, nil, false); err != nil || !created {
		t.Fatalf("name not reusable after delete: %v %v", created, err)
	}
}

func TestRetentionTrimsOldRecordsAndExpiryDeletes(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	if _, _, err := p.svc.Create(ctx, "/ttl", domain.StreamConfig{ContentType: "text/plain", TTLSec: 60}, nil, false); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, p, "/ttl", "old1", "old2")
	p.clock.advance(45 * time.Second)
	mustAppend(t, p, "/ttl", "young")
	p.clock.advance(30 * time.Second) // old ones are 75 s old, the young one 30 s
	p.svc.sweepLocal(ctx)
	page, err := p.svc.Read(ctx, "/ttl", 0, ports.ReadLimits{})
	if err != nil || page.From != 2 || fmt.Sprint(bodies(page.Records)) != "[young]" {
		t.Fatalf("after retention: %+v %v", page, err)
	}
	expires := p.clock.Now().Add(10 * time.Second).UnixMilli()
	if _, _, err := p.svc.Create(ctx, "/exp", domain.StreamConfig{ContentType: "text/plain", ExpiresAtMs: expires}, nil, false); err != nil {
		t.Fatal(err)
	}
	p.clock.advance(11 * time.Second)
	_, err = p.svc.Head(ctx, "/exp")
	streamErr(t, err, ports.ErrStreamNotFound)
	p.svc.sweepLocal(ctx)
	v := p.plane.View()
	if _, ok := v.StreamByName("/exp"); ok {
		t.Fatal("expired stream not deleted by the sweep")
	}
}

func TestRoutingAndRevivalAcrossNodes(t *testing.T) {
	log, store, c := memlogAndStore()
	a := start(t, log, store, 1, c)
	b := start(t, log, store, 2, c)
	ctx := context.Background()
	mustCreate(t, a, "/s")
	mustAppend(t, a, "/s", "a")
	if err := b.plane.WaitFor(ctx, a.plane.Applied()); err != nil {
		t.Fatal(err)
	}
	if addr := routedTo(t, b, "/s"); addr != "http://node1" {
		t.Fatalf("node 2 routes /s to %q, want node 1", addr)
	}
	if addr := routedTo(t, a, "/s"); addr != "" {
		t.Fatalf("the owner routes /s to %q", addr)
	}
	_, err := b.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("b")})
	var re *ports.RedirectError
	if !errors.As(err, &re) || re.Address != "http://node1" {
		t.Fatalf("append on a non-owner: %v, want a redirect", err)
	}
	st, _ := a.svc.find("/s")
	if err := a.engine.Close(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.plane.WaitFor(ctx, a.plane.Applied()); err != nil {
		t.Fatal(err)
	}
	if addr := routedTo(t, b, "/s"); addr != "" {
		t.Fatalf("a closed stream routes to %q, want here", addr)
	}
	if r := mustAppend(t, b, "/s", "b"); r.First != 1 {
		t.Fatalf("revived append: %+v", r)
	}
	page, _ := b.svc.Read(ctx, "/s", 0, ports.ReadLimits{})
	if fmt.Sprint(bodies(page.Records)) != "[a b]" {
		t.Fatalf("revived stream holds %v", bodies(page.Records))
	}
}

// TestReadPageSpansDataObjects reads records committed in separate data
// objects, on a process that has none of them in memory: one read returns
// them all.
func TestReadPageSpansDataObjects(t *testing.T) {
	log, store, c := memlogAndStore()
	a := start(t, log, store, 1, c)
	ctx := context.Background()
	mustCreate(t, a, "/s")
	for _, body := range []string{"a", "b", "c"} {
		mustAppend(t, a, "/s", body)
		if _, err := a.engine.Upload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.engine.CloseAll(ctx); err != nil {
		t.Fatal(err)
	}
	b := start(t, log, store, 2, c)
	if err := b.plane.WaitFor(ctx, a.plane.Applied()); err != nil {
		t.Fatal(err)
	}
	v := b.plane.View()
	st, _ := v.StreamByName("/s")
	if st.Objects.Len() != 3 {
		t.Fatalf("want the records in 3 data objects, have %d", st.Objects.Len())
	}
	page, err := b.svc.Read(ctx, "/s", 0, ports.ReadLimits{})
	if err != nil || fmt.Sprint(bodies(page.Records)) != "[a b c]" || !page.UpToDate {
		t.Fatalf("one read across objects: %v up-to-date=%v %v", bodies(page.Records), page.UpToDate, err)
	}
}

func TestIdleTTLSlidesWithReadsAndWritesNotHead(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	idle := domain.StreamConfig{ContentType: "text/plain", IdleTTLSec: 2}
	for _, name := range []string{"/renewed", "/headed"} {
		if _, _, err := p.svc.Create(ctx, name, idle, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	p.clock.advance(1500 * time.Millisecond)
	if _, err := p.svc.Read(ctx, "/renewed", 0, ports.ReadLimits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.svc.Head(ctx, "/headed"); err != nil {
		t.Fatal(err)
	}
	p.clock.advance(1500 * time.Millisecond) // 3 s after create, 1.5 s after the read
	if _, err := p.svc.Head(ctx, "/renewed"); err != nil {
		t.Fatalf("a read did not renew the idle TTL: %v", err)
	}
	_, err := p.svc.Head(ctx, "/headed")
	streamErr(t, err, ports.ErrStreamNotFound)
	mustAppend(t, p, "/renewed", "x") // a write renews too
	p.clock.advance(1900 * time.Millisecond)
	if _, err := p.svc.Head(ctx, "/renewed"); err != nil {
		t.Fatalf("a write did not renew the idle TTL: %v", err)
	}
	p.clock.advance(200 * time.Millisecond)
	_, err = p.svc.Head(ctx, "/renewed")
	streamErr(t, err, ports.ErrStreamNotFound)
	if _, created, err := p.svc.Create(ctx, "/renewed", idle, nil, false); err != nil || !created {
		t.Fatalf("re-creating an expired stream: created=%v %v", created, err)
	}
}

func TestWriterSequenceMustIncrease(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/s")
	for _, seq := range []string{"09", "10"} {
		if _, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs(seq), WriterSeq: seq}); err != nil {
			t.Fatalf("writer seq %s: %v", seq, err)
		}
	}
	_, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("x"), WriterSeq: "1"}) // bytewise below "10"
	if se := streamErr(t, err, ports.ErrWriterSeq); se.Write.LastWriterSeq != "10" || se.Next != 2 {
		t.Fatalf("regression: %+v", se)
	}
}

// idleHandedOff creates /idle (idle TTL 2 s) on a first node, lets
// handOff give it back, and starts a second node that has seen all of it.
func idleHandedOff(t *testing.T, handOff func(a *process, c *clock) error) (a, b *process, c *clock) {
	t.Helper()
	log, store, c := memlogAndStore()
	a = start(t, log, store, 1, c)
	ctx := context.Background()
	if _, _, err := a.svc.Create(ctx, "/idle", domain.StreamConfig{ContentType: "text/plain", IdleTTLSec: 2}, recs("x"), false); err != nil {
		t.Fatal(err)
	}
	if err := handOff(a, c); err != nil {
		t.Fatal(err)
	}
	b = start(t, log, store, 2, c)
	if err := b.plane.WaitFor(ctx, a.plane.Applied()); err != nil {
		t.Fatal(err)
	}
	return a, b, c
}

// A stream handed back with HandOff carries its last access in its config:
// the lease holder expires it while nobody holds it, from that time.
func TestIdleTTLExpiresWhileNobodyHoldsIt(t *testing.T) {
	ctx := context.Background()
	_, b, c := idleHandedOff(t, func(a *process, c *clock) error {
		mustCreate(t, a, "/plain")
		c.advance(time.Second)
		if _, err := a.svc.Read(ctx, "/idle", 0, ports.ReadLimits{}); err != nil {
			return err
		}
		return a.svc.HandOff(ctx)
	})
	c.advance(1500 * time.Millisecond) // 1.5 s after the last access
	b.svc.sweepUnowned(ctx)
	if !exists(b, "/idle") {
		t.Fatal("expired 1.5 s after its last access, with a TTL of 2 s")
	}
	c.advance(time.Second)
	if _, err := b.svc.Head(ctx, "/idle"); !errors.Is(err, ports.ErrStreamNotFound) {
		t.Fatalf("head 2.5 s after the last access: %v, want not found", err)
	}
	b.svc.sweepUnowned(ctx)
	if exists(b, "/idle") {
		t.Fatal("the lease holder did not delete the expired stream")
	}
	if !exists(b, "/plain") {
		t.Fatal("a stream without a TTL was deleted")
	}
}

// A recorded access goes stale once another writer opens the stream: if
// that writer then dies without recording its own, the stream waits for its
// next writer instead of expiring from the older record.
func TestIdleTTLRecordIsStaleAfterANewWriter(t *testing.T) {
	ctx := context.Background()
	a, b, c := idleHandedOff(t, func(a *process, _ *clock) error { return a.svc.HandOff(ctx) })
	c.advance(time.Second)
	mustAppend(t, b, "/idle", "y")
	// b dies: its node registers again, at a new epoch, without a handoff.
	if r, err := b.plane.ProposeOne(ctx, &domain.RegisterNode{Node: 2, Epoch: 2, Address: "http://node2", Slots: 1}); err != nil || !r.OK() {
		t.Fatalf("register again: %v %v", r, err)
	}
	c.advance(10 * time.Second)
	if err := a.plane.WaitFor(ctx, b.plane.Applied()); err != nil {
		t.Fatal(err)
	}
	a.svc.sweepUnowned(ctx)
	v := a.plane.View()
	if _, ok := v.StreamByName("/idle"); !ok {
		t.Fatal("expired from an access recorded before another writer had it")
	}
}

// deadWriter creates the given idle-TTL (2 s) streams on a first process,
// commits their records, then has that process superseded (its node
// registers again, as after a restart, while it keeps running) and starts
// a second process, the lease holder.
func deadWriter(t *testing.T, names ...string) (a, b *process, c *clock) {
	t.Helper()
	return deadWriterOn(t, memlog.New(), memstore.New(), names...)
}

func deadWriterOn(t *testing.T, log ports.MetaLog, store ports.ObjectStore, names ...string) (a, b *process, c *clock) {
	t.Helper()
	ctx := context.Background()
	c = newClock()
	a = start(t, log, store, 1, c)
	for _, name := range names {
		if _, _, err := a.svc.Create(ctx, name, domain.StreamConfig{ContentType: "text/plain", IdleTTLSec: 2}, recs("x"), false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	b = start(t, log, store, 2, c)
	if r, err := b.plane.ProposeOne(ctx, &domain.RegisterNode{Node: 1, Epoch: 2, Address: "http://node1", Slots: 1}); err != nil || !r.OK() {
		t.Fatalf("register again: %v %v", r, err)
	}
	if err := a.plane.WaitFor(ctx, b.plane.Applied()); err != nil {
		t.Fatal(err)
	}
	return a, b, c
}

func exists(p *process, name string) bool {
	v := p.plane.View()
	_, ok := v.StreamByName(name)
	return ok
}

// A stream whose writer died without recording its last access expires an
// idle TTL after the lease holder first finds it unowned; reopening it (any
// access does) starts that count again.
func TestIdleTTLOfADeadWritersStream(t *testing.T) {
	ctx := context.Background()
	_, b, c := deadWriter(t, "/idle", "/reopened")
	mustCreate(t, b, "/plain")
	if err := b.engine.CloseAll(ctx); err != nil {
		t.Fatal(err)
	}
	c.advance(10 * time.Second) // how long ago a last read them is unknown
	b.svc.sweepUnowned(ctx)     // first found unowned
	c.advance(1500 * time.Millisecond)
	if _, err := b.svc.Read(ctx, "/reopened", 0, ports.ReadLimits{}); err != nil {
		t.Fatal(err)
	}
	if err := b.engine.CloseAll(ctx); err != nil { // b lets it go without a record
		t.Fatal(err)
	}
	b.svc.sweepUnowned(ctx)
	if !exists(b, "/idle") || !exists(b, "/reopened") {
		t.Fatal("expired 1.5 s after it was first found unowned, with a TTL of 2 s")
	}
	c.advance(time.Second)
	b.svc.sweepUnowned(ctx)
	if exists(b, "/idle") {
		t.Fatal("not expired 2.5 s after it was first found unowned")
	}
	if !exists(b, "/reopened") || !exists(b, "/plain") {
		t.Fatal("deleted a stream read 1 s ago, or one without a TTL")
	}
	c.advance(1500 * time.Millisecond)
	b.svc.sweepUnowned(ctx)
	if exists(b, "/reopened") {
		t.Fatal("not expired 2.5 s after it was reopened and let go")
	}
}

// A superseded process that still runs serves its streams at their old
// epoch: what it acknowledged after the lease holder found the stream
// unowned keeps the stream, which the takeover makes readable.
func TestIdleTTLKeepsAStreamASupersededWriterStillAppendsTo(t *testing.T) {
	ctx := context.Background()
	a, b, c := deadWriter(t, "/z")
	b.svc.sweepUnowned(ctx) // first found unowned
	c.advance(time.Second)
	mustAppend(t, a, "/z", "late") // acknowledged by the superseded process
	c.advance(1500 * time.Millisecond)
	b.svc.sweepUnowned(ctx)
	if !exists(b, "/z") {
		t.Fatal("deleted a stream its superseded writer appended to 1.5 s ago")
	}
	page, err := b.svc.Read(ctx, "/z", 0, ports.ReadLimits{})
	if err != nil || fmt.Sprint(bodies(page.Records)) != "[x late]" {
		t.Fatalf("after the takeover: %v %v, want [x late]", bodies(page.Records), err)
	}
	c.advance(2500 * time.Millisecond)
	b.svc.sweepLocal(ctx)
	if exists(b, "/z") {
		t.Fatal("not expired 2.5 s after its last access, held by the lease holder")
	}
}

// A stream the lease holder itself reopened for a read after its sweep took
// its view is kept: the takeover finds the access.
func TestIdleTTLKeepsAStreamReadDuringTheSweep(t *testing.T) {
	ctx := context.Background()
	_, b, c := deadWriter(t, "/s")
	b.svc.sweepUnowned(ctx) // first found unowned
	c.advance(2500 * time.Millisecond)
	v := b.plane.View()
	old, _ := v.StreamByName("/s")
	if _, err := b.svc.Read(ctx, "/s", 0, ports.ReadLimits{}); err != nil {
		t.Fatal(err)
	}
	b.svc.reclaim(ctx, old.ID, b.svc.unowned[old.ID]) // the sweep, after its older view
	if !exists(b, "/s") {
		t.Fatal("deleted a stream read just before")
	}
}

// TestIdleTTLIsJudgedByTheWriterOnly: a stream handed to another node is
// not expired there by a clock that never saw its accesses; its window
// starts again when the new node opens it.
func TestIdleTTLIsJudgedByTheWriterOnly(t *testing.T) {
	ctx := context.Background()
	_, b, c := idleHandedOff(t, func(a *process, _ *clock) error { return a.engine.CloseAll(ctx) })
	c.advance(10 * time.Second) // nobody holds it open: nobody judges it idle
	b.svc.sweepUnowned(ctx)
	if _, err := b.svc.Head(ctx, "/idle"); err != nil {
		t.Fatalf("a stream nobody held open expired: %v", err)
	}
	c.advance(1500 * time.Millisecond)
	if _, err := b.svc.Head(ctx, "/idle"); err != nil {
		t.Fatalf("expired 1.5 s after the new writer opened it: %v", err)
	}
	c.advance(time.Second)
	_, err := b.svc.Head(ctx, "/idle")
	streamErr(t, err, ports.ErrStreamNotFound)
}

// A stream made already expired (Stream-TTL 0 is an expiry at creation) is
// reported made to its creator, is gone for everyone after, and is made
// anew by the same request again, a fork as well as a plain stream. The
// sweep leaves it for a moment, for its creator still answering.
func TestStreamMadeAlreadyExpired(t *testing.T) {
	p := startOne(t)
	ctx := context.Background()
	mustCreate(t, p, "/src")
	gone := domain.StreamConfig{ContentType: "text/plain", ExpiresAtMs: p.clock.Now().UnixMilli()}
	for range 2 {
		if _, created, err := p.svc.Create(ctx, "/zero", gone, nil, false); err != nil || !created {
			t.Fatalf("create: created=%v %v", created, err)
		}
		_, err := p.svc.Head(ctx, "/zero")
		streamErr(t, err, ports.ErrStreamNotFound)
		if _, created, err := p.svc.Fork(ctx, "/fork", ports.ForkRequest{Source: "/src", Config: gone}); err != nil || !created {
			t.Fatalf("fork: created=%v %v", created, err)
		}
		_, err = p.svc.Head(ctx, "/fork")
		streamErr(t, err, ports.ErrStreamNotFound)
	}
	p.svc.sweepLocal(ctx)
	if !exists(p, "/zero") {
		t.Fatal("swept a stream in the moment it was made")
	}
	p.clock.advance(reapAfterMs * time.Millisecond)
	p.svc.sweepLocal(ctx)
	if exists(p, "/zero") || exists(p, "/fork") {
		t.Fatal("an expired stream outlived the sweep after its grace")
	}
}

// Every record of a JSON stream is one JSON value in UTF-8, whichever
// protocol writes it (a Pico append takes any body as one record): what a
// Durable Streams reader gets back must parse. Closure still comes first.
func TestJSONStreamsTakeOnlyJSONRecords(t *testing.T) {
	p := startOne(t)
	ctx := context.Background()
	js := domain.StreamConfig{ContentType: "application/json"}
	_, _, err := p.svc.Create(ctx, "/j", js, recs("not json"), false)
	streamErr(t, err, ports.ErrBadRequest)
	if _, _, err := p.svc.Create(ctx, "/j", js, recs(`{"a":1}`), false); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"not json", "\"\xff\"", `1 2`} {
		_, err := p.svc.Append(ctx, "/j", ports.AppendRequest{Records: recs(`"fine"`, body)})
		streamErr(t, err, ports.ErrBadRequest)
	}
	_, _, err = p.svc.Fork(ctx, "/f", ports.ForkRequest{Source: "/j", Initial: recs("{")})
	streamErr(t, err, ports.ErrBadRequest)
	if got := fmt.Sprint(readAll(t, p, "/j")); got != `[{"a":1}]` {
		t.Fatalf("stream holds %s after refused appends", got)
	}
	if _, err := p.svc.Append(ctx, "/j", ports.AppendRequest{Close: true}); err != nil {
		t.Fatal(err)
	}
	_, err = p.svc.Append(ctx, "/j", ports.AppendRequest{Records: recs("not json")})
	streamErr(t, err, ports.ErrStreamClosed)
}

// downStore refuses every write, as an object store that is down does.
type downStore struct{ ports.ObjectStore }

func (downStore) PutIfAbsent(context.Context, string, []byte) error {
	return errors.New("store down")
}

// An append the WAL cannot make durable is answered as unavailable (a 503
// a client retries), not as an internal error.
func TestAppendOnAFailedWALIsUnavailable(t *testing.T) {
	log, store, c := memlogAndStore()
	p := start(t, log, downStore{store}, 1, c)
	mustCreate(t, p, "/s")
	_, err := p.svc.Append(context.Background(), "/s", ports.AppendRequest{Records: recs("x")})
	if se := streamErr(t, err, ports.ErrUnavailable); !strings.Contains(se.Message, "cannot make appends durable") {
		t.Fatalf("append on a failed WAL: %v", err)
	}
}

// tenureEnds is a Serving that says yes to its first n calls and no after:
// the process's tenure ends while a request is being decided.
func tenureEnds(n int64) func() error {
	var calls atomic.Int64
	return func() error {
		if calls.Add(1) > n {
			return ports.Errorf(ports.ErrUnavailable, "tenure over")
		}
		return nil
	}
}

// A refusal or a read decided once the tenure is over is unavailable, not
// final, though the tenure held when the request began; an append that
// was made durable is acknowledged whatever the tenure (the WAL fence
// keeps it safe).
func TestAnswersDecidedPastTheTenureAreUnavailable(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/s")
	gap := ports.AppendRequest{Records: recs("x"), Producer: &domain.ProducerStamp{ID: "p", Seq: 5}}
	p.svc.cfg.Serving = tenureEnds(2)
	if _, err := p.svc.Append(ctx, "/s", gap); !errors.Is(err, ports.ErrProducerGap) {
		t.Fatalf("a gap decided within the tenure: %v, want ErrProducerGap", err)
	}
	p.svc.cfg.Serving = tenureEnds(1)
	if _, err := p.svc.Append(ctx, "/s", gap); !errors.Is(err, ports.ErrUnavailable) {
		t.Fatalf("a gap decided past the tenure: %v, want ErrUnavailable", err)
	}
	p.svc.cfg.Serving = tenureEnds(1)
	if _, err := p.svc.Read(ctx, "/s", 0, ports.ReadLimits{}); !errors.Is(err, ports.ErrUnavailable) {
		t.Fatalf("a read decided past the tenure: %v, want ErrUnavailable", err)
	}
	p.svc.cfg.Serving = tenureEnds(1)
	if _, err := p.svc.Head(ctx, "/s"); !errors.Is(err, ports.ErrUnavailable) {
		t.Fatalf("a head decided past the tenure: %v, want ErrUnavailable", err)
	}
	p.svc.cfg.Serving = tenureEnds(1)
	if _, err := p.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("a")}); err != nil {
		t.Fatalf("a durable append past the tenure: %v, want its acknowledgement", err)
	}
}

// TestANameMissingFromALaggingViewIsLookedUpInTheLog: a stream another
// node has just created is not "not found" here because this node's view
// has not applied the creation yet.
func TestANameMissingFromALaggingViewIsLookedUpInTheLog(t *testing.T) {
	log, store, c := memlogAndStore()
	a := start(t, log, store, 1, c)
	b := startLagging(t, log, store, 2, c)
	mustCreate(t, a, "/s")
	_, err := b.svc.Append(context.Background(), "/s", ports.AppendRequest{Records: recs("x")})
	var re *ports.RedirectError
	if !errors.As(err, &re) || re.Address != "http://node1" {
		t.Fatalf("append on a node whose view lags the create: %v, want a redirect to node 1", err)
	}
	if _, err := b.svc.Head(context.Background(), "/missing"); !errors.Is(err, ports.ErrStreamNotFound) {
		t.Fatalf("head of a stream nobody created: %v, want not found", err)
	}
}

// TestANameMadeAgainIsServedThoughALaggingViewNamesTheOldStream: a view
// that has not applied a delete and the create that followed still names
// the deleted stream; a request by name goes to the stream made again,
// not "not found".
func TestANameMadeAgainIsServedThoughALaggingViewNamesTheOldStream(t *testing.T) {
	ops := map[string]func(*process) error{
		"append": func(p *process) error {
			_, err := p.svc.Append(context.Background(), "/s", ports.AppendRequest{Records: recs("x")})
			return err
		},
		"read": func(p *process) error {
			_, err := p.svc.Read(context.Background(), "/s", 0, ports.ReadLimits{})
			return err
		},
		"head": func(p *process) error {
			_, err := p.svc.Head(context.Background(), "/s")
			return err
		},
		"trim": func(p *process) error {
			_, err := p.svc.Trim(context.Background(), "/s", 0)
			return err
		},
		"delete": func(p *process) error { return p.svc.Delete(context.Background(), "/s") },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			log, store, c := memlogAndStore()
			a := start(t, log, store, 1, c)
			b := startLagging(t, log, store, 2, c)
			mustCreate(t, a, "/s")
			v := a.plane.View()
			old, _ := v.StreamByName("/s")
			if err := a.engine.Close(ctx, old.ID); err != nil { // let go: any node may open it
				t.Fatal(err)
			}
			if err := b.plane.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			if err := a.svc.Delete(ctx, "/s"); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, a, "/s")
			err := op(b)
			var re *ports.RedirectError
			if !errors.As(err, &re) || re.Address != "http://node1" {
				t.Fatalf("%s on a node whose view names the deleted stream: %v, want a redirect to node 1, the new stream's writer", name, err)
			}
		})
	}
}
