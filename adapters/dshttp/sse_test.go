package dshttp

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
)

// sseEvent is one event as sent: its raw text and its parsed fields.
type sseEvent struct {
	raw, event, data, comment string
}

// sseClient reads events from a live event stream.
type sseClient struct {
	t      *testing.T
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

func openSSE(t *testing.T, h *harness, target string) *sseClient {
	t.Helper()
	ts := httptest.NewServer(h.h)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+target, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	c := &sseClient{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(func() { c.cancel(); c.resp.Body.Close() })
	return c
}

// next returns the next event; ok is false at the end of the stream. It
// parses like the Durable Streams client: one optional space after the
// colon is dropped, data lines join with LF.
func (c *sseClient) next() (ev sseEvent, ok bool) {
	c.t.Helper()
	var data []string
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			if err != io.EOF && !strings.Contains(err.Error(), "canceled") {
				c.t.Fatalf("reading events: %v", err)
			}
			return ev, false
		}
		ev.raw += line
		line = strings.TrimSuffix(line, "\n")
		if strings.Contains(line, "\r") {
			c.t.Fatalf("raw CR in %q", line)
		}
		if line == "" {
			ev.data = strings.Join(data, "\n")
			return ev, true
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.event = value
		case "data":
			data = append(data, value)
		case "":
			ev.comment = value
		default:
			c.t.Fatalf("unexpected line %q", line)
		}
	}
}

func (c *sseClient) expectData(want string) {
	c.t.Helper()
	ev, ok := c.next()
	if !ok || ev.event != "data" || ev.data != want {
		c.t.Fatalf("event %+v (ok %v), want data %q", ev, ok, want)
	}
}

// expectControl reads a control event and returns it decoded.
func (c *sseClient) expectControl() map[string]any {
	c.t.Helper()
	ev, ok := c.next()
	if !ok || ev.event != "control" {
		c.t.Fatalf("event %+v (ok %v), want control", ev, ok)
	}
	if !regexp.MustCompile(`event: control\s*\ndata:\{`).MatchString(ev.raw) {
		c.t.Errorf("control framing %q", ev.raw)
	}
	var ctl map[string]any
	if err := json.Unmarshal([]byte(ev.data), &ctl); err != nil {
		c.t.Fatalf("control %q: %v", ev.data, err)
	}
	return ctl
}

func (c *sseClient) expectEnd() {
	c.t.Helper()
	if ev, ok := c.next(); ok {
		c.t.Fatalf("event %+v after the end", ev)
	}
}

// wantOpenControl checks a control event of an open stream.
func wantOpenControl(t *testing.T, ctl map[string]any, next uint64, upToDate bool) {
	t.Helper()
	cursor, _ := ctl["streamCursor"].(string)
	if ctl["streamNextOffset"] != off(next) || !headerval.IsDigits(cursor) || (ctl["upToDate"] == true) != upToDate || ctl["streamClosed"] != nil {
		t.Errorf("control %v, want next %s upToDate %v and a cursor", ctl, off(next), upToDate)
	}
}

func wantClosedControl(t *testing.T, ctl map[string]any, next uint64) {
	t.Helper()
	if ctl["streamNextOffset"] != off(next) || ctl["streamClosed"] != true || ctl["upToDate"] != true || ctl["streamCursor"] != nil {
		t.Errorf("control %v, want closed at %s without a cursor", ctl, off(next))
	}
}

func TestSSEHeaders(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = 50 * time.Millisecond })
	h.create("/t", "Content-Type", "text/plain")
	h.create("/b", "Content-Type", "application/x-protobuf")
	h.create("/j", "Content-Type", "application/json; charset=utf-8")
	for name, encoding := range map[string]string{"/t": "", "/b": "base64", "/j": ""} {
		c := openSSE(t, h, name+"?offset=-1&live=sse")
		hdr := c.resp.Header
		if c.resp.StatusCode != 200 || hdr.Get("Content-Type") != "text/event-stream" || !strings.Contains(hdr.Get("Cache-Control"), "no-cache") ||
			hdr.Get("X-Content-Type-Options") != "nosniff" || hdr.Get("Content-Length") != "" || hdr.Get("Stream-SSE-Data-Encoding") != encoding {
			t.Errorf("%s: %d %v", name, c.resp.StatusCode, hdr)
		}
	}
	handlertest.WantStatus(t, h.do(http.MethodGet, "/missing?offset=-1&live=sse", nil), http.StatusNotFound)
}

func TestSSECatchUpThenLive(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "line1\n", "line2")
	c := openSSE(t, h, "/s?offset=-1&live=sse")
	ev, _ := c.next()
	if ev.raw != "event: data\ndata:line1\ndata:line2\n\n" {
		t.Errorf("data event %q", ev.raw)
	}
	wantOpenControl(t, c.expectControl(), 2, true)
	h.appendBodies("/s", "text/plain", "line3")
	c.expectData("line3")
	wantOpenControl(t, c.expectControl(), 3, true)
}

