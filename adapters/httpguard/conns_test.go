package httpguard

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"
)

// ask sends a request on a fresh connection and returns the answer.
func ask(t *testing.T, addr string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestConnsAnswerOverTheCap503(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := NewConns(1)
	limited := conns.Limit(ln)
	defer limited.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := limited.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	first, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	held := <-accepted
	if resp := ask(t, ln.Addr().String()); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("over the cap: %s, Retry-After %q", resp.Status, resp.Header.Get("Retry-After"))
	}
	if conns.Open() != 1 || conns.Refused() != 1 {
		t.Errorf("open %d, refused %d, want 1 and 1", conns.Open(), conns.Refused())
	}
	held.Close()
	held.Close() // a second close gives back nothing more
	if _, err := net.Dial("tcp", ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("a connection under the cap again was not accepted")
	}
	if conns.Open() != 1 {
		t.Errorf("open %d, want 1", conns.Open())
	}
}

func TestLiveReadersCap(t *testing.T) {
	l := NewLiveReaders(2)
	if !l.Park() || !l.Park() || l.Park() || l.Parked() != 2 {
		t.Fatalf("parked %d, want two places taken and the third refused", l.Parked())
	}
	l.Leave()
	if !l.Park() {
		t.Error("a place given back is not taken again")
	}
	unbounded := NewLiveReaders(0)
	for range 100 {
		if !unbounded.Park() {
			t.Fatal("a bound of 0 refused")
		}
	}
}
