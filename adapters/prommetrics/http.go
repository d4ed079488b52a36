package prommetrics

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Protocol is a listener's wire protocol, a label value.
type Protocol int

// The protocols a listener speaks.
const (
	ProtocolPico Protocol = iota
	ProtocolDS
	ProtocolAdmin
	numProtocols
)

var protocolNames = [numProtocols]string{"pico", "ds", "admin"}

type op int

const (
	opCreate op = iota
	opAppend
	opRead
	opLiveRead
	opHead
	opDelete
	opTrim
	opClose
	opList
	opFork
	opSubscription
	opPreflight
	opProbe
	opMetrics
	opAdmin
	opOther
	numOps
)

var opNames = [numOps]string{"create", "append", "read", "live_read", "head", "delete", "trim", "close", "list", "fork",
	"subscription", "preflight", "probe", "metrics", "admin", "other"}

const (
	modeLongPoll = iota
	modeSSE
	numModes
)

var modeNames = [numModes]string{"long_poll", "sse"}

var classNames = [4]string{"2xx", "3xx", "4xx", "5xx"}

// opSeries are one protocol and operation's children, made on first use
// so that /metrics lists only the operations a protocol has served.
type opSeries struct {
	codes    [4]prometheus.Counter
	duration prometheus.Observer
}

var seriesMu sync.Mutex

func (m *Metrics) series(p Protocol, o op) *opSeries {
	slot := &m.http[p][o]
	if s := slot.Load(); s != nil {
		return s
	}
	seriesMu.Lock()
	defer seriesMu.Unlock()
	if s := slot.Load(); s != nil {
		return s
	}
	s := &opSeries{}
	for i, c := range classNames {
		s.codes[i] = m.requests.WithLabelValues(protocolNames[p], opNames[o], c)
	}
	if o != opLiveRead {
		s.duration = m.duration.WithLabelValues(protocolNames[p], opNames[o])
	}
	slot.Store(s)
	return s
}

// Handler wraps a listener's handler with the request series of protocol.
func (m *Metrics) Handler(p Protocol, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		o, mode := classify(p, r)
		s := m.series(p, o)
		if mode >= 0 {
			m.live[mode].Inc()
			defer m.live[mode].Dec()
		}
		sw := writers.Get().(*statusWriter)
		sw.ResponseWriter, sw.status = w, 0
		defer func() {
			// net/http answers a handler that panics with 500 (or drops
			// the connection).
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			if p := recover(); p != nil {
				status = http.StatusInternalServerError
				defer panic(p) // after counting: net/http still sees it
			}
			sw.ResponseWriter = nil
			writers.Put(sw)
			s.codes[statusClass(status)].Inc()
			if s.duration != nil {
				s.duration.Observe(time.Since(start).Seconds())
			}
		}()
		h.ServeHTTP(sw, r)
	})
}

// ConnState is an http.Server's ConnState hook counting open connections.
func (m *Metrics) ConnState(_ net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		m.conns.Inc()
	case http.StateClosed, http.StateHijacked:
		m.conns.Dec()
	}
}

func statusClass(code int) int {
	switch {
	case code < 300:
		return 0
	case code < 400:
		return 1
	case code < 500:
		return 2
	}
	return 3
}

// classify names a request's operation from its method, path and headers
// as the listeners route it, and its live mode (-1 if not a live read).
func classify(p Protocol, r *http.Request) (op, int) {
	if p == ProtocolAdmin {
		switch r.URL.Path {
		case "/health", "/ready":
			return opProbe, -1
		case "/metrics":
			return opMetrics, -1
		}
		return opAdmin, -1
	}
	switch r.Method {
	case http.MethodGet:
		if p == ProtocolPico && r.URL.Path == "/" {
			return opList, -1
		}
		if p == ProtocolDS && strings.Contains(r.URL.Path, "/__ds") {
			return opSubscription, -1
		}
		if mode := liveMode(r.URL.RawQuery); mode >= 0 {
			return opLiveRead, mode
		}
		return opRead, -1
	case http.MethodHead:
		if p == ProtocolPico && r.URL.Path == "/" {
			return opList, -1
		}
		return opHead, -1
	case http.MethodPut:
		if p == ProtocolDS && r.Header.Get("Stream-Forked-From") != "" {
			return opFork, -1
		}
		return opCreate, -1
	case http.MethodPost:
		if p == ProtocolDS && strings.Contains(r.URL.Path, "/__ds") {
			return opSubscription, -1
		}
		if p == ProtocolPico && r.Header.Get("Pico-Trim-Seq") != "" {
			return opTrim, -1
		}
		if r.ContentLength == 0 && r.Header.Get(closedHeader[p]) != "" {
			return opClose, -1
		}
		return opAppend, -1
	case http.MethodDelete:
		return opDelete, -1
	case http.MethodOptions:
		return opPreflight, -1
	}
	return opOther, -1
}

var closedHeader = [numProtocols]string{"Pico-Closed", "Stream-Closed", ""}

// liveMode finds live=long-poll or live=sse in a raw query without
// parsing it into a map (which would allocate on every read).
func liveMode(q string) int {
	for q != "" {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		switch kv {
		case "live=long-poll":
			return modeLongPoll
		case "live=sse":
			return modeSSE
		}
	}
	return -1
}

// statusWriter records the status a handler answers. It is pooled: a
// request costs no allocation for it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

var writers = sync.Pool{New: func() any { return new(statusWriter) }}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps SSE and long-poll responses streaming through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
