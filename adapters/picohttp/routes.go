package picohttp

import (
	"net/http"
	"strings"

	"github.com/picomq/pico/adapters/internal/authgate"
	"github.com/picomq/pico/adapters/internal/streamroute"
	"github.com/picomq/pico/domain"
)

// route is the gate's route table of this listener: the one operation
// each request is. Preflights are answered before it.
func route(r *http.Request) authgate.Route {
	name := streamroute.RawStreamName(r)
	if name == "/" {
		return authgate.Route{Op: domain.OpList} // GET and HEAD list; others are refused after the gate
	}
	switch r.Method {
	case http.MethodGet:
		return authgate.Route{Op: domain.OpRead, Resource: name, Live: streamroute.IsLive(r)}
	case http.MethodHead:
		return authgate.Route{Op: domain.OpHead, Resource: name}
	case http.MethodPut:
		return authgate.Route{Op: domain.OpCreate, Resource: name}
	case http.MethodPost:
		return authgate.Route{Op: postOp(r), Resource: name}
	case http.MethodDelete:
		return authgate.Route{Op: domain.OpDelete, Resource: name}
	}
	return authgate.Route{Op: domain.OpRead, Resource: name} // no other method gets past onlyMethods
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
