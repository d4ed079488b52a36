package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// clusterClient sees each redirect itself, as appender follows them.
var clusterClient = &http.Client{Timeout: 10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// appendBudget bounds how long one append may be retried, and
// maxRedirects the redirects it follows in a row (as net/http's client
// does): a client bounced between two nodes gives up.
const (
	appendBudget = 30 * time.Second
	maxRedirects = 10
)

// appender appends records "STREAM-SEQ" to one stream, one at a time, as an
// idempotent producer (Pico-Producer-Seq SEQ), the way a client of a
// cluster does: it follows a 307 to the owner (up to maxRedirects in a
// row) and keeps sending there, and retries a 503 after its Retry-After.
// Any other answer is an error: a client would see it. So is no answer,
// unless the appender knows other nodes (nodes): then it tries the next
// one, as a client of a cluster whose nodes restart does.
type appender struct {
	stream string
	nodes  []string // base URLs to try in turn when a node does not answer

	mu    sync.Mutex
	url   string // where the next append goes
	acked int    // records acknowledged: seqs 0 to acked-1
	errs  []string
	// redirects and unavailable count the 307s followed and the 503s
	// retried.
	redirects, unavailable int
	starts                 []time.Time // each acknowledged append's first attempt
	took                   []time.Duration
}

// startLoad runs one appender per stream, each starting at base+stream,
// until stop is closed; wait returns once each has finished its append in
// flight.
func startLoad(base string, streams []string) (appenders []*appender, stop func()) {
	return startLoadOn([]string{base}, streams)
}

// startLoadOn is startLoad through several nodes: each appender starts at
// the first and, when a node does not answer, tries the next.
func startLoadOn(bases []string, streams []string) (appenders []*appender, stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, s := range streams {
		a := &appender{stream: s, url: bases[0] + s}
		if len(bases) > 1 {
			a.nodes = bases
		}
		appenders = append(appenders, a)
		wg.Add(1)
		go func() { defer wg.Done(); a.run(done) }()
	}
	return appenders, func() { close(done); wg.Wait() }
}

func (a *appender) run(stop <-chan struct{}) {
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		start := time.Now()
		if err := a.appendOne(seq); err != nil {
			a.mu.Lock()
			a.errs = append(a.errs, err.Error())
			a.mu.Unlock()
			return // the producer's next seq would be a gap
		}
		a.mu.Lock()
		a.acked++
		a.starts, a.took = append(a.starts, start), append(a.took, time.Since(start))
		a.mu.Unlock()
	}
}

// appendOne sends record seq until it is acknowledged.
func (a *appender) appendOne(seq int) error {
	body := fmt.Sprintf("%s-%d", a.stream, seq)
	deadline := time.Now().Add(appendBudget)
	for attempt, hops, node := 1, 0, 0; ; attempt++ {
		a.mu.Lock()
		target := a.url
		a.mu.Unlock()
		req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("Pico-Producer-Id", a.stream)
		req.Header.Set("Pico-Producer-Epoch", "0")
		req.Header.Set("Pico-Producer-Seq", strconv.Itoa(seq))
		resp, err := clusterClient.Do(req)
		if err != nil && len(a.nodes) > 0 && time.Now().Before(deadline) {
			node = (node + 1) % len(a.nodes)
			a.mu.Lock()
			a.url = a.nodes[node] + a.stream
			a.mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			return fmt.Errorf("POST %s seq %d (attempt %d): %v", target, seq, attempt, err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return nil
		case resp.StatusCode == http.StatusTemporaryRedirect && resp.Header.Get("Location") != "":
			if hops++; hops > maxRedirects {
				return fmt.Errorf("POST %s seq %d: stopped after %d redirects", target, seq, maxRedirects)
			}
			a.mu.Lock()
			a.url = resp.Header.Get("Location")
			a.redirects++
			a.mu.Unlock()
		case resp.StatusCode == http.StatusServiceUnavailable:
			hops = 0
			a.mu.Lock()
			a.unavailable++
			a.mu.Unlock()
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 0))*time.Second + 10*time.Millisecond)
		default:
			return fmt.Errorf("POST %s seq %d (attempt %d): %d %s", target, seq, attempt, resp.StatusCode, answer)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("POST %s seq %d: not acknowledged within %v (last %d %s)", target, seq, appendBudget, resp.StatusCode, answer)
		}
	}
}

// longestAppend is the longest acknowledged append any of appenders began
// within [from, to), and how many began then.
func longestAppend(appenders []*appender, from, to time.Time) (longest time.Duration, count int) {
	for _, a := range appenders {
		a.mu.Lock()
		for i, at := range a.starts {
			if !at.Before(from) && at.Before(to) {
				longest, count = max(longest, a.took[i]), count+1
			}
		}
		a.mu.Unlock()
	}
	return longest, count
}

// retries counts the 307s the appenders followed and the 503s they
// retried.
func retries(appenders []*appender) (redirects, unavailable int) {
	for _, a := range appenders {
		a.mu.Lock()
		redirects, unavailable = redirects+a.redirects, unavailable+a.unavailable
		a.mu.Unlock()
	}
	return redirects, unavailable
}

// wantEveryAckedRecordOnce checks that no appender saw an error and that
// each stream, read from base (following redirects), holds exactly the
// records its appender had acknowledged, in order: none lost, none twice.
func wantEveryAckedRecordOnce(t *testing.T, base string, appenders []*appender) (total int) {
	t.Helper()
	for _, a := range appenders {
		for _, e := range a.errs {
			t.Errorf("client error: %s", e)
		}
		want := make([]string, a.acked)
		for i := range want {
			want[i] = fmt.Sprintf("%s-%d", a.stream, i)
		}
		wantBodies(t, "GET "+base+a.stream, readAllRecords(t, base+a.stream), 0, want...)
		total += a.acked
	}
	return total
}

// readAllRecords reads stream url page by page, following redirects, up
// to its tail.
func readAllRecords(t *testing.T, url string) []jsonRecord {
	t.Helper()
	var all []jsonRecord
	for {
		resp, err := followingClient.Get(fmt.Sprintf("%s?seq=%d&format=json", url, len(all)))
		if err != nil {
			t.Fatal(err)
		}
		page := readReply(t, "GET "+url, resp).wantStatus(t, http.StatusOK)
		recs := page.records(t)
		all = append(all, recs...)
		if len(recs) == 0 || page.header.Get("Pico-Up-To-Date") == "true" {
			return all
		}
	}
}
