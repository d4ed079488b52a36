package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// fakeAdminNode is a node's metadata without the node: a state the admin
// listener reads and set-slots changes through Apply.
type fakeAdminNode struct {
	mu        sync.Mutex
	state     domain.State
	noProcess domain.NodeID // SetSlots refuses to give this node slots
	draining  domain.NodeID // the node DrainNode drains
	moved     int
}

func (f *fakeAdminNode) Health() error               { return nil }
func (f *fakeAdminNode) Ready() error                { return nil }
func (f *fakeAdminNode) LeaseHolder() (uint64, bool) { return 7, true }
func (f *fakeAdminNode) Metrics() []adminhttp.Metric { return nil }
func (f *fakeAdminNode) View() domain.State          { f.mu.Lock(); defer f.mu.Unlock(); return f.state }
func (f *fakeAdminNode) apply(c domain.Command) domain.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state.ApplyRow(f.state.Index+1, []domain.Command{c})[0]
}

func (f *fakeAdminNode) slots(id domain.NodeID) uint32 {
	v := f.View()
	n, _ := v.Node(id)
	return n.Slots
}

func (f *fakeAdminNode) SetSlots(_ context.Context, id domain.NodeID, slots uint32) error {
	if id == f.noProcess && slots > 0 {
		return fmt.Errorf("%w: node %d has no heartbeat", adminhttp.ErrNoProcess, id)
	}
	r := f.apply(&domain.SetSlots{By: domain.Proposer{Node: 1, Epoch: 5}, Node: id, Slots: slots})
	if r.Code == domain.ResultNotFound {
		return adminhttp.ErrUnknownNode
	}
	return nil
}

// Transfer records the transfer; the fake names only the refusals the
// tests ask for.
func (f *fakeAdminNode) Transfer(_ context.Context, name string, to domain.NodeID) error {
	v := f.View()
	st, ok := v.StreamByName(name)
	if !ok {
		return ports.Errorf(ports.ErrStreamNotFound, "no such stream: %s", name)
	}
	if r := f.apply(&domain.StartTransfer{By: domain.Proposer{Node: 1, Epoch: 5}, Stream: st.ID, To: to}); !r.OK() {
		return ports.Errorf(ports.ErrBadRequest, "cannot transfer %s: %s", name, r.Reason)
	}
	return nil
}

// DrainNode sets the node's slots to 0 and, when streams are left, fails
// as the node does without another node with slots, else starts a drain
// that moves one stream to node 2 each time its progress is read.
func (f *fakeAdminNode) DrainNode(ctx context.Context, id domain.NodeID) (adminhttp.Drain, error) {
	if err := f.SetSlots(ctx, id, 0); err != nil {
		return adminhttp.Drain{}, err
	}
	if v := f.View(); f.homedOn(&v, id) != nil {
		if _, ok := v.Place(); !ok {
			return adminhttp.Drain{}, fmt.Errorf("%w: node %d keeps its streams", adminhttp.ErrNoPlacement, id)
		}
	}
	f.mu.Lock()
	f.draining, f.moved = id, 0
	f.mu.Unlock()
	return f.progress(id), nil
}

func (f *fakeAdminNode) DrainProgress(id domain.NodeID) adminhttp.Drain {
	v := f.View()
	if st := f.homedOn(&v, id); st != nil && id == f.draining {
		f.apply(&domain.CloseStream{By: domain.Proposer{Node: st.Owner, Epoch: st.OwnerEpoch}, Stream: st.ID, Epoch: st.Epoch})
		f.apply(&domain.OpenStream{By: domain.Proposer{Node: 2, Epoch: 9}, Stream: st.ID, Epoch: st.Epoch + 1})
		f.mu.Lock()
		f.moved++
		f.mu.Unlock()
	}
	return f.progress(id)
}

