// Package cors sets the cross-origin headers both stream listeners send:
// any origin may read a stream, so every answer a browser may read allows
// it, and a preflight on any path lists what a script may send.
package cors

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
)

// ResponseHeaders sets the headers every response carries, errors
// included: nosniff and, for an answer a browser may read (ForBrowser),
// any origin, the protocol's exposed headers and, unless resourcePolicy
// is empty, Cross-Origin-Resource-Policy.
func ResponseHeaders(exposed, resourcePolicy string) echo.MiddlewareFunc {
	exposedHeaders, policy := headerval.Shared(exposed), headerval.Shared(resourcePolicy)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header() // keys set in canonical form
			h["X-Content-Type-Options"] = nosniff
			if ForBrowser(c.Request()) {
				h["Access-Control-Allow-Origin"] = anyOrigin
				h["Access-Control-Expose-Headers"] = exposedHeaders
				if resourcePolicy != "" {
					h["Cross-Origin-Resource-Policy"] = policy
				}
			}
			return next(c)
		}
	}
}

// ForBrowser reports whether a browser may read the answer to r, so that
// it needs the cross-origin headers. A browser sends Origin with every
// request whose method is not GET or HEAD (the Fetch standard), so a write
// without one comes from another client, and its answer is never cached
// for a browser to find later. GET and HEAD answers may be cached and
// served to anyone, and only browsers send preflights: those always carry
// the headers. Leaving them off the rest spares every append's answer a
// quarter of a kilobyte of headers.
func ForBrowser(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return len(r.Header["Origin"]) > 0
}

var nosniff, anyOrigin = headerval.Shared("nosniff"), headerval.Shared("*")

// Preflight answers a CORS preflight with the protocol's methods and
// request headers; browsers may cache the answer for a day.
func Preflight(c echo.Context, methods, requestHeaders string) error {
	h := c.Response().Header()
	h.Set("Access-Control-Allow-Methods", methods)
	h.Set("Access-Control-Allow-Headers", requestHeaders)
	h.Set("Access-Control-Max-Age", "86400")
	h.Set(echo.HeaderCacheControl, "no-store")
	return c.NoContent(http.StatusNoContent)
}
