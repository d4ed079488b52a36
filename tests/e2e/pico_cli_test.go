package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/tests/picoproc"
)

// cliRun is one finished pico client command.
type cliRun struct {
	args           string
	stdout, stderr string
	code           int
}

// runPico runs the client with env added to a clean environment.
func runPico(t *testing.T, env []string, stdin string, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, picoproc.Binary(t), args...)
	cmd.Env = picoproc.Env(env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := cliRun{args: "pico " + strings.Join(args, " "), stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", run.args, err)
	}
	return run
}

// want checks the exit code and the exact stdout.
func (r cliRun) want(t *testing.T, code int, stdout string) cliRun {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout: %q\nstderr: %q", r.args, r.code, code, clipText(r.stdout), r.stderr)
	}
	if r.stdout != stdout {
		t.Errorf("%s: stdout %q, want %q (stderr %q)", r.args, clipText(r.stdout), clipText(stdout), r.stderr)
	}
	return r
}

// wantStderr checks that stderr holds each fragment.
func (r cliRun) wantStderr(t *testing.T, fragments ...string) cliRun {
	t.Helper()
	for _, f := range fragments {
		if !strings.Contains(r.stderr, f) {
			t.Errorf("%s: stderr %q does not contain %q", r.args, r.stderr, f)
		}
	}
	return r
}

// wantFailure checks a failed command: no data on stdout and one
// "pico: ..." message on stderr naming what went wrong.
func (r cliRun) wantFailure(t *testing.T, code int, fragments ...string) cliRun {
	t.Helper()
	r.want(t, code, "")
	if !strings.HasPrefix(r.stderr, "pico: ") {
		t.Errorf("%s: stderr %q does not start with \"pico: \"", r.args, r.stderr)
	}
	return r.wantStderr(t, fragments...)
}

func clipText(s string) string {
	if len(s) > 200 {
		return fmt.Sprintf("%s... (%d bytes)", s[:200], len(s))
	}
	return s
}

// numberLines is "from\n...to\n", what `seq from to` prints.
func numberLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// clientEnv points the client at endpoint, with an empty config file of its
// own so no saved profile of the developer's can interfere.
func clientEnv(t *testing.T, endpoint string) []string {
	return []string{"PICO_ENDPOINT=" + endpoint, "PICO_CONFIG=" + filepath.Join(t.TempDir(), "config.toml")}
}

// TestCLIQuickStart follows the README's quick start against a real node.
func TestCLIQuickStart(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	env := clientEnv(t, n.URL)
	pico := func(stdin string, args ...string) cliRun { t.Helper(); return runPico(t, env, stdin, args...) }
	const orders = "/streams/orders"

	pico("", "create", orders, "--content-type", "text/plain").want(t, 0, "").wantStderr(t, "created=true")
	send(t, "HEAD", n.URL+orders, nil, nil).wantStatus(t, 200).wantHeaders(t, "Content-Type", "text/plain", "Pico-Next-Seq", "0")

	appended := pico(numberLines(1, 1000), "append", orders, "--batch", "100").want(t, 0, "")
	wantBatchesOf100(t, appended)
	send(t, "HEAD", n.URL+orders, nil, nil).wantHeaders(t, "Pico-Next-Seq", "1000")

	pico("", "read", orders).want(t, 0, numberLines(1, 1000)).wantNoStderr(t)
	pico("", "head", orders).want(t, 0, "start=0 next=1000 closed=false type=text/plain\n")

	mustCreate(t, n.URL+"/streams/payments", "application/json")
	mustCreate(t, n.URL+"/other/x", "text/plain")
	pico("", "ls", "--prefix", "/streams/").want(t, 0,
		"/streams/orders start=0 next=1000 closed=false\n/streams/payments start=0 next=0 closed=false\n")

	pico("", "tail", orders).want(t, 0, numberLines(991, 1000))
	pico("", "tail", orders, "-n", "3").want(t, 0, numberLines(998, 1000))

	follower := startFollower(t, env, orders)
	follower.wantLines(t, numberLines(991, 1000))
	pico("1001\n1002\n", "append", orders).want(t, 0, "")
	follower.wantLines(t, numberLines(1001, 1002))
	pico("", "close", orders).want(t, 0, "")
	follower.wantExit(t, 0)

	pico("1003\n", "append", orders).wantFailure(t, 4, "closed")
	pico("", "trim", orders, "--seq", "990").want(t, 0, "")
	send(t, "HEAD", n.URL+orders, nil, nil).wantHeaders(t, "Pico-Start-Seq", "990", "Pico-Next-Seq", "1002", "Pico-Closed", "true")
	pico("", "read", orders).want(t, 0, numberLines(991, 1002))
	pico("", "head", orders).want(t, 0, "start=990 next=1002 closed=true type=text/plain\n")

	pico("", "delete", orders).want(t, 0, "")
	send(t, "HEAD", n.URL+orders, nil, nil).wantStatus(t, 404)
	pico("", "head", orders).wantFailure(t, 3, "not found")
	pico("", "read", orders).wantFailure(t, 3, "not found")
}

