package picohttp

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/headerval"
	"github.com/picomq/pico/ports"
)

const (
	defaultListLimit = 1000
	maxListLimit     = 10000
)

type listBody struct {
	Streams []listEntry `json:"streams"`
	HasMore bool        `json:"has_more"`
}

type listEntry struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	StartSeq    uint64 `json:"start_seq"`
	NextSeq     uint64 `json:"next_seq"`
	Closed      bool   `json:"closed"`
	TTL         uint64 `json:"ttl,omitempty"`
	ExpiresAt   string `json:"expires_at,omitempty"`
}

// list handles GET /: one page of streams in name order.
func (s *server) list(c echo.Context) error {
	q := c.Request().URL.Query()
	limit, _, err := optionalUint("limit", q.Get("limit"))
	if err != nil {
		return err
	}
	if limit > maxListLimit {
		return badRequest("limit is at most %d, got %d", maxListLimit, limit)
	}
	if limit == 0 {
		limit = defaultListLimit
	}
	page, err := s.streams.List(c.Request().Context(), q.Get("prefix"), q.Get("start_after"), int(limit))
	if err != nil {
		return err
	}
	body := listBody{Streams: make([]listEntry, 0, len(page.Streams)), HasMore: page.HasMore}
	for _, info := range page.Streams {
		body.Streams = append(body.Streams, listEntryOf(info))
	}
	c.Response().Header().Set(echo.HeaderCacheControl, cacheNoStore)
	if c.Request().Method == http.MethodHead {
		return c.NoContent(http.StatusOK)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b)
}

func listEntryOf(info ports.StreamInfo) listEntry {
	e := listEntry{Name: info.Name, ContentType: info.Config.ContentType, StartSeq: info.Start,
		NextSeq: info.Next, Closed: info.Closed, TTL: info.Config.TTLSec}
	if info.Config.ExpiresAtMs > 0 {
		e.ExpiresAt = headerval.FormatExpiresAt(info.Config.ExpiresAtMs)
	}
	return e
}
