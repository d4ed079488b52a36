// Package picoproc runs the real pico binary for the end-to-end tests: it
// builds cmd/pico once per test process and starts `pico serve` processes,
// returning once their banner is printed and /ready answers 200.
package picoproc

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// built is the binary every test of the process shares: compiling per test
// would dominate a package's run time.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// Binary builds cmd/pico on first use and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Build is Binary for callers without a test, such as a TestMain.
func Build() (string, error) {
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "pico-bin-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "pico")
		args := append(append([]string{"build"}, buildTags...), "-o", built.path, "github.com/picomq/pico/cmd/pico")
		cmd := exec.Command("go", args...)
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		return "", fmt.Errorf("build pico: %w\n%s", built.err, built.out)
	}
	return built.path, nil
}

// RemoveBinary deletes the built binary: a package's TestMain calls it once
// its tests have run.
func RemoveBinary() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// Env is the test's environment without PICO_* variables, plus extra:
// serve reads every flag from one, and the client its endpoint and profile,
// so a developer's shell must not change what a test runs. Other variables
// (the AWS_* credentials s3test sets among them) stay.
func Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PICO_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// Output collects a child's output while the test reads it.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Output) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Output) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Process is one running `pico serve`.
type Process struct {
	Cmd        *exec.Cmd
	URL        string // the main listener's base URL, http://HOST:PORT
	Advertised string // the URL other nodes redirect to
	AdminURL   string
	// Token is the bearer token Metrics sends, for a node with auth
	// required.
	Token   string
	Stdout  *Output
	Stderr  *Output
	exited  chan struct{} // closed once the process has been reaped
	waitErr error
}

var (
	servingLine = regexp.MustCompile(`serving on (http://\S+) \(advertised as (\S+)\)`)
	adminLine   = regexp.MustCompile(`admin on (http://\S+)`)
)

// Serve runs `pico serve args...` in Env() and returns once the node is
// ready. The process is killed when the test ends; if the test failed, its
// stderr is logged.
func Serve(t testing.TB, args ...string) *Process {
	t.Helper()
	return ServeIn(t, Env(), args...)
}

// ServeIn is Serve in the environment env.
func ServeIn(t testing.TB, env []string, args ...string) *Process {
	t.Helper()
	p, err := start(Binary(t), env, args)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("pico serve %s stderr (the last %d bytes at most):\n%s", p.URL, logTail, lastBytes(p.Stderr.String(), logTail))
		}
	})
	if err := p.awaitReady(); err != nil {
		t.Fatal(err)
	}
	return p
}

// Start is Serve for callers without a test, such as a TestMain: it
// builds the binary if need be, and the caller kills the process.
func Start(env []string, args ...string) (*Process, error) {
	bin, err := Build()
	if err != nil {
		return nil, err
	}
	p, err := start(bin, env, args)
	if err != nil {
		return nil, err
	}
	if err := p.awaitReady(); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

func start(bin string, env, args []string) (*Process, error) {
	p := &Process{Stdout: &Output{}, Stderr: &Output{}, exited: make(chan struct{})}
	p.Cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	p.Cmd.Env = env
	p.Cmd.Stdout, p.Cmd.Stderr = p.Stdout, p.Stderr
	if err := p.Cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.waitErr = p.Cmd.Wait(); close(p.exited) }()
	return p, nil
}

// logTail bounds the output a failed test logs.
const logTail = 64 << 10

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (p *Process) awaitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("pico serve exited before ready (%v)\nstdout:\n%s\nstderr:\n%s", p.waitErr, p.Stdout, p.Stderr)
		default:
		}
		if p.URL == "" {
			p.parseBanner()
		}
		if p.URL != "" && Status(p.AdminURL+"/ready") == http.StatusOK {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pico serve never became ready\nstdout:\n%s\nstderr:\n%s", p.Stdout, p.Stderr)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// parseBanner reads the addresses the node prints once it listens.
func (p *Process) parseBanner() {
	out := p.Stdout.String()
	serving, admin := servingLine.FindStringSubmatch(out), adminLine.FindStringSubmatch(out)
	if serving == nil || admin == nil {
		return
	}
	p.URL, p.Advertised, p.AdminURL = serving[1], serving[2], admin[1]
}

var probeClient = &http.Client{Timeout: 2 * time.Second}

// Status is the status of a GET of url, 0 if it got no answer.
func Status(url string) int {
	resp, err := probeClient.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Stop sends sig and returns the exit code (-1 when killed by a signal).
func (p *Process) Stop(t testing.TB, sig syscall.Signal) int {
	t.Helper()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
	return p.AwaitExit(t, 40*time.Second)
}

// AwaitExit waits for the process to end and returns its exit code.
func (p *Process) AwaitExit(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(within):
		t.Fatalf("pico serve still running %v after the signal\nstderr:\n%s", within, p.Stderr)
	}
	var exit *exec.ExitError
	switch {
	case p.waitErr == nil:
		return 0
	case errors.As(p.waitErr, &exit):
		return exit.ExitCode()
	}
	t.Fatalf("wait: %v", p.waitErr)
	return 0
}

// Exited is closed once the process has ended and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Kill ends the process if it still runs.
func (p *Process) Kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.Cmd.Process.Kill()
	<-p.exited
}
