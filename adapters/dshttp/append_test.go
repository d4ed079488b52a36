package dshttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

func TestAppend(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	prev := off(0)
	for i := range 3 {
		rec := h.do(http.MethodPost, "/s", []byte("x"), "Content-Type", "text/plain")
		handlertest.WantStatus(t, rec, http.StatusNoContent)
		handlertest.WantHeaders(t, rec, "Stream-Next-Offset", off(uint64(i+1)), "Stream-Closed", "", "Producer-Epoch", "",
			"Cache-Control", "", "Content-Type", "")
		if next := rec.Header().Get("Stream-Next-Offset"); next <= prev {
			t.Errorf("offset %q does not sort after %q", next, prev)
		} else {
			prev = next
		}
	}
	if n := len(h.fake.Records("/s")); n != 3 {
		t.Errorf("%d records, want 3", n)
	}
}

func TestAppendContentType(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	wantError(t, h.do(http.MethodPost, "/s", []byte("x")), http.StatusBadRequest, "Content-Type")
	wantError(t, h.do(http.MethodPost, "/s", []byte("x"), "Content-Type", "application/json"), http.StatusConflict, "does not match")
	for _, ct := range []string{"TEXT/PLAIN", "text/plain; charset=utf-8", " text/plain "} {
		handlertest.WantStatus(t, h.do(http.MethodPost, "/s", []byte("x"), "Content-Type", ct), http.StatusNoContent)
	}
}

// An accepted append is one service call; refusals look the stream up to
// answer in the protocol's order.
func TestAppendIsOneServiceCall(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.create("/j", "Content-Type", "application/json")
	handlertest.WantStatus(t, h.do(http.MethodPost, "/s", []byte("x"), "Content-Type", "text/plain"), http.StatusNoContent)
	handlertest.WantStatus(t, h.do(http.MethodPost, "/j", []byte(`[1,2]`), "Content-Type", "application/json; charset=utf-8"), http.StatusNoContent)
	handlertest.WantStatus(t, h.do(http.MethodPost, "/s", nil, "Stream-Closed", "true"), http.StatusNoContent)
	if n := h.fake.heads.Load(); n != 0 {
		t.Errorf("%d Head calls for accepted appends, want 0", n)
	}
	// Closed comes before the content type and the body's own faults.
	wantError(t, h.do(http.MethodPost, "/s", []byte("x"), "Content-Type", "application/json"), http.StatusConflict, "closed")
	handlertest.WantStatus(t, h.do(http.MethodPost, "/j", nil, "Stream-Closed", "true"), http.StatusNoContent)
	rec := h.do(http.MethodPost, "/j", []byte(`{broken`), "Content-Type", "application/json")
	wantError(t, rec, http.StatusConflict, "closed")
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true")
	// A body of another type that does not decode as its own is a mismatch.
	h.create("/t", "Content-Type", "text/plain")
	wantError(t, h.do(http.MethodPost, "/t", []byte(`{broken`), "Content-Type", "application/json"), http.StatusConflict, "does not match")
	wantError(t, h.do(http.MethodPost, "/missing", []byte(`{broken`), "Content-Type", "application/json"), http.StatusNotFound, "not found")
	// So is one with an over-long Stream-Seq: the content type comes first.
	long := strings.Repeat("s", maxWriterSeqBytes+1)
	wantError(t, h.do(http.MethodPost, "/t", []byte(`{}`), "Content-Type", "application/json", "Stream-Seq", long), http.StatusConflict, "does not match")
	wantError(t, h.do(http.MethodPost, "/t", []byte(`x`), "Content-Type", "text/plain", "Stream-Seq", long), http.StatusBadRequest, "Stream-Seq")
}

func TestAppendErrors(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxBodyBytes = 8 })
	h.create("/s", "Content-Type", "text/plain")
	wantError(t, h.do(http.MethodPost, "/missing", []byte("x"), "Content-Type", "text/plain"), http.StatusNotFound, "not found")
	wantError(t, h.do(http.MethodPost, "/s", nil, "Content-Type", "text/plain"), http.StatusBadRequest, "empty body")
	wantError(t, h.do(http.MethodPost, "/s", []byte("123456789"), "Content-Type", "text/plain"), http.StatusRequestEntityTooLarge, "limit")
	// Missing beats bad headers.
	handlertest.WantStatus(t, h.do(http.MethodPost, "/missing", []byte("x"), "Producer-Id", "p"), http.StatusNotFound)
}

