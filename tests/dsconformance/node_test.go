// Package dsconformance runs the Durable Streams side of pico against the
// protocol's own JavaScript tooling: the server conformance suite, the
// official client, and a benchmark against the Node reference server. The
// npm project beside this file pins every JavaScript package.
//
// BenchmarkVersusReference runs pico, the Node reference server and the
// floor (package floor) in turns.
package dsconformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvRequireNode set to 1 (tests/run.sh does) turns a missing node or npm
// into a failure, so CI never passes without running the JavaScript checks.
const EnvRequireNode = "PICOMQ_REQUIRE_NODE"

// requireNode skips the test when node 20+ or npm is missing, unless
// PICOMQ_REQUIRE_NODE=1. It then makes sure node_modules is installed.
func requireNode(t testing.TB) {
	t.Helper()
	if missing := nodeMissing(); missing != "" {
		if os.Getenv(EnvRequireNode) == "1" {
			t.Fatalf("dsconformance: %s=1 but %s (Node.js 20 or later with npm is needed)", EnvRequireNode, missing)
		}
		t.Skipf("dsconformance: %s; skipping the Durable Streams JavaScript checks (install Node.js 20+ with npm)", missing)
	}
	installNodeModules(t)
}

// nodeMissing says what is missing to run the JavaScript side, or "".
func nodeMissing() string {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " is not installed"
		}
	}
	// vitest 4 needs Node.js 20.
	out, err := exec.Command("node", "--version").Output()
	version := strings.TrimSpace(string(out))
	major, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	if n, convErr := strconv.Atoi(major); err != nil || convErr != nil || n < 20 {
		return fmt.Sprintf("node is %q, older than 20", version)
	}
	return ""
}

var npmInstall struct {
	once sync.Once
	err  error
	out  []byte
}

// installNodeModules runs `npm ci` once per test binary when node_modules
// is missing or older than package-lock.json, so `go test` alone works on a
// fresh clone. tests/run.sh runs npm ci itself, which makes this a no-op.
func installNodeModules(t testing.TB) {
	t.Helper()
	npmInstall.once.Do(func() {
		if !nodeModulesStale() {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		npmInstall.out, npmInstall.err = cmd.CombinedOutput()
	})
	if npmInstall.err != nil {
		t.Fatalf("dsconformance: npm ci: %v\n%s", npmInstall.err, npmInstall.out)
	}
}

// nodeModulesStale compares npm's record of the last install (written into
// node_modules) with the lock file.
func nodeModulesStale() bool {
	lock, err := os.Stat("package-lock.json")
	if err != nil {
		return true // npm ci then says what is wrong
	}
	installed, err := os.Stat(filepath.Join("node_modules", ".package-lock.json"))
	return err != nil || installed.ModTime().Before(lock.ModTime())
}

// vitestReport is the part of vitest's JSON report the tests read.
type vitestReport struct {
	TestResults []struct {
		Name             string `json:"name"`
		Status           string `json:"status"`
		Message          string `json:"message"` // why a whole file failed, e.g. an import error
		AssertionResults []vitestTest
	} `json:"testResults"`
}

type vitestTest struct {
	AncestorTitles  []string `json:"ancestorTitles"`
	Title           string   `json:"title"`
	Status          string   `json:"status"` // passed, failed, skipped, pending, todo
	FailureMessages []string `json:"failureMessages"`
}

// name is the test's describe path and title, as not_yet.txt spells it.
func (v vitestTest) name() string {
	return strings.Join(append(append([]string{}, v.AncestorTitles...), v.Title), " > ")
}

// tests flattens the report's tests across files.
func (r *vitestReport) tests() []vitestTest {
	var all []vitestTest
	for _, f := range r.TestResults {
		all = append(all, f.AssertionResults...)
	}
	return all
}

// fileErrors lists why whole files failed (their tests never ran).
func (r *vitestReport) fileErrors() []string {
	var msgs []string
	for _, f := range r.TestResults {
		if f.Message != "" {
			msgs = append(msgs, filepath.Base(f.Name)+": "+f.Message)
		}
	}
	return msgs
}

// runVitest runs one test file with vitest and returns its JSON report.
// Failing tests are not an error here: callers judge the report. env is
// added to the test's environment.
func runVitest(t testing.TB, file string, timeout time.Duration, env ...string) *vitestReport {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// --no: never let npx download anything; vitest comes from node_modules.
	cmd := exec.CommandContext(ctx, "npx", "--no", "vitest", "run", "--reporter=json", "--outputFile="+out, file)
	cmd.Env = append(os.Environ(), append([]string{"NO_COLOR=1", "CI=true"}, env...)...)
	// npx starts vitest as a child, and vitest its workers: on timeout
	// the whole process group goes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("vitest %s did not finish within %v\n%s", file, timeout, tail(output))
	}
	data, readErr := os.ReadFile(out)
	if readErr != nil {
		t.Fatalf("vitest %s wrote no report (%v, exit: %v)\n%s", file, readErr, err, tail(output))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("vitest %s: %v", file, err)
	}
	var report vitestReport
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatalf("vitest %s: bad JSON report: %v", file, err)
	}
	return &report
}

// tail keeps the end of a long output, where the errors are.
func tail(b []byte) string {
	const max = 8 << 10
	if len(b) > max {
		return "…" + string(b[len(b)-max:])
	}
	return string(b)
}
