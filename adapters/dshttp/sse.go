package dshttp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// controlEvent is the payload of an SSE control event.
type controlEvent struct {
	StreamNextOffset string `json:"streamNextOffset"`
	StreamCursor     string `json:"streamCursor,omitempty"`
	UpToDate         bool   `json:"upToDate,omitempty"`
	StreamClosed     bool   `json:"streamClosed,omitempty"`
}

// streamEvents handles GET ?live=sse: each chunk read is one data event
// followed by a control event with the offset to resume from. The
// response ends at the end of a closed stream, after SSEMaxDuration, on
// shutdown, or when the client leaves.
func (s *server) streamEvents(c echo.Context, name string, rr readRequest) error {
	ctx := c.Request().Context()
	res, err := s.readPage(ctx, name, rr.from)
	if err != nil {
		return err // before the headers, so a 404 is still possible
	}
	leave, err := livehttp.Enter(s.cfg.LiveReaders)
	if err != nil {
		return err
	}
	defer leave()
	contentType := contentTypeOf(res.Config)
	binary := !isTextual(contentType)
	form := pageForm(formEvent, contentType)
	if binary {
		c.Response().Header().Set(headerSSEEncoding, "base64")
	}
	es := livehttp.Start(c.Response(), c.Response().Writer, livehttp.Options{KeepAlive: s.keepAlive, TightData: true})
	defer es.Close()
	end, stopEnd := livehttp.After(s.cfg.SSEMaxDuration)
	defer stopEnd()
	announced := false // a control event describes where the client is
	var cursor uint64  // the last cursor sent
	for {
		eof := res.Closed && res.UpToDate
		release, err := livehttp.PageTurn(ctx, s.cfg.Reads, res) // a catch-up page waits its turn
		if err != nil {
			return nil
		}
		if len(res.Records) > 0 {
			es.QueueEncoded(s.dataEvent(es, contentType, form, binary, res)) // goes out with its control event
			announced = false
		}
		if !announced || eof {
			var buf [128]byte
			_ = es.Send("control", "", s.appendControl(buf[:0], res, s.streamCursor(rr.cursor, &cursor)))
			announced = true
		}
		release()
		if eof || es.Err() != nil {
			return nil
		}
		if res.UpToDate {
			if !es.Wait(ctx, res.Changed, s.cfg.Done, end) {
				return nil
			}
		} else if livehttp.Ended(ctx.Done(), s.cfg.Done, end) {
			return nil
		}
		next := res.Next
		if res, err = s.streams.Read(ctx, name, next, s.limits()); err != nil {
			s.logStreamEnd(name, err)
			return nil
		}
		if res.From > next {
			// Records this client has not seen were trimmed (retention):
			// end here, so that it comes back from next and is told so
			// (410), rather than skip them unawares.
			return nil
		}
	}
}

// dataEvent is the data event of a page's records, in form (pageForm);
// the readers of a stream at one position share one encoding.
func (s *server) dataEvent(es *livehttp.EventStream, contentType string, form uint8, binary bool, res ports.ReadResult) []byte {
	key := livehttp.PageKey{ID: res.ID, From: res.From, Next: res.From + uint64(len(res.Records)), Form: form}
	if b, ok := s.shared.Load(key); ok {
		return b
	}
	b := es.AppendEvent(nil, "data", "", eventData(contentType, binary, res.Records))
	s.shared.Store(key, b)
	return b
}

// Forms of a page that Shared keeps, for its keys.
const (
	formEvent = iota // an event stream's data event
	formBody         // a read's body
)

// pageForm is form for a stream of contentType, which decides how its
// records are framed.
func pageForm(form uint8, contentType string) uint8 {
	if isJSON(contentType) {
		form |= 2
	}
	if !isTextual(contentType) {
		form |= 4
	}
	return form
}

// eventData is a data event's payload: the chunk's records as one JSON
// array, as text, or base64 for anything an event stream cannot carry.
func eventData(contentType string, binary bool, records []domain.Record) []byte {
	body := pageBody(contentType, records)
	if !binary {
		return body
	}
	out := make([]byte, base64.StdEncoding.EncodedLen(len(body)))
	base64.StdEncoding.Encode(out, body)
	return out
}

// appendControl appends a control event's payload, with cursor unless the
// stream is closed and read to its end.
func (s *server) appendControl(b []byte, res ports.ReadResult, cursor string) []byte {
	ev := controlEvent{StreamNextOffset: formatOffset(res.Next), UpToDate: res.UpToDate}
	if res.Closed && res.UpToDate {
		ev.StreamClosed = true // and no cursor: the client must not come back
	} else {
		ev.StreamCursor = cursor
	}
	return appendControlJSON(b, ev)
}

// appendControlJSON appends ev as json.Marshal encodes it, without its
// reflection when its strings are offsets and cursors (digits and
// underscores, which JSON does not escape): a control event goes to every
// reader after every append.
func appendControlJSON(b []byte, ev controlEvent) []byte {
	if !plainJSONString(ev.StreamNextOffset) || !plainJSONString(ev.StreamCursor) {
		m, _ := json.Marshal(ev)
		return append(b, m...)
	}
	b = append(b, `{"streamNextOffset":"`...)
	b = append(b, ev.StreamNextOffset...)
	b = append(b, '"')
	if ev.StreamCursor != "" {
		b = append(b, `,"streamCursor":"`...)
		b = append(b, ev.StreamCursor...)
		b = append(b, '"')
	}
	if ev.UpToDate {
		b = append(b, `,"upToDate":true`...)
	}
	if ev.StreamClosed {
		b = append(b, `,"streamClosed":true`...)
	}
	return append(b, '}')
}

func plainJSONString(v string) bool {
	for i := range len(v) {
		if c := v[i]; (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// isTextual reports whether records of contentType travel in an event
// stream as they are: text and JSON, which are UTF-8.
func isTextual(contentType string) bool {
	mediaType, _, _ := strings.Cut(contentType, ";")
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(mediaType)), "text/") || isJSON(contentType)
}

// logStreamEnd logs why an event stream stopped, unless it is ordinary: the
// stream was deleted, or the client left.
func (s *server) logStreamEnd(name string, err error) {
	switch {
	case errors.Is(err, ports.ErrStreamNotFound), errors.Is(err, ports.ErrStreamGone), errors.As(err, new(*ports.RedirectError)),
		errors.Is(err, ports.ErrUnavailable), errors.Is(err, context.Canceled):
		return
	}
	s.log.Warn("durable streams event stream ended", "stream", name, "err", err)
}
