package nemesis

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNemesisCatchesBrokenBuilds shows the nemesis can fail: it runs
// itself against pico built with the picobroken tag, each deliberately
// broken behaviour turned on in turn (package broken), under the faults
// that expose it, and requires a violation. Acknowledging early loses the
// records of a failed WAL upload, a skipped fence lets a paused writer
// acknowledge after its streams were taken over, and a stale read shows
// records that a failed upload or a kill takes back.
func TestNemesisCatchesBrokenBuilds(t *testing.T) {
	if flagSet("nemesis.seed") || flagSet("nemesis.faults") {
		t.Skip("a run of one schedule: -nemesis.seed or -nemesis.faults is set")
	}
	needPostgres(t)
	// A stale read shows only once its record is lost as well: it gets
	// more rounds.
	for _, tc := range []struct{ broken, faults, duration string }{
		{"ack-early", "store", "60s"},
		{"skip-fence", "stop-held", "60s"},
		{"stale-read", "store,kill", "100s"},
	} {
		t.Run(tc.broken, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("go", "test", "-tags", "picobroken", "-count=1", "-run", "^TestNemesis$", ".",
				"-nemesis.duration="+tc.duration, "-nemesis.round=20s", "-nemesis.seed=0", "-nemesis.faults="+tc.faults)
			cmd.Env = append(os.Environ(), "PICO_BROKEN="+tc.broken, "PICOMQ_ARTIFACTS="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err == nil || !bytes.Contains(out, []byte("violations (seed")) {
				t.Fatalf("with %s under %s faults, the nemesis found no violation (%v):\n%s", tc.broken, tc.faults, err, tail(string(out), 6000))
			}
			t.Logf("with %s: %s", tc.broken, violationLine(out))
		})
	}
}

// violationLine is the first violation a failed run reports.
func violationLine(out []byte) string {
	_, after, _ := bytes.Cut(out, []byte("violations (seed"))
	lines := strings.SplitN(string(after), "\n", 3)
	if len(lines) < 2 {
		return ""
	}
	return strings.TrimSpace(lines[1])
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
