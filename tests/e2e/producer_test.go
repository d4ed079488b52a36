package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// producer appends "0", "1", ... to one stream as an idempotent Pico
// producer would, through a cluster whose nodes come and go: it follows
// redirects, retries 503s and, when a node does not answer, the next node,
// with the same sequence number until the append is acknowledged. Any other
// answer is final, and ends it with an error.
type producer struct {
	stream string
	nodes  []string // base URLs

	mu         sync.Mutex
	acked      int // sequences 0..acked-1 are acknowledged
	maxLatency time.Duration
	err        error
}

// noRedirects answers a redirect as a response, for the producer to follow
// by hand (the node named may be down).
var noRedirects = &http.Client{Timeout: 10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// appendGiveUp bounds one append's retries: an acknowledged append takes
// far less even across a failover.
const appendGiveUp = 60 * time.Second

func (p *producer) run(ctx context.Context) {
	for seq := 0; ctx.Err() == nil; seq++ {
		start := time.Now()
		if err := p.append(seq); err != nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
			return
		}
		p.mu.Lock()
		p.acked = seq + 1
		p.maxLatency = max(p.maxLatency, time.Since(start))
		p.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *producer) append(seq int) error {
	node, url := 0, p.nodes[0]+p.stream
	for start := time.Now(); time.Since(start) < appendGiveUp; {
		status, location, body, err := p.post(url, seq)
		switch {
		case err != nil:
			node = (node + 1) % len(p.nodes)
			url = p.nodes[node] + p.stream
			time.Sleep(50 * time.Millisecond)
		case status == http.StatusTemporaryRedirect:
			url = location
		case status == http.StatusServiceUnavailable:
			time.Sleep(100 * time.Millisecond)
		case status == http.StatusOK || status == http.StatusNoContent:
			return nil
		default:
			return fmt.Errorf("%s seq %d at %s: final answer %d %s", p.stream, seq, url, status, body)
		}
	}
	return fmt.Errorf("%s seq %d: no acknowledgement within %v", p.stream, seq, appendGiveUp)
}

func (p *producer) post(url string, seq int) (status int, location, body string, err error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(strconv.Itoa(seq)))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Pico-Producer-Id", "p"+p.stream)
	req.Header.Set("Pico-Producer-Epoch", "0")
	req.Header.Set("Pico-Producer-Seq", strconv.Itoa(seq))
	resp, err := noRedirects.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode, resp.Header.Get("Location"), string(b), nil
}

// load runs one producer per stream until stop is called, which returns
// them.
func load(streams []string, nodes []string) (stop func() []*producer) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	ps := make([]*producer, len(streams))
	for i, s := range streams {
		ps[i] = &producer{stream: s, nodes: nodes}
		wg.Add(1)
		go func() { defer wg.Done(); ps[i].run(ctx) }()
	}
	return func() []*producer { cancel(); wg.Wait(); return ps }
}

// checkProduced asserts that no producer met a final error and that each
// stream, read through node, holds 0, 1, ... in order, once each, with
// every acknowledged sequence (and at most the one in flight at the stop).
// It returns the largest append latency.
func checkProduced(t *testing.T, node string, ps []*producer) time.Duration {
	t.Helper()
	var worst time.Duration
	for _, p := range ps {
		if p.err != nil {
			t.Errorf("producer of %s: %v", p.stream, p.err)
		}
		got := readAllFollowing(t, node+p.stream)
		if len(got) < p.acked || len(got) > p.acked+1 {
			t.Errorf("%s holds %d records, want the %d acknowledged (or one more in flight)", p.stream, len(got), p.acked)
		}
		for i, b := range got {
			if b != strconv.Itoa(i) {
				t.Errorf("%s record %d is %q, want %d: a record lost or duplicated", p.stream, i, b, i)
				break
			}
		}
		worst = max(worst, p.maxLatency)
	}
	return worst
}

// readAllFollowing reads a stream's record bodies from its start, following
// a redirect to its node.
func readAllFollowing(t *testing.T, url string) []string {
	t.Helper()
	resp, err := followingClient.Get(url + "?seq=0&format=json")
	if err != nil {
		t.Fatal(err)
	}
	r := readReply(t, "GET "+url, resp).wantStatus(t, http.StatusOK)
	var bodies []string
	for _, rec := range r.records(t) {
		bodies = append(bodies, string(rec.bytes(t)))
	}
	return bodies
}
