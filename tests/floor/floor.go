// Package floor is the least an append server can do and still
// acknowledge an append only once it is durable in the object store: read
// the body, hand it to pico's WAL (the same group commit, linger and
// object store adapter), wait, answer 204. It keeps no streams, offsets,
// metadata or data objects and speaks no protocol beyond that. Benchmarks
// run it beside pico so that their figures tell pico's own costs from
// those of the HTTP server, the object store and the machine.
package floor

import (
	"io"
	"net/http"
	"sync/atomic"

	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
)

// Handler answers PUT with 201 (a create: nothing to keep) and any other
// method by storing its body in log: 204 once durable, 503 if the WAL
// failed.
func Handler(log *wal.WAL) http.Handler {
	var offset atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.Method == http.MethodPut {
			w.WriteHeader(http.StatusCreated)
			return
		}
		f := &domain.Frame{Stream: 1, Epoch: 1, Offset: offset.Add(1), Records: []domain.Record{{Body: body}}}
		done := make(chan error, 1)
		err = log.Submit(f, func(err error) { done <- err })
		if err == nil {
			err = <-done // the durability point: the bulk holding f is stored
		}
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
