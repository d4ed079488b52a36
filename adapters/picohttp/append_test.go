package picohttp

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

func TestAppendOneRecord(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	rec := h.do(http.MethodPost, "/s", []byte(`{"not":"a batch"}`), "Content-Type", "application/json")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Next-Seq", "1", "Pico-Start-Seq", "0", "Cache-Control", "no-store",
		"Pico-Closed", "", "Pico-Producer-Id", "")
	if rec.Header().Get("Pico-Timestamp") == "" {
		t.Error("no Pico-Timestamp")
	}
	if rec.Body.Len() != 0 {
		t.Errorf("append body %q", rec.Body)
	}
	rec = h.do(http.MethodPost, "/s", []byte("second"))
	handlertest.WantHeaders(t, rec, "Pico-Next-Seq", "2", "Pico-Start-Seq", "1")
}

func TestAppendBatches(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	records := []domain.Record{{Body: []byte("a"), Headers: []domain.Header{{Key: "k", Value: "v"}}}, {Body: []byte{0xff, 0}}}
	rec := h.do(http.MethodPost, "/s", picowire.EncodeBatch(records), "Content-Type", "application/vnd.picomq.batch")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Start-Seq", "0", "Pico-Next-Seq", "2")
	rec = h.do(http.MethodPost, "/s", picowire.EncodeJSONBatch(records), "Content-Type", "Application/VND.picomq.batch+JSON; charset=utf-8")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Start-Seq", "2", "Pico-Next-Seq", "4")
	got := h.fake.Records("/s")
	if len(got) != 4 || string(got[2].Body) != "a" || got[2].Headers[0] != (domain.Header{Key: "k", Value: "v"}) || !bytes.Equal(got[3].Body, []byte{0xff, 0}) {
		t.Fatalf("records %+v", got)
	}
	if got[0].TimestampMs != got[1].TimestampMs {
		t.Errorf("one batch, two timestamps: %d %d", got[0].TimestampMs, got[1].TimestampMs)
	}
}

func TestAppendRejectsMalformedBatches(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	wantError(t, h.do(http.MethodPost, "/s", []byte{1, 0xff, 0xff, 0xff, 0xff}, "Content-Type", "application/vnd.picomq.batch"),
		http.StatusBadRequest, "bad_request", "malformed")
	wantError(t, h.do(http.MethodPost, "/s", []byte(`{"records":[]}`), "Content-Type", "application/vnd.picomq.batch+json"),
		http.StatusBadRequest, "bad_request", "malformed")
	wantError(t, h.do(http.MethodPost, "/s", nil), http.StatusBadRequest, "bad_request", "empty body")
	wantError(t, h.do(http.MethodPost, "/s", nil, "Content-Type", "application/vnd.picomq.batch"), http.StatusBadRequest, "bad_request", "empty body")
	if n := len(h.fake.Records("/s")); n != 0 {
		t.Errorf("%d records written", n)
	}
}

// TestAppendRefusesUnsoundJSONText: a JSON batch whose text encoding/json
// would decode with U+FFFD is a 400 naming the record and the field, as
// the same bytes in a JSON stream's records are.
func TestAppendRefusesUnsoundJSONText(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	for body, why := range map[string]string{
		`{"records":[{"body":"a"},{"body":"` + "\xff" + `"}]}`: "records[1]: body is not valid UTF-8: byte 0xff at 0",
		`{"records":[{"body":"\ud800"}]}`:                      `records[0]: body holds \ud800 at byte 0, a lone UTF-16 surrogate`,
		`{"records":[{"headers":{"k":"\udc00"}}]}`:             `records[0]: header "k" holds \udc00`,
		`{"records":[{"headers":{"\ud800":"v"}}]}`:             `records[0]: header name "\\ud800" holds \ud800`,
	} {
		wantError(t, h.do(http.MethodPost, "/s", []byte(body), "Content-Type", "application/vnd.picomq.batch+json"),
			http.StatusBadRequest, "bad_request", why)
	}
	if n := len(h.fake.Records("/s")); n != 0 {
		t.Errorf("%d records written", n)
	}
}

func TestAppendToMissingStream(t *testing.T) {
	h := newHarness(t)
	wantError(t, h.do(http.MethodPost, "/nope", []byte("x")), http.StatusNotFound, "not_found", "")
}

