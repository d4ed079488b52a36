package picohttp

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

// TestHeaderGivenTwice: a header read once, given twice with different
// values, is a 400 that says so, whatever the first value would have
// decided; identical repeats are taken.
func TestHeaderGivenTwice(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	producer := []string{"Pico-Producer-Id: p", "Pico-Producer-Epoch: 0", "Pico-Producer-Seq: 0"}
	for _, c := range []struct {
		method, body string
		lines        []string
		why          string
	}{
		{"POST", "x", []string{"Pico-Match-Seq: 0", "Pico-Match-Seq: 5"}, `header Pico-Match-Seq given twice with different values ("0", "5")`},
		{"POST", "x", []string{"Pico-Closed: false", "Pico-Closed: true"}, `header Pico-Closed given twice with different values ("false", "true")`},
		{"POST", "x", append(producer, "Pico-Producer-Id: q"), `header Pico-Producer-Id given twice`},
		{"POST", "x", append(producer, "Pico-Producer-Epoch: 1"), `header Pico-Producer-Epoch given twice`},
		{"POST", "x", append(producer, "Pico-Producer-Seq: 1"), `header Pico-Producer-Seq given twice`},
		{"POST", "x", []string{"Content-Type: text/plain", "Content-Type: application/vnd.picomq.batch+json"}, `header Content-Type given twice`},
		{"POST", "", []string{"Pico-Trim-Seq: 1", "Pico-Trim-Seq: 2"}, `header Pico-Trim-Seq given twice`},
		{"PUT", "", []string{"Pico-TTL: 10", "Pico-TTL: 20"}, `header Pico-TTL given twice with different values ("10", "20")`},
		{"PUT", "", []string{"Pico-Expires-At: 2100-01-01T00:00:00Z", "Pico-Expires-At: 2200-01-01T00:00:00Z"}, `header Pico-Expires-At given twice`},
		{"PUT", "", []string{"Pico-Closed: false", "Pico-Closed: true"}, `header Pico-Closed given twice`},
		{"PUT", "", []string{"Content-Type: text/plain", "Content-Type: application/json"}, `header Content-Type given twice`},
	} {
		wantError(t, h.doLines(c.method, "/new", c.body, c.lines...), http.StatusBadRequest, "bad_request", c.why)
		if c.method == "POST" {
			wantError(t, h.doLines(c.method, "/s", c.body, c.lines...), http.StatusBadRequest, "bad_request", c.why)
		}
	}
	if n := len(h.fake.Records("/s")); n != 0 {
		t.Errorf("%d records written", n)
	}
	if rec := h.doLines("POST", "/s", "x", "Pico-Match-Seq: 0", "Pico-Match-Seq: 0", "Pico-Closed: true", "Pico-Closed: true"); rec.Code != http.StatusOK {
		t.Fatalf("identical repeats: %d %s", rec.Code, rec.Body)
	}
	if rec := h.doLines("PUT", "/t", "", "Pico-TTL: 10", "Pico-TTL: 10"); rec.Code != http.StatusCreated {
		t.Fatalf("identical repeats on create: %d %s", rec.Code, rec.Body)
	}
}
