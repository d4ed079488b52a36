package histories

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestCheckersCatchBrokenEngines shows the checker can fail: it builds
// this package with the picobroken tag, turns on deliberately broken
// behaviours (package broken) in turn, and requires the histories that
// expose it to be found not linearizable. A skipped fence needs a paused
// writer whose PUT lands after the takeover, and a stale read a record
// seen in the moment before it is stored that then never is: these short
// histories rarely make either, and the nemesis against the binary checks
// those.
func TestCheckersCatchBrokenEngines(t *testing.T) {
	for _, tc := range []struct{ broken, property string }{
		{"ack-early", "TestHistoriesUnderStoreAndLogFaults"},
	} {
		t.Run(tc.broken, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("go", "test", "-tags", "picobroken", "-count=1", "-run", "^"+tc.property+"$", ".",
				"-rapid.checks=300", "-rapid.nofailfile", "-rapid.shrinktime=5s")
			cmd.Env = append(os.Environ(), "PICO_BROKEN="+tc.broken, "PICOMQ_ARTIFACTS="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err == nil || !bytes.Contains(out, []byte("not linearizable")) {
				t.Fatalf("with %s, %s did not find a history that is not linearizable (%v):\n%s", tc.broken, tc.property, err, tail(out))
			}
		})
	}
}

// tail is the end of a long output.
func tail(out []byte) []byte {
	if len(out) > 4000 {
		return out[len(out)-4000:]
	}
	return out
}