func (f *fakeAdminNode) progress(id domain.NodeID) adminhttp.Drain {
	v := f.View()
	reg, _ := v.Node(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	return adminhttp.Drain{Node: uint32(id), Slots: reg.Slots, Remaining: int(reg.Assigned), Moved: f.moved,
		Running: id == f.draining && reg.Assigned > 0}
}

// homedOn is a stream whose home is node id, nil if none.
func (f *fakeAdminNode) homedOn(v *domain.State, id domain.NodeID) (found *domain.Stream) {
	v.StreamsFrom("", func(st *domain.Stream) bool {
		if st.Owner == id {
			found = st
		}
		return found == nil
	})
	return found
}

// newFakeAdmin serves the admin listener over two registered nodes and two
// streams on node 1, "/orders/eu" (text, idle TTL 60 s) and its fork "/f".
func newFakeAdmin(t *testing.T) (*fakeAdminNode, string) {
	f := &fakeAdminNode{state: domain.NewState()}
	by := domain.Proposer{Node: 1, Epoch: 5}
	for _, c := range []domain.Command{
		&domain.RegisterNode{Node: 1, Epoch: 5, Address: "http://n1:4437", Slots: 1},
		&domain.RegisterNode{Node: 2, Epoch: 9, Address: "http://n2:4437", Slots: 2},
		&domain.CreateStream{By: by, Name: "/orders/eu", Open: true, NowMs: 1_700_000_000_000,
			Meta: domain.EncodeStreamConfig(domain.StreamConfig{ContentType: "text/plain", IdleTTLSec: 60})},
		&domain.CreateFork{By: by, Name: "/f", Source: 1, At: 0,
			Meta: domain.EncodeStreamConfig(domain.StreamConfig{ContentType: "text/plain"})},
	} {
		if r := f.apply(c); !r.OK() {
			t.Fatalf("%T: %v", c, r)
		}
	}
	srv := httptest.NewServer(adminhttp.New(f, nil))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func TestAdminShowsTheClusterNodesAndStreams(t *testing.T) {
	isolate(t)
	_, url := newFakeAdmin(t)
	pico(t, "", "admin", "nodes", "--admin-endpoint", url).want(t, 0,
		"NODE  EPOCH  ADDRESS         SLOTS  STREAMS  STATE  HEARTBEAT\n"+
			"1     5      http://n1:4437  1      2        -      -\n"+
			"2     9      http://n2:4437  2      0        -      -\n", "")
	r := pico(t, "", "admin", "cluster", "--admin-endpoint", url)
	for _, want := range []string{"applied index      4\n", "streams            2\n", "held by this node (epoch 7)", "2     9      http://n2:4437"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("admin cluster: %+v, want %q in its output", r, want)
		}
	}
	r = pico(t, "", "admin", "stream", "orders/eu", "--admin-endpoint", url)
	for _, want := range []string{"name          /orders/eu\n", "content type  text/plain\n", "owner         node 1 at epoch 5 (open: true)\n",
		"committed     [0, 0) in 0 objects\n", "forks         1\n", "idle ttl      60 s\n", "created       2023-11-14T22:13:20Z\n"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("admin stream: %+v, want %q in its output", r, want)
		}
	}
	if r := pico(t, "", "admin", "stream", "/f", "--admin-endpoint", url); !strings.Contains(r.stdout, "fork of       /orders/eu at 0\n") {
		t.Fatalf("admin stream /f: %+v", r)
	}
	pico(t, "", "admin", "stream", "/nope", "--admin-endpoint", url).want(t, 3, "", "pico: 404 Not Found: no such stream: /nope\n")
}

func TestAdminJSONIsTheListenersJSON(t *testing.T) {
	isolate(t)
	_, url := newFakeAdmin(t)
	t.Setenv("PICO_ADMIN_ENDPOINT", url)
	r := pico(t, "", "admin", "--json", "stream", "/orders/eu")
	var st map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("admin --json stream: %+v (%v)", r, err)
	}
	if st["name"] != "/orders/eu" || st["owner"] != 1.0 || st["idleTtlSec"] != 60.0 || st["open"] != true || st["forks"] != 1.0 {
		t.Fatalf("stream JSON %v", st)
	}
	resp, err := http.Get(url + "/admin/streams/orders/eu")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil || fmt.Sprint(raw) != fmt.Sprint(st) {
		t.Fatalf("the listener's JSON %v (%v), the CLI's %v", raw, err, st)
	}
}

func TestAdminSetSlots(t *testing.T) {
	isolate(t)
	f, url := newFakeAdmin(t)
	pico(t, "", "admin", "set-slots", "2", "--slots", "0", "--admin-endpoint", url).want(t, 0,
		"NODE  EPOCH  ADDRESS         SLOTS  STREAMS  STATE  HEARTBEAT\n2     9      http://n2:4437  0      0        -      -\n", "")
	if f.slots(2) != 0 {
		t.Fatal("node 2's slots did not change")
	}
	pico(t, "", "admin", "set-slots", "3", "--slots", "1", "--admin-endpoint", url).want(t, 3, "", "pico: 404 Not Found: node 3 is not registered\n")
	f.noProcess = 2
	pico(t, "", "admin", "set-slots", "2", "--slots", "1", "--admin-endpoint", url).want(t, 4, "",
		"pico: 409 Conflict: no process runs the node's registration: node 2 has no heartbeat\n")
	for _, args := range [][]string{
		{"admin", "set-slots", "2"},                       // no --slots
		{"admin", "set-slots", "x", "--slots", "1"},       // not a node id
		{"admin", "set-slots", "2", "--slots", "-2"},      // negative
		{"admin", "set-slots", "2", "--slots", "1 << 33"}, // not a number
		{"admin", "nodes", "--slots", "1"},                // --slots without set-slots
		{"admin", "--endpoint", "http://x", "nodes"},      // a stream verb's flag
		{"admin", "frobnicate"},
		{"admin", "stream"},
		{"admin"},
	} {
		if r := pico(t, "", append(args, "--admin-endpoint", url)...); r.code != 2 || !strings.Contains(r.stderr, "usage: pico admin") {
			t.Fatalf("%q: %+v, want a usage error", args, r)
		}
	}
}

