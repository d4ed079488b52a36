package streams

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// catchUp waits until p has applied every row the others have.
func catchUp(t *testing.T, p *process, from ...*process) {
	t.Helper()
	for _, q := range from {
		if err := p.plane.WaitFor(context.Background(), q.plane.Applied()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTransferMovesAStreamToItsTarget(t *testing.T) {
	log, store, c := memlogAndStore()
	a, b, third := start(t, log, store, 1, c), start(t, log, store, 2, c), start(t, log, store, 3, c)
	ctx := context.Background()
	mustCreate(t, a, "/s")
	mustAppend(t, a, "/s", "r0", "r1")
	catchUp(t, b, a)
	if err := a.svc.Transfer(ctx, "/s", 2); err != nil {
		t.Fatal(err)
	}
	if a.svc.isLocal(a.streamID(t, "/s")) {
		t.Fatal("the old writer still holds the stream")
	}
	catchUp(t, third, a)
	for _, p := range []*process{a, third} {
		if addr := routedTo(t, p, "/s"); addr != "http://node2" {
			t.Fatalf("node %d routes /s to %q, want the target", p.svc.cfg.By.Node, addr)
		}
	}
	var redirect *ports.RedirectError
	if _, err := third.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("x")}); !errors.As(err, &redirect) || redirect.Address != "http://node2" {
		t.Fatalf("append on another node during the transfer: %v, want a redirect to the target", err)
	}
	catchUp(t, b, a)
	mustAppend(t, b, "/s", "r2")
	if got := readAll(t, b, "/s"); !slices.Equal(got, []string{"r0", "r1", "r2"}) {
		t.Fatalf("read on the target: %q", got)
	}
	v := b.plane.View()
	if st, _ := v.StreamByName("/s"); st.Owner != 2 || !v.IsOpen(st) || st.TransferTo != 0 {
		t.Fatalf("stream after the target opened it: %+v", *st)
	}
	if err := b.svc.Transfer(ctx, "/s", 2); err != nil {
		t.Fatalf("transfer to the node that has it: %v", err)
	}
}

// A stream whose create named this process its writer, and that the
// engine has not opened (the create's caller went away), is open in the
// metadata only: the transfer still closes it, so the target can open it.
func TestTransferOfAStreamOpenInTheMetadataOnly(t *testing.T) {
	log, store, c := memlogAndStore()
	a, b := start(t, log, store, 1, c), start(t, log, store, 2, c)
	create := &domain.CreateStream{By: a.svc.cfg.By, Name: "/s", Open: true, NowMs: c.Now().UnixMilli(),
		Meta: domain.EncodeStreamConfig(text())}
	if r, err := a.plane.ProposeOne(context.Background(), create); err != nil || !r.OK() {
		t.Fatalf("create: %v %v", r, err)
	}
	if err := a.svc.Transfer(context.Background(), "/s", 2); err != nil {
		t.Fatal(err)
	}
	catchUp(t, b, a)
	mustAppend(t, b, "/s", "r0")
	if got := readAll(t, b, "/s"); !slices.Equal(got, []string{"r0"}) {
		t.Fatalf("read on the target: %q", got)
	}
}

// An idle-TTL stream records its last access when its writer lets it go
// for a transfer: nobody holds it until the target's next request, and
// meanwhile the other nodes expire it from that time, as after a handoff.
func TestTransferOfAnIdleTTLStreamKeepsItsWindow(t *testing.T) {
	log, store, c := memlogAndStore()
	a, third := start(t, log, store, 1, c), start(t, log, store, 3, c)
	start(t, log, store, 2, c)
	ctx := context.Background()
	cfg := domain.StreamConfig{ContentType: "text/plain", IdleTTLSec: 60}
	if _, _, err := a.svc.Create(ctx, "/s", cfg, nil, false); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, a, "/s", "r0")
	if err := a.svc.Transfer(ctx, "/s", 2); err != nil {
		t.Fatal(err)
	}
	catchUp(t, third, a)
	c.advance(61 * time.Second)
	if _, err := third.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("late")}); !errors.Is(err, ports.ErrStreamNotFound) {
		t.Fatalf("append to an idle-TTL stream unused for longer than its TTL during its transfer: %v, want not found", err)
	}
}

