package httpfault

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
)

// bodyWriter applies a fault's body changes to the answer it wraps: an
// event stream passes through behind the injected event; any other 200
// answer is held whole, changed, and written at finish with its new
// length.
type bodyWriter struct {
	http.ResponseWriter
	fault  Fault
	rand   func() float64
	status int
	events bool
	held   bytes.Buffer
}

func (w *bodyWriter) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	w.status = status
	w.events = strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	if w.holds() {
		return
	}
	w.ResponseWriter.WriteHeader(status)
	if e := w.fault.InjectSSEEvent; w.events && e != nil && status == http.StatusOK {
		_, _ = w.ResponseWriter.Write([]byte("event: " + e.EventType + "\ndata: " + e.Data + "\n\n"))
	}
}

func (w *bodyWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.holds() {
		return w.held.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// holds reports whether the answer is one whose body the fault changes.
func (w *bodyWriter) holds() bool {
	return w.status == http.StatusOK && !w.events && (w.fault.TruncateBodyBytes != nil || w.fault.CorruptBody)
}

// Flush passes through, except while the body is held.
func (w *bodyWriter) Flush() {
	if !w.holds() {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *bodyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held body, changed.
func (w *bodyWriter) finish() {
	if w.status == 0 || !w.holds() {
		return
	}
	body := w.held.Bytes()
	if n := w.fault.TruncateBodyBytes; n != nil && len(body) > *n {
		body = body[:*n]
	}
	if w.fault.CorruptBody {
		corrupt(body, w.rand)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(body)
}

// corrupt makes body invalid as JSON, and as most other things: it
// overwrites its first two bytes with "XY" and about a tenth of the
// others with 'Z', so the text stays valid UTF-8.
func corrupt(body []byte, rand func() float64) {
	if len(body) == 0 {
		return
	}
	copy(body, "XY")
	rest := body[min(2, len(body)):]
	for range len(rest) / 10 {
		rest[int(rand()*float64(len(rest)))] = 'Z'
	}
}