func TestAppendClose(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	rec := h.do(http.MethodPost, "/s", []byte("last"), "Pico-Closed", "true")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Closed", "true", "Pico-Start-Seq", "0", "Pico-Next-Seq", "1")
	// Close-only is idempotent and writes nothing.
	rec = h.do(http.MethodPost, "/s", nil, "Pico-Closed", "true")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Closed", "true", "Pico-Start-Seq", "", "Pico-Timestamp", "", "Pico-Next-Seq", "1")
	rec = h.do(http.MethodPost, "/s", []byte("late"))
	body := wantError(t, rec, http.StatusConflict, "closed", "closed")
	handlertest.WantHeaders(t, rec, "Pico-Closed", "true", "Pico-Next-Seq", "1")
	if body.NextSeq == nil || *body.NextSeq != 1 {
		t.Errorf("next_seq %v", body.NextSeq)
	}
}

func TestAppendCloseOnlyOfOpenStream(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	rec := h.do(http.MethodPost, "/s", nil, "Pico-Closed", "true")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Closed", "true", "Pico-Start-Seq", "", "Pico-Next-Seq", "0")
}

func TestAppendMatch(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	handlertest.WantStatus(t, h.do(http.MethodPost, "/s", []byte("a"), "Pico-Match-Seq", "0"), http.StatusOK)
	rec := h.do(http.MethodPost, "/s", []byte("b"), "Pico-Match-Seq", "0")
	body := wantError(t, rec, http.StatusPreconditionFailed, "match_failed", "expected tail 0, actual 1")
	handlertest.WantHeaders(t, rec, "Pico-Next-Seq", "1")
	if body.NextSeq == nil || *body.NextSeq != 1 {
		t.Errorf("next_seq %v", body.NextSeq)
	}
	wantError(t, h.do(http.MethodPost, "/s", []byte("b"), "Pico-Match-Seq", "+1"), http.StatusBadRequest, "bad_request", "Pico-Match-Seq")
}

func TestAppendProducer(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	stamp := func(epoch, seq string) []string {
		return []string{"Pico-Producer-Id", "p1", "Pico-Producer-Epoch", epoch, "Pico-Producer-Seq", seq}
	}
	rec := h.do(http.MethodPost, "/s", []byte("a"), stamp("2", "0")...)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Producer-Id", "p1", "Pico-Producer-Epoch", "2", "Pico-Producer-Seq", "0", "Pico-Start-Seq", "0")
	rec = h.do(http.MethodPost, "/s", []byte("b"), stamp("2", "1")...)
	handlertest.WantHeaders(t, rec, "Pico-Producer-Seq", "1", "Pico-Start-Seq", "1", "Pico-Next-Seq", "2")

	// A retry is acknowledged without writing.
	rec = h.do(http.MethodPost, "/s", []byte("b"), stamp("2", "1")...)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Producer-Seq", "1", "Pico-Start-Seq", "", "Pico-Timestamp", "", "Pico-Next-Seq", "2")

	rec = h.do(http.MethodPost, "/s", []byte("c"), stamp("2", "5")...)
	wantError(t, rec, http.StatusConflict, "sequence_gap", "")
	handlertest.WantHeaders(t, rec, "Pico-Expected-Seq", "2", "Pico-Received-Seq", "5")

	rec = h.do(http.MethodPost, "/s", []byte("c"), stamp("1", "0")...)
	wantError(t, rec, http.StatusForbidden, "fenced", "stale")
	handlertest.WantHeaders(t, rec, "Pico-Producer-Epoch", "2")
	if n := len(h.fake.Records("/s")); n != 2 {
		t.Errorf("%d records, want 2", n)
	}
}

