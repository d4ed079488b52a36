package closedloop

import (
	"testing"
	"time"
)

func TestCountAllowsNInAll(t *testing.T) {
	more, n := Count(5), 0
	for more() {
		n++
	}
	if n != 5 || more() {
		t.Fatalf("Count(5) allowed %d, then more", n)
	}
}

func TestForStartsAtTheFirstCall(t *testing.T) {
	more := For(30 * time.Millisecond)
	time.Sleep(40 * time.Millisecond) // before the first call: not counted
	if !more() {
		t.Fatal("For ended before its first call")
	}
	time.Sleep(40 * time.Millisecond)
	if more() {
		t.Fatal("For went on past its duration")
	}
}
