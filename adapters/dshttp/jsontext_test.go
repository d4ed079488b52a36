package dshttp

import (
	"net/http"
	"testing"
)

// TestJSONAppendRefusesUnsoundText: invalid UTF-8 and lone surrogate
// escapes in a JSON body are a 400 naming the message and the byte, not
// text every reader would decode to U+FFFD.
func TestJSONAppendRefusesUnsoundText(t *testing.T) {
	h := newHarness(t)
	h.create("/j", "Content-Type", "application/json")
	for body, why := range map[string]string{
		`["ok", {"a": "\ud800"}]`:    `message 1 of the body holds \ud800 at byte 14, a lone UTF-16 surrogate`,
		`[1, 2, "\\", "x\udc00"]`:    `message 3 of the body holds \udc00 at byte 15`,
		`{"a": "\ud83d\u0041"}`:      `body holds \ud83d at byte 7`,
		"[\"a\", [\"b\", \"\xff\"]]": `message 1 of the body is not valid UTF-8: byte 0xff at 13`,
		"  [ \"\xc3\" ]":             `message 0 of the body is not valid UTF-8: byte 0xc3 at 5`,
	} {
		rec := h.do(http.MethodPost, "/j", []byte(body), "Content-Type", "application/json")
		wantError(t, rec, http.StatusBadRequest, why)
	}
	h.appendBodies("/j", "application/json", `["\ud83d\ude00", "\\ud800"]`)
}

// TestJSONCreateRefusesUnsoundText: a PUT's first messages are checked
// alike.
func TestJSONCreateRefusesUnsoundText(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodPut, "/j", []byte(`["\udfff"]`), "Content-Type", "application/json")
	wantError(t, rec, http.StatusBadRequest, `message 0 of the body holds \udfff`)
}