func TestClose(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a")
	// A close carries no data: its content type is not checked.
	before := h.fake.AccessCount("/s")
	rec := h.do(http.MethodPost, "/s", nil, "Stream-Closed", "true", "Content-Type", "image/png")
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Stream-Next-Offset", off(1))
	if h.fake.AccessCount("/s") == before {
		t.Error("a close-only POST did not reach the service (it must renew the idle TTL)")
	}
	// Again: still 204.
	handlertest.WantStatus(t, h.do(http.MethodPost, "/s", nil, "Stream-Closed", "true"), http.StatusNoContent)
	// Appends now conflict, and say where the stream ended.
	for _, headers := range [][]string{
		{"Content-Type", "text/plain"},
		{"Content-Type", "text/plain", "Stream-Closed", "true"},
		{"Content-Type", "image/png"}, // closed comes before the type check
	} {
		rec := h.do(http.MethodPost, "/s", []byte("late"), headers...)
		wantError(t, rec, http.StatusConflict, "closed")
		handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Stream-Next-Offset", off(1))
	}
	wantError(t, h.do(http.MethodPost, "/missing", nil, "Stream-Closed", "true"), http.StatusNotFound, "")
}

func TestAppendAndClose(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	rec := h.do(http.MethodPost, "/s", []byte("last"), "Content-Type", "text/plain", "Stream-Closed", "true")
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Stream-Next-Offset", off(1))
	// Stream-Closed other than "true" is no header.
	h.create("/t", "Content-Type", "text/plain")
	rec = h.do(http.MethodPost, "/t", []byte("x"), "Content-Type", "text/plain", "Stream-Closed", "yes")
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "")
	wantError(t, h.do(http.MethodPost, "/t", nil, "Stream-Closed", "false"), http.StatusBadRequest, "empty body")
}

func TestStreamSeq(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	post := func(seq string) int {
		return h.do(http.MethodPost, "/s", []byte("x"), "Content-Type", "text/plain", "Stream-Seq", seq).Code
	}
	// Bytewise order: "2" then "10" regresses; "09" then "10" does not.
	for _, step := range []struct {
		seq  string
		want int
	}{{"09", 204}, {"10", 204}, {"10", 409}, {"2", 204}, {"10", 409}, {"a", 204}, {"B", 409}} {
		if got := post(step.seq); got != step.want {
			t.Errorf("Stream-Seq %q: %d, want %d", step.seq, got, step.want)
		}
	}
}

// producer posts one producer append to /s.
func (h *harness) producer(id, epoch, seq, body string, extra ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	headers := append([]string{"Content-Type", "text/plain", "Producer-Id", id, "Producer-Epoch", epoch, "Producer-Seq", seq}, extra...)
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	return h.do(http.MethodPost, "/s", b, headers...)
}

func TestIdempotentProducer(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	for _, step := range []struct {
		name           string
		id, epoch, seq string
		status         int
		headers        []string
	}{
		{"first", "p", "0", "0", 200, []string{"Producer-Epoch", "0", "Producer-Seq", "0", "Stream-Next-Offset", off(1)}},
		{"next", "p", "0", "1", 200, []string{"Producer-Seq", "1", "Stream-Next-Offset", off(2)}},
		{"duplicate echoes the last seq", "p", "0", "0", 204, []string{"Producer-Epoch", "0", "Producer-Seq", "1"}},
		{"gap", "p", "0", "5", 409, []string{"Producer-Expected-Seq", "2", "Producer-Received-Seq", "5"}},
		{"new epoch", "p", "1", "0", 200, []string{"Producer-Epoch", "1", "Producer-Seq", "0"}},
		{"zombie", "p", "0", "2", 403, []string{"Producer-Epoch", "1"}},
		{"new epoch not at 0", "p", "2", "1", 400, []string{"Producer-Expected-Seq", ""}},
		{"unknown producer not at 0", "q", "0", "3", 409, []string{"Producer-Expected-Seq", "0", "Producer-Received-Seq", "3"}},
		{"largest safe values", "r", "9007199254740991", "0", 200, []string{"Producer-Epoch", "9007199254740991"}},
	} {
		rec := h.producer(step.id, step.epoch, step.seq, "data")
		if rec.Code != step.status {
			t.Fatalf("%s: status %d, want %d (%s)", step.name, rec.Code, step.status, rec.Body)
		}
		handlertest.WantHeaders(t, rec, step.headers...)
	}
	if n := len(h.fake.Records("/s")); n != 4 {
		t.Errorf("%d records, want 4", n)
	}
}

