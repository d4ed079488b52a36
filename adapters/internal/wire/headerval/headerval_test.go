package headerval

import (
	"strings"
	"testing"
)

func TestClipShortensLongValues(t *testing.T) {
	if got := Clip("ab"); got != `"ab"` {
		t.Errorf("Clip(ab) = %s", got)
	}
	if got := Clip(strings.Repeat("x", 100)); got != `"`+strings.Repeat("x", 64)+`..." (100 bytes)` {
		t.Errorf("Clip(100 x) = %s", got)
	}
}

func TestETagMatches(t *testing.T) {
	for inm, want := range map[string]bool{`"t"`: true, `W/"t"`: true, `"o", "t"`: true, "*": true, `"o"`: false, "": false} {
		if got := ETagMatches(inm, `"t"`); got != want {
			t.Errorf("ETagMatches(%q) = %v", inm, got)
		}
	}
}