func TestTransferRefusals(t *testing.T) {
	log, store, c := memlogAndStore()
	a := start(t, log, store, 1, c)
	start(t, log, store, 2, c)
	ctx := context.Background()
	mustCreate(t, a, "/s")
	if err := a.svc.Transfer(ctx, "/nope", 2); !errors.Is(err, ports.ErrStreamNotFound) {
		t.Fatalf("transfer of a missing stream: %v", err)
	}
	if err := a.svc.Transfer(ctx, "/s", 9); !errors.Is(err, ports.ErrBadRequest) {
		t.Fatalf("transfer to an unregistered node: %v", err)
	}
	if !a.svc.isLocal(a.streamID(t, "/s")) {
		t.Fatal("a refused transfer let the stream go")
	}
	mustAppend(t, a, "/s", "still here")
}

// A transfer to a node that then loses its slots (here: it is fenced)
// lapses: any node may open the stream again.
func TestTransferLapsesWhenItsTargetGoes(t *testing.T) {
	log, store, c := memlogAndStore()
	a, third := start(t, log, store, 1, c), start(t, log, store, 3, c)
	start(t, log, store, 2, c)
	ctx := context.Background()
	mustCreate(t, a, "/s")
	mustAppend(t, a, "/s", "r0")
	if err := a.svc.Transfer(ctx, "/s", 2); err != nil {
		t.Fatal(err)
	}
	if r, err := a.plane.ProposeOne(ctx, &domain.FenceNode{By: a.svc.cfg.By, Node: 2, Epoch: 1}); err != nil || !r.OK() {
		t.Fatalf("fence node 2: %v %v", r, err)
	}
	catchUp(t, third, a)
	mustAppend(t, third, "/s", "r1")
	if got := readAll(t, third, "/s"); !slices.Equal(got, []string{"r0", "r1"}) {
		t.Fatalf("read after the transfer lapsed: %q", got)
	}
}

func (p *process) streamID(t *testing.T, name string) uint64 {
	t.Helper()
	v := p.plane.View()
	st, ok := v.StreamByName(name)
	if !ok {
		t.Fatalf("no stream %s", name)
	}
	return st.ID
}

// Appends that race a transfer are each acknowledged once: by the old
// writer before it lets go, or, redirected, by the target; none is lost or
// written twice, and each appender's records stay in its order.
func TestAppendsRacingATransfer(t *testing.T) {
	log, store, c := memlogAndStore()
	a, b := start(t, log, store, 1, c), start(t, log, store, 2, c)
	ctx := context.Background()
	mustCreate(t, a, "/s")
	const appenders = 4
	var wg sync.WaitGroup
	var took [2]atomic.Int64 // appends each node acknowledged
	stop := make(chan struct{})
	for w := range appenders {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n, err := appendFollowing(ctx, []*process{a, b}, "/s", fmt.Sprintf("%d-%06d", w, i))
				if err != nil {
					t.Error(err)
					return
				}
				took[n].Add(1)
			}
		})
	}
	for took[0].Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	if err := a.svc.Transfer(ctx, "/s", 2); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); took[1].Load() < 50 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if took[1].Load() == 0 {
		t.Fatalf("the target acknowledged no append after the transfer (the old writer %d)", took[0].Load())
	}
	catchUp(t, b, a)
	got := readAll(t, b, "/s")
	seen := map[string]bool{}
	last := make([]string, appenders)
	for _, body := range got {
		w, _ := strconv.Atoi(body[:1])
		if seen[body] || body <= last[w] {
			t.Fatalf("record %q again or out of its appender's order", body)
		}
		seen[body], last[w] = true, body
	}
	if want := took[0].Load() + took[1].Load(); int64(len(got)) != want {
		t.Fatalf("%d records after the transfer, %d acknowledged", len(got), want)
	}
}

// appendFollowing appends one record the way a client does: to the first
// node, then wherever it is redirected, retrying while the nodes' views
// disagree for a moment. It returns the index of the node that took it.
func appendFollowing(ctx context.Context, nodes []*process, name, body string) (int, error) {
	n := 0
	for range 200 {
		_, err := nodes[n].svc.Append(ctx, name, ports.AppendRequest{Records: recs(body)})
		var redirect *ports.RedirectError
		switch {
		case err == nil:
			return n, nil
		case errors.As(err, &redirect) && slices.ContainsFunc(nodes, func(p *process) bool { return p.svc.cfg.Address == redirect.Address }):
			n = slices.IndexFunc(nodes, func(p *process) bool { return p.svc.cfg.Address == redirect.Address })
		case errors.Is(err, ports.ErrUnavailable):
			time.Sleep(time.Millisecond) // a view behind the other node's
		default:
			return n, fmt.Errorf("append %s: %w", body, err)
		}
	}
	return n, fmt.Errorf("append %s: no node took it", body)
}

