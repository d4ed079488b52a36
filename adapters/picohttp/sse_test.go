package picohttp

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// sseEvent is one parsed server-sent event (or comment).
type sseEvent struct {
	event, id, data, comment string
}

// sseClient reads events from a live event stream.
type sseClient struct {
	t      *testing.T
	resp   *http.Response
	lines  *bufio.Scanner
	cancel context.CancelFunc
}

func openSSE(t *testing.T, h *harness, target string, headers ...string) *sseClient {
	t.Helper()
	ts := httptest.NewServer(h.h)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	c := &sseClient{t: t, resp: resp, lines: bufio.NewScanner(resp.Body), cancel: cancel}
	t.Cleanup(c.close)
	return c
}

func (c *sseClient) close() { c.cancel(); c.resp.Body.Close() }

// next returns the next event; ok is false at the end of the stream.
func (c *sseClient) next() (ev sseEvent, ok bool) {
	c.t.Helper()
	started := false
	for c.lines.Scan() {
		line := c.lines.Text()
		if line == "" {
			if started {
				return ev, true
			}
			continue
		}
		started = true
		field, value, _ := strings.Cut(line, ": ")
		switch field {
		case "event":
			ev.event = value
		case "id":
			ev.id = value
		case "data":
			ev.data = value
		case "":
			ev.comment = value
		default:
			c.t.Fatalf("unexpected line %q", line)
		}
	}
	return ev, false
}

func (c *sseClient) expect(event, id string, check func(data string)) {
	c.t.Helper()
	ev, ok := c.next()
	if !ok {
		c.t.Fatalf("stream ended, want %s event", event)
	}
	if ev.event != event || ev.id != id {
		c.t.Fatalf("event %+v, want %s id %q", ev, event, id)
	}
	if check != nil {
		check(ev.data)
	}
}

func (c *sseClient) expectEnd() {
	c.t.Helper()
	if ev, ok := c.next(); ok {
		c.t.Fatalf("event %+v after the end", ev)
	}
}

// wantRecordsData checks a data event's JSON array: records from first on
// with these bodies, each with a timestamp.
func wantRecordsData(t *testing.T, first uint64, bodies ...string) func(string) {
	return func(data string) {
		t.Helper()
		var page []map[string]any
		if err := json.Unmarshal([]byte(data), &page); err != nil {
			t.Fatalf("data %q is not a JSON array: %v", data, err)
		}
		if len(page) != len(bodies) {
			t.Fatalf("data %q holds %d records, want %d", data, len(page), len(bodies))
		}
		for i, obj := range page {
			if obj["seq"] != float64(first+uint64(i)) || obj["body"] != bodies[i] || obj["timestamp"] == nil {
				t.Errorf("data %q record %d, want seq %d body %q", data, i, first+uint64(i), bodies[i])
			}
		}
	}
}

func wantControl(t *testing.T, want string) func(string) {
	return func(data string) {
		t.Helper()
		if data != want {
			t.Errorf("control %q, want %q", data, want)
		}
	}
}

func TestSSEDeliversRecordsThenControl(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = 10 * time.Second })
	h.create("/s")
	h.appendBodies("/s", "a", "b")
	c := openSSE(t, h, "/s?live=sse")
	if c.resp.StatusCode != 200 || c.resp.Header.Get("Content-Type") != "text/event-stream" || c.resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("response %d %v", c.resp.StatusCode, c.resp.Header)
	}
	c.expect("data", "2", wantRecordsData(t, 0, "a", "b"))
	c.expect("control", "2", wantControl(t, `{"next_seq":2,"up_to_date":true}`))

	h.appendBodies("/s", "c")
	c.expect("data", "3", wantRecordsData(t, 2, "c"))
	c.expect("control", "3", wantControl(t, `{"next_seq":3,"up_to_date":true}`))

	h.do(http.MethodPost, "/s", []byte("d"), "Pico-Closed", "true")
	c.expect("data", "4", wantRecordsData(t, 3, "d"))
	c.expect("control", "4", wantControl(t, `{"next_seq":4,"up_to_date":true,"closed":true}`))
	c.expectEnd()
}

func TestSSECatchesUpInSeveralReads(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	h.appendBodies("/s", "a", "b", "c")
	h.do(http.MethodPost, "/s", nil, "Pico-Closed", "true")
	c := openSSE(t, h, "/s?live=sse&count=1")
	c.expect("data", "1", wantRecordsData(t, 0, "a"))
	c.expect("data", "2", wantRecordsData(t, 1, "b"))
	c.expect("data", "3", wantRecordsData(t, 2, "c"))
	c.expect("control", "3", wantControl(t, `{"next_seq":3,"up_to_date":true,"closed":true}`))
	c.expectEnd()
}

