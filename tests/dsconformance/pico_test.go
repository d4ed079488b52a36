package dsconformance

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/tests/pgtest"
	"github.com/picomq/pico/tests/s3test"
)

// builtPico is the binary every test and benchmark of the package shares:
// one build, not one per storage setup.
var builtPico struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtPico.dir != "" {
		os.RemoveAll(builtPico.dir)
	}
	os.Exit(code)
}

func picoBinary(t testing.TB) string {
	t.Helper()
	builtPico.once.Do(func() {
		builtPico.dir, builtPico.err = os.MkdirTemp("", "pico-ds-bin-")
		if builtPico.err != nil {
			return
		}
		builtPico.path = filepath.Join(builtPico.dir, "pico")
		cmd := exec.Command("go", "build", "-o", builtPico.path, "github.com/picomq/pico/cmd/pico")
		builtPico.out, builtPico.err = cmd.CombinedOutput()
	})
	if builtPico.err != nil {
		t.Fatalf("build pico: %v\n%s", builtPico.err, builtPico.out)
	}
	return builtPico.path
}

// storageSetup is one metadata log and object store pair to serve from.
type storageSetup struct {
	name string
	// open returns the --meta-url and --storage values; it skips the test
	// when the servers it needs are not configured (pgtest, s3test).
	open func(t testing.TB) (metaURL, storage string)
}

var storageSetups = []storageSetup{
	{"SQLite+file", func(t testing.TB) (string, string) {
		dir := t.TempDir()
		return "sqlite:" + filepath.Join(dir, "meta.db"), "-2@file://" + filepath.Join(dir, "objects")
	}},
	{"Postgres+versitygw", func(t testing.TB) (string, string) {
		return pgtest.URL(t), "-2@" + s3test.URL(t)
	}},
}

// picoServer is one running `pico serve --protocol ds`.
type picoServer struct {
	url      string // DS base URL, http://HOST:PORT
	adminURL string
	cmd      *exec.Cmd
	stdout   *lockedBuffer
	stderr   *lockedBuffer
	exited   chan struct{}
	waitErr  error
}

var (
	servingLine = regexp.MustCompile(`serving on (http://\S+) \(advertised as \S+\)`)
	adminLine   = regexp.MustCompile(`admin on (http://\S+)`)
)

// startPico serves the Durable Streams protocol on the main listener and
// returns once the node is ready. The long-poll timeout is the suite's
// (§3: two tests block for it under a 5 s test timeout); SSE responses are
// cut short so no reader lingers after a test.
func startPico(t testing.TB, metaURL, storage string) *picoServer {
	t.Helper()
	s := &picoServer{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(picoBinary(t), "serve", "--protocol", "ds",
		"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--long-poll-timeout-sec", "0.5", "--sse-max-duration-sec", "10",
		"--meta-url", metaURL, "--storage", storage)
	s.cmd.Env = cleanEnv()
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.exited
		if t.Failed() {
			t.Logf("pico serve stderr (last part):\n%s", tail([]byte(s.stderr.String())))
		}
	})
	s.awaitReady(t)
	return s
}

func (s *picoServer) awaitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-s.exited:
			t.Fatalf("pico serve exited before ready (%v)\nstdout:\n%s\nstderr:\n%s", s.waitErr, s.stdout, s.stderr)
		default:
		}
		if s.url == "" {
			out := s.stdout.String()
			if serving, admin := servingLine.FindStringSubmatch(out), adminLine.FindStringSubmatch(out); serving != nil && admin != nil {
				s.url, s.adminURL = serving[1], admin[1]
			}
		}
		if s.url != "" && status(s.adminURL+"/ready") == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pico serve never became ready\nstdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

var probeClient = &http.Client{Timeout: 2 * time.Second}

func status(url string) int {
	resp, err := probeClient.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// cleanEnv is the environment without PICO_* variables: serve reads every
// flag from one, so a developer's shell must not change what a test runs.
// The AWS_* credentials s3test sets stay.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PICO_") {
			env = append(env, kv)
		}
	}
	return env
}

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
