package s3fault

import (
	"bytes"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/tests/s3test"
)

// backend stores what is PUT and serves it back, counting requests.
type backend struct {
	mu   sync.Mutex
	objs map[string][]byte
	hits int
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hits++
	switch r.Method {
	case http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		b.objs[r.URL.Path] = body
	case http.MethodGet:
		body, ok := b.objs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}
}

func startPair(t *testing.T) (*Proxy, *backend) {
	t.Helper()
	b := &backend{objs: map[string][]byte{}}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	p, err := Start(srv.URL, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, b
}

func put(p *Proxy, key string, body []byte) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPut, p.URL+key, bytes.NewReader(body))
	return http.DefaultClient.Do(req)
}

func TestEachFaultDoesWhatItSays(t *testing.T) {
	p, b := startPair(t)
	if r, err := put(p, "/k", []byte("v")); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("PUT without faults: %v %v", r, err)
	}

	p.Set(Faults{Error: 1})
	if r, err := put(p, "/e", []byte("v")); err != nil || r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("PUT under Error: %v %v, want a 503", r, err)
	}
	p.Set(Faults{Reset: 1})
	if _, err := put(p, "/r", []byte("v")); err == nil {
		t.Fatal("PUT under Reset answered")
	}
	p.Set(Faults{LostAnswer: 1})
	if _, err := put(p, "/l", []byte("v")); err == nil {
		t.Fatal("PUT under LostAnswer answered")
	}
	b.mu.Lock()
	_, errored := b.objs["/e"]
	_, reset := b.objs["/r"]
	_, lost := b.objs["/l"]
	b.mu.Unlock()
	if errored || reset || !lost {
		t.Fatalf("stored: 5xx %v, reset %v, lost answer %v; want only the lost answer's", errored, reset, lost)
	}

	big := bytes.Repeat([]byte("x"), 4*slowPiece)
	p.Set(Faults{})
	put(p, "/big", big)
	p.Set(Faults{SlowBody: 1, Delay: 50 * time.Millisecond})
	start := time.Now()
	r, err := http.Get(p.URL + "/big")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("slow body: %d bytes, %v; want the %d stored", len(got), err, len(big))
	}
	if took := time.Since(start); took < 3*slowPause {
		t.Errorf("slow body of 4 pieces took %v, want at least %v", took, 3*slowPause)
	}

	const hold = 500 * time.Millisecond
	p.Set(Faults{HoldWrites: hold})
	start = time.Now()
	if r, err := http.Get(p.URL + "/k"); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("GET under HoldWrites: %v %v", r, err)
	}
	if took := time.Since(start); took >= hold {
		t.Errorf("a GET under HoldWrites took %v: only writes are held", took)
	}
	start = time.Now()
	if r, err := put(p, "/h", []byte("v")); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("PUT under HoldWrites: %v %v", r, err)
	}
	if took := time.Since(start); took < hold {
		t.Errorf("a PUT under HoldWrites of %v took %v", hold, took)
	}
	c := p.Counts()
	if c[Errored] != 1 || c[Reset] != 1 || c[LostAnswer] != 1 || c[SlowBody] != 1 || c[Delayed] != 1 || c[Held] != 1 {
		t.Errorf("counts %v, want one of each", c)
	}
}

// The proxy forwards requests as signed: an S3 client through it stores
// and reads objects on the real server.
func TestSignedRequestsPassThrough(t *testing.T) {
	storeURL := s3test.URL(t)
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	p, err := Start(q.Get("endpoint"), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	q.Set("endpoint", p.URL)
	u.RawQuery = q.Encode()
	ctx := context.Background()
	store, err := s3store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, "k", []byte("through the proxy")); err != nil {
		t.Fatal(err)
	}
	got, err := store.Get(ctx, "k", 0, 100)
	if err != nil || string(got) != "through the proxy" {
		t.Fatalf("read back %q, %v", got, err)
	}
}

// The drawn latencies have the profile's median and 99th percentile.
func TestLatencyProfile(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, method := range []string{http.MethodPut, http.MethodGet} {
		d := make([]time.Duration, 100_000)
		for i := range d {
			d[i] = S3Standard.draw(method, rnd)
		}
		slices.Sort(d)
		p50, p99 := d[len(d)/2], d[len(d)*99/100]
		want50, want99 := S3Standard.OtherP50, S3Standard.OtherP99
		if method == http.MethodPut {
			want50, want99 = S3Standard.PutP50, S3Standard.PutP99
		}
		near := func(got, want time.Duration) bool { return math.Abs(float64(got-want)) < 0.05*float64(want) }
		if !near(p50, want50) || !near(p99, want99) {
			t.Errorf("%s: p50 %v p99 %v, want %v and %v", method, p50, p99, want50, want99)
		}
	}
	if (Latency{}).draw(http.MethodPut, rnd) != 0 {
		t.Error("the zero profile added latency")
	}
}
