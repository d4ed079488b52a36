package dshttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

// doLines sends a request whose headers are given line by line, "Name:
// value", so that a header can come twice.
func (h *harness) doLines(method, target, body string, lines ...string) *httptest.ResponseRecorder {
	return handlertest.DoLines(h.h, method, target, body, lines...)
}

// TestAppendHeaderGivenTwice: a header read once, given twice with
// different values, is a 400 that says so, after a missing stream (404)
// as every fault of an append's headers; identical repeats are taken.
func TestAppendHeaderGivenTwice(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	text := "Content-Type: text/plain"
	producer := []string{text, "Producer-Id: p", "Producer-Epoch: 0", "Producer-Seq: 0"}
	for _, c := range []struct {
		lines []string
		why   string
	}{
		{[]string{text, "Stream-Closed: false", "Stream-Closed: true"}, `header Stream-Closed given twice with different values ("false", "true")`},
		{[]string{text, "Stream-Seq: a", "Stream-Seq: b"}, `header Stream-Seq given twice with different values ("a", "b")`},
		{append(producer, "Producer-Id: q"), `header Producer-Id given twice`},
		{append(producer, "Producer-Epoch: 1"), `header Producer-Epoch given twice`},
		{append(producer, "Producer-Seq: 1"), `header Producer-Seq given twice`},
		{[]string{text, "Content-Type: application/json"}, `header Content-Type given twice with different values ("text/plain", "application/json")`},
	} {
		wantError(t, h.doLines("POST", "/s", "x", c.lines...), http.StatusBadRequest, c.why)
		wantError(t, h.doLines("POST", "/missing", "x", c.lines...), http.StatusNotFound, "")
	}
	if n := len(h.fake.Records("/s")); n != 0 {
		t.Errorf("%d records written", n)
	}
	if rec := h.doLines("POST", "/s", "x", text, text, "Stream-Seq: a", "Stream-Seq: a"); rec.Code != http.StatusNoContent {
		t.Fatalf("identical repeats: %d %s", rec.Code, rec.Body)
	}
	// A close without data reads no Content-Type, so two do not matter.
	if rec := h.doLines("POST", "/s", "", "Stream-Closed: true", text, "Content-Type: application/json"); rec.Code != http.StatusNoContent {
		t.Fatalf("close with two content types: %d %s", rec.Code, rec.Body)
	}
	// Stream-Seq is judged after the stream's closure, as its length is.
	wantError(t, h.doLines("POST", "/s", "x", text, "Stream-Seq: a", "Stream-Seq: b"), http.StatusConflict, "")
}

func TestCreateHeaderGivenTwice(t *testing.T) {
	h := newHarness(t)
	h.create("/src")
	for _, c := range []struct {
		lines []string
		why   string
	}{
		{[]string{"Stream-TTL: 10", "Stream-TTL: 20"}, `header Stream-TTL given twice with different values ("10", "20")`},
		{[]string{"Stream-Expires-At: 2100-01-01T00:00:00Z", "Stream-Expires-At: 2200-01-01T00:00:00Z"}, `header Stream-Expires-At given twice`},
		{[]string{"Stream-Closed: false", "Stream-Closed: true"}, `header Stream-Closed given twice`},
		{[]string{"Content-Type: text/plain", "Content-Type: application/json"}, `header Content-Type given twice`},
		{[]string{"Stream-Forked-From: /src", "Stream-Forked-From: /other"}, `header Stream-Forked-From given twice`},
	} {
		wantError(t, h.doLines("PUT", "/new", "", c.lines...), http.StatusBadRequest, c.why)
	}
	if rec := h.doLines("PUT", "/new", "", "Stream-TTL: 10", "Stream-TTL: 10"); rec.Code != http.StatusCreated {
		t.Fatalf("identical repeats: %d %s", rec.Code, rec.Body)
	}
}
