package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeDS is an in-memory Durable Streams server, enough for the client
// verbs. Offsets count messages (appends, for raw streams).
type fakeDS struct {
	mu       sync.Mutex
	streams  map[string]*fakeDSStream
	appends  []fakeAppend // every POST that carried a body, in order
	reads    []string     // query of every GET of a stream
	pageSize int          // messages per read response
}

type fakeDSStream struct {
	contentType string
	messages    [][]byte
	closed      bool
	ttl         uint64
}

func (s *fakeDSStream) json() bool {
	media, _, _ := mime.ParseMediaType(s.contentType)
	return media == "application/json"
}

func dsOffset(n int) string { return fmt.Sprintf("%016d_%016d", 0, n) }

func newFakeDS(t *testing.T) (*fakeDS, string) {
	f := &fakeDS{streams: map[string]*fakeDSStream{}, pageSize: 1000}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// add creates a stream holding messages.
func (f *fakeDS) add(name, contentType string, messages ...string) *fakeDSStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &fakeDSStream{contentType: contentType}
	for _, m := range messages {
		s.messages = append(s.messages, []byte(m))
	}
	f.streams[name] = s
	return s
}

func (f *fakeDS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.streams[r.URL.Path]
	if s == nil && r.Method != http.MethodPut {
		http.Error(w, "stream not found", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodPut:
		f.create(w, r, s)
	case http.MethodPost:
		f.post(w, r, s)
	case http.MethodGet:
		f.read(w, r, s)
	case http.MethodHead:
		s.headers(w.Header())
	case http.MethodDelete:
		delete(f.streams, r.URL.Path)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *fakeDSStream) headers(h http.Header) {
	h.Set("Content-Type", s.contentType)
	h.Set("Stream-Next-Offset", dsOffset(len(s.messages)))
	if s.ttl > 0 {
		h.Set("Stream-TTL", strconv.FormatUint(s.ttl, 10))
	}
	if s.closed {
		h.Set("Stream-Closed", "true")
	}
}

func (f *fakeDS) create(w http.ResponseWriter, r *http.Request, s *fakeDSStream) {
	ct := r.Header.Get("Content-Type")
	if s != nil && s.contentType != ct {
		http.Error(w, "stream exists with content type "+s.contentType, http.StatusConflict)
		return
	}
	status := http.StatusOK
	if s == nil {
		ttl, _ := strconv.ParseUint(r.Header.Get("Stream-TTL"), 10, 64)
		s = &fakeDSStream{contentType: ct, ttl: ttl, closed: r.Header.Get("Stream-Closed") == "true"}
		f.streams[r.URL.Path] = s
		status = http.StatusCreated
	}
	s.headers(w.Header())
	w.WriteHeader(status)
}

func (f *fakeDS) post(w http.ResponseWriter, r *http.Request, s *fakeDSStream) {
	body, _ := io.ReadAll(r.Body)
	closing := r.Header.Get("Stream-Closed") == "true"
	switch {
	case s.closed:
		http.Error(w, "stream is closed", http.StatusConflict)
		return
	case len(body) == 0 && !closing:
		http.Error(w, "empty body", http.StatusBadRequest)
		return
	case len(body) > 0 && r.Header.Get("Content-Type") != s.contentType:
		http.Error(w, "content type mismatch", http.StatusConflict)
		return
	}
	if len(body) > 0 {
		f.appends = append(f.appends, fakeAppend{contentType: r.Header.Get("Content-Type"), bodies: []string{string(body)}})
		messages := [][]byte{body}
		if s.json() {
			var array []json.RawMessage
			if json.Unmarshal(body, &array) == nil {
				messages = messages[:0]
				for _, m := range array {
					messages = append(messages, m)
				}
			}
		}
		s.messages = append(s.messages, messages...)
	}
	s.closed = s.closed || closing
	s.headers(w.Header())
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeDS) read(w http.ResponseWriter, r *http.Request, s *fakeDSStream) {
	f.reads = append(f.reads, r.URL.RawQuery)
	q := r.URL.Query()
	from := 0
	switch off := q.Get("offset"); off {
	case "-1":
	case "now":
		from = len(s.messages)
	default:
		_, pos, _ := strings.Cut(off, "_")
		n, err := strconv.Atoi(pos)
		if err != nil || n > len(s.messages) {
			http.Error(w, "bad offset "+off, http.StatusBadRequest)
			return
		}
		from = n
	}
	to := min(len(s.messages), from+f.pageSize)
	h := w.Header()
	h.Set("Content-Type", s.contentType)
	h.Set("Stream-Next-Offset", dsOffset(to))
	if to == len(s.messages) {
		h.Set("Stream-Up-To-Date", "true")
		if s.closed {
			h.Set("Stream-Closed", "true")
		}
	}
	if from == to && q.Get("live") == "long-poll" {
		if !s.closed {
			f.mu.Unlock()
			time.Sleep(20 * time.Millisecond) // a short long-poll: nothing arrives in these tests
			f.mu.Lock()
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	page := s.messages[from:to]
	if s.json() {
		w.Write(append(append([]byte{'['}, bytes.Join(page, []byte{','})...), ']'))
		return
	}
	w.Write(bytes.Join(page, nil))
}
