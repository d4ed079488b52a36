package dshttp

import (
	"math"
	"net/url"
	"strings"
	"testing"
)

func TestFormatOffset(t *testing.T) {
	for n, want := range map[uint64]string{
		0:                "0000000000000000_0000000000000000",
		1:                "0000000000000000_0000000000000001",
		1234567890:       "0000000000000000_0000001234567890",
		9999999999999999: "0000000000000000_9999999999999999",
		math.MaxUint64:   "0000000000000000_18446744073709551615",
	} {
		if got := formatOffset(n); got != want {
			t.Errorf("formatOffset(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestOffsetsSortLikeRecords: clients compare offsets as strings.
func TestOffsetsSortLikeRecords(t *testing.T) {
	prev := formatOffset(0)
	for _, n := range []uint64{1, 9, 10, 99, 100, 1 << 20, 1 << 40, 1e15, 1e16 - 1} {
		cur := formatOffset(n)
		if cur <= prev {
			t.Errorf("%q sorts at or before %q", cur, prev)
		}
		prev = cur
	}
}

func TestParseOffset(t *testing.T) {
	for in, want := range map[string]position{
		"-1":                                {},
		"now":                               {now: true},
		"0000000000000000_0000000000000000": {given: true},
		"0000000000000000_0000000000000042": {at: 42, given: true},
		"0_7":                               {at: 7, given: true},
		"0_18446744073709551615":            {at: math.MaxUint64, given: true},
	} {
		got, err := parseOffset(in)
		if err != nil || got != want {
			t.Errorf("parseOffset(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{
		"", "-2", "NOW", "Now", "1", "_", "0_", "_0", "0__1", "0_1_2", "a_b", "0_1a", "+0_1", "0_+1", "0_-1",
		"0,1", "0_1,0_2", "0 _1", " 0_1", "0_1 ", "0/1", "../0_1", "0_1\x00", "0_1\r", "0_1\n", "0_\u0661",
		"9999999999999999_9999999999999999", "1_0", "0_18446744073709551616", "18446744073709551616_0",
	} {
		if pos, err := parseOffset(in); err == nil {
			t.Errorf("parseOffset(%q) = %+v, want an error", in, pos)
		}
	}
}

func TestOffsetParam(t *testing.T) {
	for query, want := range map[string]struct {
		pos     position
		present bool
		bad     bool
	}{
		"":                      {},
		"live=sse":              {},
		"offset=-1":             {present: true},
		"offset=now":            {pos: position{now: true}, present: true},
		"offset=0_3":            {pos: position{at: 3, given: true}, present: true},
		"offset=":               {present: true, bad: true},
		"offset":                {present: true, bad: true},
		"offset=0_1&offset=0_1": {present: true, bad: true},
		"offset=0%2C1":          {present: true, bad: true},
	} {
		q, _ := url.ParseQuery(query)
		pos, present, err := offsetParam(q)
		if pos != want.pos || present != want.present || (err != nil) != want.bad {
			t.Errorf("%q: %+v %v %v, want %+v", query, pos, present, err, want)
		}
	}
}

// FuzzParseOffset: any accepted offset formats back to itself (up to
// leading zeros), and anything else is rejected without panicking.
func FuzzParseOffset(f *testing.F) {
	for _, s := range []string{"-1", "now", "0_0", formatOffset(42), "0_18446744073709551616", "1_0", "0_1,", "0\x00_1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pos, err := parseOffset(s)
		if err != nil {
			if !strings.Contains(err.Error(), "offset") {
				t.Fatalf("error %q does not name the offset", err)
			}
			return
		}
		switch {
		case s == "-1":
			if pos != (position{}) {
				t.Fatalf("-1 parsed as %+v", pos)
			}
		case s == "now":
			if !pos.now {
				t.Fatalf("now parsed as %+v", pos)
			}
		default:
			again, err := parseOffset(formatOffset(pos.at))
			if err != nil || again != pos || !pos.given {
				t.Fatalf("%q parsed as %+v; its canonical form %q parsed as %+v, %v", s, pos, formatOffset(pos.at), again, err)
			}
			if strings.ContainsAny(s, ",&=?/ \r\n\x00") {
				t.Fatalf("%q accepted", s)
			}
		}
	})
}