func TestSSEControlOncePerCatchUp(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = 10 * time.Second })
	h.create("/s")
	h.appendBodies("/s", "a", "b", "c")
	c := openSSE(t, h, "/s?live=sse&seq=1")
	c.expect("data", "3", wantRecordsData(t, 1, "b", "c"))
	c.expect("control", "3", wantControl(t, `{"next_seq":3,"up_to_date":true}`))
	// A change without new records (a trim) sends nothing.
	h.do(http.MethodPost, "/s", nil, "Pico-Trim-Seq", "1")
	h.do(http.MethodPost, "/s", nil, "Pico-Closed", "true")
	c.expect("control", "3", wantControl(t, `{"next_seq":3,"up_to_date":true,"closed":true}`))
	c.expectEnd()
}

// Every event's id is the offset to read next: a reconnect resumes there.
func TestSSEResumesAtLastEventID(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	h.appendBodies("/s", "a", "b", "c")
	h.do(http.MethodPost, "/s", nil, "Pico-Closed", "true")
	c := openSSE(t, h, "/s?live=sse", "Last-Event-ID", "2")
	c.expect("data", "3", wantRecordsData(t, 2, "c"))
	c.expect("control", "3", wantControl(t, `{"next_seq":3,"up_to_date":true,"closed":true}`))
	c.expectEnd()
}

func TestSSEBinaryBodiesAreBase64(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	h.do(http.MethodPost, "/s", []byte{0xff, '\n', 0})
	h.do(http.MethodPost, "/s", []byte("line1\nline2\r"), "Pico-Closed", "true")
	c := openSSE(t, h, "/s?live=sse")
	c.expect("data", "2", func(data string) {
		if !strings.HasPrefix(data, `[{"seq":0,`) || !strings.Contains(data, `"body_b64":"/woA"`) ||
			!strings.Contains(data, `"body":"line1\nline2\r"}]`) {
			t.Errorf("data %q", data)
		}
	})
	c.expect("control", "2", nil)
	c.expectEnd()
}

func TestSSEMissingStreamIs404(t *testing.T) {
	h := newHarness(t)
	wantError(t, h.do(http.MethodGet, "/nope?live=sse", nil), http.StatusNotFound, "not_found", "")
}

func TestSSEEndsWhenStreamIsDeleted(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = 10 * time.Second })
	h.create("/s")
	c := openSSE(t, h, "/s?live=sse")
	c.expect("control", "0", wantControl(t, `{"next_seq":0,"up_to_date":true}`))
	h.do(http.MethodDelete, "/s", nil)
	c.expectEnd()
}

func TestSSEEndsAfterMaxDuration(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = 50 * time.Millisecond })
	h.create("/s")
	start := time.Now()
	c := openSSE(t, h, "/s?live=sse")
	c.expect("control", "0", nil)
	c.expectEnd()
	if time.Since(start) > 5*time.Second {
		t.Error("stream outlived its max duration")
	}
}

func TestSSEEndsOnShutdown(t *testing.T) {
	done := make(chan struct{})
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = time.Hour; c.Done = done })
	h.create("/s")
	c := openSSE(t, h, "/s?live=sse")
	c.expect("control", "0", nil)
	close(done)
	c.expectEnd()
}

func TestSSEKeepAlive(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = 10 * time.Second })
	h.srv.keepAlive = 20 * time.Millisecond
	h.create("/s")
	c := openSSE(t, h, "/s?live=sse")
	c.expect("control", "0", nil)
	for range 2 {
		ev, ok := c.next()
		if !ok || ev.comment != "keep-alive" || ev.event != "" {
			t.Fatalf("event %+v, want a keep-alive comment", ev)
		}
	}
	h.appendBodies("/s", "x")
	c.expect("data", "1", wantRecordsData(t, 0, "x"))
}

func TestSSEEndsWhenClientLeaves(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SSEMaxDuration = time.Hour })
	h.create("/s")
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodGet, "/s?live=sse", nil).WithContext(ctx)
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

func TestControlJSONIsWhatMarshalWrites(t *testing.T) {
	for _, ev := range []controlEvent{{}, {NextSeq: 42, UpToDate: true}, {NextSeq: 1<<64 - 1, UpToDate: true, Closed: true}, {Closed: true}} {
		want, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendControlJSON(nil, ev); string(got) != string(want) {
			t.Errorf("%+v: %s, json.Marshal writes %s", ev, got, want)
		}
	}
}
