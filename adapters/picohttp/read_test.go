package picohttp

import (
	"encoding/base64"
	"net/http"
	"slices"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

func TestReadJSON(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	h.do(http.MethodPost, "/s", picowire.EncodeJSONBatch([]domain.Record{
		{Body: []byte("a"), Headers: []domain.Header{{Key: "k", Value: "v"}}}, {Body: []byte{0xfe}}, {Body: []byte("c")},
	}), "Content-Type", picowire.BatchJSONContentType)
	rec := h.do(http.MethodGet, "/s", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Content-Type", "application/json", "Pico-Next-Seq", "3", "Pico-Cursor", "3",
		"Pico-Up-To-Date", "true", "Pico-Closed", "", "Cache-Control", "no-cache")
	recs := jsonPage(t, rec)
	if len(recs) != 3 || recs[0].Seq != 0 || recs[2].Seq != 2 || recs[0].Headers[0].Key != "k" || recs[1].Body[0] != 0xfe {
		t.Fatalf("page %+v", recs)
	}
	if recs[0].TimestampMs == 0 {
		t.Error("no timestamp")
	}
}

func TestReadFormats(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "ab", "cd")
	rec := h.do(http.MethodGet, "/s?format=raw", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Content-Type", "text/plain")
	if rec.Body.String() != "abcd" {
		t.Errorf("raw body %q", rec.Body)
	}
	rec = h.do(http.MethodGet, "/s?format=binary&seq=1", nil)
	handlertest.WantHeaders(t, rec, "Content-Type", "application/vnd.picomq.batch", "Pico-Next-Seq", "2")
	recs, err := picowire.DecodeBatchResponse(rec.Body.Bytes(), batchLimits)
	if err != nil || len(recs) != 1 || recs[0].Seq != 1 || string(recs[0].Body) != "cd" {
		t.Fatalf("binary page %+v %v", recs, err)
	}
	wantError(t, h.do(http.MethodGet, "/s?format=xml", nil), http.StatusBadRequest, "bad_request", `format must be json, binary or raw, got "xml"`)
	wantError(t, h.do(http.MethodGet, "/s?live=poll", nil), http.StatusBadRequest, "bad_request", `live must be long-poll or sse, got "poll"`)
}

func TestReadPagesAndCaching(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	h.appendBodies("/s", "a", "b", "c", "d")
	rec := h.do(http.MethodGet, "/s?count=2", nil)
	handlertest.WantHeaders(t, rec, "Pico-Next-Seq", "2", "Pico-Cursor", "2", "Pico-Up-To-Date", "",
		"Cache-Control", "public, max-age=60, stale-while-revalidate=300")
	if got := bodiesOf(jsonPage(t, rec)); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("page %v", got)
	}
	scope := base64.RawURLEncoding.EncodeToString([]byte("/s:json"))
	handlertest.WantHeaders(t, rec, "ETag", `"`+scope+`:1:0:2"`, "Vary", "Last-Event-ID")

	// The cursor resumes the read.
	rec = h.do(http.MethodGet, "/s?seq="+rec.Header().Get("Pico-Cursor"), nil)
	if got := bodiesOf(jsonPage(t, rec)); !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("page %v", got)
	}
	etag := rec.Header().Get("ETag")
	rec = h.do(http.MethodGet, "/s?seq=2", nil, "If-None-Match", etag)
	handlertest.WantStatus(t, rec, http.StatusNotModified)
	handlertest.WantHeaders(t, rec, "ETag", etag, "Cache-Control", "no-cache")
	if rec.Body.Len() != 0 {
		t.Errorf("304 body %q", rec.Body)
	}
	handlertest.WantStatus(t, h.do(http.MethodGet, "/s?seq=2", nil, "If-None-Match", `"other", `+etag), http.StatusNotModified)
	handlertest.WantStatus(t, h.do(http.MethodGet, "/s?seq=2&format=raw", nil, "If-None-Match", etag), http.StatusOK)

	// Closed at the tail: the ETag says so.
	h.do(http.MethodPost, "/s", nil, "Pico-Closed", "true")
	rec = h.do(http.MethodGet, "/s?seq=2", nil, "If-None-Match", etag)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Closed", "true", "Pico-Up-To-Date", "true", "ETag", `"`+scope+`:1:2:4:c"`)
	// Closed but not at the tail: no Pico-Closed yet.
	handlertest.WantHeaders(t, h.do(http.MethodGet, "/s?count=1", nil), "Pico-Closed", "")
}

func TestReadBytesLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxChunkBytes = 4 })
	h.create("/s")
	h.appendBodies("/s", "aaa", "bbb", "ccc")
	if got := bodiesOf(jsonPage(t, h.do(http.MethodGet, "/s", nil))); len(got) != 1 {
		t.Errorf("default chunk: %v", got)
	}
	if got := bodiesOf(jsonPage(t, h.do(http.MethodGet, "/s?bytes=6", nil))); len(got) != 2 {
		t.Errorf("bytes=6: %v", got)
	}
	if got := bodiesOf(jsonPage(t, h.do(http.MethodGet, "/s?bytes=1", nil))); len(got) != 1 {
		t.Errorf("bytes=1 still returns one record: %v", got)
	}
	if got := bodiesOf(jsonPage(t, h.do(http.MethodGet, "/s?bytes=9223372036854775807&count=0", nil))); len(got) != 3 {
		t.Errorf("huge bytes: %v", got)
	}
	if lim, _ := h.srv.readLimits(map[string][]string{"bytes": {"99999999"}}); lim.Bytes != 4<<20 {
		t.Errorf("bytes capped at %d", lim.Bytes)
	}
	for _, q := range []string{"count=-1", "count=01", "bytes=x", "count=1.5"} {
		wantError(t, h.do(http.MethodGet, "/s?"+q, nil), http.StatusBadRequest, "bad_request", "must be a non-negative integer")
	}
}

func TestReadPositions(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	h.appendBodies("/s", "a", "b", "c")
	for _, tc := range []struct {
		target string
		header []string
		want   []string
	}{
		{"/s?seq=-1", nil, []string{"a", "b", "c"}},
		{"/s?seq=00000000000000000001", nil, []string{"b", "c"}},
		{"/s?seq=now", nil, []string{}},
		{"/s", []string{"Last-Event-ID", "0"}, []string{"a", "b", "c"}},
		{"/s?seq=0", []string{"Last-Event-ID", "2"}, []string{"a", "b", "c"}},
		{"/s?seq=", []string{"Last-Event-ID", "2"}, []string{"c"}},
	} {
		rec := h.do(http.MethodGet, tc.target, nil, tc.header...)
		handlertest.WantStatus(t, rec, http.StatusOK)
		if got := bodiesOf(jsonPage(t, rec)); !slices.Equal(got, tc.want) {
			t.Errorf("%s %v: %v, want %v", tc.target, tc.header, got, tc.want)
		}
	}
	wantError(t, h.do(http.MethodGet, "/s?seq=4", nil), http.StatusBadRequest, "bad_request", "beyond the tail")
	wantError(t, h.do(http.MethodGet, "/s?seq=x", nil), http.StatusBadRequest, "bad_request", `seq must be`)
	wantError(t, h.do(http.MethodGet, "/s", nil, "Last-Event-ID", "abc"), http.StatusBadRequest, "bad_request", "Last-Event-ID")
	// The largest positions are beyond any tail, not the tail or the start.
	wantError(t, h.do(http.MethodGet, "/s?seq=18446744073709551615", nil), http.StatusBadRequest, "bad_request", "beyond")
	for _, id := range []string{"18446744073709551614", "18446744073709551615"} {
		wantError(t, h.do(http.MethodGet, "/s", nil, "Last-Event-ID", id), http.StatusBadRequest, "bad_request", "Last-Event-ID")
	}
	wantError(t, h.do(http.MethodGet, "/nope?seq=now", nil), http.StatusNotFound, "not_found", "")
	wantError(t, h.do(http.MethodGet, "/nope", nil), http.StatusNotFound, "not_found", "")
}

func TestReadAfterTrimStartsAtTheStart(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	h.appendBodies("/s", "a", "b", "c")
	h.do(http.MethodPost, "/s", nil, "Pico-Trim-Seq", "2")
	rec := h.do(http.MethodGet, "/s?seq=0", nil)
	recs := jsonPage(t, rec)
	if len(recs) != 1 || recs[0].Seq != 2 {
		t.Fatalf("page %+v", recs)
	}
	scope := base64.RawURLEncoding.EncodeToString([]byte("/s:json"))
	handlertest.WantHeaders(t, rec, "ETag", `"`+scope+`:1:2:3"`)
}

func TestHead(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/csv")
	h.appendBodies("/s", "a", "b")
	h.do(http.MethodPost, "/s", nil, "Pico-Trim-Seq", "1")
	rec := h.do(http.MethodHead, "/s", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Content-Type", "text/csv", "Pico-Next-Seq", "2", "Pico-Start-Seq", "1",
		"Pico-TTL", "", "Pico-Expires-At", "", "Pico-Closed", "", "Cache-Control", "no-store")
	h.do(http.MethodPost, "/s", nil, "Pico-Closed", "true")
	handlertest.WantHeaders(t, h.do(http.MethodHead, "/s", nil), "Pico-Closed", "true")
}

func TestDelete(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	rec := h.do(http.MethodDelete, "/s", nil)
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	wantError(t, h.do(http.MethodDelete, "/s", nil), http.StatusNotFound, "not_found", "")
	handlertest.WantStatus(t, h.do(http.MethodHead, "/s", nil), http.StatusNotFound)
}
