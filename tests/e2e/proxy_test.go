package e2e

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// storeProxy forwards TCP connections to an object store until it is set
// down: then it drops every connection, open or new, until set up again.
// It stands for a store, or the network to it, that fails and comes back.
type storeProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]bool
}

func startStoreProxy(t *testing.T, target string) *storeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &storeProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.setDown(true) })
	go p.serve()
	return p
}

// throughProxy is storeURL (from s3test.URL) with its endpoint replaced by
// a proxy to it.
func throughProxy(t *testing.T, storeURL string) (string, *storeProxy) {
	t.Helper()
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	endpoint, err := url.Parse(q.Get("endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	p := startStoreProxy(t, endpoint.Host)
	endpoint.Host = p.ln.Addr().String()
	q.Set("endpoint", endpoint.String())
	u.RawQuery = q.Encode()
	return u.String(), p
}

func (p *storeProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *storeProxy) forward(c net.Conn) {
	if !p.track(c) {
		c.Close()
		return
	}
	defer p.untrack(c)
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	go func() { io.Copy(up, c); up.Close() }()
	io.Copy(c, up)
}

func (p *storeProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *storeProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// setDown drops every connection and refuses new ones (true), or forwards
// again (false).
func (p *storeProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
	}
}
