// Package cors sets the cross-origin headers both stream listeners send:
// any origin may read a stream, so every answer allows it, and a preflight
// on any path lists what a script may send.
package cors

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/headerval"
)

// ResponseHeaders sets the headers every response carries, errors
// included: nosniff, any origin, and the protocol's exposed headers.
func ResponseHeaders(exposed string) echo.MiddlewareFunc {
	exposedHeaders := headerval.Shared(exposed)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h["X-Content-Type-Options"] = nosniff
			h["Access-Control-Allow-Origin"] = anyOrigin
			h["Access-Control-Expose-Headers"] = exposedHeaders
			return next(c)
		}
	}
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
