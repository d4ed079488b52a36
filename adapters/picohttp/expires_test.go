package picohttp

import (
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
)

func TestParseExpiresAt(t *testing.T) {
	for in, want := range map[string]int64{
		"2030-01-02T03:04:05Z":          time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli(),
		"2030-01-02T03:04:05.678Z":      time.Date(2030, 1, 2, 3, 4, 5, 678e6, time.UTC).UnixMilli(),
		"2030-01-02T03:04:05.6789Z":     time.Date(2030, 1, 2, 3, 4, 5, 678e6, time.UTC).UnixMilli(),
		"2030-01-02T05:04:05+02:00":     time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli(),
		"2030-01-01T22:04:05.5-05:00":   time.Date(2030, 1, 2, 3, 4, 5, 500e6, time.UTC).UnixMilli(),
		"1893553445000":                 1893553445000,
		"0":                             0,
		"1970-01-01T00:00:00Z":          0,
		"9999-12-31T23:59:59.999+00:00": time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli(),
	} {
		got, err := ParseExpiresAt(in)
		if err != nil || got != want {
			t.Errorf("ParseExpiresAt(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "01", "-1", "1e9", "2030-01-02", "2030-01-02 03:04:05Z", "2030-01-02T03:04:05",
		"1969-12-31T23:59:59Z", "99999999999999999999", "253402300800000", "9999-12-31T23:59:59-00:01", "2030-13-01T00:00:00Z", " 2030-01-02T03:04:05Z", "tomorrow"} {
		if got, err := ParseExpiresAt(in); err == nil {
			t.Errorf("ParseExpiresAt(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatExpiresAt(t *testing.T) {
	for ms, want := range map[int64]string{
		0:             "1970-01-01T00:00:00Z",
		1893553445000: "2030-01-02T03:04:05Z",
		1893553445007: "2030-01-02T03:04:05.007Z",
		1893553445670: "2030-01-02T03:04:05.670Z",
	} {
		if got := headerval.FormatExpiresAt(ms); got != want {
			t.Errorf("headerval.FormatExpiresAt(%d) = %q, want %q", ms, got, want)
		}
	}
}

// FuzzParseExpiresAt: parsing never panics, and what parses formats to a
// value that parses back to the same instant.
func FuzzParseExpiresAt(f *testing.F) {
	for _, s := range []string{"2030-01-02T03:04:05Z", "2030-01-02T03:04:05.678+05:30", "1893553445000", "0", "01", "", "9999-12-31T23:59:59.999999999-23:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseExpiresAt(s)
		if err != nil {
			return
		}
		if ms < 0 {
			t.Fatalf("ParseExpiresAt(%q) = %d, negative", s, ms)
		}
		text := headerval.FormatExpiresAt(ms)
		back, err := ParseExpiresAt(text)
		if err != nil || back != ms {
			t.Fatalf("ParseExpiresAt(%q) = %d; formatted %q parses to %d, %v", s, ms, text, back, err)
		}
	})
}