func TestProducerHeaderValidation(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	for _, headers := range [][]string{
		{"Producer-Id", "p"},
		{"Producer-Id", "p", "Producer-Epoch", "0"},
		{"Producer-Epoch", "0", "Producer-Seq", "0"},
		{"Producer-Id", "", "Producer-Epoch", "0", "Producer-Seq", "0"},
		{"Producer-Id", strings.Repeat("p", 257), "Producer-Epoch", "0", "Producer-Seq", "0"},
	} {
		wantError(t, h.do(http.MethodPost, "/s", []byte("x"), append(headers, "Content-Type", "text/plain")...), http.StatusBadRequest, "Producer-")
	}
	for _, v := range []string{"1abc", "0xyz", "1e3", "-1", "+1", "", " 1", "1.0", "9007199254740992", "18446744073709551616"} {
		wantError(t, h.producer("p", v, "0", "x"), http.StatusBadRequest, "Producer-Epoch")
		wantError(t, h.producer("p", "0", v, "x"), http.StatusBadRequest, "Producer-Seq")
	}
	if n := len(h.fake.Records("/s")); n != 0 {
		t.Errorf("%d records written by bad requests", n)
	}
	handlertest.WantStatus(t, h.producer("p", "007", "000", "x"), http.StatusOK) // digits, leading zeros allowed
}

// TestProducerBeforeStreamSeq: a retry carrying its Stream-Seq again is a
// duplicate, not a regression.
func TestProducerBeforeStreamSeq(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	handlertest.WantStatus(t, h.producer("p", "0", "0", "x", "Stream-Seq", "a"), http.StatusOK)
	handlertest.WantStatus(t, h.producer("p", "0", "0", "x", "Stream-Seq", "a"), http.StatusNoContent)
	handlertest.WantStatus(t, h.producer("p", "0", "1", "x", "Stream-Seq", "a"), http.StatusConflict)
}

func TestProducerClose(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	handlertest.WantStatus(t, h.producer("p", "0", "0", "a"), http.StatusOK)
	// Append-and-close by a producer: 200, closed.
	rec := h.producer("p", "0", "1", "b", "Stream-Closed", "true")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Producer-Seq", "1")
	// Its retry, even with another body: 204, closed; the data is kept.
	rec = h.producer("p", "0", "1", "other", "Stream-Closed", "true")
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Producer-Seq", "1")
	if got := h.fake.Records("/s"); len(got) != 2 || string(got[1].Body) != "b" {
		t.Errorf("records %v", got)
	}
	// Any other tuple: closed, before the producer checks (§5.2.1): the
	// retry of an earlier request, a gap, a stale epoch, a new producer.
	h.wantClosedFor(2, [3]string{"p", "0", "2"}, [3]string{"p", "0", "0"}, [3]string{"p", "0", "5"}, [3]string{"q", "0", "0"})
}

// wantClosedFor checks that each producer tuple (id, epoch, seq) appending
// to the closed stream /s gets 409 closed at offset next.
func (h *harness) wantClosedFor(next uint64, tuples ...[3]string) {
	h.t.Helper()
	for _, tuple := range tuples {
		rec := h.producer(tuple[0], tuple[1], tuple[2], "c")
		handlertest.WantStatus(h.t, rec, http.StatusConflict)
		handlertest.WantHeaders(h.t, rec, "Stream-Closed", "true", "Stream-Next-Offset", off(next))
	}
}

// TestProducerRetryAfterAnotherClose: once a request without a producer
// closed the stream, no producer retry is its close.
func TestProducerRetryAfterAnotherClose(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	handlertest.WantStatus(t, h.producer("p", "1", "0", "a"), http.StatusOK)
	handlertest.WantStatus(t, h.producer("p", "1", "0", "a"), http.StatusNoContent) // open: a duplicate
	h.closeStream("/s")
	h.wantClosedFor(1, [3]string{"p", "1", "0"}, [3]string{"p", "0", "0"}, [3]string{"p", "1", "7"})
}

