package livehttp

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStartSetsEventStreamHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Extra", "kept")
	Start(rec, rec, Options{})
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/event-stream" ||
		rec.Header().Get("Cache-Control") != "no-cache" || rec.Header().Get("X-Extra") != "kept" {
		t.Fatalf("status %d, headers %v", rec.Code, rec.Header())
	}
	if !rec.Flushed {
		t.Error("headers not flushed")
	}
}

func TestSendFraming(t *testing.T) {
	for _, tc := range []struct {
		tight    bool
		event    string
		id, data string
		want     string
	}{
		{false, "data", "7", "a\nb", "event: data\nid: 7\ndata: a\ndata: b\n\n"},
		{true, "data", "", "line1\r\nline2\rline3", "event: data\ndata:line1\ndata:line2\ndata:line3\n\n"},
		{true, "control", "", `{"k":1}`, "event: control\ndata:{\"k\":1}\n\n"},
		{true, "data", "", "", "event: data\ndata:\n\n"},
		// A parser strips one space after the colon: keep the payload's.
		{true, "data", "", " indented\n  two", "event: data\ndata:  indented\ndata:   two\n\n"},
		{false, "data", "", " x", "event: data\ndata:  x\n\n"},
	} {
		rec := httptest.NewRecorder()
		es := Start(rec, rec, Options{TightData: tc.tight})
		if err := es.Send(tc.event, tc.id, []byte(tc.data)); err != nil {
			t.Fatal(err)
		}
		if got := rec.Body.String(); got != tc.want {
			t.Errorf("Send(%q, %q, %q) tight=%v wrote %q, want %q", tc.event, tc.id, tc.data, tc.tight, got, tc.want)
		}
	}
}

// TestSendRoundTripsThroughAParser decodes what Send wrote the way an
// event stream parser does and gets the payload back (line ends become LF).
func TestSendRoundTripsThroughAParser(t *testing.T) {
	for _, data := range []string{"", "a", " a ", "a\n\nb", "  x\r\n y\n", "\n"} {
		for _, tight := range []bool{false, true} {
			rec := httptest.NewRecorder()
			_ = Start(rec, rec, Options{TightData: tight}).Send("data", "", []byte(data))
			var lines []string
			for line := range strings.SplitSeq(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n") {
				if v, ok := strings.CutPrefix(line, "data:"); ok {
					lines = append(lines, strings.TrimPrefix(v, " "))
				}
			}
			want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data)
			if got := strings.Join(lines, "\n"); got != want {
				t.Errorf("tight=%v: %q parsed back as %q", tight, data, got)
			}
		}
	}
}

func TestWaitWakesOnChange(t *testing.T) {
	rec := httptest.NewRecorder()
	es := Start(rec, rec, Options{})
	changed := make(chan struct{})
	close(changed)
	if !es.Wait(context.Background(), changed, nil, nil) {
		t.Error("Wait ignored the change")
	}
	stop := make(chan struct{})
	close(stop)
	if es.Wait(context.Background(), nil, stop, nil) {
		t.Error("Wait ignored stop")
	}
	end, _ := After(time.Millisecond)
	if es.Wait(context.Background(), nil, nil, end) {
		t.Error("Wait ignored the end")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if es.Wait(ctx, nil, nil, nil) {
		t.Error("Wait ignored the client leaving")
	}
}

func TestWaitKeepsAlive(t *testing.T) {
	rec := httptest.NewRecorder()
	es := Start(rec, rec, Options{KeepAlive: 5 * time.Millisecond})
	end, _ := After(40 * time.Millisecond)
	es.Wait(context.Background(), nil, nil, end)
	if n := strings.Count(rec.Body.String(), ": keep-alive\n\n"); n < 2 {
		t.Errorf("%d keep-alives in %q", n, rec.Body)
	}
	rec = httptest.NewRecorder()
	es = Start(rec, rec, Options{})
	end, _ = After(20 * time.Millisecond)
	es.Wait(context.Background(), nil, nil, end)
	if rec.Body.Len() != 0 {
		t.Errorf("keep-alive without KeepAlive: %q", rec.Body)
	}
}

func TestEnded(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	fired, _ := After(0)
	<-fired
	if Ended(nil, nil, nil) {
		t.Error("nothing fired")
	}
	if !Ended(closed, nil, nil) || !Ended(nil, closed, nil) || !Ended(nil, nil, fired) {
		t.Error("a fired signal was missed")
	}
}

func TestSplitLines(t *testing.T) {
	for in, want := range map[string][]string{
		"":            {""},
		"a":           {"a"},
		"a\nb":        {"a", "b"},
		"a\r\nb\rc\n": {"a", "b", "c", ""},
		"\r\r\n":      {"", "", ""},
	} {
		var got []string
		for _, l := range SplitLines([]byte(in)) {
			got = append(got, string(l))
		}
		if !slices.Equal(got, want) {
			t.Errorf("SplitLines(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQueuedEventsGoOutInOneWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &countingWriter{ResponseRecorder: rec}
	es := Start(w, w, Options{})
	w.writes = 0
	encoded := es.AppendEvent(nil, "data", "1", []byte("a"))
	es.QueueEncoded(encoded)
	es.Queue("control", "", []byte("c"))
	if err := es.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := es.Flush(); err != nil { // nothing queued: no write
		t.Fatal(err)
	}
	if want := "event: data\nid: 1\ndata: a\n\nevent: control\ndata: c\n\n"; rec.Body.String() != want || w.writes != 1 {
		t.Errorf("%d writes of %q, want 1 of %q", w.writes, rec.Body, want)
	}
	if string(encoded) != "event: data\nid: 1\ndata: a\n\n" {
		t.Errorf("the shared encoding changed: %q", encoded)
	}
}

type countingWriter struct {
	*httptest.ResponseRecorder
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.ResponseRecorder.Write(p)
}
