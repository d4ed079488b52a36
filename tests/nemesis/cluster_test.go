package nemesis

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/tests/netfault"
	"github.com/picomq/pico/tests/pgtest"
	"github.com/picomq/pico/tests/picoproc"
	"github.com/picomq/pico/tests/s3fault"
	"github.com/picomq/pico/tests/s3test"
)

// nodes is the cluster's size.
const nodes = 3

// node is one pico process slot: the process running now, if any, and the
// ports every incarnation listens on, so that URLs outlive restarts.
type node struct {
	id                    int
	listen, admin, dsAddr string
	proc                  *picoproc.Process
	up                    bool // serving as far as the nemesis knows
	// The node's own links to the database and to the store, which a
	// partition cuts.
	toPG, toS3 *netfault.Link
}

func (n *node) picoURL() string { return "http://" + n.listen }
func (n *node) dsURL() string   { return "http://" + n.dsAddr }
func (n *node) adminURL() string {
	return "http://" + n.admin
}

// cluster is the processes, the store's fault proxy and the settings
// every node starts with, each with its own links to the database and the
// store in place of their addresses.
type cluster struct {
	meta, storage *url.URL
	proxy         *s3fault.Proxy
	mu            sync.Mutex
	nodes         [nodes]*node
	dead          []*picoproc.Process // ended incarnations, for the log
}

var dsLine = regexp.MustCompile(`ds on http://(\S+)`)

// startCluster starts three nodes on a fresh database and bucket, the
// bucket reached through a fault proxy seeded with seed.
func startCluster(t *testing.T, seed uint64) *cluster {
	t.Helper()
	needPostgres(t)
	meta := pgtest.URL(t)
	store := s3test.URL(t)
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	proxy, err := s3fault.Start(q.Get("endpoint"), seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	metaURL, err := url.Parse(meta)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{meta: metaURL, storage: u, proxy: proxy}
	for i := range c.nodes {
		n := &node{id: i + 1, listen: "127.0.0.1:0", admin: "127.0.0.1:0", dsAddr: "127.0.0.1:0"}
		if n.toPG, err = netfault.Start(metaURL.Host); err != nil {
			t.Fatal(err)
		}
		if n.toS3, err = netfault.Start(strings.TrimPrefix(proxy.URL, "http://")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.toPG.Close(); n.toS3.Close() })
		c.nodes[i] = n
		if err := c.start(n); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, n := range c.nodes {
			if n.proc != nil {
				n.proc.Cmd.Process.Signal(syscall.SIGCONT)
				n.proc.Kill()
				if t.Failed() {
					t.Logf("node %d stderr (last 16 KiB):\n%s", n.id, tail(n.proc.Stderr.String(), 16<<10))
				}
			}
		}
	})
	return c
}

// brokenEnv passes PICO_BROKEN on to the nodes: a build with the
// picobroken tag then misbehaves as it names (package broken).
func brokenEnv() []string {
	if b := os.Getenv("PICO_BROKEN"); b != "" {
		return []string{"PICO_BROKEN=" + b}
	}
	return nil
}

