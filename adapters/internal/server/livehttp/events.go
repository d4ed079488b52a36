package livehttp

import (
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
	// queued holds events written by Queue, sent with the next Send.
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
	es.flush()
	return es
}

// Err returns the first write failure, nil while the client listens.
func (es *EventStream) Err() error { return es.err }

// Send writes one event, after any queued ones, in one write and flush;
// data may span lines (CR, LF or CRLF), each of which becomes a data line.
// An empty id is left out.
func (es *EventStream) Send(event, id string, data []byte) error {
	b := es.appendEvent(es.queued, event, id, data)
	es.queued = nil
	return es.write(b)
}

// Queue holds an event back until the next Send, so that events that
// belong together (a data event and the control event describing it)
// reach the client in one piece: a client that stops reading at the first
// control event it sees must not get half of them.
func (es *EventStream) Queue(event, id string, data []byte) {
	es.queued = es.appendEvent(es.queued, event, id, data)
}

func (es *EventStream) appendEvent(b []byte, event, id string, data []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, '\n')
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	for _, line := range SplitLines(data) {
		b = es.appendDataLine(b, line)
	}
	return append(b, '\n')
}

func (es *EventStream) appendDataLine(b, line []byte) []byte {
	if es.opts.TightData && (len(line) == 0 || line[0] != ' ') {
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

// Wait blocks until changed fires (true), or until ctx ends, stop closes,
// end fires or a write fails (false), writing a keep-alive comment after
// each KeepAlive of silence.
func (es *EventStream) Wait(ctx context.Context, changed, stop <-chan struct{}, end <-chan time.Time) bool {
	for es.err == nil {
		idle, cancel := es.idleTimer()
		select {
		case <-changed:
			cancel()
			return true
		case <-idle:
			_ = es.Comment("keep-alive")
		case <-ctx.Done():
			cancel()
			return false
		case <-stop:
			cancel()
			return false
		case <-end:
			cancel()
			return false
		}
	}
	return false
}

// idleTimer fires when the stream has been silent for KeepAlive; without
// keep-alives it never fires.
func (es *EventStream) idleTimer() (<-chan time.Time, func()) {
	if es.opts.KeepAlive <= 0 {
		return nil, func() {}
	}
	t := time.NewTimer(es.opts.KeepAlive - time.Since(es.lastWrite))
	return t.C, func() { t.Stop() }
}

// Ended reports, without blocking, whether any of the end signals fired.
func Ended(ctxDone, stop <-chan struct{}, end <-chan time.Time) bool {
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
