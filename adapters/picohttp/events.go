package picohttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// controlEvent is the payload of an SSE control event.
type controlEvent struct {
	NextSeq  uint64 `json:"next_seq"`
	UpToDate bool   `json:"up_to_date"`
	Closed   bool   `json:"closed,omitempty"`
}

// streamEvents handles GET /name?live=sse: every record is a data event
// whose id is its offset, and a control event marks each catch-up.
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
	end := time.NewTimer(s.cfg.SSEMaxDuration)
	defer end.Stop()
	announced := false // an up-to-date control event went out since the last data
	for {
		for i := range res.Records {
			seq := res.From + uint64(i)
			_ = es.Send("data", strconv.FormatUint(seq, 10), recordJSON(seq, res.Records[i]))
			announced = false
		}
		if res.UpToDate && res.Closed {
			_ = es.Send("control", "", controlJSON(controlEvent{NextSeq: res.Next, UpToDate: true, Closed: true}))
			return nil
		}
		if res.UpToDate && !announced {
			_ = es.Send("control", "", controlJSON(controlEvent{NextSeq: res.Next, UpToDate: true}))
			announced = true
		}
		if es.Err() != nil {
			return nil
		}
		if res.UpToDate || len(res.Records) == 0 {
			if !es.Wait(ctx, res.Changed, s.cfg.Done, end.C) {
				return nil
			}
		} else if livehttp.Ended(ctx.Done(), s.cfg.Done, end.C) {
			return nil
		}
		if res, err = s.streams.Read(ctx, name, res.Next, rr.limits); err != nil {
			s.logStreamEnd(name, err)
			return nil
		}
	}
}

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

// recordJSON is one record as a one-line JSON object, written by the same
// rules as a JSON read page.
func recordJSON(seq uint64, r domain.Record) []byte {
	page := picowire.EncodeJSONRecords([]picowire.SeqRecord{{Seq: seq, Record: r}})
	obj := bytes.TrimSpace(page)
	obj = bytes.TrimSuffix(bytes.TrimPrefix(obj, []byte("[")), []byte("]"))
	var line bytes.Buffer
	if json.Compact(&line, obj) != nil {
		return obj // not JSON: send splits it into data lines, still one event
	}
	return line.Bytes()
}

func controlJSON(ev controlEvent) []byte {
	b, _ := json.Marshal(ev)
	return b
}
