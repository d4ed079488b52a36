package picohttp

import (
	"context"
	"errors"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/ports"
)

// controlEvent is the payload of an SSE control event.
type controlEvent struct {
	NextSeq  uint64 `json:"next_seq"`
	UpToDate bool   `json:"up_to_date"`
	Closed   bool   `json:"closed,omitempty"`
}

// streamEvents handles GET /name?live=sse, in the original's form: each
// page read is one data event holding the page's records as a JSON array,
// a control event marks each catch-up, and every event's id is the offset
// to read next, where a reconnect's Last-Event-ID resumes.
func (s *server) streamEvents(c echo.Context, name string, rr readRequest) error {
	ctx := c.Request().Context()
	res, err := s.streams.Read(ctx, name, rr.from, rr.limits)
	if err != nil {
		return err // before the headers, so a 404 is still possible
	}
	leave, err := livehttp.Enter(s.cfg.LiveReaders)
	if err != nil {
		return err
	}
	defer leave()
	es := livehttp.Start(c.Response(), c.Response().Writer, livehttp.Options{KeepAlive: s.keepAlive})
	defer es.Close()
	end, stopEnd := livehttp.After(s.cfg.SSEMaxDuration)
	defer stopEnd()
	announced := false // an up-to-date control event went out since the last data
	for {
		// A page's events, and the control event after them, go out in one
		// write and flush, a catch-up page's in its turn.
		release, err := livehttp.PageTurn(ctx, s.cfg.Reads, res)
		if err != nil {
			return nil
		}
		if len(res.Records) > 0 {
			es.QueueEncoded(s.dataEvents(es, res))
			announced = false
		}
		var id [20]byte
		next := string(strconv.AppendUint(id[:0], res.Next, 10))
		if res.UpToDate && res.Closed {
			es.Queue("control", next, appendControlJSON(nil, controlEvent{NextSeq: res.Next, UpToDate: true, Closed: true}))
			_ = es.Flush()
			return nil
		}
		if res.UpToDate && !announced {
			var buf [64]byte
			es.Queue("control", next, appendControlJSON(buf[:0], controlEvent{NextSeq: res.Next, UpToDate: true}))
			announced = true
		}
		err = es.Flush()
		release()
		if err != nil {
			return nil
		}
		if res.UpToDate || len(res.Records) == 0 {
			if !es.Wait(ctx, res.Changed, s.cfg.Done, end) {
				return nil
			}
		} else if livehttp.Ended(ctx.Done(), s.cfg.Done, end) {
			return nil
		}
		if res, err = s.streams.Read(ctx, name, res.Next, rr.limits); err != nil {
			s.logStreamEnd(name, err)
			return nil
		}
	}
}

// dataEvents is the data event of a page: its records as a JSON read page,
// with the offset after them as the id; the readers of a stream at one
// position share one encoding.
func (s *server) dataEvents(es *livehttp.EventStream, res ports.ReadResult) []byte {
	next := res.From + uint64(len(res.Records))
	key := livehttp.PageKey{ID: res.ID, From: res.From, Next: next, Form: formEvents}
	if b, ok := s.shared.Load(key); ok {
		return b
	}
	var id [20]byte
	b := es.AppendEvent(nil, "data", string(strconv.AppendUint(id[:0], next, 10)), picowire.AppendJSONRecords(nil, res.From, res.Records))
	s.shared.Store(key, b)
	return b
}

// Forms of a page that Shared keeps, for its keys.
const (
	formEvents = iota // an event stream's data events
	formJSON          // a read's body in each format
	formBinary
	formRaw
)

// logStreamEnd logs why an event stream stopped, unless it is ordinary: the
// stream was deleted, or the client left.
func (s *server) logStreamEnd(name string, err error) {
	var redirect *ports.RedirectError
	switch {
	case errors.Is(err, ports.ErrStreamNotFound), errors.As(err, &redirect),
		errors.Is(err, ports.ErrUnavailable), errors.Is(err, context.Canceled):
		return
	}
	s.log.Warn("pico event stream ended", "stream", name, "err", err)
}

// appendControlJSON appends ev as json.Marshal encodes it, without its
// reflection: a control event goes to every reader after every append.
func appendControlJSON(b []byte, ev controlEvent) []byte {
	b = append(b, `{"next_seq":`...)
	b = strconv.AppendUint(b, ev.NextSeq, 10)
	b = append(b, `,"up_to_date":`...)
	b = strconv.AppendBool(b, ev.UpToDate)
	if ev.Closed {
		b = append(b, `,"closed":true`...)
	}
	return append(b, '}')
}
