package picowire

import (
	"bytes"
	"fmt"

	"github.com/picomq/pico/domain"
)

// textError explains why lit, a JSON string literal as sent, is not sound
// text, or is nil when it is. encoding/json would decode invalid UTF-8 and
// lone surrogate escapes to U+FFFD, storing another text than the client
// sent, so the decoder refuses them, as the stream service refuses them in
// a JSON stream's records (domain.ValidJSON). The fast path of a batch
// never meets them: it takes only strings without escapes in valid UTF-8.
func textError(lit []byte) error {
	at := domain.InvalidText(lit)
	if at < 0 {
		return nil
	}
	if lit[at] == '\\' {
		return textFault(fmt.Sprintf("holds %s at byte %d, a lone UTF-16 surrogate, which is no character",
			lit[at:min(at+6, len(lit))], at-1))
	}
	return textFault(fmt.Sprintf("is not valid UTF-8: byte 0x%02x at %d", lit[at], at-1))
}

// textFault is the error of a string that is not sound text, so that a
// body's error can say how bytes travel instead.
type textFault string

func (f textFault) Error() string { return string(f) }

// headerNamesError checks the member names of raw, a headers object that
// decodes, as text: map keys come out of encoding/json already replaced.
// It meets every string in the object, names and values, and checks the
// names alone; jsonString checks the values.
func headerNamesError(raw []byte) error {
	for i := bytes.IndexByte(raw, '"'); i >= 0 && i < len(raw); {
		end, _ := stringEnd(raw, i+1)
		if end < 0 {
			return nil // the object decoded, so this does not happen
		}
		if isKey(raw, end+1) {
			if err := textError(raw[i : end+1]); err != nil {
				return fmt.Errorf("header name %s %v", quoteShort(string(raw[i+1:end])), err)
			}
		}
		next := bytes.IndexByte(raw[end+1:], '"')
		if next < 0 {
			return nil
		}
		i = end + 1 + next
	}
	return nil
}
