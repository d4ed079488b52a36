package dshttp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/domain"
)

// create handles PUT: make the stream, idempotently.
func (s *server) create(c echo.Context, name string) error {
	r := c.Request()
	if err := refuseFork(r.Header); err != nil {
		return err
	}
	cfg, err := createConfig(r.Header)
	if err != nil {
		return err
	}
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	initial, err := bodyRecords(cfg.ContentType, body, true)
	if err != nil {
		return err
	}
	info, created, err := s.streams.Create(r.Context(), name, cfg, initial, closedHeader(r.Header))
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, contentTypeOf(info.Config))
	h.Set(headerNextOffset, formatOffset(info.Next))
	if info.Closed {
		h.Set(headerClosed, "true")
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	if !created {
		return c.NoContent(http.StatusOK)
	}
	h.Set(echo.HeaderLocation, absoluteURL(r, name))
	return c.NoContent(http.StatusCreated)
}

// refuseFork answers a fork request: the fork headers are checked, but
// forks themselves are not served yet.
func refuseFork(h http.Header) error {
	_, forked := header(h, headerForkedFrom)
	_, hasOffset := header(h, headerForkOffset)
	_, hasSubOffset := header(h, headerForkSubOffset)
	switch {
	case !forked && (hasOffset || hasSubOffset):
		return badRequest("%s and %s need %s", headerForkOffset, headerForkSubOffset, headerForkedFrom)
	case forked:
		return statusError(http.StatusNotImplemented, "forks are not supported yet")
	}
	return nil
}

// createConfig reads a create request's configuration headers.
func createConfig(h http.Header) (domain.StreamConfig, error) {
	cfg := domain.StreamConfig{ContentType: h.Get(echo.HeaderContentType)}
	if cfg.ContentType == "" {
		cfg.ContentType = domain.DefaultContentType
	}
	ttl, hasTTL := header(h, headerTTL)
	expires, hasExpires := header(h, headerExpiresAt)
	var err error
	switch {
	case hasTTL && hasExpires:
		return cfg, badRequest("give %s or %s, not both", headerTTL, headerExpiresAt)
	case hasTTL:
		cfg.IdleTTLSec, err = parseTTL(ttl)
	case hasExpires:
		cfg.ExpiresAtMs, err = parseExpiresAt(expires)
	}
	return cfg, err
}

// parseTTL parses Stream-TTL: seconds as ^(0|[1-9][0-9]*)$.
func parseTTL(v string) (uint64, error) {
	if !isDigits(v) || (v[0] == '0' && len(v) > 1) {
		return 0, badRequest("%s must be whole seconds without sign or leading zeros, got %s", headerTTL, clip(v))
	}
	ttl, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badRequest("%s %s is out of range", headerTTL, clip(v))
	}
	return ttl, nil
}

// parseExpiresAt parses Stream-Expires-At, an RFC 3339 time, into unix
// milliseconds (finer precision is dropped).
func parseExpiresAt(v string) (int64, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return 0, badRequest("%s must be an RFC 3339 time, got %s", headerExpiresAt, clip(v))
	}
	if t.UnixMilli() <= 0 {
		return 0, badRequest("%s %s is not after 1970", headerExpiresAt, clip(v))
	}
	return t.UnixMilli(), nil
}

// absoluteURL is the URL of path on the host the client addressed:
// clients resolve a Location with new URL(), which needs an absolute one.
func absoluteURL(r *http.Request, path string) string {
	if r.Host == "" {
		return path
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	// Behind a TLS-terminating proxy the client's scheme is the proxy's.
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	if proto = strings.ToLower(strings.TrimSpace(proto)); proto == "http" || proto == "https" {
		scheme = proto
	}
	return scheme + "://" + r.Host + path
}
