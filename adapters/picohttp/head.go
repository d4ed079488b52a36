package picohttp

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
)

// head handles HEAD /name: the stream's configuration and offsets.
func (s *server) head(c echo.Context, name string) error {
	info, err := s.streams.Head(c.Request().Context(), name)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, info.Config.ContentType)
	headerval.SetUint(h, headerNextSeq, info.Next)
	headerval.SetUint(h, headerStartSeq, info.Start)
	if info.Config.IdleTTLSec > 0 {
		headerval.SetUint(h, headerTTL, info.Config.IdleTTLSec)
	}
	if info.Config.TTLSec > 0 {
		headerval.SetUint(h, headerRetention, info.Config.TTLSec)
	}
	if info.Config.Schema != "" {
		h.Set(headerSchema, info.Config.Schema)
		h.Set(headerSchemaCheck, strconv.FormatBool(info.Config.SchemaValidate))
	}
	if info.Config.ExpiresAtMs > 0 {
		h.Set(headerExpiresAt, headerval.FormatExpiresAt(info.Config.ExpiresAtMs))
	}
	if info.Closed {
		h.Set(headerClosed, "true")
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusOK)
}

// delete handles DELETE /name.
func (s *server) delete(c echo.Context, name string) error {
	if err := s.streams.Delete(c.Request().Context(), name); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
