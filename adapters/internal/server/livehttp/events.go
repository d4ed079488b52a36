package livehttp

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"
)

// Options shape an event stream.
type Options struct {
	// KeepAlive is the silence after which Wait writes a comment, so
	// proxies keep an idle connection open (0: never).
	KeepAlive time.Duration
	// TightData writes data lines as "data:payload" instead of the usual
	// "data: payload" (the Durable Streams framing). A payload line that
	// starts with a space still gets the separating space, because event
	// stream parsers strip exactly one space after the colon.
	TightData bool
}

// EventStream writes server-sent events, flushing each one so it reaches
// the client at once.
type EventStream struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	opts      Options
	lastWrite time.Time
	// idle signals idleDue KeepAlive after it was last armed (nil without
	// keep-alives).
	idle    *time.Timer
	idleDue chan struct{}
	// queued holds events written by Queue, sent with the next Send or
	// Flush; its array is reused from one write to the next.
	queued []byte
	// err is the first write failure: the client went away.
	err error
}

// Start sends the 200 with the event-stream Content-Type and Cache-Control;
// set any other header on w before. flushTarget is the writer that can
// flush (the one under any wrapper). It lifts the server's write deadline,
// which would otherwise cut every stream at the same age.
func Start(w, flushTarget http.ResponseWriter, opts Options) *EventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(flushTarget)
	_ = rc.SetWriteDeadline(time.Time{}) // unsupported means there is none
	w.WriteHeader(http.StatusOK)
	es := &EventStream{w: w, rc: rc, opts: opts, lastWrite: time.Now()}
	if opts.KeepAlive > 0 {
		due := make(chan struct{}, 1)
		es.idle = time.AfterFunc(opts.KeepAlive, func() {
			select {
			case due <- struct{}{}:
			default:
			}
		})
		es.idleDue = due
	}
	es.flush()
	return es
}

// Err returns the first write failure, nil while the client listens.
func (es *EventStream) Err() error { return es.err }

// Send writes one event, after any queued ones, in one write and flush;
// data may span lines (CR, LF or CRLF), each of which becomes a data line.
// An empty id is left out.
func (es *EventStream) Send(event, id string, data []byte) error {
	es.Queue(event, id, data)
	return es.Flush()
}

// Queue holds an event back until the next Send or Flush, so that events
// that belong together (a data event and the control event describing it)
// reach the client in one piece: a client that stops reading at the first
// control event it sees must not get half of them.
func (es *EventStream) Queue(event, id string, data []byte) {
	es.queued = es.AppendEvent(es.queued, event, id, data)
}

// QueueEncoded holds back events already encoded by AppendEvent (of an
// event stream with the same Options), as Queue does: events encoded once
// for many streams.
func (es *EventStream) QueueEncoded(events []byte) {
	es.queued = append(es.queued, events...)
}

// Flush writes the queued events, if any, in one write and flush.
func (es *EventStream) Flush() error {
	if len(es.queued) == 0 {
		return es.err
	}
	err := es.write(es.queued)
	es.queued = es.queued[:0] // the writer has copied or sent them
	return err
}

// AppendEvent appends one event, framed as Send frames it, to b.
func (es *EventStream) AppendEvent(b []byte, event, id string, data []byte) []byte {
	return AppendEvent(b, es.opts, event, id, data)
}

// AppendEvent appends one event, framed by opts as Send frames it, to b.
func AppendEvent(b []byte, opts Options, event, id string, data []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, '\n')
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		b = appendDataLine(b, opts, data[:i])
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = appendDataLine(b, opts, data)
	return append(b, '\n')
}

// appendDataLine appends one data line. The Durable Streams reference
// server writes every line as "data:" and the payload, with no space, so
// a payload line that starts with a space loses that space to the one a
// client strips after the colon, as event stream parsers do (the client
// conformance case sse-strips-single-leading-space passes against it for
// that reason, and fails against us). We write "data: " before such a
// line, so the client reads the payload back exactly, and keep doing so.
func appendDataLine(b []byte, opts Options, line []byte) []byte {
	if opts.TightData && (len(line) == 0 || line[0] != ' ') {
		b = append(b, "data:"...)
	} else {
		b = append(b, "data: "...)
	}
	b = append(b, line...)
	return append(b, '\n')
}

// Comment writes a comment line, which clients ignore.
func (es *EventStream) Comment(text string) error {
	return es.write([]byte(": " + text + "\n\n"))
}

func (es *EventStream) write(b []byte) error {
	if es.err != nil {
		return es.err
	}
	if _, err := es.w.Write(b); err != nil {
		es.err = err
		return err
	}
	es.lastWrite = time.Now()
	return es.flush()
}

func (es *EventStream) flush() error {
	// A writer that cannot flush still delivers, only later.
	if err := es.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		es.err = err
	}
	return es.err
}

// Wait blocks until changed fires (true), or until ctx ends, stop or end
// closes or a write fails (false), writing a keep-alive comment after each
// KeepAlive of silence. It waits on plain channels only: a timer's channel
// in a select costs each of many waiters woken at once a turn at the
// timer heap's lock.
func (es *EventStream) Wait(ctx context.Context, changed, stop, end <-chan struct{}) bool {
	for es.err == nil {
		select {
		case <-changed:
			return true
		case <-es.idleDue:
			// Fired KeepAlive after it was armed; a write since then puts
			// the comment off until KeepAlive after that write.
			if wait := es.opts.KeepAlive - time.Since(es.lastWrite); wait > 0 {
				es.idle.Reset(wait)
				continue
			}
			_ = es.Comment("keep-alive")
			es.idle.Reset(es.opts.KeepAlive)
		case <-ctx.Done():
			return false
		case <-stop:
			return false
		case <-end:
			return false
		}
	}
	return false
}

// Close stops the keep-alive timer; nothing is written after.
func (es *EventStream) Close() {
	if es.idle != nil {
		es.idle.Stop()
	}
}

// After returns a channel closed once d has passed, and the stop of its
// timer: an end for Wait.
func After(d time.Duration) (<-chan struct{}, func() bool) {
	ch := make(chan struct{})
	t := time.AfterFunc(d, func() { close(ch) })
	return ch, t.Stop
}

// Ended reports, without blocking, whether any of the end signals fired.
func Ended(ctxDone, stop, end <-chan struct{}) bool {
	select {
	case <-ctxDone:
		return true
	case <-stop:
		return true
	case <-end:
		return true
	default:
		return false
	}
}

// SplitLines splits data on CRLF, CR and LF, the line ends of the event
// stream format, so no payload line can break an event apart.
func SplitLines(data []byte) [][]byte {
	var lines [][]byte
	start := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			lines = append(lines, data[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, data[start:i])
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	return append(lines, data[start:])
}
