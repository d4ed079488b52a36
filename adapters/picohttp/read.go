package picohttp

import (
	"encoding/base64"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Read formats and live modes.
const (
	formatJSON   = "json"
	formatBinary = "binary"
	formatRaw    = "raw"
	liveLongPoll = "long-poll"
	liveSSE      = "sse"
)

// readRequest is a parsed GET /name.
type readRequest struct {
	from    uint64
	fromNow bool // seq=now: from is the tail (ReadTail, or Head for a live read)
	limits  ports.ReadLimits
	format  string
	live    string
}

func (s *server) parseReadRequest(r *http.Request) (readRequest, error) {
	q := r.URL.Query()
	rr := readRequest{format: q.Get("format"), live: q.Get("live")}
	switch rr.format {
	case "":
		rr.format = formatJSON
	case formatJSON, formatBinary, formatRaw:
	default:
		return rr, badRequest("format must be json, binary or raw, got %s", headerval.Clip(rr.format))
	}
	switch rr.live {
	case "", liveLongPoll, liveSSE:
	default:
		return rr, badRequest("live must be long-poll or sse, got %s", headerval.Clip(rr.live))
	}
	var err error
	if rr.limits, err = s.readLimits(q); err != nil {
		return rr, err
	}
	return rr, rr.setPosition(q.Get("seq"), r.Header.Get(headerLastEventID))
}

func (s *server) readLimits(q url.Values) (ports.ReadLimits, error) {
	count, _, err := optionalUint("count", q.Get("count"))
	if err != nil {
		return ports.ReadLimits{}, err
	}
	bytes, _, err := optionalUint("bytes", q.Get("bytes"))
	if err != nil {
		return ports.ReadLimits{}, err
	}
	ceiling := max(s.cfg.MaxChunkBytes, readBytesCeiling)
	lim := ports.ReadLimits{Count: int(min(count, math.MaxInt32)), Bytes: s.cfg.MaxChunkBytes}
	if bytes > 0 {
		lim.Bytes = int(min(bytes, uint64(ceiling)))
	}
	return lim, nil
}

// setPosition resolves where a read starts: the seq query, else an event
// stream's Last-Event-ID (every event's id is the offset to read next),
// else 0.
func (rr *readRequest) setPosition(seq, lastEventID string) error {
	switch {
	case seq == "now":
		rr.fromNow = true
	case seq != "":
		from, err := picowire.ParseSeq(seq)
		if err != nil {
			return badRequest("seq must be an offset, a negative number (the start) or now, got %s", headerval.Clip(seq))
		}
		rr.from = from
	case lastEventID != "":
		id, err := headerval.ParseUint(lastEventID)
		if err != nil {
			return badRequest("%s must be a record offset, got %s", headerLastEventID, headerval.Clip(lastEventID))
		}
		rr.from = id
	}
	return nil
}

// read handles GET /name.
func (s *server) read(c echo.Context, name string) error {
	rr, err := s.parseReadRequest(c.Request())
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if rr.fromNow && rr.live == "" {
		res, err := s.streams.ReadTail(ctx, name) // one call: the read finds the tail
		if err != nil {
			return err
		}
		return s.writePage(c, name, rr.format, res)
	}
	if rr.fromNow {
		info, err := s.streams.Head(ctx, name)
		if err != nil {
			return err
		}
		rr.from = info.Next
	}
	if rr.live == liveSSE {
		return s.streamEvents(c, name, rr)
	}
	read := func() (ports.ReadResult, error) { return s.streams.Read(ctx, name, rr.from, rr.limits) }
	if rr.live == liveLongPoll {
		return s.longPoll(c, name, rr.format, read)
	}
	res, err := read()
	if err != nil {
		return err
	}
	return s.writePage(c, name, rr.format, res)
}

// longPoll answers with records as soon as there are some, or 204 when the
// wait ends at the tail.
func (s *server) longPoll(c echo.Context, name, format string, read func() (ports.ReadResult, error)) error {
	res, err := livehttp.AwaitRecords(c.Request().Context(), s.cfg.Done, s.cfg.LongPollTimeout, s.cfg.LiveReaders, read)
	if err != nil {
		return err
	}
	if len(res.Records) > 0 || !res.UpToDate {
		return s.writePage(c, name, format, res)
	}
	h := c.Response().Header()
	headerval.SetUint(h, headerNextSeq, res.Next)
	h.Set(headerUpToDate, "true")
	headerval.SetUint(h, headerCursor, res.Next)
	if res.Closed {
		h.Set(headerClosed, "true")
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusNoContent)
}

// writePage answers a read with one page of records.
func (s *server) writePage(c echo.Context, name, format string, res ports.ReadResult) error {
	h := c.Response().Header()
	closedAtTail := res.Closed && res.UpToDate
	headerval.SetUint(h, headerNextSeq, res.Next)
	headerval.SetUint(h, headerCursor, res.Next)
	if res.UpToDate {
		h.Set(headerUpToDate, "true")
		h.Set(echo.HeaderCacheControl, cacheNoCache) // the tail moves: revalidate
	} else {
		h.Set(echo.HeaderCacheControl, cacheImmutable) // history never changes
	}
	if closedAtTail {
		h.Set(headerClosed, "true")
	}
	// Without a seq query the page depends on Last-Event-ID, so caches
	// must key on it.
	h.Set(echo.HeaderVary, headerLastEventID)
	tag := pageETag(name, format, res.ID, res.From, res.Next, closedAtTail)
	h.Set("ETag", tag)
	if headerval.ETagMatches(c.Request().Header.Get("If-None-Match"), tag) {
		return c.NoContent(http.StatusNotModified)
	}
	release, err := livehttp.PageTurn(c.Request().Context(), s.cfg.Reads, res)
	if err != nil {
		return err
	}
	defer release()
	if !res.UpToDate {
		// A catch-up page is read once: encoded in a reused buffer.
		return livehttp.WithPageBuffer(func(b []byte) []byte { return appendPage(b, format, res) },
			func(b []byte) error { return c.Blob(http.StatusOK, mediaTypeOf(format, res), b) })
	}
	body, mediaType := s.encodePage(format, res)
	return c.Blob(http.StatusOK, mediaType, body)
}

// encodePage is encodePage, shared by the readers of one page (the live
// readers of a stream an append woke).
func (s *server) encodePage(format string, res ports.ReadResult) ([]byte, string) {
	if len(res.Records) == 0 {
		return encodePage(format, res)
	}
	key := livehttp.PageKey{ID: res.ID, From: res.From, Next: res.From + uint64(len(res.Records)), Form: formOf(format)}
	if b, ok := s.shared.Load(key); ok {
		return b, mediaTypeOf(format, res)
	}
	b, mediaType := encodePage(format, res)
	s.shared.Store(key, b)
	return b, mediaType
}

func formOf(format string) uint8 {
	switch format {
	case formatBinary:
		return formBinary
	case formatRaw:
		return formRaw
	default:
		return formJSON
	}
}

// pageETag names a page's content: the same records of the same
// incarnation of the stream (id: a stream deleted and made again under its
// name is another), in the same format.
func pageETag(name, format string, id, from, next uint64, closed bool) string {
	var b strings.Builder
	b.WriteByte('"')
	b.WriteString(base64.RawURLEncoding.EncodeToString([]byte(name + ":" + format)))
	b.WriteByte(':')
	b.WriteString(strconv.FormatUint(id, 10))
	b.WriteByte(':')
	b.WriteString(strconv.FormatUint(from, 10))
	b.WriteByte(':')
	b.WriteString(strconv.FormatUint(next, 10))
	if closed {
		b.WriteString(":c")
	}
	b.WriteByte('"')
	return b.String()
}

func encodePage(format string, res ports.ReadResult) ([]byte, string) {
	return appendPage(nil, format, res), mediaTypeOf(format, res)
}

// mediaTypeOf is the Content-Type of a page in format.
func mediaTypeOf(format string, res ports.ReadResult) string {
	switch format {
	case formatBinary:
		return picowire.BatchContentType
	case formatRaw:
		if res.Config.ContentType == "" {
			return domain.DefaultContentType
		}
		return res.Config.ContentType
	default:
		return echo.MIMEApplicationJSON
	}
}

func appendBodies(b []byte, records []domain.Record) []byte {
	n := 0
	for _, r := range records {
		n += len(r.Body)
	}
	b = slices.Grow(b, n)
	for _, r := range records {
		b = append(b, r.Body...)
	}
	return b
}

// appendPage appends a page in format to b.
func appendPage(b []byte, format string, res ports.ReadResult) []byte {
	switch format {
	case formatBinary:
		return picowire.AppendBatchResponse(b, res.From, res.Records)
	case formatRaw:
		return appendBodies(b, res.Records)
	default:
		return picowire.AppendJSONRecords(b, res.From, res.Records)
	}
}