func TestSSEJSONBatches(t *testing.T) {
	h := newHarness(t)
	h.create("/j", "Content-Type", "application/json")
	h.appendBodies("/j", "application/json", `[{"id": 1}, {"id": 2}]`, `{"id": 3}`)
	c := openSSE(t, h, "/j?offset=-1&live=sse")
	c.expectData(`[{"id":1},{"id":2},{"id":3}]`)
	wantOpenControl(t, c.expectControl(), 3, true)
	h.appendBodies("/j", "application/json", `"four"`)
	c.expectData(`["four"]`)
	c.expectControl()
}

func TestSSEBase64(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxChunkBytes = 3 })
	h.create("/b")
	raw := []byte{0, 1, 2, 0xfe, 0xff, '\r', '\n'}
	handlertest.WantStatus(t, h.do(http.MethodPost, "/b", raw[:3], "Content-Type", "application/octet-stream"), http.StatusNoContent)
	handlertest.WantStatus(t, h.do(http.MethodPost, "/b", raw[3:], "Content-Type", "application/octet-stream"), http.StatusNoContent)
	c := openSSE(t, h, "/b?offset=-1&live=sse")
	var got []byte
	for range 2 { // one data event per chunk, each followed by a control
		ev, _ := c.next()
		b, err := base64.StdEncoding.DecodeString(ev.data)
		if ev.event != "data" || err != nil {
			t.Fatalf("event %+v: %v", ev, err)
		}
		got = append(got, b...)
		c.expectControl()
	}
	if string(got) != string(raw) {
		t.Errorf("decoded %x, want %x", got, raw)
	}
}

// TestSSELineBreakInjection: CR, LF and CRLF in a payload only ever start
// another data line; they cannot end the event or start a new one.
func TestSSELineBreakInjection(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a\r\n\r\nevent: control\rdata:{\"streamNextOffset\":\"x\"}\n\nb")
	c := openSSE(t, h, "/s?offset=-1&live=sse")
	ev, _ := c.next()
	if ev.event != "data" || ev.data != "a\n\nevent: control\ndata:{\"streamNextOffset\":\"x\"}\n\nb" {
		t.Errorf("data event %+v", ev)
	}
	wantOpenControl(t, c.expectControl(), 1, true)
}

// TestSSEPairsEveryDataEventWithAControl: over chunked catch-up, data and
// control events alternate.
func TestSSEPairsEveryDataEventWithAControl(t *testing.T) {
	for _, ct := range []string{"application/json", "application/octet-stream", "text/plain"} {
		h := newHarness(t, func(c *Config) { c.MaxChunkBytes = 4 })
		h.create("/s", "Content-Type", ct)
		for _, body := range []string{`"aa"`, `"bb"`, `"cc"`, `"dd"`} {
			handlertest.WantStatus(t, h.do(http.MethodPost, "/s", []byte(body), "Content-Type", ct), http.StatusNoContent)
		}
		c := openSSE(t, h, "/s?offset=-1&live=sse")
		for i := range 4 {
			ev, _ := c.next()
			if ev.event != "data" {
				t.Fatalf("%s: event %d is %+v, want data", ct, i, ev)
			}
			wantOpenControl(t, c.expectControl(), uint64(i+1), i == 3)
		}
	}
}

func TestSSEClosedStream(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a")
	h.closeStream("/s")
	c := openSSE(t, h, "/s?offset=-1&live=sse")
	c.expectData("a")
	wantClosedControl(t, c.expectControl(), 1)
	c.expectEnd()
	// Already at the end: a single control event.
	for _, offset := range []string{off(1), "now"} {
		c = openSSE(t, h, "/s?live=sse&offset="+offset)
		wantClosedControl(t, c.expectControl(), 1)
		c.expectEnd()
	}
}

func TestSSENowStartsAtTheTail(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "history")
	c := openSSE(t, h, "/s?offset=now&live=sse")
	wantOpenControl(t, c.expectControl(), 1, true)
	h.appendBodies("/s", "text/plain", "news")
	c.expectData("news")
	wantOpenControl(t, c.expectControl(), 2, true)
}

// TestSSEAppendAndCloseWhileWaiting: the final data arrives before the
// closing control, then the stream ends.
func TestSSEAppendAndCloseWhileWaiting(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	c := openSSE(t, h, "/s?offset=-1&live=sse")
	wantOpenControl(t, c.expectControl(), 0, true)
	handlertest.WantStatus(t, h.do(http.MethodPost, "/s", []byte("bye"), "Content-Type", "text/plain", "Stream-Closed", "true"), http.StatusNoContent)
	c.expectData("bye")
	wantClosedControl(t, c.expectControl(), 1)
	c.expectEnd()
	// A close without data ends a waiting stream too.
	h.create("/t")
	c = openSSE(t, h, "/t?offset=-1&live=sse")
	c.expectControl()
	h.closeStream("/t")
	wantClosedControl(t, c.expectControl(), 0)
	c.expectEnd()
}