// needPostgres skips t without a Postgres server to run on, unless one is
// required.
func needPostgres(t *testing.T) {
	if os.Getenv(pgtest.EnvURL) == "" && os.Getenv(pgtest.EnvRequire) != "1" {
		t.Skipf("the nemesis needs Postgres: set %s (tests/run.sh starts one)", pgtest.EnvURL)
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// start runs a new incarnation of n and waits until it is ready.
func (c *cluster) start(n *node) error {
	meta, store := *c.meta, *c.storage
	meta.Host = n.toPG.Addr
	q := store.Query()
	q.Set("endpoint", "http://"+n.toS3.Addr)
	store.RawQuery = q.Encode()
	args := []string{"--listen", n.listen, "--admin-listen", n.admin, "--ds-listen", n.dsAddr,
		"--meta-url", meta.String(), "--storage", "-2@" + store.String(), "--node-id", fmt.Sprint(n.id),
		"--long-poll-timeout-sec", "1", "--sse-max-duration-sec", "3"}
	p, err := picoproc.Start(picoproc.Env(brokenEnv()...), args...)
	if err != nil {
		return fmt.Errorf("node %d: %w", n.id, err)
	}
	m := dsLine.FindStringSubmatch(p.Stdout.String())
	if m == nil {
		p.Kill()
		return fmt.Errorf("node %d: no ds listener in the banner:\n%s", n.id, p.Stdout)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n.proc, n.up = p, true
	n.listen, n.admin, n.dsAddr = strings.TrimPrefix(p.URL, "http://"), strings.TrimPrefix(p.AdminURL, "http://"), m[1]
	return nil
}

// at is node id's slot.
func (c *cluster) at(id int) *node { return c.nodes[id-1] }

// live lists the nodes believed to serve.
func (c *cluster) live() []*node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*node
	for _, n := range c.nodes {
		if n.up {
			out = append(out, n)
		}
	}
	return out
}

// down marks n as not serving and returns its process.
func (c *cluster) down(n *node) *picoproc.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	n.up = false
	return n.proc
}

// ended forgets n's process, which has exited.
func (c *cluster) ended(n *node, p *picoproc.Process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n.proc == p {
		n.proc = nil
	}
	c.dead = append(c.dead, p)
}

// crash kills n with SIGKILL and starts it again after pause.
func (c *cluster) crash(n *node, pause time.Duration) error {
	p := c.down(n)
	if p != nil {
		p.Kill()
		c.ended(n, p)
	}
	time.Sleep(pause)
	return c.start(n)
}

// freeze stops n with SIGSTOP for d, past the failover window, and
// resumes it. A node fenced meanwhile exits on resuming: it is started
// again, as a supervisor would.
func (c *cluster) freeze(n *node, d time.Duration) error {
	p := c.down(n)
	if p == nil {
		return c.start(n)
	}
	p.Cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(d)
	p.Cmd.Process.Signal(syscall.SIGCONT)
	if restarted, err := c.restartIfExited(n, p, 10*time.Second); restarted {
		return err
	}
	c.mu.Lock()
	n.up = true // it was not fenced: it serves on
	c.mu.Unlock()
	return nil
}

// partition cuts n's links (to the database, the store or both) for d,
// while clients still reach it. A node cut from the database past the
// failover window is fenced and exits once it learns so: it is started
// again, as a supervisor would.
func (c *cluster) partition(n *node, links []*netfault.Link, d time.Duration) error {
	c.mu.Lock()
	p := n.proc
	c.mu.Unlock()
	for _, l := range links {
		l.Cut()
	}
	time.Sleep(d)
	for _, l := range links {
		l.Heal()
	}
	if p == nil || !slices.Contains(links, n.toPG) || d < failoverWindow {
		return nil
	}
	_, err := c.restartIfExited(n, p, 5*time.Second)
	return err
}

// restartIfExited starts n again, as a supervisor would, if its process p
// exits within d: a fenced process exits once it learns so.
func (c *cluster) restartIfExited(n *node, p *picoproc.Process, d time.Duration) (bool, error) {
	if !exited(p, d) {
		return false, nil
	}
	c.down(n)
	c.ended(n, p)
	return true, c.start(n)
}

// failoverWindow is pico serve's default --failover-after-sec.
const failoverWindow = 2 * time.Second

// exited reports whether p ends within d.
func exited(p *picoproc.Process, d time.Duration) bool {
	select {
	case <-p.Exited():
		return true
	case <-time.After(d):
		return false
	}
}

// heal stops the store's faults and restarts every node not serving.
func (c *cluster) heal() error {
	c.proxy.Set(s3fault.Faults{})
	for _, n := range c.nodes {
		c.mu.Lock()
		up, p := n.up, n.proc
		c.mu.Unlock()
		if up && p != nil && picoproc.Status(n.adminURL()+"/ready") == 200 {
			continue
		}
		if err := c.crash(n, 0); err != nil {
			return err
		}
	}
	return nil
}
