package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"
)

// plainClient never follows redirects, so a test sees every 307 itself.
var plainClient = &http.Client{
	Timeout:       20 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// reply is a response read in full, named after the request for messages.
type reply struct {
	what   string // "METHOD URL"
	status int
	header http.Header
	body   []byte
}

// hdr builds request headers from name, value pairs.
func hdr(pairs ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(pairs); i += 2 {
		h.Set(pairs[i], pairs[i+1])
	}
	return h
}

// send makes one request and reads the whole response.
func send(t *testing.T, method, url string, h http.Header, body []byte) reply {
	t.Helper()
	r, err := do(method, url, h, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// do is send for goroutines other than the test's, which must not fail it.
func do(method, url string, h http.Header, body []byte) (reply, error) {
	resp, err := doOpen(method, url, h, body)
	if err != nil {
		return reply{}, err
	}
	return readResponse(method+" "+url, resp)
}

// readResponse reads and closes a response.
func readResponse(what string, resp *http.Response) (reply, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s: read body: %w", what, err)
	}
	return reply{what: what, status: resp.StatusCode, header: resp.Header, body: b}, nil
}

func readReply(t *testing.T, what string, resp *http.Response) reply {
	t.Helper()
	r, err := readResponse(what, resp)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// asyncReply is the outcome of a request made in the background.
type asyncReply struct {
	reply
	err error
}

// sendAsync makes a request in the background (a long-poll).
func sendAsync(method, url string, h http.Header, body []byte) <-chan asyncReply {
	out := make(chan asyncReply, 1)
	go func() {
		r, err := do(method, url, h, body)
		out <- asyncReply{r, err}
	}()
	return out
}

// open makes one request and returns the response unread (event streams).
func open(t *testing.T, method, url string, h http.Header, body []byte) *http.Response {
	t.Helper()
	resp, err := doOpen(method, url, h, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func doOpen(method, url string, h http.Header, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := plainClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	return resp, nil
}

// rootURL is the scheme and host of u: where GET / lists streams.
func rootURL(u string) string {
	p, err := neturl.Parse(u)
	if err != nil {
		panic(err)
	}
	return p.Scheme + "://" + p.Host
}

func (r reply) wantStatus(t *testing.T, status int) reply {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d; body %s", r.what, r.status, status, clipBody(r.body))
	}
	return r
}

// wantHeaders checks name, value pairs; a value of "" means absent.
func (r reply) wantHeaders(t *testing.T, pairs ...string) reply {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		name, want := pairs[i], pairs[i+1]
		got, present := r.header.Get(name), len(r.header.Values(name)) > 0
		switch {
		case want == "" && present:
			t.Errorf("%s: header %s = %q, want it absent", r.what, name, got)
		case want != "" && got != want:
			t.Errorf("%s: header %s = %q, want %q", r.what, name, got, want)
		}
	}
	return r
}

func (r reply) wantBody(t *testing.T, want string) reply {
	t.Helper()
	if string(r.body) != want {
		t.Errorf("%s: body %s, want %q", r.what, clipBody(r.body), want)
	}
	return r
}

// apiError is the Pico JSON error body.
type apiError struct {
	Error   string  `json:"error"`
	Message string  `json:"message"`
	NextSeq *uint64 `json:"next_seq"`
}

// wantError checks the status, the JSON error code and the common headers
// of an error answer, and returns the body.
func (r reply) wantError(t *testing.T, status int, code string) apiError {
	t.Helper()
	r.wantStatus(t, status)
	r.wantHeaders(t, "Content-Type", "application/json", "X-Content-Type-Options", "nosniff")
	var e apiError
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("%s: error body %s is not JSON: %v", r.what, clipBody(r.body), err)
	}
	if e.Error != code {
		t.Errorf("%s: error code %q, want %q (message %q)", r.what, e.Error, code, e.Message)
	}
	if e.Message == "" {
		t.Errorf("%s: error %q has no message", r.what, e.Error)
	}
	return e
}

// wantNextSeqInBody checks an error body's next_seq.
func (e apiError) wantNextSeq(t *testing.T, what string, want uint64) {
	t.Helper()
	if e.NextSeq == nil || *e.NextSeq != want {
		t.Errorf("%s: next_seq %v, want %d", what, ptrString(e.NextSeq), want)
	}
}

func ptrString(p *uint64) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}

func clipBody(b []byte) string {
	const limit = 300
	if len(b) > limit {
		return fmt.Sprintf("%q... (%d bytes)", b[:limit], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// jsonRecord is one record of a JSON read page.
type jsonRecord struct {
	Seq       uint64            `json:"seq"`
	Timestamp int64             `json:"timestamp"`
	Headers   map[string]string `json:"headers"`
	Body      *string           `json:"body"`
	BodyB64   *string           `json:"body_b64"`
}

// bytes returns the record's body whichever field carries it.
func (r jsonRecord) bytes(t *testing.T) []byte {
	t.Helper()
	switch {
	case r.Body != nil && r.BodyB64 != nil:
		t.Errorf("record %d has both body and body_b64", r.Seq)
	case r.BodyB64 != nil:
		b, err := base64.StdEncoding.DecodeString(*r.BodyB64)
		if err != nil {
			t.Fatalf("record %d: body_b64 %q: %v", r.Seq, *r.BodyB64, err)
		}
		return b
	case r.Body != nil:
		return []byte(*r.Body)
	}
	return nil
}

func (r reply) records(t *testing.T) []jsonRecord {
	t.Helper()
	var recs []jsonRecord
	if err := json.Unmarshal(r.body, &recs); err != nil {
		t.Fatalf("%s: page %s is not a JSON array of records: %v", r.what, clipBody(r.body), err)
	}
	return recs
}

// wantBodies checks a page's offsets (from first, consecutive) and bodies.
func wantBodies(t *testing.T, what string, recs []jsonRecord, first uint64, bodies ...string) {
	t.Helper()
	if len(recs) != len(bodies) {
		t.Fatalf("%s: %d records, want %d (%q)", what, len(recs), len(bodies), bodies)
	}
	for i, r := range recs {
		if r.Seq != first+uint64(i) {
			t.Errorf("%s: record %d has seq %d, want %d", what, i, r.Seq, first+uint64(i))
		}
		if got := string(r.bytes(t)); got != bodies[i] {
			t.Errorf("%s: record %d body %q, want %q", what, r.Seq, got, bodies[i])
		}
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	event, id, data string
}

// readEvents parses an event stream until the response ends, sending each
// event on the returned channel, which closes at the end; the error (nil
// for a clean end) is sent on the second.
func readEvents(body io.Reader) (<-chan sseEvent, <-chan error) {
	events, done := make(chan sseEvent, 64), make(chan error, 1)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(body)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" || len(data) > 0 {
					ev.data = strings.Join(data, "\n")
					events <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, ":"): // keep-alive comment
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data:"): // one space after the colon is not data
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
		done <- sc.Err()
	}()
	return events, done
}

// nextEvent waits for the next event, failing after within.
func nextEvent(t *testing.T, events <-chan sseEvent, within time.Duration) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatalf("event stream ended; wanted another event")
		}
		return ev
	case <-time.After(within):
		t.Fatalf("no event within %v", within)
	}
	return sseEvent{}
}