func (r cliRun) wantNoStderr(t *testing.T) cliRun {
	t.Helper()
	if r.stderr != "" {
		t.Errorf("%s: stderr %q, want nothing", r.args, r.stderr)
	}
	return r
}

// wantBatchesOf100 checks that 1000 lines went as ten appends of 100: the
// client reports each acknowledged append's offsets on stderr.
func wantBatchesOf100(t *testing.T, r cliRun) {
	t.Helper()
	var want strings.Builder
	for start := 0; start < 1000; start += 100 {
		fmt.Fprintf(&want, "start=%d next=%d\n", start, start+100)
	}
	if r.stderr != want.String() {
		t.Errorf("%s: stderr %q, want ten appends of 100: %q", r.args, r.stderr, want.String())
	}
}

// follower is a running `pico tail -f`.
type follower struct {
	args   string
	lines  chan string
	exited chan error
	stderr *picoproc.Output
}

func startFollower(t *testing.T, env []string, name string) *follower {
	t.Helper()
	cmd := exec.Command(picoproc.Binary(t), "tail", name, "-f")
	cmd.Env = picoproc.Env(env...)
	f := &follower{args: "pico tail " + name + " -f", lines: make(chan string, 4096), exited: make(chan error, 1), stderr: &picoproc.Output{}}
	cmd.Stderr = f.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		close(f.lines)
		f.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return f
}

// wantLines waits for exactly these lines, in order.
func (f *follower) wantLines(t *testing.T, want string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(want, "\n"), "\n") {
		select {
		case got, ok := <-f.lines:
			if !ok {
				t.Fatalf("%s ended before printing %q (stderr %q)", f.args, line, f.stderr)
			}
			if got != line {
				t.Fatalf("%s printed %q, want %q", f.args, got, line)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not print %q within 10s (stderr %q)", f.args, line, f.stderr)
		}
	}
}

// wantExit waits for the follower to exit with code, printing nothing more.
func (f *follower) wantExit(t *testing.T, code int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case extra, ok := <-f.lines:
			if ok {
				t.Errorf("%s printed %q after the last record", f.args, extra)
				continue
			}
			err := <-f.exited
			var exit *exec.ExitError
			got := 0
			if errors.As(err, &exit) {
				got = exit.ExitCode()
			} else if err != nil {
				t.Fatalf("%s: %v", f.args, err)
			}
			if got != code {
				t.Fatalf("%s exited %d, want %d (stderr %q)", f.args, got, code, f.stderr)
			}
			return
		case <-deadline:
			t.Fatalf("%s still running 10s after the stream was closed", f.args)
		}
	}
}

