// Package streamroute holds the request plumbing both stream listeners
// share ahead of their protocols: every path names a stream and one handler
// serves them all, the name is the path as the client sent it, and a stream
// another node owns is answered with a 307 to the same target there.
package streamroute

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// Methods are the methods a stream path answers; others get echo's 405.
var Methods = []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions}

// NewHandler routes every request to serve. headers wraps every answer,
// errors included, and renderError turns the errors serve returns (and
// echo's 405) into protocol answers.
func NewHandler(serve echo.HandlerFunc, headers echo.MiddlewareFunc, renderError echo.HTTPErrorHandler) http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = renderError
	serve = onlyMethods(serve)
	e.Pre(targetsOutsideRouter(headers(serve)))
	e.Use(headers)
	// Every path is a stream name, so one handler serves them all; other
	// methods become echo's 405.
	e.Match(Methods, "/*", serve)
	return e
}

// onlyMethods refuses other methods on the targets the router never sees.
func onlyMethods(serve echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !slices.Contains(Methods, c.Request().Method) {
			return echo.ErrMethodNotAllowed
		}
		return serve(c)
	}
}

// targetsOutsideRouter serves request targets the router cannot match (an
// absolute URL without a path, "*") so they too get protocol answers.
func targetsOutsideRouter(serve echo.HandlerFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if strings.HasPrefix(echo.GetPath(c.Request()), "/") {
				return next(c)
			}
			return serve(c)
		}
	}
}

// StreamName is the path as the client sent it: names are opaque, so two
// spellings of one decoded path are two streams.
func StreamName(r *http.Request) string {
	name := r.URL.EscapedPath()
	if name == "" {
		return "/"
	}
	return name
}
