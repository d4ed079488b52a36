package httpfault

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

const recordsJSON = `[{"n":1},{"n":2},{"n":3},{"n":4},{"n":5},{"n":6},{"n":7},{"n":8},{"n":9},{"n":10}]`

// node stands in for a protocol listener: /events is an event stream,
// /missing a 404, any other path a JSON read.
func node() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/events":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "event: data\ndata: [1]\n\n")
			http.NewResponseController(w).Flush()
		case "/missing":
			http.Error(w, "no such stream", http.StatusNotFound)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(recordsJSON)))
			_, _ = io.WriteString(w, recordsJSON)
		}
	})
}

// draws returns a rand that gives values in turn, then 0.
func draws(values ...float64) func() float64 {
	return func() float64 {
		if len(values) == 0 {
			return 0
		}
		v := values[0]
		values = values[1:]
		return v
	}
}

func serve(t *testing.T, rand func() float64) string {
	t.Helper()
	srv := httptest.NewServer(Wrap(node(), NewTable(rand)))
	t.Cleanup(srv.Close)
	return srv.URL
}

func arm(t *testing.T, url, spec string) {
	t.Helper()
	resp, err := http.Post(url+HookPath, "application/json", strings.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("arming %s: %d %s", spec, resp.StatusCode, body)
	}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, url string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading: %v", method, url, err)
	}
	return answer{resp.StatusCode, resp.Header, string(body)}
}

func TestAStatusFaultAnswersItsCountOfRequestsThenPasses(t *testing.T) {
	url := serve(t, nil)
	arm(t, url, `{"path":"/s","status":503,"count":2,"retryAfter":1}`)
	for i := range 2 {
		a := do(t, "GET", url+"/s")
		if a.status != 503 || a.header.Get("Retry-After") != "1" || !strings.Contains(a.body, "Injected error") {
			t.Fatalf("request %d: %d Retry-After %q %q", i, a.status, a.header.Get("Retry-After"), a.body)
		}
	}
	if a := do(t, "GET", url+"/s"); a.status != 200 || a.body != recordsJSON {
		t.Fatalf("after the count: %d %q", a.status, a.body)
	}
}

func TestAFaultFiresOnlyOnItsPathAndMethod(t *testing.T) {
	url := serve(t, nil)
	arm(t, url, `{"path":"/s","status":500,"method":"post"}`)
	if a := do(t, "GET", url+"/s"); a.status != 200 {
		t.Fatalf("GET fired a POST fault: %d", a.status)
	}
	if a := do(t, "POST", url+"/other"); a.status != 200 {
		t.Fatalf("another path fired: %d", a.status)
	}
	if a := do(t, "POST", url+"/s"); a.status != 500 {
		t.Fatalf("POST /s: %d, want the fault", a.status)
	}
	if a := do(t, "POST", url+"/s"); a.status != 200 {
		t.Fatalf("the fault fired twice with count 1: %d", a.status)
	}
}

func TestAFaultThatDoesNotFireKeepsItsCount(t *testing.T) {
	// 0.9 misses probability 0.5, 0.1 hits it (then a jitter draw), 0.6 misses.
	url := serve(t, draws(0.9, 0.1, 0, 0.6))
	arm(t, url, `{"path":"/s","status":429,"count":2,"probability":0.5}`)
	var got []int
	for range 3 {
		got = append(got, do(t, "GET", url+"/s").status)
	}
	if want := []int{200, 429, 200}; !equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if a := do(t, "GET", url+"/s"); a.status != 429 {
		t.Fatalf("the second of the count did not fire: %d", a.status)
	}
}

func TestAProbabilityOfZeroNeverFiresAndOfOneAlwaysDoes(t *testing.T) {
	url := serve(t, nil)
	arm(t, url, `{"path":"/never","status":500,"count":50,"probability":0}`)
	arm(t, url, `{"path":"/always","status":500,"count":50,"probability":1}`)
	for range 20 {
		if a := do(t, "GET", url+"/never"); a.status != 200 {
			t.Fatalf("probability 0 fired")
		}
		if a := do(t, "GET", url+"/always"); a.status != 500 {
			t.Fatalf("probability 1 did not fire")
		}
	}
}

func TestADelayWaitsItsTimeAndJitterThenServes(t *testing.T) {
	url := serve(t, draws(0.5)) // half of the jitter
	arm(t, url, `{"path":"/s","delayMs":150,"jitterMs":200}`)
	start := time.Now()
	a := do(t, "GET", url+"/s")
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Fatalf("answered after %v, before the 150 ms delay and 100 ms of jitter", took)
	}
	if a.status != 200 || a.body != recordsJSON {
		t.Fatalf("after the delay: %d %q", a.status, a.body)
	}
}

