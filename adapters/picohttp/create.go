package picohttp

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/streamroute"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

// create handles PUT /name: make the stream, idempotently.
func (s *server) create(c echo.Context, name string) error {
	r := c.Request()
	if err := createOnce.Check(r.Header); err != nil {
		return badRequest("%v", err)
	}
	cfg, err := streamConfig(r)
	if err != nil {
		return err
	}
	closed, err := boolHeader(r, headerClosed)
	if err != nil {
		return err
	}
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	var initial []domain.Record
	if len(body) > 0 {
		initial = []domain.Record{{Body: body}}
	}
	info, created, err := s.streams.Create(r.Context(), name, cfg, initial, closed)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	headerval.SetUint(h, headerNextSeq, info.Next)
	h.Set(echo.HeaderContentType, info.Config.ContentType)
	if info.Closed {
		h.Set(headerClosed, "true")
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	if created {
		h.Set(echo.HeaderLocation, streamroute.RawStreamName(c.Request())) // the client's name, not a resolved one
		return c.NoContent(http.StatusCreated)
	}
	return c.NoContent(http.StatusOK)
}

// streamConfig reads a create request's configuration headers. Pico-TTL is
// the original's: a sliding lifetime of the whole stream, renewed by every
// read and write; record retention is Pico-Retention, an extension.
func streamConfig(r *http.Request) (domain.StreamConfig, error) {
	cfg := domain.StreamConfig{ContentType: r.Header.Get(echo.HeaderContentType)}
	if cfg.ContentType == "" {
		cfg.ContentType = domain.DefaultContentType
	}
	var err error
	if cfg.IdleTTLSec, _, err = optionalUint(headerTTL, r.Header.Get(headerTTL)); err != nil {
		return cfg, err
	}
	if cfg.TTLSec, _, err = optionalUint(headerRetention, r.Header.Get(headerRetention)); err != nil {
		return cfg, err
	}
	if cfg.IdleTTLSec > 0 && r.Header.Get(headerExpiresAt) != "" {
		return cfg, badRequest("%s and %s are two lifetimes of the stream: give one", headerTTL, headerExpiresAt)
	}
	cfg.Schema = r.Header.Get(headerSchema)
	if cfg.SchemaValidate, err = picowire.ParseBool(r.Header.Get(headerSchemaCheck)); err != nil {
		return cfg, badRequest("%s: %v", headerSchemaCheck, err)
	}
	if v := r.Header.Get(headerExpiresAt); v != "" {
		ms, err := ParseExpiresAt(v)
		if err != nil {
			return cfg, badRequest("%s must be an RFC 3339 time or unix milliseconds, got %s: %v", headerExpiresAt, headerval.Clip(v), err)
		}
		if ms <= time.Now().UnixMilli() {
			return cfg, badRequest("%s %s is in the past", headerExpiresAt, headerval.Clip(v))
		}
		cfg.ExpiresAtMs = ms
	}
	return cfg, nil
}