// TestProducerCloseOnlyOfAClosedStream: once the stream is closed, a
// close without data is 204 only without producer headers or from the
// request that closed it; any other producer, epoch or sequence gets 409
// closed (§5.2.1), echoing no producer state of its own.
func TestProducerCloseOnlyOfAClosedStream(t *testing.T) {
	for _, tc := range []struct {
		name    string
		closeBy [3]string // the closing request's tuple; none without an id
	}{
		{"closed by a producer", [3]string{"p", "0", "0"}},
		{"closed without a producer", [3]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.create("/s", "Content-Type", "text/plain")
			if id := tc.closeBy[0]; id != "" {
				handlertest.WantStatus(t, h.producer(id, tc.closeBy[1], tc.closeBy[2], "", "Stream-Closed", "true"), http.StatusNoContent)
			} else {
				h.closeStream("/s")
			}
			for _, tuple := range [][3]string{{"q", "0", "0"}, {"p", "0", "1"}, {"p", "1", "0"}} {
				rec := h.producer(tuple[0], tuple[1], tuple[2], "", "Stream-Closed", "true")
				handlertest.WantStatus(t, rec, http.StatusConflict)
				handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Stream-Next-Offset", off(0), "Producer-Seq", "")
			}
			if id := tc.closeBy[0]; id != "" {
				rec := h.producer(id, tc.closeBy[1], tc.closeBy[2], "", "Stream-Closed", "true")
				handlertest.WantStatus(t, rec, http.StatusNoContent)
				handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Producer-Epoch", tc.closeBy[1], "Producer-Seq", tc.closeBy[2])
			}
			handlertest.WantStatus(t, h.do(http.MethodPost, "/s", nil, "Stream-Closed", "true"), http.StatusNoContent)
		})
	}
}

// TestProducerCloseOnly: a close without data is validated like an append
// and answers 204.
func TestProducerCloseOnly(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	handlertest.WantStatus(t, h.producer("p", "1", "0", "a"), http.StatusOK)
	handlertest.WantStatus(t, h.producer("p", "0", "1", "", "Stream-Closed", "true"), http.StatusForbidden)
	handlertest.WantStatus(t, h.producer("p", "1", "3", "", "Stream-Closed", "true"), http.StatusConflict)
	rec := h.producer("p", "1", "1", "", "Stream-Closed", "true", "Content-Type", "image/png")
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Producer-Epoch", "1", "Producer-Seq", "1", "Stream-Next-Offset", off(1))
	handlertest.WantStatus(t, h.producer("p", "1", "1", "", "Stream-Closed", "true"), http.StatusNoContent)
}

func TestJSONAppend(t *testing.T) {
	h := newHarness(t)
	h.create("/j", "Content-Type", "application/json; charset=utf-8")
	for _, tc := range []struct {
		body   string
		status int
		adds   int
	}{
		{`{"event": "created"}`, 204, 1},
		{`[{"event": "a"}, {"event": "b"}]`, 204, 2},
		{`[[1,2], [3,4]]`, 204, 2},
		{`[[[1,2,3]]]`, 204, 1},
		{`"text"`, 204, 1},
		{`  42 `, 204, 1},
		{`null`, 204, 1},
		{`[]`, 400, 0},
		{` [ ] `, 400, 0},
		{`{"a":`, 400, 0},
		{`[1,]`, 400, 0},
		{`{} {}`, 400, 0},
		{"\"\xff\xfe\"", 400, 0},                 // JSON is UTF-8 text
		{"[\"ok\", \"\xc3\x28\"]", 400, 0},       // not even in one element
		{"\"caf\xc3\xa9 \xe2\x82\xac\"", 204, 1}, // UTF-8 beyond ASCII is fine
	} {
		before := len(h.fake.Records("/j"))
		rec := h.do(http.MethodPost, "/j", []byte(tc.body), "Content-Type", "application/json")
		if rec.Code != tc.status {
			t.Errorf("%q: status %d, want %d (%s)", tc.body, rec.Code, tc.status, rec.Body)
		}
		if added := len(h.fake.Records("/j")) - before; added != tc.adds {
			t.Errorf("%q: %d records, want %d", tc.body, added, tc.adds)
		}
	}
	// Invalid JSON from a producer leaves its state where it was.
	h.do(http.MethodPost, "/j", []byte("[]"), "Content-Type", "application/json", "Producer-Id", "p", "Producer-Epoch", "0", "Producer-Seq", "0")
	rec := h.do(http.MethodPost, "/j", []byte("[1]"), "Content-Type", "application/json", "Producer-Id", "p", "Producer-Epoch", "0", "Producer-Seq", "0")
	handlertest.WantStatus(t, rec, http.StatusOK)
}

// TestProducerSeqEcho: an accepted request's Producer-Seq is its own, even
// when the service reports none (a close without records).
func TestProducerSeqEcho(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	handlertest.WantStatus(t, h.producer("p", "0", "0", "a"), http.StatusOK)
	h.fake.zeroProducerSeq = true
	rec := h.producer("p", "0", "1", "", "Stream-Closed", "true")
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Producer-Seq", "1", "Producer-Epoch", "0")
}
