package domain

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestInvalidText(t *testing.T) {
	for in, want := range map[string]int{
		`"plain"`:               -1,
		`"é \u00e9 \n \\ud800"`: -1, // \\u is a backslash, then text
		`"\ud83d\ude00"`:        -1, // a pair
		`"\uD83D\uDE00"`:        -1,
		"\"a\xffb\"":            2,
		"\"\xc3\"":              1, // a cut sequence
		`"\ud800"`:              1,
		`"x\udc00"`:             2, // a low surrogate alone
		`"\ud800\u0041"`:        1, // a high one, then no low one
		`"\ud800\ud800"`:        1,
		`"\ud83d\ude00\udfff"`:  13,
		`["a", "\uDBFF"]`:       7,
		`"\u12"`:                -1, // bad escapes are the syntax check's
		`"\`:                    -1,
	} {
		if got := InvalidText([]byte(in)); got != want {
			t.Errorf("InvalidText(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestValidJSONRefusesLoneSurrogates(t *testing.T) {
	for in, want := range map[string]bool{`"\ud83d\ude00"`: true, `{"a": "\ud800"}`: false, "\"\xff\"": false} {
		if got := ValidJSON([]byte(in)); got != want {
			t.Errorf("ValidJSON(%s) = %v, want %v", in, got, want)
		}
	}
}

// FuzzInvalidText checks InvalidText against a slow reading of a JSON
// string by UTF-16 code units: a string is sound when it is UTF-8 and its
// escapes pair every surrogate.
func FuzzInvalidText(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud800"`, `"\ud83d\ude00"`, "\"\xff\"", `"\\ud800"`, `"\udc00\ud800"`, `"\ud800x\udc00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		at := InvalidText(b)
		if at >= len(b) || at < -1 {
			t.Fatalf("InvalidText(%q) = %d, out of range", b, at)
		}
		var s string
		if json.Unmarshal(b, &s) != nil {
			return
		}
		if want := soundString(b); (at < 0) != want {
			t.Fatalf("InvalidText(%q) = %d, but sound is %v", b, at, want)
		}
	})
}

// soundString reads a valid JSON string literal escape by escape.
func soundString(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	var units []uint16
	for i := 1; i < len(b)-1; i++ {
		if b[i] != '\\' {
			units = append(units, 0) // text between escapes parts a pair
			continue
		}
		if b[i+1] != 'u' {
			units = append(units, 0) // not a surrogate
			i++
			continue
		}
		v, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		units = append(units, uint16(v))
		i += 5
	}
	for i := 0; i < len(units); i++ {
		switch u := rune(units[i]); {
		case !utf16.IsSurrogate(u):
		case u < 0xDC00 && i+1 < len(units) && utf16.DecodeRune(u, rune(units[i+1])) != utf8.RuneError:
			i++
		default:
			return false
		}
	}
	return true
}

// BenchmarkInvalidText checks 100 JSON documents of about 1 KiB, escapes
// and non-ASCII text included: the cost strict text adds to a decode.
func BenchmarkInvalidText(b *testing.B) {
	doc, _ := json.Marshal(map[string]string{"text": strings.Repeat(`{"k": "v\n", "é": "\ud83d\ude00"} `, 30)})
	body := bytes.Repeat(doc, 100)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if InvalidText(body) >= 0 {
			b.Fatal("refused")
		}
	}
}
