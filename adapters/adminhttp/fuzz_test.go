package adminhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// slotsNode is one registered node whose slots POST /admin/nodes/1 sets.
type slotsNode struct{ state domain.State }

func (n *slotsNode) Health() error               { return nil }
func (n *slotsNode) Ready() error                { return nil }
func (n *slotsNode) View() domain.State          { return n.state }
func (n *slotsNode) LeaseHolder() (uint64, bool) { return 0, false }
func (n *slotsNode) Metrics() []adminhttp.Metric { return nil }
func (n *slotsNode) SetSlots(_ context.Context, id domain.NodeID, slots uint32) error {
	if r := n.state.Apply(&domain.SetSlots{By: domain.Proposer{Node: 1, Epoch: 1}, Node: id, Slots: slots}); r.Code == domain.ResultNotFound {
		return adminhttp.ErrUnknownNode
	}
	return nil
}

// Transfer records the transfer as the stream service would, refusals
// named as it names them.
func (n *slotsNode) Transfer(_ context.Context, name string, to domain.NodeID) error {
	st, ok := n.state.StreamByName(name)
	if !ok {
		return ports.Errorf(ports.ErrStreamNotFound, "no such stream: %s", name)
	}
	switch r := n.state.Apply(&domain.StartTransfer{By: domain.Proposer{Node: 1, Epoch: 1}, Stream: st.ID, To: to}); r.Code {
	case domain.ResultOK, domain.ResultRedundant:
		return nil
	case domain.ResultInvalid:
		return ports.Errorf(ports.ErrBadRequest, "%s", r.Reason)
	default:
		return ports.Errorf(ports.ErrStreamConflict, "%s", r.Reason)
	}
}

// DrainNode sets the node's slots to 0, as the node does before it moves
// any stream.
func (n *slotsNode) DrainNode(ctx context.Context, id domain.NodeID) (adminhttp.Drain, error) {
	if err := n.SetSlots(ctx, id, 0); err != nil {
		return adminhttp.Drain{}, err
	}
	return n.DrainProgress(id), nil
}

func (n *slotsNode) DrainProgress(id domain.NodeID) adminhttp.Drain {
	reg, _ := n.state.Node(id)
	return adminhttp.Drain{Node: uint32(id), Slots: reg.Slots, Remaining: int(reg.Assigned)}
}

// FuzzAdminRequests sends a GET or a POST of any path under /admin with
// any body: the answer is a 2xx or a 4xx with the error JSON, never a crash
// or a 5xx; only a 200 to a set-slots POST changes the slots, to what its
// body says, or to a drain POST, to 0, and only a 200 to a transfer POST
// starts a transfer, to the node its body names.
func FuzzAdminRequests(f *testing.F) {
	for _, seed := range [][2]string{
		{"nodes/1", `{"slots": 3}`}, {"nodes/1", `{"slots": -1}`}, {"nodes/2", `{"slots": 3}`},
		{"nodes/x", `{}`}, {"nodes/1", `{"slots": 3, "x": 1}`}, {"nodes/1", `{"slots": 3}}`},
		{"streams/a%2Fb", ""}, {"streams/", ""}, {"cluster", ""},
		{"transfer", `{"stream": "/s", "toNode": 2}`}, {"transfer", `{"stream": "s", "toNode": 3}`},
		{"transfer", `{"stream": "/t", "toNode": 2}`}, {"transfer", `{"stream": "/s"}`},
		{"nodes/2/drain", ""}, {"nodes/3/drain", "{}"}, {"nodes/x/drain", ""},
	} {
		f.Add(true, seed[0], seed[1])
		f.Add(false, seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, post bool, path, body string) {
		method := http.MethodGet
		if post {
			method = http.MethodPost
		}
		n := &slotsNode{state: domain.NewState()}
		n.state.Apply(&domain.RegisterNode{Node: 1, Epoch: 1, Address: "x", Slots: 1})
		n.state.Apply(&domain.RegisterNode{Node: 2, Epoch: 1, Address: "y", Slots: 1})
		n.state.Apply(&domain.CreateStream{By: domain.Proposer{Node: 1, Epoch: 1}, Name: "/s", Open: true})
		h := adminhttp.New(n, nil)
		req, err := http.NewRequest(method, "http://admin/admin/"+path, strings.NewReader(body))
		if err != nil {
			return // not a URL a client could send
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		one, _ := n.state.Node(1)
		two, _ := n.state.Node(2)
		st, _ := n.state.StreamByName("/s")
		transferred := post && rec.Code == http.StatusOK && path == "transfer"
		switch {
		case rec.Code >= 500:
			t.Fatalf("%s /admin/%q %q: %d %s", method, path, body, rec.Code, rec.Body)
		case transferred:
			var sent struct{ ToNode uint32 }
			if err := json.Unmarshal([]byte(body), &sent); err != nil || uint32(st.TransferTo) != sent.ToNode && !(st.TransferTo == 0 && uint32(st.Owner) == sent.ToNode) {
				t.Fatalf("POST /admin/transfer %q: 200 with the stream transferring to %d (%v)", body, st.TransferTo, err)
			}
		case st.TransferTo != 0:
			t.Fatalf("%s /admin/%q %q: %d, yet a transfer started", method, path, body, rec.Code)
		case rec.Code == http.StatusOK && post && strings.HasSuffix(path, "/drain"):
			id, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(path, "nodes/"), "/drain"), 10, 32)
			if reg, _ := n.state.Node(domain.NodeID(id)); reg == nil || reg.Slots != 0 {
				t.Fatalf("POST /admin/%q: 200 with the node at %v", path, reg)
			}
		case rec.Code == http.StatusOK && post:
			var sent struct{ Slots uint32 }
			id, _ := strconv.ParseUint(strings.TrimPrefix(path, "nodes/"), 10, 32)
			reg, _ := n.state.Node(domain.NodeID(id))
			if err := json.Unmarshal([]byte(body), &sent); err != nil || reg == nil || reg.Slots != sent.Slots {
				t.Fatalf("POST /admin/%q %q: 200 with slots %v (%v)", path, body, reg, err)
			}
		case one.Slots != 1 || two.Slots != 1:
			t.Fatalf("%s /admin/%q %q: %d, yet the slots changed to %d and %d", method, path, body, rec.Code, one.Slots, two.Slots)
		}
		if rec.Code >= 400 {
			var e struct{ Error string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("%s /admin/%q: %d without the error JSON: %q", method, path, rec.Code, rec.Body)
			}
		}
	})
}
