package dshttp

import (
	"net/http"
	"strings"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/server/streamroute"
	"github.com/picomq/pico/domain"
)

// route is the gate's route table of this listener: the one operation
// each request is. Preflights are answered before it.
func route(r *http.Request) authgate.Route {
	name := streamroute.RawStreamName(r)
	if root, rest, ok := controlRoute(name); ok {
		return controlOp(r.Method, root, rest)
	}
	return streamroute.StreamRoute(r, name, postOp)
}

// postOp tells a bare close from an append.
func postOp(r *http.Request) domain.Op {
	if r.ContentLength == 0 && closedHeader(r.Header) {
		return domain.OpClose
	}
	return domain.OpAppend
}

// controlOp maps the subscription API to the stream operations on the
// root it serves, since a subscription follows streams under that root and
// appends its wakes there: reading a subscription or claiming its work is
// read, creating one or adding streams to it create, and deleting it or a
// stream of it delete. The signing keys
// are public, and a worker's callback, ack and release carry the
// subscription's own bearer token, which the subscription checks.
func controlOp(method, root, rest string) authgate.Route {
	_, action, _ := strings.Cut(strings.TrimPrefix(rest, "subscriptions/"), "/")
	switch {
	case rest == "jwks.json":
		return authgate.Route{Public: true}
	case strings.HasPrefix(rest, "subscriptions/") && (action == "callback" || action == "ack" || action == "release"):
		return authgate.Route{Public: true}
	}
	op := domain.OpRead // GET, HEAD, and a claim
	switch {
	case method == http.MethodPut || method == http.MethodPost && action == "streams":
		op = domain.OpCreate
	case method == http.MethodDelete:
		op = domain.OpDelete
	}
	return authgate.Route{Op: op, Resource: root}
}
