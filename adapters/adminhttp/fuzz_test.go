package adminhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/domain"
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

// FuzzAdminRequests sends a GET or a POST of any path under /admin with
// any body: the answer is a 2xx or a 4xx with the error JSON, never a crash
// or a 5xx, and only a 200 to a set-slots POST changes the slots, to what
// its body says.
func FuzzAdminRequests(f *testing.F) {
	for _, seed := range [][2]string{
		{"nodes/1", `{"slots": 3}`}, {"nodes/1", `{"slots": -1}`}, {"nodes/2", `{"slots": 3}`},
		{"nodes/x", `{}`}, {"nodes/1", `{"slots": 3, "x": 1}`}, {"nodes/1", `{"slots": 3}}`},
		{"streams/a%2Fb", ""}, {"streams/", ""}, {"cluster", ""},
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
		h := adminhttp.New(n, nil)
		req, err := http.NewRequest(method, "http://admin/admin/"+path, strings.NewReader(body))
		if err != nil {
			return // not a URL a client could send
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		reg, _ := n.state.Node(1)
		switch {
		case rec.Code >= 500:
			t.Fatalf("%s /admin/%q %q: %d %s", method, path, body, rec.Code, rec.Body)
		case rec.Code == http.StatusOK && post:
			var sent struct{ Slots uint32 }
			if err := json.Unmarshal([]byte(body), &sent); err != nil || reg.Slots != sent.Slots {
				t.Fatalf("POST /admin/%q %q: 200 with slots %d (%v)", path, body, reg.Slots, err)
			}
		case reg.Slots != 1:
			t.Fatalf("%s /admin/%q %q: %d, yet the slots changed to %d", method, path, body, rec.Code, reg.Slots)
		}
		if rec.Code >= 400 {
			var e struct{ Error string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("%s /admin/%q: %d without the error JSON: %q", method, path, rec.Code, rec.Body)
			}
		}
	})
}
