// Package handlertest is test support for the stream listeners: it drives
// an http.Handler in process and checks what it answers, so both protocols'
// tests state requests and expectations the same terse way.
package handlertest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Do sends one request to h and returns the answer; headers alternate
// names and values.
func Do(h http.Handler, method, target string, body []byte, headers ...string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// DoLines sends one request to h whose headers are given line by line,
// "Name: value", so that a header can come twice.
func DoLines(h http.Handler, method, target, body string, lines ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for _, line := range lines {
		name, value, _ := strings.Cut(line, ": ")
		req.Header.Add(name, value)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// WantStatus stops the test unless the answer has status.
func WantStatus(t testing.TB, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %q", rec.Code, status, rec.Body)
	}
}

// WantHeaders checks headers; names and values alternate, "" means absent.
func WantHeaders(t testing.TB, rec *httptest.ResponseRecorder, pairs ...string) {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		got, present := rec.Header()[http.CanonicalHeaderKey(pairs[i])]
		switch {
		case pairs[i+1] == "" && present:
			t.Errorf("header %s = %q, want absent", pairs[i], got)
		case pairs[i+1] != "" && (len(got) != 1 || got[0] != pairs[i+1]):
			t.Errorf("header %s = %q, want %q", pairs[i], got, pairs[i+1])
		}
	}
}
