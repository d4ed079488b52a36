package domain

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestCodesFile pins the command code table: codes are part of the wire
// format, so adding or renumbering one must come with a codes.txt edit.
func TestCodesFile(t *testing.T) {
	raw, err := os.ReadFile("testdata/codes.txt")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range AllCodes() {
		lines = append(lines, fmt.Sprintf("%s=%d", typeName(c), c))
	}
	got := strings.Join(lines, "\n") + "\n"
	if got != string(raw) {
		t.Errorf("testdata/codes.txt does not match the code table.\nfile:\n%s\ntable:\n%s", raw, got)
	}
}

func TestCodeTable(t *testing.T) {
	codes := AllCodes()
	known := map[Code]bool{}
	names := map[string]bool{}
	for i, c := range codes {
		if c != Code(i+1) {
			t.Errorf("AllCodes()[%d] = %d, codes must be dense from 1", i, c)
		}
		cmd := NewCommand(c)
		if cmd.Code() != c {
			t.Errorf("NewCommand(%d).Code() = %d", c, cmd.Code())
		}
		if name := typeName(c); names[name] {
			t.Errorf("type %s has two codes", name)
		} else {
			names[name] = true
		}
		known[c] = true
	}
	// A code past a hole would be missing from AllCodes.
	for c := Code(0); c < 1024; c++ {
		if (NewCommand(c) != nil) != known[c] {
			t.Errorf("NewCommand(%d) disagrees with AllCodes", c)
		}
	}
}
