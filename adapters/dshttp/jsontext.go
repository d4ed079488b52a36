package dshttp

import (
	"bytes"
	"fmt"
	"net/http"
)

// textError explains a JSON body whose byte at is not sound text: invalid
// UTF-8, which json.Compact lets through inside strings, or a lone
// surrogate escape, which is valid JSON syntax but no character, so that
// every reader would decode it to U+FFFD (see domain.InvalidText). It
// names the message of an array, counted from 0, as a client splitting
// the body would.
func textError(body []byte, at int) error {
	where := "body"
	if i, ok := messageIndex(body, at); ok {
		where = fmt.Sprintf("message %d of the body", i)
	}
	if body[at] == '\\' {
		return statusError(http.StatusBadRequest, "%s holds %s at byte %d, a lone UTF-16 surrogate, which is no character",
			where, body[at:min(at+6, len(body))], at)
	}
	return statusError(http.StatusBadRequest, "%s is not valid UTF-8: byte 0x%02x at %d", where, body[at], at)
}

// messageIndex is the index of the element of a top-level array that
// holds byte at of body, JSON that json.Compact accepted; ok is false
// when the body is not an array.
func messageIndex(body []byte, at int) (int, bool) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return 0, false
	}
	index, scan := 0, jsonScan{}
	for _, c := range body[:at] {
		if scan.step(c) && c == ',' && scan.depth == 1 {
			index++
		}
	}
	return index, true
}

// jsonScan follows JSON text a byte at a time: whether it is inside a
// string, and how deeply arrays and objects nest.
type jsonScan struct {
	depth             int
	inString, escaped bool
}

// step moves past c and reports whether c is outside any string.
func (s *jsonScan) step(c byte) bool {
	switch {
	case s.escaped:
		s.escaped = false
		return false
	case s.inString:
		s.escaped, s.inString = c == '\\', c != '"'
		return false
	case c == '"':
		s.inString = true
		return false
	case c == '[' || c == '{':
		s.depth++
	case c == ']' || c == '}':
		s.depth--
	}
	return true
}
