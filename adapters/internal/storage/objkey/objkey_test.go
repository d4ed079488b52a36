package objkey

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	valid := []string{"a", "wal/1/0001", "a.b/..c/d..", ".hidden", "ü/日本", strings.Repeat("k", MaxLen), "a b/c"}
	for _, k := range valid {
		if err := Check(k); err != nil {
			t.Errorf("Check(%q) = %v, want nil", k, err)
		}
	}
	invalid := []string{
		"", "/a", "a/", "a//b", ".", "..", "a/./b", "a/../b", "../a", "a/..",
		"a\x00b", "\xff", strings.Repeat("k", MaxLen+1),
	}
	for _, k := range invalid {
		if err := Check(k); err == nil {
			t.Errorf("Check(%q) = nil, want an error", k)
		}
	}
}
