package handlertest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/server/streamroute"
)

// RouteCase is one request shape of a listener's route table, with the
// operation its gate must ask of it.
type RouteCase struct {
	Name, Method, Target string
	Headers              []string // name, value pairs
	Body                 string
	Kind                 string // the kind of path, as the listener names them
	Preflight            bool   // answered before the gate
	Want                 authgate.Route
}

// Request is the case as a request.
func (rc RouteCase) Request() *http.Request {
	r := httptest.NewRequest(rc.Method, rc.Target, strings.NewReader(rc.Body))
	for i := 0; i+1 < len(rc.Headers); i += 2 {
		r.Header.Set(rc.Headers[i], rc.Headers[i+1])
	}
	return r
}

// CheckRouteCoverage fails for every method the listeners answer
// (streamroute.Methods) that has no case on one of the kinds of path: a
// new method needs an operation in the listener's route table, a case,
// and a sample request in the end-to-end matrix
// (tests/e2e/auth_matrix_test.go).
func CheckRouteCoverage(t *testing.T, cases []RouteCase, kinds ...string) {
	t.Helper()
	for _, m := range streamroute.Methods {
		for _, kind := range kinds {
			found := false
			for _, rc := range cases {
				found = found || rc.Method == m && rc.Kind == kind
			}
			if !found {
				t.Errorf("%s on %s has no route case: give it an operation in route (routes.go), a case and a sample in tests/e2e/auth_matrix_test.go", m, kind)
			}
		}
	}
}

// CheckRouteOperations checks the operation route gives each case but the
// preflights.
func CheckRouteOperations(t *testing.T, cases []RouteCase, route func(*http.Request) authgate.Route) {
	t.Helper()
	for _, rc := range cases {
		if rc.Preflight {
			continue
		}
		if got := route(rc.Request()); got != rc.Want {
			t.Errorf("%s: %s %s is %+v, want %+v", rc.Name, rc.Method, rc.Target, got, rc.Want)
		}
	}
}
