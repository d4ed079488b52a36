package dshttp

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/ports"
)

// Live modes.
const (
	liveLongPoll = "long-poll"
	liveSSE      = "sse"
)

// readRequest is a parsed GET.
type readRequest struct {
	from   position
	live   string
	cursor string // the client's echo of Stream-Cursor
}

func parseReadRequest(r *http.Request) (readRequest, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return readRequest{}, badRequest("malformed query: %v", err)
	}
	rr := readRequest{live: q.Get("live"), cursor: q.Get("cursor")}
	from, present, err := offsetParam(q)
	if err != nil {
		return rr, err
	}
	rr.from = from
	switch {
	case rr.live != "" && rr.live != liveLongPoll && rr.live != liveSSE:
		return rr, badRequest("live must be long-poll or sse, got %s", headerval.Clip(rr.live))
	case rr.live != "" && !present:
		return rr, badRequest("a live read needs an offset")
	}
	return rr, nil
}

// read handles GET: catch-up, long-poll or server-sent events.
func (s *server) read(c echo.Context, name string) error {
	rr, err := parseReadRequest(c.Request())
	if err != nil {
		return err
	}
	if rr.from.now && rr.live == "" {
		return s.readNow(c, name)
	}
	if rr.from.now {
		// A live read goes on from the tail it starts at.
		info, err := s.streams.Head(c.Request().Context(), name)
		if err != nil {
			return err
		}
		rr.from.at = info.Next
	}
	switch {
	case rr.live == liveSSE:
		return s.streamEvents(c, name, rr)
	case rr.live == liveLongPoll:
		return s.longPoll(c, name, rr)
	}
	res, err := s.readPage(c.Request().Context(), name, rr.from)
	if err != nil {
		return err
	}
	return s.writePage(c, name, res, "")
}

// readPage reads one chunk from pos. An offset the client named that is
// below the first record kept is gone: its records were trimmed.
func (s *server) readPage(ctx context.Context, name string, pos position) (ports.ReadResult, error) {
	res, err := s.streams.Read(ctx, name, pos.at, s.limits())
	if err == nil && pos.given && res.From > pos.at {
		return res, statusError(http.StatusGone, "offset %s is before the first offset kept, %s",
			formatOffset(pos.at), formatOffset(res.From))
	}
	return res, err
}

// readNow answers offset=now: no data, only the tail. It reads at the tail
// (ReadTail), in one call: a read is an access that renews the idle TTL,
// and Head is not.
func (s *server) readNow(c echo.Context, name string) error {
	res, err := s.streams.ReadTail(c.Request().Context(), name)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(headerNextOffset, formatOffset(res.Next))
	h.Set(headerUpToDate, "true")
	if res.Closed && res.Tail == res.Next {
		h.Set(headerClosed, "true")
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	contentType := contentTypeOf(res.Config)
	return c.Blob(http.StatusOK, contentType, pageBody(contentType, nil))
}

// writePage answers with one chunk of records. cursor, when set, is the
// Stream-Cursor of a live read.
func (s *server) writePage(c echo.Context, name string, res ports.ReadResult, cursor string) error {
	h := c.Response().Header()
	eof := res.Closed && res.UpToDate
	h.Set(headerNextOffset, formatOffset(res.Next))
	if res.UpToDate {
		h.Set(headerUpToDate, "true")
		h.Set(echo.HeaderCacheControl, cacheNoCache) // the tail moves: revalidate
	} else {
		h.Set(echo.HeaderCacheControl, cacheHistory)
	}
	if eof {
		h.Set(headerClosed, "true")
	}
	if cursor != "" {
		h.Set(headerCursor, cursor)
	}
	tag := pageETag(name, res.ID, res.From, res.Next, eof)
	h.Set("ETag", tag)
	if headerval.ETagMatches(c.Request().Header.Get("If-None-Match"), tag) {
		return c.NoContent(http.StatusNotModified)
	}
	release, err := livehttp.PageTurn(c.Request().Context(), s.cfg.Reads, res)
	if err != nil {
		return err
	}
	defer release()
	contentType := contentTypeOf(res.Config)
	if !res.UpToDate {
		// A catch-up page is read once: encoded in a reused buffer.
		return livehttp.WithPageBuffer(func(b []byte) []byte { return appendPageBody(b, contentType, res.Records) },
			func(b []byte) error { return c.Blob(http.StatusOK, contentType, b) })
	}
	return c.Blob(http.StatusOK, contentType, s.pageBody(contentType, res))
}

// pageBody is pageBody, shared by the readers of one page (the live readers
// of a stream an append woke).
func (s *server) pageBody(contentType string, res ports.ReadResult) []byte {
	if len(res.Records) == 0 {
		return pageBody(contentType, res.Records)
	}
	key := livehttp.PageKey{ID: res.ID, From: res.From, Next: res.From + uint64(len(res.Records)), Form: pageForm(formBody, contentType)}
	if b, ok := s.shared.Load(key); ok {
		return b
	}
	b := pageBody(contentType, res.Records)
	s.shared.Store(key, b)
	return b
}

// pageETag names a chunk's content: the records [from, next) of one
// incarnation of the stream, and whether it ends the stream (so a closed
// stream's last chunk does not revalidate as the open one).
func pageETag(name string, id, from, next uint64, eof bool) string {
	var b strings.Builder
	b.WriteByte('"')
	b.WriteString(base64.RawURLEncoding.EncodeToString([]byte(name)))
	b.WriteByte(':')
	b.WriteString(strconv.FormatUint(id, 10))
	b.WriteByte(':')
	b.WriteString(formatOffset(from))
	b.WriteByte(':')
	b.WriteString(formatOffset(next))
	if eof {
		b.WriteString(":c")
	}
	b.WriteByte('"')
	return b.String()
}
