package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestProbe(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	if got := probe([]string{srv.URL}); got != 0 {
		t.Errorf("probe of a 200: exit %d, want 0", got)
	}
	status = http.StatusServiceUnavailable
	if got := probe([]string{srv.URL}); got != 1 {
		t.Errorf("probe of a 503: exit %d, want 1", got)
	}
	srv.Close()
	if got := probe([]string{srv.URL}); got != 1 {
		t.Errorf("probe of a closed port: exit %d, want 1", got)
	}
	if got := probe([]string{"a", "b"}); got != 2 {
		t.Errorf("probe with two arguments: exit %d, want 2", got)
	}
}
