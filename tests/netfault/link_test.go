package netfault

import (
	"bufio"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// echo serves lines back on a loopback port.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, r *bufio.Reader, msg string, wait time.Duration) (string, error) {
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(wait))
	line, err := r.ReadString('\n')
	if len(line) > 0 {
		line = line[:len(line)-1]
	}
	return line, err
}

// connected starts a link to an echo server and returns it with a
// connection through it that has carried a line.
func connected(t *testing.T) (*Link, net.Conn, *bufio.Reader) {
	l, err := Start(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c, err := net.Dial("tcp", l.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := bufio.NewReader(c)
	if got, err := roundTrip(c, r, "up", 5*time.Second); got != "up" || err != nil {
		t.Fatalf("through the link: %q %v", got, err)
	}
	return l, c, r
}

// TestACutLinkHoldsBytesUntilItHeals: bytes cross an up link, stop while
// it is cut (on open connections and new ones alike, neither refused), and
// arrive once it heals.
func TestACutLinkHoldsBytesUntilItHeals(t *testing.T) {
	l, c, r := connected(t)

	l.Cut()
	if got, err := roundTrip(c, r, "held", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("through a cut link: %q %v, want silence", got, err)
	}
	late, err := net.Dial("tcp", l.Addr)
	if err != nil {
		t.Fatalf("a new connection to a cut link: %v, want it to wait", err)
	}
	defer late.Close()
	lr := bufio.NewReader(late)
	if got, err := roundTrip(late, lr, "new", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a new connection through a cut link: %q %v, want silence", got, err)
	}

	l.Heal()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := r.ReadString('\n'); got != "held\n" || err != nil {
		t.Fatalf("after the heal: %q %v, want what was held", got, err)
	}
	late.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := lr.ReadString('\n'); got != "new\n" || err != nil {
		t.Fatalf("the new connection after the heal: %q %v", got, err)
	}
}

// TestADroppedLinkRefusesUntilItHeals: a dropped link closes the open
// connections and each new one, and a healed one carries new connections.
func TestADroppedLinkRefusesUntilItHeals(t *testing.T) {
	l, c, r := connected(t)
	l.Drop()
	if got, err := roundTrip(c, r, "dropped", 5*time.Second); err == nil {
		t.Fatalf("an open connection on a dropped link answered %q", got)
	}
	late, err := net.Dial("tcp", l.Addr)
	if err == nil {
		defer late.Close()
		if got, err := roundTrip(late, bufio.NewReader(late), "new", 5*time.Second); err == nil {
			t.Fatalf("a new connection on a dropped link answered %q", got)
		}
	}
	l.Heal()
	again, err := net.Dial("tcp", l.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got, err := roundTrip(again, bufio.NewReader(again), "back", 5*time.Second); got != "back" || err != nil {
		t.Fatalf("through the healed link: %q %v", got, err)
	}
}
