package e2e

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

// builtPico is the binary shared by every test that needs only one build:
// compiling per test would dominate the package's run time.
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

// picoBinary builds cmd/pico on first use and returns its path.
func picoBinary(t *testing.T) string {
	t.Helper()
	builtPico.once.Do(func() {
		builtPico.dir, builtPico.err = os.MkdirTemp("", "pico-e2e-bin-")
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

// cleanEnv is the test's environment without PICO_* variables: serve reads
// every flag from one, and the client its endpoint and profile, so a
// developer's shell must not change what a test runs.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PICO_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
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

// nodeConfig says how to run one `pico serve`.
type nodeConfig struct {
	dataDir    string // holds meta.db (unless metaURL is set) and objects/
	metaURL    string // default sqlite:DATADIR/meta.db
	storageDir string // default DATADIR/objects
	nodeID     int    // default 1
	listen     string // default 127.0.0.1:0 (the node prints the port)
	admin      string // default 127.0.0.1:0
	flags      []string
}

// defaultNodeFlags keep waits short so the package stays fast.
var defaultNodeFlags = []string{"--long-poll-timeout-sec", "1", "--sse-max-duration-sec", "3"}

func (c nodeConfig) args() []string {
	meta := c.metaURL
	if meta == "" {
		meta = "sqlite:" + filepath.Join(c.dataDir, "meta.db")
	}
	storage := c.storageDir
	if storage == "" {
		storage = filepath.Join(c.dataDir, "objects")
	}
	id := c.nodeID
	if id == 0 {
		id = 1
	}
	args := []string{"serve", "--listen", orDefault(c.listen, "127.0.0.1:0"), "--admin-listen", orDefault(c.admin, "127.0.0.1:0"),
		"--meta-url", meta, "--storage", "-2@file://" + storage, "--node-id", fmt.Sprint(id)}
	args = append(args, defaultNodeFlags...)
	return append(args, c.flags...)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// picoNode is one running `pico serve` process.
type picoNode struct {
	cfg        nodeConfig
	cmd        *exec.Cmd
	url        string // protocol base URL, http://HOST:PORT
	advertised string // the URL other nodes redirect to
	adminURL   string
	stdout     *lockedBuffer
	stderr     *lockedBuffer
	exited     chan struct{} // closed once the process has been reaped
	waitErr    error
}

var (
	servingLine = regexp.MustCompile(`serving on (http://\S+) \(advertised as (\S+)\)`)
	adminLine   = regexp.MustCompile(`admin on (http://\S+)`)
)

// startNode runs pico serve and returns once GET /ready answers 200.
func startNode(t *testing.T, cfg nodeConfig) *picoNode {
	t.Helper()
	n := &picoNode{cfg: cfg, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	n.cmd = exec.Command(picoBinary(t), cfg.args()...)
	n.cmd.Env = cleanEnv()
	n.cmd.Stdout, n.cmd.Stderr = n.stdout, n.stderr
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { n.waitErr = n.cmd.Wait(); close(n.exited) }()
	t.Cleanup(func() {
		n.kill()
		if t.Failed() {
			t.Logf("node %s stderr:\n%s", n.url, n.stderr.String())
		}
	})
	n.awaitReady(t)
	return n
}

func (n *picoNode) awaitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-n.exited:
			t.Fatalf("pico serve exited before ready (%v)\nstdout:\n%s\nstderr:\n%s", n.waitErr, n.stdout, n.stderr)
		default:
		}
		if n.url == "" {
			n.parseBanner()
		}
		if n.url != "" && adminStatus(n.adminURL+"/ready") == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pico serve never became ready\nstdout:\n%s\nstderr:\n%s", n.stdout, n.stderr)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// parseBanner reads the addresses the node prints once it listens.
func (n *picoNode) parseBanner() {
	out := n.stdout.String()
	serving, admin := servingLine.FindStringSubmatch(out), adminLine.FindStringSubmatch(out)
	if serving == nil || admin == nil {
		return
	}
	n.url, n.advertised, n.adminURL = serving[1], serving[2], admin[1]
}

func adminStatus(url string) int {
	resp, err := probeClient.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

var probeClient = &http.Client{Timeout: 2 * time.Second}

// stop sends sig and returns the exit code (-1 when killed by a signal).
func (n *picoNode) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
	return n.awaitExit(t, 40*time.Second)
}

func (n *picoNode) awaitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-n.exited:
	case <-time.After(within):
		t.Fatalf("pico serve still running %v after the signal\nstderr:\n%s", within, n.stderr)
	}
	var exit *exec.ExitError
	switch {
	case n.waitErr == nil:
		return 0
	case errors.As(n.waitErr, &exit):
		return exit.ExitCode()
	}
	t.Fatalf("wait: %v", n.waitErr)
	return 0
}

// kill ends the process if it still runs; used by cleanups.
func (n *picoNode) kill() {
	select {
	case <-n.exited:
		return
	default:
	}
	n.cmd.Process.Kill()
	<-n.exited
}

// restart starts a new process on the same data and the same ports, so URLs
// taken before the restart still name the node.
func (n *picoNode) restart(t *testing.T) *picoNode {
	t.Helper()
	cfg := n.cfg
	cfg.listen = strings.TrimPrefix(n.url, "http://")
	cfg.admin = strings.TrimPrefix(n.adminURL, "http://")
	return startNode(t, cfg)
}