// A transfer asked of a node that does not write the stream is handed to
// the writer, which transfers it and lets it go.
func TestTransferAskedOfAnotherNodeReachesTheWriter(t *testing.T) {
	log, store, c := memlogAndStore()
	a, b, third := start(t, log, store, 1, c), start(t, log, store, 2, c), start(t, log, store, 3, c)
	ctx := context.Background()
	mustCreate(t, a, "/s")
	mustAppend(t, a, "/s", "r0")
	catchUp(t, b, a)
	if err := b.svc.Transfer(ctx, "/s", 3); err != nil {
		t.Fatalf("a transfer asked of a node that does not write the stream: %v", err)
	}
	id := a.streamID(t, "/s")
	for deadline := time.Now().Add(5 * time.Second); a.svc.isLocal(id); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the writer did not let the stream go")
		}
	}
	catchUp(t, third, a)
	page, err := third.svc.Read(ctx, "/s", 0, ports.ReadLimits{})
	if err != nil || fmt.Sprint(bodies(page.Records)) != "[r0]" {
		t.Fatalf("the target reads %v: %v", bodies(page.Records), err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		v := a.plane.View()
		if _, asked := v.KV(domain.SpaceRegistry, TransferAskPrefix+itoa(id)); !asked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writer left the transfer request in the registry")
		}
	}
}

// startTransferOnly records a transfer of name from its writer p to node
// to, without letting the stream go yet.
func startTransferOnly(t *testing.T, p *process, name string, to domain.NodeID) uint64 {
	t.Helper()
	id := p.streamID(t, name)
	if r, err := p.plane.ProposeOne(context.Background(), &domain.StartTransfer{By: p.svc.cfg.By, Stream: id, To: to}); err != nil || !r.OK() {
		t.Fatalf("start transfer: %v %v", r, err)
	}
	return id
}

// A request at a transfer's target while its view still shows the writer
// holding the stream is served there once the writer lets go, not sent
// back to the writer, which would only send it here again.
func TestTheTargetWaitsForTheWriterToLetGo(t *testing.T) {
	log, store, c := memlogAndStore()
	a, b := start(t, log, store, 1, c), start(t, log, store, 2, c)
	ctx := context.Background()
	mustCreate(t, a, "/s")
	mustAppend(t, a, "/s", "r0")
	id := startTransferOnly(t, a, "/s", 2)
	catchUp(t, b, a)
	if addr := routedTo(t, b, "/s"); addr != "" {
		t.Fatalf("the target routes /s to %q, want itself", addr)
	}
	appended := make(chan error, 1)
	go func() {
		_, err := b.svc.Append(ctx, "/s", ports.AppendRequest{Records: recs("r1")})
		appended <- err
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-appended:
		t.Fatalf("the append at the target ended (%v) before the writer let go", err)
	default:
	}
	if err := a.svc.letGo(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := <-appended; err != nil {
		t.Fatalf("the append at the target once the writer let go: %v", err)
	}
	if got := readAll(t, b, "/s"); !slices.Equal(got, []string{"r0", "r1"}) {
		t.Fatalf("read on the target: %q", got)
	}
}

// A writer that does not let go within letGoWait gets the request after
// all.
func TestTheTargetSendsARequestToAWriterThatKeepsTheStream(t *testing.T) {
	defer func(wait time.Duration) { letGoWait = wait }(letGoWait)
	letGoWait = 50 * time.Millisecond
	log, store, c := memlogAndStore()
	a, b := start(t, log, store, 1, c), start(t, log, store, 2, c)
	mustCreate(t, a, "/s")
	startTransferOnly(t, a, "/s", 2)
	catchUp(t, b, a)
	var redirect *ports.RedirectError
	if _, err := b.svc.Append(context.Background(), "/s", ports.AppendRequest{Records: recs("x")}); !errors.As(err, &redirect) || redirect.Address != "http://node1" {
		t.Fatalf("append at the target while the writer keeps the stream: %v, want a redirect to the writer", err)
	}
}
