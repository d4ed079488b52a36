// Package s3fault is an HTTP proxy to put between pico and an
// S3-compatible server, injecting the faults an object store and its
// network show: added latency, 5xx answers, connections reset before the
// request reaches the store, answers lost after it did (a PUT stored, its
// writer never told), and bodies that trickle in. It forwards requests
// unchanged, Host header included, so SigV4 signatures still verify.
//
// Which request gets which fault is drawn from a seeded source; with
// concurrent requests the draws follow their arrival order, so a seed
// fixes the faults' rates, not which request each one hits.
package s3fault

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// Faults are the chances, per request, of each fault; zero injects none.
type Faults struct {
	// Delay: up to this much latency before the request is forwarded,
	// uniformly drawn, on every request.
	Delay time.Duration
	// Error: answer 503 SlowDown without forwarding.
	Error float64
	// Reset: close the connection without forwarding or answering.
	Reset float64
	// LostAnswer: forward, then close the connection without answering.
	LostAnswer float64
	// SlowBody: forward, then send the answer's body in pieces, pausing
	// between them.
	SlowBody float64
	// HoldWrites: every PUT waits this long before it is forwarded, as a
	// slow network holds the writes a process sent just before it paused.
	HoldWrites time.Duration
	// Latency: a latency drawn for every request, as a cloud store shows.
	Latency Latency
}

// Latency is an object store's added request latency: log-normal, with a
// median and a 99th percentile for PUTs and another pair for every other
// request. The zero Latency adds none.
type Latency struct {
	PutP50, PutP99, OtherP50, OtherP99 time.Duration
}

// Latency profiles of cloud stores for small objects, as their users
// measure them: S3 Standard and S3 Express One Zone.
var (
	S3Standard = Latency{PutP50: 25 * time.Millisecond, PutP99: 80 * time.Millisecond,
		OtherP50: 15 * time.Millisecond, OtherP99: 60 * time.Millisecond}
	S3Express = Latency{PutP50: 5 * time.Millisecond, PutP99: 15 * time.Millisecond,
		OtherP50: 3 * time.Millisecond, OtherP99: 10 * time.Millisecond}
)

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263

// draw returns a latency for a request of method, from rnd.
func (l Latency) draw(method string, rnd *rand.Rand) time.Duration {
	p50, p99 := l.OtherP50, l.OtherP99
	if method == http.MethodPut {
		p50, p99 = l.PutP50, l.PutP99
	}
	if p50 <= 0 {
		return 0
	}
	sigma := 0.0
	if p99 > p50 {
		sigma = math.Log(float64(p99)/float64(p50)) / z99
	}
	return time.Duration(float64(p50) * math.Exp(sigma*rnd.NormFloat64()))
}

// Kind names a fault, as Counts reports it.
type Kind string

// The faults.
const (
	Delayed    Kind = "delay"
	Errored    Kind = "5xx"
	Reset      Kind = "reset"
	LostAnswer Kind = "lost answer"
	SlowBody   Kind = "slow body"
	Held       Kind = "held write"
)

// slowPiece and slowPause shape a slow body: a 1 MiB answer takes about
// a second.
const (
	slowPiece = 16 << 10
	slowPause = 15 * time.Millisecond
)

// Proxy is a running fault proxy.
type Proxy struct {
	// URL is the proxy's endpoint, to give pico in the target's place.
	URL string

	server  *http.Server
	forward *httputil.ReverseProxy

	mu     sync.Mutex
	faults Faults
	rnd    *rand.Rand
	counts map[Kind]int64
}

// Start listens on a loopback port and proxies to target, an http URL.
func Start(target string, seed uint64) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("s3fault: target %q is not an http URL", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("s3fault: %w", err)
	}
	p := &Proxy{URL: "http://" + ln.Addr().String(), rnd: rand.New(rand.NewPCG(seed, seed^0x5eed)),
		counts: map[Kind]int64{}}
	p.forward = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host // signed by the client
	}, ErrorLog: log.New(io.Discard, "", 0)} // a client giving up mid-request is one of the faults
	p.server = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go p.server.Serve(ln)
	return p, nil
}

// Set replaces the faults injected from now on.
func (p *Proxy) Set(f Faults) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = f
}

// Counts returns how many of each fault were injected so far.
func (p *Proxy) Counts() map[Kind]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Kind]int64, len(p.counts))
	for k, n := range p.counts {
		out[k] = n
	}
	return out
}

// Close stops the proxy and cuts its connections.
func (p *Proxy) Close() error { return p.server.Close() }

// draw picks the fault for a request of method and its delay, and counts
// them.
func (p *Proxy) draw(method string) (Kind, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.faults
	var delay time.Duration
	if f.Delay > 0 {
		delay = time.Duration(p.rnd.Int64N(int64(f.Delay)))
		p.counts[Delayed]++
	}
	if d := f.Latency.draw(method, p.rnd); d > 0 {
		delay += d
		p.counts[Delayed]++
	}
	if f.HoldWrites > 0 && method == http.MethodPut {
		delay += f.HoldWrites
		p.counts[Held]++
	}
	x := p.rnd.Float64()
	for _, c := range []struct {
		kind Kind
		p    float64
	}{{Errored, f.Error}, {Reset, f.Reset}, {LostAnswer, f.LostAnswer}, {SlowBody, f.SlowBody}} {
		if x < c.p {
			p.counts[c.kind]++
			return c.kind, delay
		}
		x -= c.p
	}
	return "", delay
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind, delay := p.draw(r.Method)
	time.Sleep(delay)
	switch kind {
	case Errored:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>injected</Message></Error>`)
	case Reset:
		cut(w)
	case LostAnswer:
		rec := httptest.NewRecorder()
		p.forward.ServeHTTP(rec, r)
		cut(w)
	case SlowBody:
		rec := httptest.NewRecorder()
		p.forward.ServeHTTP(rec, r)
		trickle(w, rec)
	default:
		p.forward.ServeHTTP(w, r)
	}
}

// cut closes the client's connection without an answer.
func cut(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // the server drops the connection
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetLinger(0) // a reset, not an orderly close
	}
	conn.Close()
}

// trickle sends a recorded answer with its body in pieces.
func trickle(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	body := bytes.NewReader(rec.Body.Bytes())
	rc := http.NewResponseController(w)
	buf := make([]byte, slowPiece)
	for {
		n, _ := body.Read(buf)
		if n == 0 {
			return
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return
		}
		rc.Flush()
		time.Sleep(slowPause)
	}
}
