package picowire

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/picomq/pico/domain"
	"pgregory.net/rapid"
)

// wantMalformed fails unless err wraps ErrMalformed and its message
// contains every fragment.
func wantMalformed(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", fragments)
	}
	if !errors.Is(err, domain.ErrMalformed) {
		t.Fatalf("error %q does not wrap ErrMalformed", err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("error %q does not mention %q", err, f)
		}
	}
}

func TestParseSeq(t *testing.T) {
	for in, want := range map[string]uint64{
		"0": 0, "42": 42, "00000000000000000042": 42, "007": 7,
		"18446744073709551615": math.MaxUint64,
		"-1":                   0, "-0": 0, "-9223372036854775808": 0,
	} {
		got, err := ParseSeq(in)
		if err != nil || got != want {
			t.Errorf("ParseSeq(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"":                     "not a decimal",
		"-":                    "not a decimal",
		"--1":                  "not a decimal",
		"+1":                   "not a decimal",
		"now":                  "not a decimal",
		"1.5":                  "not a decimal",
		" 1":                   "not a decimal",
		"18446744073709551616": "out of range",
		"-9223372036854775809": "out of range",
	} {
		_, err := ParseSeq(in)
		wantMalformed(t, err, why)
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{
		"": false, "false": false, "FALSE": false, "False": false,
		"true": true, "TRUE": true, "tRuE": true,
	} {
		got, err := ParseBool(in)
		if err != nil || got != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1", "0", "yes", "t", " true", "true ", "falſe", "truee"} {
		_, err := ParseBool(in)
		wantMalformed(t, err, "not true or false")
	}
}

func TestParseProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.Uint64().Draw(t, "v")
		s := strconv.FormatUint(v, 10)
		if got, err := ParseSeq(s); err != nil || got != v {
			t.Fatalf("ParseSeq(%q) = %d, %v", s, got, err)
		}
		padded := strings.Repeat("0", rapid.IntRange(0, 20).Draw(t, "zeros")) + s
		if got, err := ParseSeq(padded); err != nil || got != v {
			t.Fatalf("ParseSeq(%q) = %d, %v", padded, got, err)
		}
	})
}

// wireHeadersGen draws headers from small alphabets, so duplicate keys and
// keys that sort differently from their order both happen.
func wireHeadersGen() *rapid.Generator[[]domain.Header] {
	text := rapid.OneOf(
		rapid.StringMatching(`[a-c]{0,2}`),
		rapid.String(),
	)
	return rapid.Custom(func(t *rapid.T) []domain.Header {
		hs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) domain.Header {
			return domain.Header{Key: text.Draw(t, "key"), Value: string(wireBodyGen().Draw(t, "value"))}
		}), 0, 5).Draw(t, "headers")
		if len(hs) == 0 {
			return nil // decoders return no slice for no headers
		}
		return hs
	})
}

// wireBodyGen draws bodies that are empty, text, or arbitrary bytes (mostly
// not UTF-8).
func wireBodyGen() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		var b []byte
		switch rapid.IntRange(0, 2).Draw(t, "body kind") {
		case 1:
			b = []byte(rapid.String().Draw(t, "text"))
		case 2:
			b = rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")
		}
		if len(b) == 0 {
			return nil // decoders return nil for an empty body
		}
		return b
	})
}

// wireKeyGen draws no key, the empty key, or one of text or bytes.
func wireKeyGen() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		if rapid.Bool().Draw(t, "keyed") {
			return append([]byte{}, wireBodyGen().Draw(t, "key")...)
		}
		return nil
	})
}

// wireRecordGen draws a record as a batch request carries it: no timestamp.
func wireRecordGen() *rapid.Generator[domain.Record] {
	return rapid.Custom(func(t *rapid.T) domain.Record {
		return domain.Record{Key: wireKeyGen().Draw(t, "key"), Headers: wireHeadersGen().Draw(t, "headers"), Body: wireBodyGen().Draw(t, "body")}
	})
}

func seqRecordGen() *rapid.Generator[SeqRecord] {
	return rapid.Custom(func(t *rapid.T) SeqRecord {
		r := wireRecordGen().Draw(t, "record")
		r.TimestampMs = rapid.Int64().Draw(t, "timestamp")
		return SeqRecord{Seq: rapid.Uint64().Draw(t, "seq"), Record: r}
	})
}

// asJSONHeaders is what headers become through JSON objects: for each name
// its first text value, and the last of its other values, sorted by name,
// text first.
func asJSONHeaders(hs []domain.Header) []domain.Header {
	type kinds struct{ text, bytes *string }
	byName := map[string]*kinds{}
	for _, h := range hs {
		k := byName[h.Key]
		if k == nil {
			k = &kinds{}
			byName[h.Key] = k
		}
		v := h.Value
		if utf8.ValidString(v) && k.text == nil {
			k.text = &v
		} else {
			k.bytes = &v
		}
	}
	var out []domain.Header
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		for _, v := range []*string{byName[name].text, byName[name].bytes} {
			if v != nil {
				out = append(out, domain.Header{Key: name, Value: *v})
			}
		}
	}
	return out
}

func TestParseErrorsQuoteInputShort(t *testing.T) {
	for _, parse := range []func(string) error{
		func(s string) error { _, err := ParseSeq(s); return err },
		func(s string) error { _, err := ParseBool(s); return err },
	} {
		err := parse(strings.Repeat("x", 10_000))
		wantMalformed(t, err)
		if len(err.Error()) > 200 {
			t.Fatalf("message of %d bytes for a long input", len(err.Error()))
		}
	}
}