func TestSSEEnds(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = 30 * time.Millisecond })
	h.create("/s")
	c := openSSE(t, h, "/s?offset=-1&live=sse")
	c.expectControl()
	c.expectEnd() // the max duration

	done := make(chan struct{})
	h = newHarness(t, func(c *Config) { c.SSEMaxDuration = time.Hour; c.Done = done })
	h.create("/s")
	c = openSSE(t, h, "/s?offset=-1&live=sse")
	c.expectControl()
	close(done)
	c.expectEnd() // shutdown

	h = newHarness(t, func(c *Config) { c.SSEMaxDuration = time.Hour })
	h.create("/s")
	c = openSSE(t, h, "/s?offset=-1&live=sse")
	c.expectControl()
	h.do(http.MethodDelete, "/s", nil)
	c.expectEnd() // the stream is gone
}

// Records trimmed before a live reader saw them end its response: it comes
// back from its offset and is told they are gone, instead of skipping them.
func TestSSEEndsAtAGap(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = 5 * time.Second })
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a", "b")
	c := openSSE(t, h, "/s?offset=-1&live=sse")
	c.expectData("ab")
	c.expectControl()
	var once sync.Once
	h.fake.beforeRead = func(name string, from uint64) {
		if from == 2 {
			once.Do(func() { h.fake.Streams.Trim(context.Background(), name, 3) })
		}
	}
	h.appendBodies("/s", "text/plain", "c")
	start := time.Now()
	c.expectEnd()
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("the response ended %v later, at its max duration, not at the gap", waited)
	}
	wantError(t, h.do(http.MethodGet, "/s?offset="+off(2), nil), http.StatusGone, "before the first offset kept")
}

func TestSSEKeepAlive(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = 10 * time.Second })
	h.srv.keepAlive = 20 * time.Millisecond
	h.create("/s", "Content-Type", "text/plain")
	c := openSSE(t, h, "/s?offset=-1&live=sse")
	c.expectControl()
	for range 2 {
		if ev, ok := c.next(); !ok || ev.comment != "keep-alive" || ev.event != "" {
			t.Fatalf("event %+v, want a keep-alive comment", ev)
		}
	}
	h.appendBodies("/s", "text/plain", "x")
	c.expectData("x")
}

func TestSSEEndsWhenClientLeaves(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = time.Hour })
	h.create("/s")
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodGet, "/s?offset=-1&live=sse", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	finished := make(chan struct{})
	go func() { h.h.ServeHTTP(rec, req); close(finished) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("handler still running after the client left")
	}
}

func TestIsTextual(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/plain": true, "TEXT/HTML; charset=utf-8": true, "application/json": true, "Application/JSON;charset=utf-8": true,
		"application/octet-stream": false, "application/ndjson": false, "application/x-protobuf": false, "image/png": false, "": false,
	} {
		if isTextual(ct) != want {
			t.Errorf("isTextual(%q) = %v", ct, !want)
		}
	}
}

// TestSSECursorsNeverGoBack: a client at the current interval gets jittered
// cursors, and those of one event stream never go back, however the jitter
// falls.
func TestSSECursorsNeverGoBack(t *testing.T) {
	now := cursorEpoch.Add(1000 * cursorInterval)
	h := newHarness(t, fixedClock(now))
	var mu sync.Mutex
	jitters := []uint64{3600, 20, 1000, 40}
	h.srv.jitterSeconds = func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		j := jitters[0]
		if len(jitters) > 1 {
			jitters = jitters[1:]
		}
		return j
	}
	h.create("/s", "Content-Type", "text/plain")
	c := openSSE(t, h, "/s?offset=-1&live=sse&cursor=1000")
	var cursors []string
	for i := range 4 {
		if i > 0 {
			h.appendBodies("/s", "text/plain", "x")
			c.expectData("x")
		}
		ctl := c.expectControl()
		cursor, _ := ctl["streamCursor"].(string)
		cursors = append(cursors, cursor)
	}
	if strings.Join(cursors, " ") != "1180 1180 1180 1180" {
		t.Fatalf("cursors %v, want 1180 each time (never back from the first)", cursors)
	}
}

func TestControlJSONIsWhatMarshalWrites(t *testing.T) {
	for _, ev := range []controlEvent{
		{StreamNextOffset: "0000000000000000_0000000000000042", StreamCursor: "123", UpToDate: true},
		{StreamNextOffset: "0000000000000000_0000000000000042", StreamClosed: true, UpToDate: true},
		{StreamNextOffset: "0000000000000000_0000000000000001"},
		{StreamNextOffset: "a<b", StreamCursor: "\"x\""},
		{},
	} {
		want, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendControlJSON(nil, ev); string(got) != string(want) {
			t.Errorf("%+v: %s, json.Marshal writes %s", ev, got, want)
		}
	}
}
