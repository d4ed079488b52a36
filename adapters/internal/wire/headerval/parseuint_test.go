package headerval

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/picomq/pico/domain"
	"pgregory.net/rapid"
)

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
		if _, err := ParseUint(in); !saysMalformed(err, why) {
			t.Errorf("ParseUint(%q): %v, want ErrMalformed saying %q", in, err, why)
		}
	}
}

func TestParseErrorsQuoteInputShort(t *testing.T) {
	_, err := ParseUint(strings.Repeat("x", 10_000))
	if !saysMalformed(err, "not an unsigned decimal") {
		t.Fatalf("a long input: %v", err)
	}
	if len(err.Error()) > 200 {
		t.Fatalf("message of %d bytes for a long input", len(err.Error()))
	}
}

func TestParseUintProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.Uint64().Draw(t, "v")
		s := strconv.FormatUint(v, 10)
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

// FuzzParseUint checks that ParseUint is strict: one spelling per value.
func FuzzParseUint(f *testing.F) {
	for _, s := range []string{"", "0", "00", "1", "-1", "-0", "-", "+1", " 1", "true",
		"9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
		"00000000000000000042", "-9223372036854775809", "1e3", "now"} {
		f.Add(s)
	}
	f.Fuzz(checkParseUint)
}

func checkParseUint(t *testing.T, s string) {
	v, err := ParseUint(s)
	if err != nil {
		if !errors.Is(err, domain.ErrMalformed) {
			t.Fatalf("ParseUint(%q): error does not wrap ErrMalformed: %v", s, err)
		}
		return
	}
	// Strict means one spelling per value.
	if v > math.MaxInt64 || strconv.FormatUint(v, 10) != s {
		t.Fatalf("ParseUint(%q) = %d", s, v)
	}
}

// saysMalformed reports whether err wraps domain.ErrMalformed and says why.
func saysMalformed(err error, why string) bool {
	return errors.Is(err, domain.ErrMalformed) && strings.Contains(err.Error(), why)
}
