package sqllog

import (
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	cases := []struct {
		url      string
		postgres bool
		dsn      string
	}{
		{"sqlite:data/meta.db", false, "data/meta.db"},
		{"sqlite:///var/pico/meta.db", false, "/var/pico/meta.db"},
		{"sqlite://meta.db", false, "meta.db"},
		{"sqlite::memory:", false, ":memory:"},
		{"sqlite://:memory:", false, ":memory:"},
		{"postgres://u@h/db", true, "postgres://u@h/db"},
		{"postgresql://u@h:5433/db?sslmode=disable", true, "postgresql://u@h:5433/db?sslmode=disable"},
	}
	for _, c := range cases {
		got, err := parseTarget(c.url)
		if err != nil {
			t.Errorf("parseTarget(%q): %v", c.url, err)
			continue
		}
		if got.postgres != c.postgres || got.dsn != c.dsn {
			t.Errorf("parseTarget(%q) = %+v, want postgres=%v dsn=%q", c.url, got, c.postgres, c.dsn)
		}
	}
}

func TestParseTargetRejects(t *testing.T) {
	for _, url := range []string{"", "sqlite:", "sqlite://", "mysql://u@h/db", "meta.db", "sqlite:a.db?mode=ro"} {
		if _, err := parseTarget(url); err == nil {
			t.Errorf("parseTarget(%q) accepted", url)
		}
	}
}

func TestUnsupportedURLHidesPassword(t *testing.T) {
	_, err := parseTarget("mysql://user:secret@host/db")
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("error = %v, want an unsupported-URL error without the password", err)
	}
}
