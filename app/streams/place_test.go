package streams

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// startPlacing starts a process that places new streams and declares the
// feature level that reads placements.
func startPlacing(t *testing.T, log ports.MetaLog, store ports.ObjectStore, node domain.NodeID, c *clock) *process {
	t.Helper()
	p := start(t, log, store, node, c)
	if r, err := p.plane.ProposeOne(context.Background(), domain.DeclareLevel(p.svc.cfg.By, domain.LevelCurrent)); err != nil || !r.OK() {
		t.Fatalf("declare level: %v %v", r, err)
	}
	p.svc.cfg.Place = true
	return p
}

func ownerOf(t *testing.T, p *process, name string) domain.NodeID {
	t.Helper()
	v := p.plane.View()
	st, ok := v.StreamByName(name)
	if !ok {
		t.Fatalf("no stream %s", name)
	}
	return st.Owner
}

func setSlots(t *testing.T, p *process, node domain.NodeID, slots uint32) {
	t.Helper()
	if r, err := p.plane.ProposeOne(context.Background(), &domain.SetSlots{By: p.svc.cfg.By, Node: node, Slots: slots}); err != nil || !r.OK() {
		t.Fatalf("set slots: %v %v", r, err)
	}
}

func TestCreatesSpreadOverTheNodes(t *testing.T) {
	log, store, c := memlogAndStore()
	one, two := startPlacing(t, log, store, 1, c), startPlacing(t, log, store, 2, c)
	catchUp(t, one, two)
	ctx := context.Background()
	owners := map[domain.NodeID]int{}
	for i := range 10 {
		name := fmt.Sprintf("/s/%d", i)
		info, created, err := one.svc.Create(ctx, name, text(), nil, false)
		if err != nil || !created || info.Next != 0 {
			t.Fatalf("create %s: %+v created=%v %v", name, info, created, err)
		}
		owners[ownerOf(t, one, name)]++
	}
	if owners[1] != 5 || owners[2] != 5 {
		t.Fatalf("streams per node %v, want 5 and 5", owners)
	}
	var onTwo string
	for i := range 10 {
		if name := fmt.Sprintf("/s/%d", i); ownerOf(t, one, name) == 2 {
			onTwo = name
		}
	}
	var redirect *ports.RedirectError
	if _, err := one.svc.Append(ctx, onTwo, ports.AppendRequest{Records: recs("x")}); !errors.As(err, &redirect) || redirect.Address != "http://node2" {
		t.Fatalf("append on node 1 to %s, placed on node 2: %v, want a redirect there", onTwo, err)
	}
	catchUp(t, two, one)
	if r := mustAppend(t, two, onTwo, "x"); r.Next != 1 {
		t.Fatalf("append on node 2: %+v", r)
	}
}

// placingOnTheSecond starts two placing processes, the first with zero
// slots: every create made through it is placed on the second.
func placingOnTheSecond(t *testing.T) (one, two *process) {
	t.Helper()
	log, store, c := memlogAndStore()
	one, two = startPlacing(t, log, store, 1, c), startPlacing(t, log, store, 2, c)
	catchUp(t, one, two)
	setSlots(t, one, 1, 0)
	return one, two
}

func TestCreateWithContentPlacedElsewhereIsWrittenWhereItLands(t *testing.T) {
	one, two := placingOnTheSecond(t)
	ctx := context.Background()
	var redirect *ports.RedirectError
	if _, _, err := one.svc.Create(ctx, "/c", text(), recs("a", "b"), false); !errors.As(err, &redirect) || redirect.Address != "http://node2" {
		t.Fatalf("create with content on node 1, placed on node 2: %v, want a redirect there", err)
	}
	if _, _, err := one.svc.Create(ctx, "/c", text(), recs("a", "b"), false); !errors.As(err, &redirect) {
		t.Fatalf("the create again on node 1: %v, want a redirect", err)
	}
	catchUp(t, two, one)
	info, created, err := two.svc.Create(ctx, "/c", text(), recs("a", "b"), false)
	if err != nil || !created || info.Next != 2 {
		t.Fatalf("the create, redirected to node 2: %+v created=%v %v; want it made with two records", info, created, err)
	}
	info, created, err = two.svc.Create(ctx, "/c", text(), recs("other"), false)
	if err != nil || created || info.Next != 2 {
		t.Fatalf("another create with content: %+v created=%v %v; want the stream as it is", info, created, err)
	}
	if _, _, err := two.svc.Create(ctx, "/c", domain.StreamConfig{ContentType: "application/json"}, recs("1"), false); !errors.Is(err, ports.ErrStreamConflict) {
		t.Fatalf("a create with another content type: %v, want a conflict", err)
	}
	page, err := two.svc.Read(ctx, "/c", 0, ports.ReadLimits{})
	if err != nil || !slices.Equal(bodies(page.Records), []string{"a", "b"}) {
		t.Fatalf("read: %v %v, want a and b once", bodies(page.Records), err)
	}
}

