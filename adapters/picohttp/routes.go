package picohttp

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
	if name == "/" {
		return authgate.Route{Op: domain.OpList} // GET and HEAD list; others are refused after the gate
	}
	return streamroute.StreamRoute(r, name, postOp)
}

// postOp tells a trim and a bare close from an append.
func postOp(r *http.Request) domain.Op {
	switch {
	case r.Header.Get(headerTrimSeq) != "":
		return domain.OpTrim
	case r.ContentLength == 0 && strings.EqualFold(r.Header.Get(headerClosed), "true"):
		return domain.OpClose
	}
	return domain.OpAppend
}
