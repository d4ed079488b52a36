package ports_test

import (
	"errors"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Unfit takes any bytes for a stream that is not JSON, and for a
// JSON stream (any case, any parameters) one JSON value in UTF-8 per record.
func TestUnfitRecords(t *testing.T) {
	for _, tc := range []struct {
		contentType, body string
		want              bool
	}{
		{"application/octet-stream", "\xff anything", true},
		{"text/plain", "not json", true},
		{"application/json", `{"a":[1,"é"]}`, true},
		{"Application/JSON; charset=utf-8", ` 42 `, true},
		{"application/json", "not json", false},
		{"application/json", `{"a":1} {"b":2}`, false}, // two values
		{"application/json", "\"\xff\xfe\"", false},    // not UTF-8
		{"application/json", "", false},
	} {
		err := ports.Unfit(domain.StreamConfig{ContentType: tc.contentType}, ports.AppendRequest{Records: []domain.Record{{Body: []byte(tc.body)}}})
		if (err == nil) != tc.want {
			t.Errorf("Unfit(%q, %q) = %v, want ok %v", tc.contentType, tc.body, err, tc.want)
		}
		if err != nil && !errors.Is(err, ports.ErrBadRequest) {
			t.Errorf("Unfit(%q, %q) = %v, want a bad request", tc.contentType, tc.body, err)
		}
	}
}

// A content type other than the stream's is a conflict, in any case and
// with any parameters only when the type itself differs.
func TestUnfitContentType(t *testing.T) {
	cfg := domain.StreamConfig{ContentType: "text/plain"}
	for ct, want := range map[string]error{"": nil, "TEXT/plain; charset=utf-8": nil, "application/json": ports.ErrStreamConflict} {
		err := ports.Unfit(cfg, ports.AppendRequest{ContentType: ct})
		if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
			t.Errorf("Unfit(text/plain, %q) = %v, want %v", ct, err, want)
		}
	}
}
