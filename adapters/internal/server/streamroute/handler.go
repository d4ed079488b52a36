package streamroute

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/domain"
)

// Methods are the methods a stream path answers; others get echo's 405.
var Methods = []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions}

// NewHandler serves every request with serve. headers wraps every answer,
// errors included, and renderError turns the errors serve returns (echo's
// 405 for a method not in Methods among them) into protocol answers.
//
// Every path names a stream and serve reads the name from the URL, so
// nothing needs echo's router: the handler builds the chain once and runs
// it on a pooled echo context. Routing came with middleware that echo
// assembles again for every request (five allocations an append), and
// request targets a router cannot match (an absolute URL without a path,
// "*") needed a way around it; now they take the same path as the rest.
//
// extra are methods the listener answers besides Methods (on paths of its
// own choosing: serve refuses them elsewhere).
func NewHandler(serve echo.HandlerFunc, headers echo.MiddlewareFunc, renderError echo.HTTPErrorHandler, extra ...string) http.Handler {
	e := echo.New()
	e.HTTPErrorHandler = renderError
	chain := headers(onlyMethods(serve, append(slices.Clone(Methods), extra...)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := e.AcquireContext()
		c.Reset(r, w)
		if err := chain(c); err != nil {
			e.HTTPErrorHandler(err, c)
		}
		e.ReleaseContext(c)
	})
}

// Gated is serve behind the gate: a preflight is answered by preflight
// with no credential, every other request is decided by gate (route says
// which operation it is) before serve routes, redirects or reads a body,
// and a live read that the gate ends answers with the gate's error if it
// has not begun its answer.
func Gated(gate *authgate.Gate, route func(*http.Request) authgate.Route, preflight, serve echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodOptions {
			return preflight(c)
		}
		r, release, err := gate.Admit(c.Request(), route)
		if err != nil {
			return err
		}
		defer release()
		c.SetRequest(r)
		if err := serve(c); err != nil {
			return authgate.Ended(r, err)
		}
		return nil
	}
}

// StreamRoute is the gate's route of a request on the stream name: read
// (live when the query says so), head, create and delete by method, and
// for a POST the operation postOp tells (an append, or a close or trim).
func StreamRoute(r *http.Request, name string, postOp func(*http.Request) domain.Op) authgate.Route {
	op := domain.OpRead // GET, and no other method gets past onlyMethods
	switch r.Method {
	case http.MethodHead:
		op = domain.OpHead
	case http.MethodPut:
		op = domain.OpCreate
	case http.MethodPost:
		op = postOp(r)
	case http.MethodDelete:
		op = domain.OpDelete
	}
	return authgate.Route{Op: op, Resource: name, Live: r.Method == http.MethodGet && IsLive(r)}
}

// IsLive reports whether a read is a live one, by the decoded query that
// the read takes its mode from ("liv%65=sse" is live too).
func IsLive(r *http.Request) bool { return r.URL.Query().Get("live") != "" }

// onlyMethods refuses methods other than methods.
func onlyMethods(serve echo.HandlerFunc, methods []string) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !slices.Contains(methods, c.Request().Method) {
			return echo.ErrMethodNotAllowed
		}
		return serve(c)
	}
}

// StreamName is the path as the client sent it: names are opaque, so two
// spellings of one decoded path are two streams. A character that a path
// must escape but arrived raw takes its %XX form (URL.EscapedPath), so
// "/x|y" and "/x%7Cy" are one stream; the Pico OpenAPI text says so.
//
// Under an auto-prefixed token the name is resolved inside its prefix
// (authgate.Resolve); "/" stays the root.
func StreamName(r *http.Request) string {
	name := RawStreamName(r)
	if name == "/" {
		return name
	}
	return authgate.Resolve(r.Context(), name)
}

// RawStreamName is the path as the client sent it, unresolved.
func RawStreamName(r *http.Request) string {
	name := r.URL.EscapedPath()
	if name == "" {
		return "/"
	}
	return name
}
