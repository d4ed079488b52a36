package subscriptions

import "testing"

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pattern, path string
		match         bool
	}{
		{"events/*", "events/a", true},
		{"events/*", "events/a/b", false},
		{"events/*", "events", false},
		{"events/**", "events", true},
		{"events/**", "events/a/b/c", true},
		{"**/log", "a/b/log", true},
		{"**/log", "log", true},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/d", false},
		{"/events/a/", "events/a", true},
		{"events/a", "events/ab", false},
		{"**", "anything/at/all", true},
	}
	for _, c := range cases {
		if got := matchGlob(c.pattern, c.path); got != c.match {
			t.Errorf("matchGlob(%q, %q) = %v", c.pattern, c.path, got)
		}
	}
}

func TestLiteralPrefix(t *testing.T) {
	for pattern, want := range map[string]string{
		"events/*": "events/", "events/a": "events/", "a/b/**/c": "a/b/", "**": "", "x": "", "*/y": "",
	} {
		if got := literalPrefix(pattern); got != want {
			t.Errorf("literalPrefix(%q) = %q, want %q", pattern, got, want)
		}
	}
}
