package dshttp

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
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
		headerval.SetUint(h, headerTTL, info.Config.IdleTTLSec)
	}
	if info.Config.ExpiresAtMs > 0 {
		h.Set(headerExpiresAt, headerval.FormatExpiresAt(info.Config.ExpiresAtMs))
	}
	if info.Config.Schema != "" {
		h.Set(headerSchema, info.Config.Schema)
		h.Set(headerSchemaCheck, strconv.FormatBool(info.Config.SchemaValidate))
	}
	if info.Closed {
		h.Set(headerClosed, "true")
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusOK)
}

// delete handles DELETE.
func (s *server) delete(c echo.Context, name string) error {
	if err := s.streams.Delete(c.Request().Context(), name); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusNoContent)
}