func TestAdminTransfer(t *testing.T) {
	isolate(t)
	f, url := newFakeAdmin(t)
	r := pico(t, "", "admin", "transfer", "orders/eu", "--to-node", "2", "--admin-endpoint", url)
	if r.code != 0 || !strings.Contains(r.stdout, "name          /orders/eu\n") || !strings.Contains(r.stdout, "transfer to   node 2\n") {
		t.Fatalf("admin transfer: %+v", r)
	}
	v := f.View()
	if st, _ := v.StreamByName("/orders/eu"); st.TransferTo != 2 {
		t.Fatalf("stream after the transfer: %+v", *st)
	}
	pico(t, "", "admin", "transfer", "/nope", "--to-node", "2", "--admin-endpoint", url).want(t, 3, "", "pico: 404 Not Found: no such stream: /nope\n")
	pico(t, "", "admin", "transfer", "/f", "--to-node", "3", "--admin-endpoint", url).want(t, 1, "",
		"pico: 400 Bad Request: cannot transfer /f: transfer target node 3 is not registered with slots\n")
	defer func(limit time.Duration) { transferWaitLimit = limit }(transferWaitLimit)
	transferWaitLimit = 300 * time.Millisecond
	r = pico(t, "", "admin", "transfer", "/f", "--to-node", "2", "--wait", "--admin-endpoint", url)
	if r.code != 1 || !strings.Contains(r.stderr, "pico: node 2 has not opened /f within 300ms") {
		t.Fatalf("admin transfer --wait with nobody opening the stream: %+v", r)
	}
	transferWaitLimit = 10 * time.Second
	go func() {
		time.Sleep(200 * time.Millisecond)
		v := f.View()
		st, _ := v.StreamByName("/orders/eu")
		f.apply(&domain.CloseStream{By: domain.Proposer{Node: 1, Epoch: 5}, Stream: st.ID, Epoch: st.Epoch})
		f.apply(&domain.OpenStream{By: domain.Proposer{Node: 2, Epoch: 9}, Stream: st.ID, Epoch: st.Epoch + 1})
	}()
	r = pico(t, "", "admin", "transfer", "/orders/eu", "--to-node", "2", "--wait", "--admin-endpoint", url)
	if r.code != 0 || !strings.Contains(r.stdout, "owner         node 2 at epoch 9 (open: true)\n") {
		t.Fatalf("admin transfer --wait: %+v", r)
	}
	for _, args := range [][]string{
		{"admin", "stream", "/f", "--wait"},                 // --wait without transfer
		{"admin", "transfer", "/f"},                         // no --to-node
		{"admin", "transfer", "/f", "--to-node", "0"},       // no such node id
		{"admin", "transfer", "/f", "--to-node", "1 << 33"}, // not a number
		{"admin", "transfer", "--to-node", "2"},             // no stream
		{"admin", "stream", "/f", "--to-node", "2"},         // --to-node without transfer
	} {
		if r := pico(t, "", append(args, "--admin-endpoint", url)...); r.code != 2 || !strings.Contains(r.stderr, "usage: pico admin") {
			t.Fatalf("%q: %+v, want a usage error", args, r)
		}
	}
}

