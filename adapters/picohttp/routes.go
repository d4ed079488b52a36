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
	if rest, ok := reservedPath(name, groupsPath); ok {
		return groupRoute(rest)
	}
	return schemaRoute(r, name, streamroute.StreamRoute(r, name, postOp))
}

// schemaRoute is the operation of a registry request: a schema is a
// resource under /_schemas/ (read, or written as a create is), and a
// stream's binding is its stream's (read as a head, written as a create).
// Other requests keep their route.
func schemaRoute(r *http.Request, name string, other authgate.Route) authgate.Route {
	write := r.Method != http.MethodGet && r.Method != http.MethodHead
	if strings.HasPrefix(name, schemasPrefix) {
		if write {
			return authgate.Route{Op: domain.OpCreate, Resource: name}
		}
		return authgate.Route{Op: domain.OpRead, Resource: name}
	}
	if stream, ok := strings.CutPrefix(name, streamsPrefix); ok {
		if write {
			return authgate.Route{Op: domain.OpCreate, Resource: "/" + stream}
		}
		return authgate.Route{Op: domain.OpHead, Resource: "/" + stream}
	}
	return other
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
