package httpguard

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Conns counts the open connections of the listeners it wraps against one
// cap, so that the node keeps file descriptors for its stores, its
// metadata log and its admin listener.
type Conns struct {
	max      int64
	open     atomic.Int64
	refused  atomic.Int64
	refusing atomic.Int64
}

// NewConns caps open connections at max; 0 counts them without a cap.
func NewConns(max int) *Conns { return &Conns{max: int64(max)} }

// Max is the cap, 0 for none.
func (c *Conns) Max() int64 { return c.max }

// Open is the connections open now.
func (c *Conns) Open() int64 { return c.open.Load() }

// Refused is the connections answered 503 (or closed) over the cap.
func (c *Conns) Refused() int64 { return c.refused.Load() }

// Limit wraps ln so that its connections count against c.
func (c *Conns) Limit(ln net.Listener) net.Listener { return &limitedListener{Listener: ln, conns: c} }

type limitedListener struct {
	net.Listener
	conns *Conns
}

// Accept accepts every connection, and answers those over the cap itself
// instead of returning them. Accepting them is friendlier than leaving
// them in the kernel's backlog: a client there hangs until its own
// timeout with no word why, and a full backlog drops SYNs that a load
// balancer reads as a dead node; a 503 with Retry-After says "busy, come
// back or go elsewhere" at once, for one short-lived descriptor.
func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := l.conns
		if n := c.open.Add(1); c.max <= 0 || n <= c.max {
			return &countedConn{Conn: conn, conns: c}, nil
		}
		c.open.Add(-1)
		c.refused.Add(1)
		go c.refuse(conn)
	}
}

// maxRefusing bounds the refusals in progress: past it, a connection over
// the cap is closed at once rather than answered.
const maxRefusing = 64

// refuseWithin bounds the descriptor time one refusal takes.
const refuseWithin = time.Second

const refusalBody = "this node is at its connection limit; retry in a second\n"

var refusal = []byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\nContent-Length: " + strconv.Itoa(len(refusalBody)) + "\r\n\r\n" + refusalBody)

// refuse reads the request head before answering, and half-closes before
// closing: a close with unread data resets the connection, and the client
// would see the reset instead of the 503.
func (c *Conns) refuse(conn net.Conn) {
	defer conn.Close()
	if c.refusing.Add(1) > maxRefusing {
		c.refusing.Add(-1)
		return
	}
	defer c.refusing.Add(-1)
	_ = conn.SetDeadline(time.Now().Add(refuseWithin))
	head := make([]byte, 4096)
	if _, err := conn.Read(head); err != nil {
		return
	}
	if _, err := conn.Write(refusal); err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(conn, 64<<10))
}

// countedConn gives its place back once, however often it is closed,
// and counts the bytes it read, by which HTTP/2 bodies are judged.
type countedConn struct {
	net.Conn
	conns *Conns
	once  sync.Once
	read  atomic.Int64
}

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

type connKey struct{}

// ConnContext is an http.Server's ConnContext hook: it lets Bodies find
// the connection a request came on.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*countedConn); ok {
		return context.WithValue(ctx, connKey{}, &cc.read)
	}
	return ctx
}

// connRead is the byte count of the connection r came on, nil if unknown.
func connRead(r *http.Request) *atomic.Int64 {
	n, _ := r.Context().Value(connKey{}).(*atomic.Int64)
	return n
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.conns.open.Add(-1) })
	return c.Conn.Close()
}

// CloseWrite half-closes, as net/http does before closing a connection
// whose client may still be sending, so the client reads the answer
// instead of a reset.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