func TestAppendProducerHeadersAllOrNone(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	for _, tc := range []struct {
		headers []string
		message string
	}{
		{[]string{"Pico-Producer-Id", "p"}, "Pico-Producer-Epoch is missing"},
		{[]string{"Pico-Producer-Id", "p", "Pico-Producer-Epoch", "0"}, "Pico-Producer-Seq is missing"},
		{[]string{"Pico-Producer-Epoch", "0", "Pico-Producer-Seq", "0"}, "Pico-Producer-Id is missing"},
		{[]string{"Pico-Producer-Id", strings.Repeat("p", 257), "Pico-Producer-Epoch", "0", "Pico-Producer-Seq", "0"}, "257 bytes"},
		{[]string{"Pico-Producer-Id", "p", "Pico-Producer-Epoch", "x", "Pico-Producer-Seq", "0"}, `Pico-Producer-Epoch must be a non-negative integer without leading zeros, got "x"`},
		{[]string{"Pico-Producer-Id", "p", "Pico-Producer-Epoch", "0", "Pico-Producer-Seq", "00"}, `Pico-Producer-Seq must be`},
	} {
		wantError(t, h.do(http.MethodPost, "/s", []byte("x"), tc.headers...), http.StatusBadRequest, "bad_request", tc.message)
	}
	handlertest.WantStatus(t, h.do(http.MethodPost, "/s", []byte("x"), "Pico-Producer-Id", strings.Repeat("p", 256),
		"Pico-Producer-Epoch", "0", "Pico-Producer-Seq", "0"), http.StatusOK)
}

func TestAppendOverLimitIs413(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxBodyBytes = 100 })
	h.create("/s")
	wantError(t, h.do(http.MethodPost, "/s", bytes.Repeat([]byte("x"), 101)), http.StatusRequestEntityTooLarge, "too_large", "")
	// Without a Content-Length the limit still holds while reading.
	req := httptest.NewRequest(http.MethodPost, "/s", io.MultiReader(strings.NewReader(strings.Repeat("y", 60)), strings.NewReader(strings.Repeat("y", 60))))
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	wantError(t, rec, http.StatusRequestEntityTooLarge, "too_large", "100 bytes")
	if n := len(h.fake.Records("/s")); n != 0 {
		t.Errorf("%d records written", n)
	}
}

func TestTrim(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	h.appendBodies("/s", "a", "b", "c")
	rec := h.do(http.MethodPost, "/s", nil, "Pico-Trim-Seq", "2")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Start-Seq", "2", "Cache-Control", "no-store")
	// The service clamps to the tail.
	handlertest.WantHeaders(t, h.do(http.MethodPost, "/s", nil, "Pico-Trim-Seq", "99"), "Pico-Start-Seq", "3")
	wantError(t, h.do(http.MethodPost, "/s", []byte("x"), "Pico-Trim-Seq", "1"), http.StatusBadRequest, "bad_request", "trim takes no body")
	wantError(t, h.do(http.MethodPost, "/s", nil, "Pico-Trim-Seq", "-1"), http.StatusBadRequest, "bad_request", "Pico-Trim-Seq must be")
	wantError(t, h.do(http.MethodPost, "/nope", nil, "Pico-Trim-Seq", "1"), http.StatusNotFound, "not_found", "")
	// A chunked empty body is still empty.
	req := httptest.NewRequest(http.MethodPost, "/s", strings.NewReader(""))
	req.ContentLength = -1
	req.Header.Set("Pico-Trim-Seq", "3")
	r := httptest.NewRecorder()
	h.h.ServeHTTP(r, req)
	handlertest.WantStatus(t, r, http.StatusOK)
}

// brokenBody fails mid-read, as a client that goes away does.
type brokenBody struct{ sent bool }

func (b *brokenBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "par"), nil
	}
	return 0, io.ErrUnexpectedEOF
}

func TestBodyReadFailureIs400(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	for _, trim := range []string{"", "1"} {
		req := httptest.NewRequest(http.MethodPost, "/s", &brokenBody{})
		req.ContentLength = -1
		req.Header.Set("Pico-Trim-Seq", trim)
		rec := httptest.NewRecorder()
		h.h.ServeHTTP(rec, req)
		if trim == "" {
			wantError(t, rec, http.StatusBadRequest, "bad_request", "cannot read the request body")
		} else {
			wantError(t, rec, http.StatusBadRequest, "bad_request", "trim takes no body")
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/s", iotest.ErrReader(errors.New("connection reset")))
	req.ContentLength = -1
	req.Header.Set("Pico-Trim-Seq", "1")
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	wantError(t, rec, http.StatusBadRequest, "bad_request", "connection reset")
}
