package dshttp

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// head handles HEAD: the stream's configuration and tail. It is not an
// access: it leaves the idle TTL running.
func (s *server) head(c echo.Context, name string) error {
	info, err := s.streams.Head(c.Request().Context(), name)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, contentTypeOf(info.Config))
	h.Set(headerNextOffset, formatOffset(info.Next))
	if info.Config.IdleTTLSec > 0 {
		setUint(h, headerTTL, info.Config.IdleTTLSec)
	}
	if info.Config.ExpiresAtMs > 0 {
		h.Set(headerExpiresAt, formatExpiresAt(info.Config.ExpiresAtMs))
	}
	if info.Closed {
		h.Set(headerClosed, "true")
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusOK)
}

// formatExpiresAt writes unix milliseconds as RFC 3339 in UTC, with
// milliseconds only when there are some.
func formatExpiresAt(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	if ms%1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000Z07:00")
	}
	return t.Format(time.RFC3339)
}

// delete handles DELETE.
func (s *server) delete(c echo.Context, name string) error {
	if err := s.streams.Delete(c.Request().Context(), name); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusNoContent)
}
