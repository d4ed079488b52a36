package livehttp

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadBody(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   string
		length int64 // the declared Content-Length; -1 is chunked
		limit  int64
		want   string
		tooBig bool
	}{
		{"whole", "hello", 5, 10, "hello", false},
		{"at the limit", "hello", 5, 5, "hello", false},
		{"declared too large", "hello", 5, 4, "", true},
		{"chunked", "hello", -1, 10, "hello", false},
		{"chunked too large", "hello", -1, 4, "", true},
		{"empty", "", 0, 10, "", false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/s", io.NopCloser(strings.NewReader(tc.body)))
		r.ContentLength = tc.length
		got, err := ReadBody(httptest.NewRecorder(), r, tc.limit)
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) != tc.tooBig || (!tc.tooBig && err != nil) || string(got) != tc.want {
			t.Errorf("%s: %q, %v", tc.name, got, err)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/s", nil)
	r.Body = nil
	if got, err := ReadBody(httptest.NewRecorder(), r, 10); got != nil || err != nil {
		t.Errorf("nil body: %q, %v", got, err)
	}
}
