package dshttp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/ports"
)

// The control routes live under "<stream root>/__ds/": the subscription
// API and the webhook signing keys. No stream is named there.
const (
	controlSegment = "__ds"
	jwksType       = "application/jwk-set+json"
	// maxControlBody bounds a control request's body (a create may list up
	// to a thousand streams).
	maxControlBody = 1 << 20
)

// controlRoute splits a path under a control prefix into the stream root
// ("/v1/stream/") and the route below the prefix ("subscriptions/x").
func controlRoute(name string) (root, rest string, ok bool) {
	if i := strings.Index(name, "/"+controlSegment+"/"); i >= 0 {
		return name[:i+1], name[i+len(controlSegment)+2:], true
	}
	if strings.HasSuffix(name, "/"+controlSegment) {
		return name[:len(name)-len(controlSegment)], "", true
	}
	return "", "", false
}

// control serves a control route; without a subscription service every
// one of them is "not found".
func (s *server) control(c echo.Context, root, rest string) error {
	if s.cfg.Subscriptions == nil {
		return controlNotFound("no subscription API is served at " + headerval.Clip(c.Request().URL.EscapedPath()))
	}
	c.Response().Header().Set(echo.HeaderCacheControl, cacheNoStore)
	switch {
	case rest == "jwks.json":
		return s.onlyMethod(c, http.MethodGet, s.jwks)
	case strings.HasPrefix(rest, "subscriptions/"):
		return s.subscriptionRoute(c, root, strings.TrimPrefix(rest, "subscriptions/"))
	}
	return controlNotFound("no control route " + headerval.Clip(rest))
}

// subscriptionRoute serves "subscriptions/<id>[/<action>]".
func (s *server) subscriptionRoute(c echo.Context, root, rest string) error {
	seg, action, _ := strings.Cut(rest, "/")
	id, err := url.PathUnescape(seg)
	if err != nil || id == "" {
		return controlNotFound("no subscription id in " + headerval.Clip(rest))
	}
	ref := ports.SubscriptionRef{Root: root, ID: id}
	bind := func(h func(echo.Context, ports.SubscriptionRef) error) echo.HandlerFunc {
		return func(c echo.Context) error { return h(c, ref) }
	}
	switch action {
	case "":
		return s.subscriptionBase(c, ref)
	case "streams":
		return s.onlyMethod(c, http.MethodPost, bind(s.addStreams))
	case "callback":
		return s.onlyMethod(c, http.MethodPost, bind(s.callback))
	case "claim":
		return s.onlyMethod(c, http.MethodPost, bind(s.claim))
	case "ack":
		return s.onlyMethod(c, http.MethodPost, bind(s.ack))
	case "release":
		return s.onlyMethod(c, http.MethodPost, bind(s.release))
	}
	if encoded, ok := strings.CutPrefix(action, "streams/"); ok {
		path, err := url.PathUnescape(encoded)
		if err != nil {
			return controlError(http.StatusBadRequest, "INVALID_REQUEST", "stream path is not valid percent-encoding")
		}
		return s.onlyMethod(c, http.MethodDelete, func(c echo.Context) error { return s.removeStream(c, ref, path) })
	}
	return controlNotFound("no subscription route " + headerval.Clip(action))
}

func (s *server) subscriptionBase(c echo.Context, ref ports.SubscriptionRef) error {
	switch c.Request().Method {
	case http.MethodPut:
		return s.putSubscription(c, ref)
	case http.MethodGet:
		return s.getSubscription(c, ref)
	case http.MethodDelete:
		return s.deleteSubscription(c, ref)
	}
	return methodNotAllowed(c, "GET, PUT, DELETE")
}

func (s *server) onlyMethod(c echo.Context, method string, h echo.HandlerFunc) error {
	if c.Request().Method != method {
		return methodNotAllowed(c, method)
	}
	return h(c)
}

func methodNotAllowed(c echo.Context, allow string) error {
	c.Response().Header().Set(echo.HeaderAllow, allow)
	return controlError(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "method not allowed; use "+allow)
}

func controlNotFound(message string) error {
	return controlError(http.StatusNotFound, "SUBSCRIPTION_NOT_FOUND", message)
}

func controlError(status int, code, message string) error {
	return &httpError{status: status, code: code, message: message}
}

// controlURL is the absolute URL of the control prefix as the client
// reached it: callbacks and the key set are published under it.
func controlURL(r *http.Request, root string) string {
	return absoluteURL(r, root+controlSegment+"/")
}

// readControlBody reads a bounded JSON body.
func readControlBody(c echo.Context) ([]byte, error) {
	body, err := readBounded(c, maxControlBody)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, controlError(http.StatusBadRequest, "INVALID_REQUEST", "a JSON body is required")
	}
	return body, nil
}
