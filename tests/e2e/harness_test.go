package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picomq/pico/tests/picoproc"
)

func TestMain(m *testing.M) {
	code := m.Run()
	picoproc.RemoveBinary()
	os.Exit(code)
}

// nodeConfig says how to run one `pico serve`.
type nodeConfig struct {
	dataDir    string // holds meta.db (unless metaURL is set) and objects/
	metaURL    string // default sqlite:DATADIR/meta.db
	storageDir string // default DATADIR/objects
	storageURL string // an object store URL instead of storageDir
	nodeID     int    // default 1
	listen     string // default 127.0.0.1:0 (the node prints the port)
	admin      string // default 127.0.0.1:0
	flags      []string
	env        []string // extra environment, beside picoproc.Env's
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
	if c.storageURL == "" {
		c.storageURL = "-2@file://" + storage
	}
	args := []string{"--listen", orDefault(c.listen, "127.0.0.1:0"), "--admin-listen", orDefault(c.admin, "127.0.0.1:0"),
		"--meta-url", meta, "--storage", c.storageURL, "--node-id", fmt.Sprint(id)}
	args = append(args, defaultNodeFlags...)
	return append(args, c.flags...)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// picoNode is one running `pico serve` process and how it was started.
type picoNode struct {
	*picoproc.Process
	cfg nodeConfig
}

// startNode runs pico serve and returns once GET /ready answers 200.
func startNode(t *testing.T, cfg nodeConfig) *picoNode {
	t.Helper()
	return &picoNode{Process: picoproc.ServeIn(t, picoproc.Env(cfg.env...), cfg.args()...), cfg: cfg}
}

// restart starts a new process on the same data and the same ports, so URLs
// taken before the restart still name the node.
func (n *picoNode) restart(t *testing.T) *picoNode {
	t.Helper()
	cfg := n.cfg
	cfg.listen = strings.TrimPrefix(n.URL, "http://")
	cfg.admin = strings.TrimPrefix(n.AdminURL, "http://")
	return startNode(t, cfg)
}

// id is the node's id.
func (n *picoNode) id() int { return max(n.cfg.nodeID, 1) }

// mustCreateOn creates a stream through n and, if placement put it on
// another node, transfers it to n (env carries a token when auth is on):
// a test of one node's streams names that node.
func mustCreateOn(t *testing.T, n *picoNode, env []string, path, contentType string) {
	t.Helper()
	send(t, "PUT", n.URL+path, withEnvToken(env, "Content-Type", contentType), nil).wantStatus(t, 201)
	moved := runPico(t, env, "", "admin", "transfer", path, "--to-node", fmt.Sprint(n.id()), "--wait", "--admin-endpoint", n.AdminURL)
	if moved.code != 0 {
		t.Fatalf("moving %s to node %d: %+v", path, n.id(), moved)
	}
}

// withEnvToken is the headers kv, with the bearer token PICO_TOKEN carries
// in env, if any.
func withEnvToken(env []string, kv ...string) http.Header {
	for _, e := range env {
		if tok, ok := strings.CutPrefix(e, "PICO_TOKEN="); ok {
			return bearer(tok, kv...)
		}
	}
	return hdr(kv...)
}
