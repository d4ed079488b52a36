package dshttp

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/ports"
)

// longPoll answers with records as soon as there are some, or 204 when
// the wait ends at the tail. A closed stream's tail answers at once.
func (s *server) longPoll(c echo.Context, name string, rr readRequest) error {
	ctx := c.Request().Context()
	read := func() (ports.ReadResult, error) { return s.readPage(ctx, name, rr.from) }
	res, err := livehttp.AwaitRecords(ctx, s.cfg.Done, s.cfg.LongPollTimeout, s.cfg.LiveReaders, read)
	if err != nil {
		return err
	}
	if len(res.Records) > 0 || !res.UpToDate {
		return s.writePage(c, name, res, s.cursor(rr.cursor))
	}
	h := c.Response().Header()
	h.Set(headerNextOffset, formatOffset(res.Next))
	h.Set(headerUpToDate, "true")
	if res.Closed {
		h.Set(headerClosed, "true") // and no cursor: there is nothing to wait for
	} else {
		h.Set(headerCursor, s.cursor(rr.cursor))
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusNoContent)
}
