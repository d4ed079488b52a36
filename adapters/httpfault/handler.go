package httpfault

import (
	"net/http"
	"strconv"
	"time"
)

// HookPath is where faults are armed and cleared.
const HookPath = "/_test/inject-error"

// Wrap serves the hook at HookPath and applies t's faults to every other
// request before (or around) h.
func Wrap(h http.Handler, t *Table) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == HookPath {
			t.serveHook(w, r)
			return
		}
		f, jitter, ok := t.fire(r.URL.Path, r.Method)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		if !wait(r, f.delay(jitter)) {
			return
		}
		switch {
		case f.DropConnection:
			// net/http closes the connection (HTTP/1) or resets the
			// stream (HTTP/2) with nothing written, and logs nothing.
			panic(http.ErrAbortHandler)
		case f.Status != nil:
			answerInjected(w, f)
		case f.changesBody() && r.Method != http.MethodHead:
			bw := &bodyWriter{ResponseWriter: w, fault: f, rand: t.rand}
			h.ServeHTTP(bw, r)
			bw.finish()
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// wait sleeps d, reporting false if the client left first.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func answerInjected(w http.ResponseWriter, f Fault) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Access-Control-Allow-Origin", "*")
	if f.RetryAfter != nil {
		h.Set("Retry-After", strconv.Itoa(*f.RetryAfter))
		h.Set("Access-Control-Expose-Headers", "Retry-After")
	}
	w.WriteHeader(*f.Status)
	_, _ = w.Write([]byte("Injected error for testing\n"))
}

func (t *Table) serveHook(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		f, err := ParseFault(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		t.Arm(f)
	case http.MethodDelete:
		t.Clear()
	default:
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "method not allowed: POST arms a fault, DELETE clears them", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"ok":true}` + "\n"))
}
