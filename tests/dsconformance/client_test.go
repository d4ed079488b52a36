package dsconformance

import (
	"github.com/picomq/pico/tests/picoproc"
	"strings"
	"testing"
	"time"
)

// TestOfficialClient runs client_test.mjs, the official TypeScript client
// doing catch-up reads, resumes, live long-poll and SSE subscriptions and
// idempotent production, against pico serve --protocol ds; and the same
// client through faults its test hook injects.
func TestOfficialClient(t *testing.T) {
	requireNode(t)
	meta, storage := storageSetups[0].open(t) // SQLite+file: the suite covers the other setup
	pico := startPicoIn(t, picoproc.Env(), meta, storage, "--test-fault-injection")
	report := runVitest(t, "client_test.mjs", time.Minute, "DS_URL="+pico.URL)
	checkAllPass(t, report)
}

// checkAllPass fails the test unless the report has tests and all passed.
func checkAllPass(t *testing.T, report *vitestReport) {
	t.Helper()
	for _, msg := range report.fileErrors() {
		t.Errorf("the file did not load: %s", msg)
	}
	tests := report.tests()
	if len(tests) == 0 {
		t.Fatal("no tests ran")
	}
	var failures []string
	for _, test := range tests {
		if test.Status != "passed" {
			failures = append(failures, test.Status+": "+test.name()+"\n    "+firstLines(test.FailureMessages, 8))
		}
	}
	t.Logf("client: %d of %d tests passed", len(tests)-len(failures), len(tests))
	if len(failures) > 0 {
		t.Errorf("%d client tests did not pass:\n  %s", len(failures), strings.Join(failures, "\n  "))
	}
}