// Bad requests to POST /admin/nodes/{id} are refused with a clear 4xx and
// change nothing.
func TestAdminRefusesBadSetSlotsRequests(t *testing.T) {
	f, url := newFakeAdmin(t)
	for _, tc := range []struct {
		path, body string
		status     int
		message    string
	}{
		{"/admin/nodes/2", `{"slots": 5, "extra": 1}`, 400, `want {"slots": K}`},
		{"/admin/nodes/2", `{}`, 400, `want {"slots": K}`},
		{"/admin/nodes/2", `{"slots": -1}`, 400, `want {"slots": K}`},
		{"/admin/nodes/2", `{"slots": 5}{"slots": 6}`, 400, `want {"slots": K}`},
		{"/admin/nodes/2", `{"slots": 5}}`, 400, `want {"slots": K}`},
		{"/admin/nodes/2", `{"slots": 5}]`, 400, `want {"slots": K}`},
		{"/admin/nodes/2", `{"slots": 5` + strings.Repeat(" ", 2000) + `}`, 413, "body over 1024 bytes"},
		{"/admin/nodes/0", `{"slots": 5}`, 400, "node id"},
		{"/admin/nodes/99999999999", `{"slots": 5}`, 400, "node id"},
	} {
		resp, err := http.Post(url+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(e.Error, tc.message) {
			t.Fatalf("POST %s %.40q: %d %q, want %d with %q", tc.path, tc.body, resp.StatusCode, e.Error, tc.status, tc.message)
		}
	}
	if f.slots(2) != 2 {
		t.Fatal("a refused request changed node 2's slots")
	}
}

func TestAdminDrain(t *testing.T) {
	isolate(t)
	f, url := newFakeAdmin(t)
	defer func(every time.Duration) { drainPollEvery = every }(drainPollEvery)
	drainPollEvery = 10 * time.Millisecond
	r := pico(t, "", "admin", "drain", "1", "--wait", "--admin-endpoint", url)
	r.want(t, 0, "node          1\nslots         0\nstreams left  0\nmoved         2\nrunning       false\n",
		"drain node 1: 0/2 streams moved\ndrain node 1: 1/2 streams moved\ndrain node 1: 2/2 streams moved\n")
	if f.slots(1) != 0 {
		t.Fatal("node 1 kept its slots")
	}
	v := f.View()
	for _, name := range []string{"/orders/eu", "/f"} {
		if st, _ := v.StreamByName(name); st.Owner != 2 || !v.IsOpen(st) {
			t.Fatalf("%s after the drain: %+v", name, *st)
		}
	}
	// Again: nothing is left to move.
	pico(t, "", "admin", "drain", "1", "--wait", "--admin-endpoint", url).want(t, 0,
		"node          1\nslots         0\nstreams left  0\nmoved         0\nrunning       false\n", "drain node 1: 0/0 streams moved\n")
	r = pico(t, "", "admin", "--json", "drain", "1", "--admin-endpoint", url)
	var d map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || r.code != 0 || d["node"] != 1.0 || d["remainingStreams"] != 0.0 {
		t.Fatalf("admin --json drain: %+v (%v)", r, err)
	}
	// Node 2, home to both streams now, is the only node with slots left.
	pico(t, "", "admin", "drain", "2", "--admin-endpoint", url).want(t, 4, "",
		"pico: 409 Conflict: no other node takes new streams: node 2 keeps its streams\n")
	pico(t, "", "admin", "drain", "3", "--admin-endpoint", url).want(t, 3, "", "pico: 404 Not Found: node 3 is not registered\n")
	for _, args := range [][]string{
		{"admin", "drain"},                        // no node
		{"admin", "drain", "x"},                   // not a node id
		{"admin", "drain", "0"},                   // no such node id
		{"admin", "drain", "1", "--to-node", "2"}, // a transfer's flag
		{"admin", "nodes", "--wait"},              // --wait without drain or transfer
	} {
		if r := pico(t, "", append(args, "--admin-endpoint", url)...); r.code != 2 || !strings.Contains(r.stderr, "usage: pico admin") {
			t.Fatalf("%q: %+v, want a usage error", args, r)
		}
	}
}

// A drain that stops with streams left makes --wait fail with its cause.
func TestAdminDrainWaitReportsAStoppedDrain(t *testing.T) {
	isolate(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			fmt.Fprint(w, `{"node":2,"slots":0,"remainingStreams":3,"movedStreams":1,"running":true,"failedMoves":0}`)
			return
		}
		fmt.Fprint(w, `{"node":2,"slots":0,"remainingStreams":2,"movedStreams":2,"running":false,"failedMoves":5,"lastError":"node 2: no stream moved in 5 passes"}`)
	}))
	defer srv.Close()
	defer func(every time.Duration) { drainPollEvery = every }(drainPollEvery)
	drainPollEvery = 10 * time.Millisecond
	pico(t, "", "admin", "drain", "2", "--wait", "--admin-endpoint", srv.URL).want(t, 1, "",
		"drain node 2: 1/4 streams moved\n"+
			"drain node 2: 2/4 streams moved\n"+
			"drain node 2: 5 moves failed so far, each retried; the latest: node 2: no stream moved in 5 passes\n"+
			"pico: the drain of node 2 stopped with 2 streams left: node 2: no stream moved in 5 passes; run it again to continue\n")
}
