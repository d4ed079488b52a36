package streams

import (
	"context"
	"fmt"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func readAll(t *testing.T, p *process, name string) []string {
	t.Helper()
	page, err := p.svc.Read(context.Background(), name, 0, ports.ReadLimits{})
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	if !page.UpToDate {
		t.Fatalf("read %s: one page did not reach the tail %d (next %d)", name, page.Tail, page.Next)
	}
	return bodies(page.Records)
}

func at(v uint64) *uint64 { return &v }

func TestForkReadsTheSourceUpToTheForkPoint(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/src")
	mustAppend(t, p, "/src", "first")
	mustAppend(t, p, "/src", "second")
	info, created, err := p.svc.Fork(ctx, "/fork", ports.ForkRequest{Source: "/src", At: at(1), SubOffset: 3, Initial: recs("XY")})
	if err != nil || !created || info.Next != 3 || info.Config.ContentType != "text/plain" {
		t.Fatalf("fork: %+v created=%v %v", info, created, err)
	}
	mustAppend(t, p, "/src", "third") // after the fork point: never in the fork
	mustAppend(t, p, "/fork", "Z")
	if got := fmt.Sprint(readAll(t, p, "/fork")); got != "[first sec XY Z]" {
		t.Fatalf("fork holds %s", got)
	}
	if got := fmt.Sprint(readAll(t, p, "/src")); got != "[first second third]" {
		t.Fatalf("source holds %s", got)
	}
	// The same request again is the same fork; another is a conflict.
	if _, created, err := p.svc.Fork(ctx, "/fork", ports.ForkRequest{Source: "/src", At: at(1), SubOffset: 3}); err != nil || created {
		t.Fatalf("repeat: created=%v %v", created, err)
	}
	_, _, err = p.svc.Fork(ctx, "/fork", ports.ForkRequest{Source: "/src", At: at(0)})
	streamErr(t, err, ports.ErrStreamConflict)
	_, _, err = p.svc.Fork(ctx, "/other", ports.ForkRequest{Source: "/src", At: at(9)})
	streamErr(t, err, ports.ErrBadRequest)
	_, _, err = p.svc.Fork(ctx, "/other", ports.ForkRequest{Source: "/src", At: at(0), SubOffset: 6})
	streamErr(t, err, ports.ErrBadRequest)
	_, _, err = p.svc.Fork(ctx, "/other", ports.ForkRequest{Source: "/src", Config: domain.StreamConfig{ContentType: "application/json"}})
	streamErr(t, err, ports.ErrStreamConflict)
	_, _, err = p.svc.Fork(ctx, "/other", ports.ForkRequest{Source: "/missing"})
	streamErr(t, err, ports.ErrStreamNotFound)
}

// A fork asked for without a point is at the source's tail then: asking
// again with that point is the same fork, with another a conflict. A plain
// create of a fork's name is a conflict too: the stream is not a plain one.
func TestForkAgainAtItsResolvedPoint(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/src")
	mustAppend(t, p, "/src", "a", "b")
	if _, created, err := p.svc.Fork(ctx, "/f", ports.ForkRequest{Source: "/src"}); err != nil || !created {
		t.Fatalf("fork: created=%v %v", created, err)
	}
	mustAppend(t, p, "/src", "c") // the tail moves on; the fork point stays 2
	for i, again := range []ports.ForkRequest{{Source: "/src"}, {Source: "/src", At: at(2)}} {
		if _, created, err := p.svc.Fork(ctx, "/f", again); err != nil || created {
			t.Fatalf("fork again (%s): created=%v %v", []string{"no point", "at 2"}[i], created, err)
		}
	}
	_, _, err := p.svc.Fork(ctx, "/f", ports.ForkRequest{Source: "/src", At: at(1)})
	streamErr(t, err, ports.ErrStreamConflict)
	_, _, err = p.svc.Create(ctx, "/f", text(), nil, false)
	streamErr(t, err, ports.ErrStreamConflict)
	_, _, err = p.svc.Fork(ctx, "/src", ports.ForkRequest{Source: "/f"}) // the reverse
	streamErr(t, err, ports.ErrStreamConflict)
}

func TestForkChainsSoftDeleteAndCascade(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/a")
	mustAppend(t, p, "/a", "A")
	for _, f := range [][2]string{{"/ab", "/a"}, {"/abc", "/ab"}} {
		if _, _, err := p.svc.Fork(ctx, f[0], ports.ForkRequest{Source: f[1]}); err != nil {
			t.Fatal(err)
		}
		mustAppend(t, p, f[0], string(f[0][len(f[0])-1]-32))
	}
	if got := fmt.Sprint(readAll(t, p, "/abc")); got != "[A B C]" {
		t.Fatalf("three levels: %s", got)
	}
	if err := p.svc.Delete(ctx, "/ab"); err != nil {
		t.Fatal(err)
	}
	_, err := p.svc.Head(ctx, "/ab")
	streamErr(t, err, ports.ErrStreamGone)
	_, _, err = p.svc.Create(ctx, "/ab", text(), nil, false)
	streamErr(t, err, ports.ErrStreamConflict)
	_, _, err = p.svc.Fork(ctx, "/x", ports.ForkRequest{Source: "/ab"})
	streamErr(t, err, ports.ErrStreamConflict)
	if got := fmt.Sprint(readAll(t, p, "/abc")); got != "[A B C]" {
		t.Fatalf("after deleting the middle: %s", got)
	}
	if err := p.svc.Delete(ctx, "/abc"); err != nil {
		t.Fatal(err)
	}
	v := p.plane.View()
	if _, ok := v.StreamByName("/ab"); ok {
		t.Fatal("the soft-deleted middle outlived its last fork")
	}
	if got := fmt.Sprint(readAll(t, p, "/a")); got != "[A]" {
		t.Fatalf("the top changed: %s", got)
	}
}

func TestJSONForkSubOffsetCountsMessages(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	if _, _, err := p.svc.Create(ctx, "/j", domain.StreamConfig{ContentType: "application/json"}, recs(`{"a":1}`, `{"b":2}`, `{"c":3}`), false); err != nil {
		t.Fatal(err)
	}
	info, _, err := p.svc.Fork(ctx, "/jf", ports.ForkRequest{Source: "/j", At: at(0), SubOffset: 2})
	if err != nil || info.Next != 2 {
		t.Fatalf("json fork: %+v %v", info, err)
	}
	if got := fmt.Sprint(readAll(t, p, "/jf")); got != `[{"a":1} {"b":2}]` {
		t.Fatalf("json fork holds %s", got)
	}
	_, _, err = p.svc.Fork(ctx, "/jf2", ports.ForkRequest{Source: "/j", At: at(0), SubOffset: 4})
	streamErr(t, err, ports.ErrBadRequest)
}

func TestForkReadsAfterAHandoff(t *testing.T) {
	log, store, c := memlogAndStore()
	a := start(t, log, store, 1, c)
	ctx := context.Background()
	mustCreate(t, a, "/src")
	mustAppend(t, a, "/src", "s1")
	if _, _, err := a.svc.Fork(ctx, "/fork", ports.ForkRequest{Source: "/src"}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, a, "/fork", "f1")
	if err := a.engine.CloseAll(ctx); err != nil {
		t.Fatal(err)
	}
	b := start(t, log, store, 2, c)
	if err := b.plane.WaitFor(ctx, a.plane.Applied()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(readAll(t, b, "/fork")); got != "[s1 f1]" {
		t.Fatalf("fork on another node: %s", got)
	}
}

func TestTrimOfAForkedSourceIsAConflict(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/src")
	mustAppend(t, p, "/src", "a", "b")
	if _, _, err := p.svc.Fork(ctx, "/fork", ports.ForkRequest{Source: "/src"}); err != nil {
		t.Fatal(err)
	}
	_, err := p.svc.Trim(ctx, "/src", 1)
	streamErr(t, err, ports.ErrStreamConflict)
	if got := fmt.Sprint(readAll(t, p, "/fork")); got != "[a b]" {
		t.Fatalf("fork after a refused trim: %s", got)
	}
}

func TestForkOfAForkBelowItsForkPoint(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	mustCreate(t, p, "/a")
	mustAppend(t, p, "/a", "1", "2", "3")
	if _, _, err := p.svc.Fork(ctx, "/b", ports.ForkRequest{Source: "/a", At: at(2)}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, p, "/b", "b")
	if _, _, err := p.svc.Fork(ctx, "/c", ports.ForkRequest{Source: "/b", At: at(1)}); err != nil {
		t.Fatalf("fork of a fork below its fork point: %v", err)
	}
	if got := fmt.Sprint(readAll(t, p, "/c")); got != "[1]" {
		t.Fatalf("fork of a fork holds %s", got)
	}
}