func TestClosedCreatePlacedElsewhereIsClosedWhereItLands(t *testing.T) {
	one, two := placingOnTheSecond(t)
	ctx := context.Background()
	var redirect *ports.RedirectError
	if _, _, err := one.svc.Create(ctx, "/closed", text(), nil, true); !errors.As(err, &redirect) {
		t.Fatalf("closed create on node 1, placed on node 2: %v, want a redirect", err)
	}
	catchUp(t, two, one)
	if info, created, err := two.svc.Create(ctx, "/closed", text(), nil, true); err != nil || !created || !info.Closed {
		t.Fatalf("the closed create on node 2: %+v created=%v %v", info, created, err)
	}
	if info, created, err := two.svc.Create(ctx, "/closed", text(), nil, true); err != nil || created || !info.Closed {
		t.Fatalf("the closed create again: %+v created=%v %v; want it as it is", info, created, err)
	}
}

func TestCreatesStayLocalUntilEveryNodeReadsPlacements(t *testing.T) {
	log, store, c := memlogAndStore()
	one := startPlacing(t, log, store, 1, c)
	catchUp(t, one, start(t, log, store, 2, c)) // node 2 declares no level: an older release
	for i := range 6 {
		name := fmt.Sprintf("/l/%d", i)
		mustCreate(t, one, name)
		if owner := ownerOf(t, one, name); owner != 1 {
			t.Fatalf("%s made on node %d while node 2 reads no placements, want node 1", name, owner)
		}
	}
}

func TestAStreamWhoseNodeIsGoneIsPlacedWhenRevived(t *testing.T) {
	log, store, c := memlogAndStore()
	one := startPlacing(t, log, store, 1, c)
	two, three := startPlacing(t, log, store, 2, c), startPlacing(t, log, store, 3, c)
	catchUp(t, one, two, three)
	ctx := context.Background()
	mustCreate(t, one, "/a") // placed on node 1, the lowest id of equals
	mustCreate(t, one, "/b") // node 2
	catchUp(t, two, one)
	mustAppend(t, two, "/b", "x")
	if r, err := two.plane.ProposeOne(ctx, &domain.FenceNode{By: two.svc.cfg.By, Node: 1, Epoch: 1}); err != nil || !r.OK() {
		t.Fatalf("fence node 1: %v %v", r, err)
	}
	catchUp(t, two, one)
	var redirect *ports.RedirectError
	if _, err := two.svc.Append(ctx, "/a", ports.AppendRequest{Records: recs("y")}); !errors.As(err, &redirect) || redirect.Address != "http://node3" {
		t.Fatalf("append on node 2 to /a, whose node was fenced: %v, want a redirect to node 3, which holds fewer streams", err)
	}
	catchUp(t, three, two)
	if r := mustAppend(t, three, "/a", "y"); r.Next != 1 {
		t.Fatalf("append on node 3: %+v", r)
	}
	if owner := ownerOf(t, three, "/a"); owner != 3 {
		t.Errorf("/a is on node %d, want 3", owner)
	}
	// A stream whose node lives is revived where it is asked, as before.
	if err := two.svc.HandOff(ctx); err != nil {
		t.Fatal(err)
	}
	catchUp(t, three, two)
	if r := mustAppend(t, three, "/b", "z"); r.Next != 2 {
		t.Fatalf("append on node 3 to /b, let go by node 2: %+v", r)
	}
}
