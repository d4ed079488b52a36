package domain

import (
	"bytes"
	"unicode/utf8"
)

// InvalidText returns the index of the first byte of b, JSON text (a whole
// value or one string literal), that is not UTF-8 or that starts the \u
// escape of a lone surrogate (\uD800 to \uDFFF, not a high one followed by
// a low one), or -1 when the text is sound. encoding/json decodes both to
// U+FFFD without a word, which would store another text than the client
// sent; the caller refuses instead.
//
// It looks only at backslashes: in valid JSON they occur inside strings
// alone, and escapes are walked whole so that \\u is not taken for \u.
func InvalidText(b []byte) int {
	if !utf8.Valid(b) {
		return invalidUTF8At(b)
	}
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j
		n := escapeLen(b[i:])
		if n < 0 {
			return i
		}
		i += n
	}
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// escapeLen is the length of the escape that starts b, a surrogate pair
// counted whole, or -1 for a lone surrogate. Bad escapes are left to the
// JSON syntax check.
func escapeLen(b []byte) int {
	if len(b) < 6 || b[1] != 'u' {
		return min(2, len(b))
	}
	switch r := hex4(b[2:6]); {
	case r < 0xD800 || r > 0xDFFF:
		return 6
	case r >= 0xDC00:
		return -1 // a low surrogate first
	}
	if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if low := hex4(b[8:12]); low >= 0xDC00 && low <= 0xDFFF {
			return 12
		}
	}
	return -1
}

// hex4 is the value of four hex digits, or -1.
func hex4(b []byte) int {
	v := 0
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | int(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return v
}
