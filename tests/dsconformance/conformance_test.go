package dsconformance

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// suiteTests is the number of tests in @durable-streams/server-conformance-tests
// 0.3.6 with the subscription group on: 332 plus 6. A different number means
// the suite or the harness changed, and the not-yet list must be reviewed.
const suiteTests = 338

// suiteTimeout bounds one run of the suite (about 30 s when all is well).
const suiteTimeout = 4 * time.Minute

// TestConformance runs the Durable Streams server conformance suite against
// pico serve --protocol ds on each storage setup. Every test must pass except
// those in not_yet.txt, which must still fail: the list only shrinks.
func TestConformance(t *testing.T) {
	requireNode(t)
	notYet := readNotYet(t, "not_yet.txt")
	for _, setup := range storageSetups {
		t.Run(setup.name, func(t *testing.T) {
			meta, storage := setup.open(t)
			pico := startPico(t, meta, storage)
			report := runVitest(t, "conformance.test.mjs", suiteTimeout,
				"DS_URL="+pico.URL, "DS_SUBS=1", "DS_LP_MS=1500")
			checkSuite(t, report, notYet)
		})
	}
}

// checkSuite compares a report with the expected outcome and logs a summary.
func checkSuite(t *testing.T, report *vitestReport, notYet map[string]bool) {
	t.Helper()
	for _, msg := range report.fileErrors() {
		t.Errorf("the suite did not load: %s", msg)
	}
	tests := report.tests()
	var passed, failed, skipped, listed int
	var unexpected, nowPassing []string
	seen := map[string]bool{}
	for _, test := range tests {
		name := test.name()
		seen[name] = true
		switch test.Status {
		case "passed":
			passed++
			if notYet[name] {
				nowPassing = append(nowPassing, name)
			}
		case "failed":
			failed++
			if notYet[name] {
				listed++
			} else {
				unexpected = append(unexpected, name+"\n    "+firstLines(test.FailureMessages, 6))
			}
		default: // skipped, pending, todo
			skipped++
		}
	}
	t.Logf("conformance: %d passed, %d failed (%d of them in not_yet.txt), %d skipped, of %d tests",
		passed, failed, listed, skipped, len(tests))
	if len(tests) != suiteTests {
		t.Errorf("the suite ran %d tests, want %d: was the suite upgraded or the subscription group turned off?", len(tests), suiteTests)
	}
	if skipped != 0 {
		t.Errorf("%d tests were skipped, want none", skipped)
	}
	if len(unexpected) > 0 {
		t.Errorf("%d unexpected failures:\n  %s", len(unexpected), strings.Join(unexpected, "\n  "))
	}
	if len(nowPassing) > 0 {
		t.Errorf("%d tests in not_yet.txt pass now; remove them from the list:\n  %s", len(nowPassing), strings.Join(nowPassing, "\n  "))
	}
	var unknown []string
	for name := range notYet {
		if !seen[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 && len(tests) > 0 {
		slices.Sort(unknown)
		t.Errorf("not_yet.txt names tests the suite does not have; fix or remove them:\n  %s", strings.Join(unknown, "\n  "))
	}
}

// readNotYet reads the list of suite tests known to fail: full test names
// ("Group > Subgroup > title"), one per line, each group of lines under a
// "# reason" comment that says why.
func readNotYet(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	reason := false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "":
		case strings.HasPrefix(text, "#"):
			reason = true
		case !reason:
			t.Fatalf("%s:%d: a test name before any # reason comment", path, line)
		case names[text]:
			t.Fatalf("%s:%d: %q is listed twice", path, line, text)
		default:
			names[text] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// firstLines keeps the head of a failure message: the assertion, not the
// stack.
func firstLines(msgs []string, n int) string {
	if len(msgs) == 0 {
		return "(no message)"
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(msgs[0]), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "at ") {
			lines = append(lines, line)
		}
	}
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… (%d more lines)", len(lines)-n))
	}
	return strings.Join(lines, "\n    ")
}
