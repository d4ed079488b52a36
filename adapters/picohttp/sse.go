package picohttp

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// eventStream writes server-sent events, flushing each one so it reaches
// the client at once, and keeps an idle connection open with comments. It
// knows nothing of the wire protocol, so any listener can use it.
type eventStream struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	keepAlive time.Duration
	lastWrite time.Time
	// err is the first write failure: the client went away.
	err error
}

// startEventStream sends the 200 and the event-stream headers.
// flushTarget is the writer that can flush (the one under any wrapper).
func startEventStream(w, flushTarget http.ResponseWriter, keepAlive time.Duration) *eventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", cacheNoCache)
	w.WriteHeader(http.StatusOK)
	es := &eventStream{w: w, rc: http.NewResponseController(flushTarget), keepAlive: keepAlive}
	es.flush()
	return es
}

// send writes one event; data may span lines.
func (es *eventStream) send(event, id string, data []byte) error {
	b := make([]byte, 0, len(data)+len(event)+len(id)+32)
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, '\n')
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	for _, line := range splitLines(data) {
		b = append(b, "data: "...)
		b = append(b, line...)
		b = append(b, '\n')
	}
	b = append(b, '\n')
	return es.write(b)
}

// comment writes a comment line, which clients ignore.
func (es *eventStream) comment(text string) error {
	return es.write([]byte(": " + text + "\n\n"))
}

func (es *eventStream) write(b []byte) error {
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

func (es *eventStream) flush() error {
	// A writer that cannot flush still delivers, only later.
	if err := es.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		es.err = err
	}
	return es.err
}

// wait blocks until changed fires (true), or until ctx ends, stop closes or
// end fires (false), writing a keep-alive comment after each keepAlive of
// silence.
func (es *eventStream) wait(ctx context.Context, changed, stop <-chan struct{}, end <-chan time.Time) bool {
	for es.err == nil {
		idle := time.NewTimer(es.keepAlive - time.Since(es.lastWrite))
		select {
		case <-changed:
			idle.Stop()
			return true
		case <-idle.C:
			_ = es.comment("keep-alive")
		case <-ctx.Done():
			idle.Stop()
			return false
		case <-stop:
			idle.Stop()
			return false
		case <-end:
			idle.Stop()
			return false
		}
	}
	return false
}

// splitLines splits data on CRLF, CR and LF, the line ends of the event
// stream format, so no line can break an event apart.
func splitLines(data []byte) [][]byte {
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
