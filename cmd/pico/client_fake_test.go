package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

// fakePico is an in-memory Pico server, enough for the client verbs.
type fakePico struct {
	mu       sync.Mutex
	streams  map[string]*fakeStream
	appends  []fakeAppend // every POST that appended, in order
	keys     []string     // per record appended: its key, "-" for none
	reads    []string     // query of every GET of a stream
	pageSize int          // records per read page
	listPage int          // streams per list page
	// mutate, if set, changes each read page as served (not as stored).
	mutate func(page []picowire.SeqRecord) []picowire.SeqRecord
}

type fakeStream struct {
	contentType string
	start       uint64
	records     []picowire.SeqRecord // from start
	closed      bool
	ttl         uint64
}

// fakeAppend is what one append request carried.
type fakeAppend struct {
	contentType string
	bodies      []string
}

func (s *fakeStream) next() uint64 { return s.start + uint64(len(s.records)) }

func newFakePico(t *testing.T) (*fakePico, string) {
	f := &fakePico{streams: map[string]*fakeStream{}, pageSize: 1000, listPage: 1000}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// add creates a stream holding bodies, for tests that start from data.
func (f *fakePico) add(name string, bodies ...string) *fakeStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &fakeStream{contentType: "text/plain"}
	for _, b := range bodies {
		s.records = append(s.records, picowire.SeqRecord{Seq: s.next(), Record: domain.Record{Body: []byte(b)}})
	}
	f.streams[name] = s
	return s
}

func (f *fakePico) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path == "/" {
		f.list(w, r)
		return
	}
	s := f.streams[r.URL.Path]
	if s == nil && r.Method != http.MethodPut {
		fakeError(w, http.StatusNotFound, "not_found", "no such stream")
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
		s.offsetHeaders(w.Header())
	case http.MethodDelete:
		delete(f.streams, r.URL.Path)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *fakeStream) offsetHeaders(h http.Header) {
	h.Set("Content-Type", s.contentType)
	h.Set("Pico-Start-Seq", strconv.FormatUint(s.start, 10))
	h.Set("Pico-Next-Seq", strconv.FormatUint(s.next(), 10))
	if s.ttl > 0 {
		h.Set("Pico-TTL", strconv.FormatUint(s.ttl, 10))
	}
	if s.closed {
		h.Set("Pico-Closed", "true")
	}
}

func (f *fakePico) create(w http.ResponseWriter, r *http.Request, s *fakeStream) {
	ct := r.Header.Get("Content-Type")
	if s != nil && s.contentType != ct {
		fakeError(w, http.StatusConflict, "conflict", "stream exists with content type "+s.contentType)
		return
	}
	status := http.StatusOK
	if s == nil {
		ttl, _ := strconv.ParseUint(r.Header.Get("Pico-TTL"), 10, 64)
		s = &fakeStream{contentType: ct, ttl: ttl, closed: r.Header.Get("Pico-Closed") == "true"}
		f.streams[r.URL.Path] = s
		status = http.StatusCreated
	}
	s.offsetHeaders(w.Header())
	w.WriteHeader(status)
}

func (f *fakePico) post(w http.ResponseWriter, r *http.Request, s *fakeStream) {
	body, _ := io.ReadAll(r.Body)
	if trim := r.Header.Get("Pico-Trim-Seq"); trim != "" {
		seq, _ := strconv.ParseUint(trim, 10, 64)
		seq = min(max(seq, s.start), s.next())
		s.records, s.start = s.records[seq-s.start:], seq
		w.Header().Set("Pico-Start-Seq", strconv.FormatUint(s.start, 10))
		return
	}
	if s.closed {
		fakeError(w, http.StatusConflict, "closed", "stream is closed")
		return
	}
	first := s.next()
	if len(body) > 0 && !f.append(w, r, s, body) {
		return
	}
	s.closed = s.closed || r.Header.Get("Pico-Closed") == "true"
	s.offsetHeaders(w.Header())
	w.Header().Del("Pico-Start-Seq")
	if len(body) > 0 {
		w.Header().Set("Pico-Start-Seq", strconv.FormatUint(first, 10))
	}
}

func (f *fakePico) append(w http.ResponseWriter, r *http.Request, s *fakeStream, body []byte) bool {
	ct := r.Header.Get("Content-Type")
	records := []domain.Record{{Body: body}}
	if ct == picowire.BatchContentType {
		var err error
		if records, err = picowire.DecodeBatch(body, picowire.BatchLimits{MaxRecords: 1000, MaxHeaders: 10}); err != nil {
			fakeError(w, http.StatusBadRequest, "bad_request", err.Error())
			return false
		}
	}
	a := fakeAppend{contentType: ct}
	for _, rec := range records {
		a.bodies = append(a.bodies, string(rec.Body))
		if rec.Key == nil {
			f.keys = append(f.keys, "-")
		} else {
			f.keys = append(f.keys, string(rec.Key))
		}
		rec.Body = slices.Clone(rec.Body)
		s.records = append(s.records, picowire.SeqRecord{Seq: s.next(), Record: rec})
	}
	f.appends = append(f.appends, a)
	return true
}

func (f *fakePico) read(w http.ResponseWriter, r *http.Request, s *fakeStream) {
	q := r.URL.Query()
	f.reads = append(f.reads, r.URL.RawQuery)
	seq, err := strconv.ParseUint(q.Get("seq"), 10, 64)
	if err != nil || seq < s.start || seq > s.next() || q.Get("format") != "binary" {
		fakeError(w, http.StatusBadRequest, "bad_request", "bad read "+r.URL.RawQuery)
		return
	}
	n := min(f.pageSize, int(s.next()-seq))
	if count, _ := strconv.Atoi(q.Get("count")); count > 0 {
		n = min(n, count)
	}
	page := s.records[seq-s.start : seq-s.start+uint64(n)]
	h := w.Header()
	h.Set("Pico-Next-Seq", strconv.FormatUint(seq+uint64(n), 10))
	atTail := seq+uint64(n) == s.next()
	if atTail {
		h.Set("Pico-Up-To-Date", "true")
	}
	if atTail && s.closed {
		h.Set("Pico-Closed", "true")
	}
	if n == 0 && q.Get("live") == "long-poll" {
		f.mu.Unlock()
		time.Sleep(20 * time.Millisecond) // a short long-poll: nothing arrives in these tests
		f.mu.Lock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if f.mutate != nil {
		page = f.mutate(slices.Clone(page))
	}
	h.Set("Content-Type", picowire.BatchContentType)
	w.Write(picowire.EncodeBatchResponse(page))
}

func (f *fakePico) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit == 0 {
		limit = f.listPage
	}
	var names []string
	for name := range f.streams {
		if strings.HasPrefix(name, q.Get("prefix")) && name > q.Get("start_after") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	hasMore := len(names) > limit
	names = names[:min(limit, len(names))]
	var items []string
	for _, name := range names {
		s := f.streams[name]
		items = append(items, fmt.Sprintf(`{"name":%q,"content_type":%q,"start_seq":%d,"next_seq":%d,"closed":%t}`,
			name, s.contentType, s.start, s.next(), s.closed))
	}
	fmt.Fprintf(w, `{"streams":[%s],"has_more":%t}`, strings.Join(items, ","), hasMore)
}

func fakeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%q,"message":%q}`, code, msg)
}
