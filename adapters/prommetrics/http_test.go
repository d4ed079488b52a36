package prommetrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		p                            Protocol
		method, target, header, want string // header: "Name: value"
	}{
		{ProtocolPico, "PUT", "/a", "", "create"},
		{ProtocolPico, "POST", "/a", "", "append"},
		{ProtocolPico, "POST", "/a", "Pico-Trim-Seq: 3", "trim"},
		{ProtocolPico, "POST", "/a", "Pico-Closed: true", "close"},
		{ProtocolPico, "GET", "/a?seq=0", "", "read"},
		{ProtocolPico, "GET", "/a?seq=now&live=long-poll", "", "live_read"},
		{ProtocolPico, "GET", "/", "", "list"},
		{ProtocolPico, "HEAD", "/a", "", "head"},
		{ProtocolPico, "DELETE", "/a", "", "delete"},
		{ProtocolPico, "OPTIONS", "/a", "", "preflight"},
		{ProtocolDS, "PUT", "/a", "Stream-Forked-From: /b", "fork"},
		{ProtocolDS, "GET", "/a?offset=-1&live=sse", "", "live_read"},
		{ProtocolDS, "POST", "/a", "Stream-Closed: true", "close"},
		{ProtocolDS, "POST", "/a/__ds/subscriptions/x", "", "subscription"},
		{ProtocolAdmin, "GET", "/ready", "", "probe"},
		{ProtocolAdmin, "GET", "/metrics", "", "metrics"},
		{ProtocolAdmin, "GET", "/admin/cluster", "", "admin"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.target, nil)
		if name, value, ok := strings.Cut(c.header, ": "); ok {
			r.Header.Set(name, value)
		}
		if o, _ := classify(c.p, r); opNames[o] != c.want {
			t.Errorf("%s %s %s %q: %s, want %s", protocolNames[c.p], c.method, c.target, c.header, opNames[o], c.want)
		}
	}
}

type nopWriter struct{ h http.Header }

func (w nopWriter) Header() http.Header         { return w.h }
func (w nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w nopWriter) WriteHeader(int)             {}

// TestHandlerCountsWithoutAllocating: the request series cost an append
// no allocation once its operation's children exist.
func TestHandlerCountsWithoutAllocating(t *testing.T) {
	m := New()
	h := m.Handler(ProtocolPico, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	r := httptest.NewRequest("POST", "/a", nil)
	w := nopWriter{http.Header{}}
	h.ServeHTTP(w, r)
	if allocs := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) }); allocs != 0 {
		t.Errorf("%v allocations per request", allocs)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("pico", "append", "2xx")); got != 102 {
		t.Errorf("append 2xx = %v, want 102", got)
	}
	if problems, err := testutil.GatherAndLint(m.Registry()); err != nil || len(problems) != 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}
