// Package netfault is a TCP proxy to put on one network link, between a
// pico process and its database or object store, that can cut the link as
// a network partition does: while it is cut, no byte crosses in either
// direction and new connections wait, and when it heals what was sent
// meanwhile goes on, as TCP's retransmissions would deliver it. Nothing is
// refused or reset, so each side sees only silence: its timeouts decide.
// A link can also be dropped, as a server that is down refuses: every
// connection is closed, and new ones at once, until it heals.
package netfault

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// Link is a running proxy from a local port to one target address.
type Link struct {
	// Addr is the proxy's host:port, to give in the target's place.
	Addr   string
	target string
	ln     net.Listener

	mu      sync.Mutex
	healed  chan struct{} // closed while the link is up
	dropped bool
	conns   map[net.Conn]struct{}
	closed  bool
}

// Start listens on a loopback port and forwards to target, a host:port.
func Start(target string) (*Link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netfault: %w", err)
	}
	up := make(chan struct{})
	close(up)
	l := &Link{Addr: ln.Addr().String(), target: target, ln: ln, healed: up, conns: map[net.Conn]struct{}{}}
	go l.accept()
	return l, nil
}

// Cut stops every byte on the link until Heal.
func (l *Link) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.healed:
		l.healed = make(chan struct{})
	default: // already cut
	}
}

// Drop closes every connection on the link, and each new one at once,
// until Heal.
func (l *Link) Drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropped = true
	for c := range l.conns {
		c.Close()
	}
}

// Heal lets the link carry bytes again, those held first.
func (l *Link) Heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropped = false
	select {
	case <-l.healed:
	default:
		close(l.healed)
	}
}

// Close stops the proxy and closes its connections.
func (l *Link) Close() error {
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.Heal()
	return l.ln.Close()
}

// up returns a channel closed once the link is up.
func (l *Link) up() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.healed
}

func (l *Link) accept() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		go l.serve(c)
	}
}

// serve connects c to the target once the link is up and pumps both ways.
func (l *Link) serve(c net.Conn) {
	<-l.up()
	t, err := net.Dial("tcp", l.target)
	if err != nil || !l.track(c, t) {
		c.Close()
		if t != nil {
			t.Close()
		}
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { l.pump(t, c) })
	wg.Go(func() { l.pump(c, t) })
	wg.Wait()
	l.untrack(c, t)
}

func (l *Link) track(conns ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.dropped {
		return false
	}
	for _, c := range conns {
		l.conns[c] = struct{}{}
	}
	return true
}

func (l *Link) untrack(conns ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range conns {
		delete(l.conns, c)
		c.Close()
	}
}

// pump copies from src to dst, each piece only once the link is up. When
// src ends, dst is told no more is coming, and when dst fails, src is
// closed, so that both pumps of a connection end.
func (l *Link) pump(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-l.up()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				dst.Close()
				return
			}
			if tcp, ok := dst.(*net.TCPConn); ok {
				tcp.CloseWrite()
			}
			return
		}
	}
}
