package dshttp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/server/streamroute"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// create handles PUT: make the stream (or a fork), idempotently.
func (s *server) create(c echo.Context, name string) error {
	r := c.Request()
	if err := createOnce.Check(r.Header); err != nil {
		return badRequest("%v", err)
	}
	fork, err := parseFork(r.Header)
	if err != nil {
		return err
	}
	if fork != nil {
		// A fork reads its source: the caller must be allowed to, and
		// names it as it names every stream.
		if err := s.gate.Also(r, domain.OpRead, fork.Source); err != nil {
			return err
		}
		fork.Source = authgate.Resolve(r.Context(), fork.Source)
	}
	cfg, err := createConfig(r.Header, fork != nil, s.cfg.Now())
	if err != nil {
		return err
	}
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	info, created, err := s.createStream(c, name, cfg, fork, body)
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
	h.Set(echo.HeaderLocation, absoluteURL(r, streamroute.RawStreamName(r))) // the client's name, not a resolved one
	return c.NoContent(http.StatusCreated)
}

// createStream creates a plain stream or a fork, with the body as its
// first records.
func (s *server) createStream(c echo.Context, name string, cfg domain.StreamConfig, fork *ports.ForkRequest, body []byte) (ports.StreamInfo, bool, error) {
	ctx, closed := c.Request().Context(), closedHeader(c.Request().Header)
	if fork == nil {
		initial, err := bodyRecords(cfg.ContentType, body, true)
		if err != nil {
			return ports.StreamInfo{}, false, err
		}
		return s.streams.Create(ctx, name, cfg, initial, closed)
	}
	contentType := cfg.ContentType
	if contentType == "" && len(body) > 0 {
		// The body is split by the type the fork inherits.
		src, err := s.streams.Head(ctx, fork.Source)
		if err != nil {
			return ports.StreamInfo{}, false, err
		}
		contentType = src.Config.ContentType
	}
	initial, err := bodyRecords(contentType, body, true)
	if err != nil {
		return ports.StreamInfo{}, false, err
	}
	fork.Config, fork.Initial, fork.Close = cfg, initial, closed
	return s.streams.Fork(ctx, name, *fork)
}

// parseFork reads the fork headers: nil when the request is no fork.
func parseFork(h http.Header) (*ports.ForkRequest, error) {
	source, forked := header(h, headerForkedFrom)
	offset, hasOffset := header(h, headerForkOffset)
	sub, hasSub := header(h, headerForkSubOffset)
	switch {
	case !forked && (hasOffset || hasSub):
		return nil, badRequest("%s and %s need %s", headerForkOffset, headerForkSubOffset, headerForkedFrom)
	case !forked:
		return nil, nil
	case !strings.HasPrefix(source, "/"):
		return nil, badRequest("%s must be the path of a stream on this server, got %s", headerForkedFrom, headerval.Clip(source))
	}
	fork := &ports.ForkRequest{Source: source}
	if hasOffset {
		pos, err := parseOffset(offset)
		if err != nil || pos.now {
			return nil, badRequest("%s must be an offset this server returned, got %s", headerForkOffset, headerval.Clip(offset))
		}
		fork.At = &pos.at
	}
	if hasSub {
		n, err := parseTTL(sub) // the same digits-only, no-leading-zero rule
		if err != nil {
			return nil, badRequest("%s must be a whole number without sign or leading zeros, got %s", headerForkSubOffset, headerval.Clip(sub))
		}
		if n > 0 && !hasOffset {
			return nil, badRequest("%s needs %s", headerForkSubOffset, headerForkOffset)
		}
		fork.SubOffset = n
	}
	return fork, nil
}

// createConfig reads a create request's configuration headers. A fork
// without a content type inherits its source's.
//
// Stream-TTL: 0 is a sliding window of no time at all: the stream expires
// the instant it is created, as on the reference server. An idle TTL of 0
// means "none" in the stream config, so it is kept as an absolute expiry at
// now, which behaves the same: nobody can see the stream either way.
func createConfig(h http.Header, fork bool, now time.Time) (domain.StreamConfig, error) {
	cfg := domain.StreamConfig{ContentType: h.Get(echo.HeaderContentType)}
	if cfg.ContentType == "" && !fork {
		cfg.ContentType = domain.DefaultContentType
	}
	ttl, hasTTL := header(h, headerTTL)
	expires, hasExpires := header(h, headerExpiresAt)
	var err error
	switch {
	case hasTTL && hasExpires:
		return cfg, badRequest("give %s or %s, not both", headerTTL, headerExpiresAt)
	case hasTTL:
		if cfg.IdleTTLSec, err = parseTTL(ttl); err == nil && cfg.IdleTTLSec == 0 {
			cfg.ExpiresAtMs = now.UnixMilli()
		}
	case hasExpires:
		cfg.ExpiresAtMs, err = parseExpiresAt(expires)
	}
	if err != nil {
		return cfg, err
	}
	return schemaBinding(h, cfg)
}

// schemaBinding reads the original's extension headers that bind a stream
// to a registered schema: Stream-Schema, and Stream-Schema-Validate
// ("true" or "false", any case).
func schemaBinding(h http.Header, cfg domain.StreamConfig) (domain.StreamConfig, error) {
	cfg.Schema = h.Get(headerSchema)
	switch v := h.Get(headerSchemaCheck); {
	case v == "" || strings.EqualFold(v, "false"):
	case strings.EqualFold(v, "true"):
		cfg.SchemaValidate = true
	default:
		return cfg, badRequest("%s must be true or false, got %s", headerSchemaCheck, headerval.Clip(v))
	}
	return cfg, nil
}

// parseTTL parses Stream-TTL: seconds as ^(0|[1-9][0-9]*)$.
func parseTTL(v string) (uint64, error) {
	if !headerval.IsDigits(v) || (v[0] == '0' && len(v) > 1) {
		return 0, badRequest("%s must be whole seconds without sign or leading zeros, got %s", headerTTL, headerval.Clip(v))
	}
	ttl, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badRequest("%s %s is out of range", headerTTL, headerval.Clip(v))
	}
	return ttl, nil
}

// parseExpiresAt parses Stream-Expires-At, an RFC 3339 time, into unix
// milliseconds (finer precision is dropped).
func parseExpiresAt(v string) (int64, error) {
	t, err := time.Parse(time.RFC3339, strings.ToUpper(v)) // RFC 3339 allows "t" and "z" too
	if err != nil {
		return 0, badRequest("%s must be an RFC 3339 time, got %s", headerExpiresAt, headerval.Clip(v))
	}
	if t.UnixMilli() <= 0 {
		return 0, badRequest("%s %s is not after 1970", headerExpiresAt, headerval.Clip(v))
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
