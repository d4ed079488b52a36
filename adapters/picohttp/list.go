package picohttp

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/domain"
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
	TTL         uint64 `json:"ttl,omitempty"`       // the idle lifetime, Pico-TTL
	Retention   uint64 `json:"retention,omitempty"` // record retention, Pico-Retention
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
	ctx := c.Request().Context()
	grant, scoped := authgate.GrantOf(ctx)
	if !scoped {
		grant.Scope = domain.RootScope()
	}
	page, err := visiblePage(ctx, s.streams, grant.Scope, q.Get("prefix"), q.Get("start_after"), int(limit))
	if err != nil {
		return err
	}
	body := listBody{Streams: make([]listEntry, 0, len(page.Streams)), HasMore: page.HasMore}
	for _, info := range page.Streams {
		info.Name = grant.Scope.Relative(info.Name)
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

// maxListScans bounds the pages one listing reads to fill a page with
// streams the caller's scope covers.
const maxListScans = 16

// visiblePage lists the streams scope covers, with the client's prefix and
// start inside an auto-prefixed scope's prefix.
func visiblePage(ctx context.Context, streams ports.Streams, scope domain.Scope, prefix, after string, limit int) (ports.ListPage, error) {
	prefix = scope.Resolve(prefix)
	if after != "" {
		after = scope.Resolve(after)
	}
	var out ports.ListPage
	for range maxListScans {
		page, err := streams.List(ctx, prefix, after, limit)
		if err != nil {
			return out, err
		}
		for _, info := range page.Streams {
			if scope.Streams.Matches(info.Name) {
				out.Streams = append(out.Streams, info)
			}
		}
		out.HasMore = page.HasMore
		if len(out.Streams) >= limit || !page.HasMore || len(page.Streams) == 0 {
			break
		}
		after = page.Streams[len(page.Streams)-1].Name
	}
	if len(out.Streams) > limit {
		out.Streams, out.HasMore = out.Streams[:limit], true
	}
	return out, nil
}

func listEntryOf(info ports.StreamInfo) listEntry {
	e := listEntry{Name: info.Name, ContentType: info.Config.ContentType, StartSeq: info.Start,
		NextSeq: info.Next, Closed: info.Closed, TTL: info.Config.IdleTTLSec, Retention: info.Config.TTLSec}
	if info.Config.ExpiresAtMs > 0 {
		e.ExpiresAt = headerval.FormatExpiresAt(info.Config.ExpiresAtMs)
	}
	return e
}
