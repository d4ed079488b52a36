package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestLiveReadersGetTheClosingAppendWithTheClosure: a live reader waiting
// at the tail of a stream that an append closes gets that append's data
// and the closure in one answer (Durable Streams §5.6, §5.8): a long-poll
// its data with the closed header, an event stream the data, then one
// control event that says closed, then the end. Both protocols, both live
// modes, a few rounds each, since the closure reaching readers late is a
// race with the seal's metadata record.
func TestLiveReadersGetTheClosingAppendWithTheClosure(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--ds-listen", "127.0.0.1:0"}})
	ds := dsURL(t, n)
	const rounds = 3
	t.Run("ds long-poll", func(t *testing.T) {
		for i := range rounds {
			u := fmt.Sprintf("%s/live-close/ds-lp-%d", ds, i)
			send(t, "PUT", u, hdr("Content-Type", "text/plain"), nil).wantStatus(t, 201)
			next := send(t, "POST", u, hdr("Content-Type", "text/plain"), []byte("a")).wantStatus(t, 204).header.Get("Stream-Next-Offset")
			poll := sendAsync("GET", u+"?offset="+next+"&live=long-poll", nil, nil)
			time.Sleep(200 * time.Millisecond) // parked at the tail
			send(t, "POST", u, hdr("Content-Type", "text/plain", "Stream-Closed", "true"), []byte("final")).wantStatus(t, 204).
				wantHeaders(t, "Stream-Closed", "true")
			got := <-poll
			if got.err != nil {
				t.Fatal(got.err)
			}
			got.wantStatus(t, 200).wantBody(t, "final").
				wantHeaders(t, "Stream-Closed", "true", "Stream-Up-To-Date", "true", "Stream-Next-Offset", dsOffset(2))
		}
	})
	t.Run("ds sse", func(t *testing.T) {
		for i := range rounds {
			u := fmt.Sprintf("%s/live-close/ds-sse-%d", ds, i)
			send(t, "PUT", u, hdr("Content-Type", "text/plain"), nil).wantStatus(t, 201)
			next := send(t, "POST", u, hdr("Content-Type", "text/plain"), []byte("a")).wantStatus(t, 204).header.Get("Stream-Next-Offset")
			events, done := openEvents(t, u+"?offset="+next+"&live=sse", nil)
			if c := dsControl(t, nextEvent(t, events, 2*time.Second)); c.StreamClosed || !c.UpToDate || c.StreamNextOffset != next {
				t.Fatalf("first control %+v, want open and up to date at %s", c, next)
			}
			send(t, "POST", u, hdr("Content-Type", "text/plain", "Stream-Closed", "true"), []byte("final")).wantStatus(t, 204)
			if ev := nextEvent(t, events, 2*time.Second); ev.event != "data" || ev.data != "final" {
				t.Fatalf("event %+v, want the data event of the closing append", ev)
			}
			if c := dsControl(t, nextEvent(t, events, 2*time.Second)); !c.StreamClosed || c.StreamCursor != "" || c.StreamNextOffset != dsOffset(2) {
				t.Fatalf("control after the closing append %+v, want closed at %s without a cursor", c, dsOffset(2))
			}
			wantCleanEnd(t, events, done, 2*time.Second)
		}
	})
	t.Run("pico long-poll", func(t *testing.T) {
		for i := range rounds {
			u := fmt.Sprintf("%s/live-close/pico-lp-%d", n.URL, i)
			mustCreate(t, u, "text/plain")
			mustAppend(t, u, "text/plain", []byte("a"))
			poll := sendAsync("GET", u+"?seq=1&live=long-poll", nil, nil)
			time.Sleep(200 * time.Millisecond)
			mustAppend(t, u, "text/plain", []byte("final"), "Pico-Closed", "true").wantHeaders(t, "Pico-Closed", "true")
			got := <-poll
			if got.err != nil {
				t.Fatal(got.err)
			}
			r := got.wantStatus(t, 200).wantHeaders(t, "Pico-Closed", "true", "Pico-Up-To-Date", "true", "Pico-Next-Seq", "2")
			wantBodies(t, "woken poll", r.records(t), 1, "final")
		}
	})
	t.Run("pico sse", func(t *testing.T) {
		for i := range rounds {
			u := fmt.Sprintf("%s/live-close/pico-sse-%d", n.URL, i)
			mustCreate(t, u, "text/plain")
			mustAppend(t, u, "text/plain", []byte("a"))
			events, done := openEvents(t, u+"?seq=1&live=sse", nil)
			wantControlEvent(t, nextEvent(t, events, 2*time.Second), map[string]any{"next_seq": 1, "up_to_date": true})
			mustAppend(t, u, "text/plain", []byte("final"), "Pico-Closed", "true")
			wantDataEvent(t, nextEvent(t, events, 2*time.Second), 1, "final")
			wantControlEvent(t, nextEvent(t, events, 2*time.Second), map[string]any{"next_seq": 2, "up_to_date": true, "closed": true})
			wantCleanEnd(t, events, done, 2*time.Second)
		}
	})
}

// dsControlEvent is a Durable Streams control event's payload.
type dsControlEvent struct {
	StreamNextOffset string `json:"streamNextOffset"`
	StreamCursor     string `json:"streamCursor"`
	UpToDate         bool   `json:"upToDate"`
	StreamClosed     bool   `json:"streamClosed"`
}

func dsControl(t *testing.T, ev sseEvent) dsControlEvent {
	t.Helper()
	var c dsControlEvent
	if ev.event != "control" || json.Unmarshal([]byte(ev.data), &c) != nil {
		t.Fatalf("event %+v, want a control event", ev)
	}
	return c
}
