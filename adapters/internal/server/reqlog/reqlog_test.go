package reqlog_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/reqlog"
)

func logged(t *testing.T, level slog.Level, req *http.Request) (*httptest.ResponseRecorder, string) {
	t.Helper()
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
	h := reqlog.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqlog.SetRoute(r.Context(), "/admin/streams/*")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("hello"))
	}), logger, "/{stream}")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w, buf.String()
}

func TestRequestLineAtDebugWithoutSecrets(t *testing.T) {
	req := httptest.NewRequest(http.MethodPut, "/orders/1", nil)
	req.Header.Set("Authorization", "Bearer c2VjcmV0.dG9rZW4")
	req.Header.Set(reqlog.Header, "client-id-7")
	w, line := logged(t, slog.LevelDebug, req)
	if got := w.Header().Get(reqlog.Header); got != "client-id-7" {
		t.Fatalf("echoed id %q, want the client's", got)
	}
	for _, want := range []string{"id=client-id-7", "method=PUT", "route=/admin/streams/*", "path=/orders/1", "status=201", "bytes=5", "duration="} {
		if !strings.Contains(line, want) {
			t.Errorf("log line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "c2VjcmV0") || strings.Contains(line, "Bearer") {
		t.Errorf("log line carries the credential: %q", line)
	}
}

func TestNothingAtInfo(t *testing.T) {
	w, line := logged(t, slog.LevelInfo, httptest.NewRequest(http.MethodGet, "/orders", nil))
	if line != "" {
		t.Errorf("logged at info: %q", line)
	}
	if w.Header().Get(reqlog.Header) == "" {
		t.Error("no request id made")
	}
}

func TestInsaneClientIDReplaced(t *testing.T) {
	for _, id := range []string{"a b", "x\ny", strings.Repeat("a", 200), "é"} {
		req := httptest.NewRequest(http.MethodGet, "/s", nil)
		req.Header.Set(reqlog.Header, id)
		w, _ := logged(t, slog.LevelInfo, req)
		if got := w.Header().Get(reqlog.Header); got == id || got == "" {
			t.Errorf("client id %q: echoed %q, want a new one", id, got)
		}
	}
}
