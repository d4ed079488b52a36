// Package reqlog is the request log every listener shares: each request
// gets an id (the client's X-Request-Id when it is a sane one, else a new
// one), echoed in the response, and at debug level one line when it ends:
// method, route template, path, status, duration and bytes. No header is
// logged, so neither the Authorization header nor a token ever is.
package reqlog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Header carries the request id both ways.
const Header = "X-Request-Id"

// StreamRoute is the route template of a stream listener, where every
// path names a stream: a stream name is data, so no log line names it
// but the debug one's path.
const StreamRoute = "/{stream}"

// maxIDLen bounds an id taken from a client.
const maxIDLen = 128

// Wrap logs next's requests on logger; defaultRoute is the route template
// of a request whose handler names none (SetRoute).
func Wrap(next http.Handler, logger *slog.Logger, defaultRoute string) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(Header)
		if !saneID(id) {
			id = newID()
		}
		w.Header().Set(Header, id)
		if !logger.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r) // no copy of the request on the hot path
			return
		}
		e := &entry{route: defaultRoute}
		ctx := context.WithValue(r.Context(), entryKey{}, e)
		rw := &recorder{ResponseWriter: w}
		start := time.Now()
		next.ServeHTTP(rw, r.WithContext(ctx))
		logger.LogAttrs(ctx, slog.LevelDebug, "request", slog.String("id", id), slog.String("method", r.Method),
			slog.String("route", e.route), slog.String("path", r.URL.EscapedPath()), slog.Int("status", rw.statusCode()),
			slog.Duration("duration", time.Since(start)), slog.Int64("bytes", rw.bytes))
	})
}

// SetRoute names the route template of the request ctx belongs to, for
// its log line; it does nothing when the request is not being logged.
func SetRoute(ctx context.Context, template string) {
	if e, ok := ctx.Value(entryKey{}).(*entry); ok {
		e.route = template
	}
}

type (
	entryKey struct{}
	entry    struct{ route string }
)

// saneID accepts a client's id when it is short and printable ASCII, so
// that it cannot forge log lines or bloat them.
func saneID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// newID is a process-random prefix and a counter: unique without a
// random read per request.
func newID() string {
	return idPrefix + strconv.FormatUint(idCounter.Add(1), 36)
}

var (
	idPrefix  = randomPrefix()
	idCounter atomic.Uint64
)

func randomPrefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail
	return hex.EncodeToString(b) + "-"
}

// recorder notes the status and the body bytes of a response. Unwrap
// lets http.ResponseController reach the writer's Flush and deadlines,
// which live reads use.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Flush keeps the writer a Flusher for code that asserts it.
func (r *recorder) Flush() {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}
