package streamroute

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/ports"
)

// Redirects reads a listener's Routing setting: "redirect" (the default,
// also "") answers 307 to a stream's owner, "local" never redirects.
func Redirects(routing string) (bool, error) {
	switch routing {
	case "", "redirect":
		return true, nil
	case "local":
		return false, nil
	}
	return false, errors.New("unknown routing mode " + routing + ` (want "redirect" or "local")`)
}

// ToOwner returns nil when this node serves name and a *ports.RedirectError
// when another one does. A failed lookup is an ErrUnavailable stream error,
// which each protocol renders as it renders the service's own.
func ToOwner(streams ports.Streams, name string) error {
	r, err := streams.Route(name)
	if err != nil {
		return ports.Errorf(ports.ErrUnavailable, "cannot find the stream's owner: %v", err)
	}
	if r != nil {
		return r
	}
	return nil
}

// AnswerRedirect answers a *ports.RedirectError that names an address for
// protocol, the listener's, with a 307 to the same path and query there,
// and reports whether it did.
func AnswerRedirect(err error, c echo.Context, protocol string) bool {
	var redirect *ports.RedirectError
	if !errors.As(err, &redirect) {
		return false
	}
	addr := redirect.To(protocol)
	if addr == "" {
		return false
	}
	r := c.Request()
	loc := strings.TrimRight(addr, "/") + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	h := c.Response().Header()
	h.Set(echo.HeaderLocation, loc)
	h.Set(echo.HeaderCacheControl, "no-store")
	_ = c.NoContent(http.StatusTemporaryRedirect)
	return true
}

// SetRetryAfter asks a client to come back in a second on a 503: the
// service answers it while it cannot say yet (shutting down, its tenure
// unconfirmed, a stream changing hands), never as a final answer.
func SetRetryAfter(h http.Header, status int) {
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
}
