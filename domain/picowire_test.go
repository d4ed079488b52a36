package domain

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// wantMalformed fails unless err wraps ErrMalformed and its message
// contains every fragment.
func wantMalformed(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", fragments)
	}
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("error %q does not wrap ErrMalformed", err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("error %q does not mention %q", err, f)
		}
	}
}

func TestParseUint(t *testing.T) {
	for in, want := range map[string]uint64{
		"0": 0, "7": 7, "10": 10, "9223372036854775807": math.MaxInt64,
	} {
		got, err := ParseUint(in)
		if err != nil || got != want {
			t.Errorf("ParseUint(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"":                     "not an unsigned decimal",
		" 1":                   "not an unsigned decimal",
		"1 ":                   "not an unsigned decimal",
		"+1":                   "not an unsigned decimal",
		"-1":                   "not an unsigned decimal",
		"1_000":                "not an unsigned decimal",
		"0x10":                 "not an unsigned decimal",
		"1e3":                  "not an unsigned decimal",
		"１":                    "not an unsigned decimal", // fullwidth digit
		"00":                   "leading zero",
		"007":                  "leading zero",
		"9223372036854775808":  "out of range",
		"18446744073709551616": "out of range",
	} {
		_, err := ParseUint(in)
		wantMalformed(t, err, why)
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

func TestParseErrorsQuoteInputShort(t *testing.T) {
	_, err := ParseUint(strings.Repeat("x", 10_000))
	wantMalformed(t, err, "not an unsigned decimal")
	if len(err.Error()) > 200 {
		t.Fatalf("message of %d bytes for a long input", len(err.Error()))
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
		got, err := ParseUint(s)
		if v > math.MaxInt64 {
			if err == nil {
				t.Fatalf("ParseUint(%q) accepted a value over 63 bits", s)
			}
		} else if err != nil || got != v {
			t.Fatalf("ParseUint(%q) = %d, %v", s, got, err)
		}
	})
}

// wireHeadersGen draws headers from small alphabets, so duplicate keys and
// keys that sort differently from their order both happen.
func wireHeadersGen() *rapid.Generator[[]Header] {
	text := rapid.OneOf(
		rapid.StringMatching(`[a-c]{0,2}`),
		rapid.String(),
	)
	return rapid.Custom(func(t *rapid.T) []Header {
		hs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) Header {
			return Header{Key: text.Draw(t, "key"), Value: text.Draw(t, "value")}
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

// wireRecordGen draws a record as a batch request carries it: no timestamp.
func wireRecordGen() *rapid.Generator[Record] {
	return rapid.Custom(func(t *rapid.T) Record {
		return Record{Headers: wireHeadersGen().Draw(t, "headers"), Body: wireBodyGen().Draw(t, "body")}
	})
}

func seqRecordGen() *rapid.Generator[SeqRecord] {
	return rapid.Custom(func(t *rapid.T) SeqRecord {
		r := wireRecordGen().Draw(t, "record")
		r.TimestampMs = rapid.Int64().Draw(t, "timestamp")
		return SeqRecord{Seq: rapid.Uint64().Draw(t, "seq"), Record: r}
	})
}

// asJSONHeaders is what headers become through a JSON object: one value
// per key, the last given, sorted by key.
func asJSONHeaders(hs []Header) []Header {
	byKey := map[string]string{}
	for _, h := range hs {
		byKey[h.Key] = h.Value
	}
	var out []Header
	for k, v := range byKey {
		out = append(out, Header{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b Header) int { return strings.Compare(a.Key, b.Key) })
	return out
}