// TestCLIFailures: a failing command exits non-zero with one "pico: "
// message on stderr and nothing on stdout.
func TestCLIFailures(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	env := clientEnv(t, n.URL)
	pico := func(args ...string) cliRun { t.Helper(); return runPico(t, env, "", args...) }

	pico("create", "/fail/s", "--content-type", "text/plain").want(t, 0, "")
	pico("create", "/fail/s", "--content-type", "text/plain").want(t, 0, "").wantStderr(t, "created=false")
	pico("create", "/fail/s", "--content-type", "application/json").wantFailure(t, 4, "conflict")
	pico("read", "/fail/missing").wantFailure(t, 3, "not found")
	pico("trim", "/fail/missing", "--seq", "1").wantFailure(t, 3, "not found")
	pico("close", "/fail/missing").wantFailure(t, 3, "not found")
	pico("delete", "/fail/missing").wantFailure(t, 3, "not found")

	pico("read").wantFailure(t, 2)
	pico("trim", "/fail/s").wantFailure(t, 2, "--seq")
	pico("frobnicate").wantFailure(t, 2, "unknown command")

	dead := "http://" + closedAddr(t)
	unreachable := runPico(t, clientEnv(t, dead), "", "head", "/fail/s")
	unreachable.wantFailure(t, 1, strings.TrimPrefix(dead, "http://"))
	// The flag wins over the environment.
	runPico(t, clientEnv(t, dead), "", "--endpoint", n.URL, "head", "/fail/s").
		want(t, 0, "start=0 next=0 closed=false type=text/plain\n")
	runPico(t, clientEnv(t, dead), "", "head", "/fail/s", "--endpoint", n.URL).
		want(t, 0, "start=0 next=0 closed=false type=text/plain\n")
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	return freeAddr(t) // closed again before it is returned
}

// TestCLIConfigProfiles saves profiles with pico config and lets them supply
// the endpoint, with PICO_CONFIG pointing at a temporary file.
func TestCLIConfigProfiles(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	mustCreate(t, n.URL+"/cfg/s", "text/plain")
	path := filepath.Join(t.TempDir(), "pico", "config.toml")
	dead := "http://" + closedAddr(t)
	pico := func(extraEnv []string, args ...string) cliRun {
		t.Helper()
		return runPico(t, append([]string{"PICO_CONFIG=" + path}, extraEnv...), "", args...)
	}
	const headLine = "start=0 next=0 closed=false type=text/plain\n"

	pico(nil, "config", "path").want(t, 0, path+"\n")
	pico(nil, "config", "ls").want(t, 0, "")
	pico(nil, "config", "set", "local", "--endpoint", n.URL).want(t, 0, "").wantStderr(t, "local")
	pico(nil, "config", "set", "dead", "--endpoint", dead).want(t, 0, "")
	pico(nil, "config", "ls").want(t, 0, "  dead endpoint="+dead+"\n* local endpoint="+n.URL+"\n")
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("config file %s: %v, mode %v; want it saved 0600", path, err, info)
	}

	// The first profile saved is the default.
	pico(nil, "head", "/cfg/s").want(t, 0, headLine)
	pico(nil, "config", "use", "dead").want(t, 0, "")
	pico(nil, "config", "ls").want(t, 0, "* dead endpoint="+dead+"\n  local endpoint="+n.URL+"\n")
	pico(nil, "head", "/cfg/s").wantFailure(t, 1)
	pico(nil, "--profile", "local", "head", "/cfg/s").want(t, 0, headLine)
	pico([]string{"PICO_PROFILE=local"}, "head", "/cfg/s").want(t, 0, headLine)
	// The environment's endpoint wins over the default profile.
	pico([]string{"PICO_ENDPOINT=" + n.URL}, "head", "/cfg/s").want(t, 0, headLine)
	pico(nil, "config", "use", "nosuch").wantFailure(t, 1, "nosuch")
	pico(nil, "--profile", "nosuch", "head", "/cfg/s").wantFailure(t, 1, "nosuch")

	pico(nil, "config", "use", "local").want(t, 0, "")
	pico(nil, "config", "get").want(t, 0, "local endpoint="+n.URL+"\n")
	pico(nil, "head", "/cfg/s").want(t, 0, headLine)
}