func TestADroppedConnectionGetsNoAnswer(t *testing.T) {
	url := serve(t, nil)
	arm(t, url, `{"path":"/s","dropConnection":true}`)
	// A new connection: a GET failing on a reused one is sent again.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := fresh.Get(url + "/s")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d, want the connection dropped", resp.StatusCode)
	}
	if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("error %v, want an EOF", err)
	}
	if a := do(t, "GET", url+"/s"); a.status != 200 {
		t.Fatalf("after the drop: %d", a.status)
	}
}

func TestATruncatedBodyIsCutWithItsLength(t *testing.T) {
	url := serve(t, nil)
	arm(t, url, `{"path":"/s","truncateBodyBytes":12}`)
	a := do(t, "GET", url+"/s")
	if a.status != 200 || a.body != recordsJSON[:12] || a.header.Get("Content-Length") != "12" {
		t.Fatalf("%d Content-Length %q body %q", a.status, a.header.Get("Content-Length"), a.body)
	}
}

func TestACorruptBodyIsNoLongerJSON(t *testing.T) {
	url := serve(t, nil)
	arm(t, url, `{"path":"/s","corruptBody":true}`)
	a := do(t, "GET", url+"/s")
	if len(a.body) != len(recordsJSON) || !strings.HasPrefix(a.body, "XY") || json.Valid([]byte(a.body)) {
		t.Fatalf("body %q, want XY… of the same length and invalid JSON", a.body)
	}
}

func TestBodyFaultsLeaveErrorsAndEventStreamsAlone(t *testing.T) {
	url := serve(t, nil)
	arm(t, url, `{"path":"/missing","truncateBodyBytes":2,"corruptBody":true}`)
	if a := do(t, "GET", url+"/missing"); a.status != 404 || !strings.Contains(a.body, "no such stream") {
		t.Fatalf("a 404 was changed: %d %q", a.status, a.body)
	}
	arm(t, url, `{"path":"/events","truncateBodyBytes":2}`)
	if a := do(t, "GET", url+"/events"); a.body != "event: data\ndata: [1]\n\n" {
		t.Fatalf("an event stream was cut: %q", a.body)
	}
}

func TestAnInjectedEventComesFirstInTheEventStream(t *testing.T) {
	url := serve(t, nil)
	arm(t, url, `{"path":"/events","injectSseEvent":{"eventType":"unknown","data":"{not json"}}`)
	a := do(t, "GET", url+"/events")
	if want := "event: unknown\ndata: {not json\n\nevent: data\ndata: [1]\n\n"; a.body != want {
		t.Fatalf("body %q, want %q", a.body, want)
	}
	if a := do(t, "GET", url+"/events"); strings.Contains(a.body, "unknown") {
		t.Fatalf("the event was injected twice: %q", a.body)
	}
}

func TestClearingDisarmsEveryFaultAndArmingReplaces(t *testing.T) {
	url := serve(t, nil)
	arm(t, url, `{"path":"/a","status":500,"count":5}`)
	arm(t, url, `{"path":"/b","status":500,"count":5}`)
	arm(t, url, `{"path":"/b","status":418,"count":5}`)
	if a := do(t, "GET", url+"/b"); a.status != 418 {
		t.Fatalf("the second fault for /b did not replace the first: %d", a.status)
	}
	if a := do(t, "DELETE", url+HookPath); a.status != 200 || a.body != "{\"ok\":true}\n" {
		t.Fatalf("clearing: %d %q", a.status, a.body)
	}
	for _, p := range []string{"/a", "/b"} {
		if a := do(t, "GET", url+p); a.status != 200 {
			t.Fatalf("%s after clearing: %d", p, a.status)
		}
	}
}

func TestTheHookRefusesWhatItCannotArm(t *testing.T) {
	url := serve(t, nil)
	for spec, want := range map[string]string{
		`{"status":500}`: "path",
		`{"path":"/s"}`:  "at least one fault",
		`{"path":"/s","status":500,"colour":"red"}`:                     "unknown field",
		`{"path":"/s","status":500} {}`:                                 "after the object",
		`{"path":"/s","status":99}`:                                     "status must be",
		`{"path":"/s","status":500,"count":0}`:                          "count must be",
		`{"path":"/s","delayMs":600000}`:                                "delayMs must be",
		`{"path":"/s","status":500,"probability":2}`:                    "probability",
		`{"path":"/s","status":500,"method":"GOT"}`:                     "method",
		`{"path":"/s","injectSseEvent":{"eventType":"a\nb","data":""}}`: "eventType",
		`[`: "invalid JSON",
	} {
		resp, err := http.Post(url+HookPath, "application/json", strings.NewReader(spec))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %q, want 400 naming %q", spec, resp.StatusCode, body, want)
		}
	}
	if a := do(t, "GET", url+HookPath); a.status != 405 || a.header.Get("Allow") != "POST, DELETE" {
		t.Errorf("GET of the hook: %d Allow %q", a.status, a.header.Get("Allow"))
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
