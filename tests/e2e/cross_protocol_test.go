package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

var dsLine = regexp.MustCompile(`ds on (http://\S+)`)

// startBothProtocols starts a node serving Pico on its main listener and
// Durable Streams beside it, and returns both base URLs.
func startBothProtocols(t *testing.T) (pico, ds string) {
	t.Helper()
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--ds-listen", "127.0.0.1:0"}})
	return n.URL, dsURL(t, n)
}

// dsURL is the base URL of n's Durable Streams listener, from its banner.
func dsURL(t *testing.T, n *picoNode) string {
	t.Helper()
	m := dsLine.FindStringSubmatch(n.Stdout.String())
	if m == nil {
		t.Fatalf("no ds listener in the banner:\n%s", n.Stdout)
	}
	return m[1]
}

// TestCrossProtocolStreams writes through one protocol and reads through
// the other, on one node serving Pico and Durable Streams side by side:
// the same records, byte for byte, at the same offsets.
func TestCrossProtocolStreams(t *testing.T) {
	pico, ds := startBothProtocols(t)
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}

	t.Run("pico-to-ds-binary", func(t *testing.T) {
		send(t, "PUT", pico+"/x/bin", hdr("Content-Type", "application/octet-stream"), nil).wantStatus(t, 201)
		batch := picowire.EncodeBatch([]domain.Record{{Body: allBytes}, {Body: []byte("tail")}})
		send(t, "POST", pico+"/x/bin", hdr("Content-Type", picowire.BatchContentType), batch).wantStatus(t, 200)
		send(t, "GET", ds+"/x/bin?offset=-1", nil, nil).wantStatus(t, 200).
			wantHeaders(t, "Stream-Next-Offset", dsOffset(2), "Content-Type", "application/octet-stream").
			wantBody(t, string(allBytes)+"tail")
	})
	t.Run("pico-to-ds-json", func(t *testing.T) {
		send(t, "PUT", pico+"/x/json", hdr("Content-Type", "application/json"), nil).wantStatus(t, 201)
		send(t, "POST", pico+"/x/json", hdr("Content-Type", "application/json"), []byte(`{"a":1}`)).wantStatus(t, 200)
		send(t, "POST", pico+"/x/json", hdr("Content-Type", "application/json"), []byte(`[1,2]`)).wantStatus(t, 200)
		// What a Durable Streams reader could not parse is refused.
		send(t, "POST", pico+"/x/json", hdr("Content-Type", "application/json"), []byte(`{"a":`)).wantError(t, 400, "bad_request")
		r := send(t, "GET", ds+"/x/json?offset=-1", nil, nil).wantStatus(t, 200).wantHeaders(t, "Stream-Next-Offset", dsOffset(2))
		wantJSONEqual(t, r.body, `[{"a":1},[1,2]]`)
	})
	t.Run("ds-to-pico-binary", func(t *testing.T) {
		send(t, "PUT", ds+"/y/bin", hdr("Content-Type", "application/octet-stream"), nil).wantStatus(t, 201)
		send(t, "POST", ds+"/y/bin", hdr("Content-Type", "application/octet-stream"), allBytes).wantStatus(t, 204)
		send(t, "POST", ds+"/y/bin", hdr("Content-Type", "application/octet-stream"), []byte("more")).wantStatus(t, 204)
		r := send(t, "GET", pico+"/y/bin?format=binary", nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Next-Seq", "2")
		recs, err := picowire.DecodeBatchResponse(r.body, picowire.BatchLimits{MaxRecords: 10, MaxHeaders: 10})
		if err != nil || len(recs) != 2 || !bytes.Equal(recs[0].Body, allBytes) || string(recs[1].Body) != "more" || recs[1].Seq != 1 {
			t.Fatalf("pico read of a DS stream: %+v %v", recs, err)
		}
		if recs[0].TimestampMs == 0 || time.Since(time.UnixMilli(recs[1].TimestampMs)) > time.Minute {
			t.Fatalf("records written over DS lack owner timestamps: %d %d", recs[0].TimestampMs, recs[1].TimestampMs)
		}
	})
	t.Run("ds-to-pico-json", func(t *testing.T) {
		send(t, "PUT", ds+"/y/json", hdr("Content-Type", "application/json"), nil).wantStatus(t, 201)
		send(t, "POST", ds+"/y/json", hdr("Content-Type", "application/json"), []byte(`[{"a":1}, {"b": [2, 3]}]`)).wantStatus(t, 204)
		r := send(t, "GET", pico+"/y/json", nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Next-Seq", "2")
		var page []struct {
			Seq  uint64 `json:"seq"`
			Body string `json:"body"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil || len(page) != 2 {
			t.Fatalf("pico read of a DS JSON stream: %s %v", r.body, err)
		}
		wantJSONEqual(t, []byte(page[0].Body), `{"a":1}`)
		wantJSONEqual(t, []byte(page[1].Body), `{"b":[2,3]}`)
	})
	t.Run("closed-both-ways", func(t *testing.T) {
		send(t, "PUT", pico+"/z", hdr("Content-Type", "text/plain"), []byte("only")).wantStatus(t, 201)
		send(t, "POST", pico+"/z", hdr("Pico-Closed", "true"), nil).wantStatus(t, 200)
		send(t, "GET", ds+"/z?offset=-1", nil, nil).wantStatus(t, 200).wantHeaders(t, "Stream-Closed", "true").wantBody(t, "only")
		send(t, "POST", ds+"/z", hdr("Content-Type", "text/plain"), []byte("late")).wantStatus(t, http.StatusConflict)
	})
}

func dsOffset(seq uint64) string { return fmt.Sprintf("%016d_%016d", 0, seq) }

func wantJSONEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("not JSON: %s (%v)", got, err)
	}
	json.Unmarshal([]byte(want), &w)
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("JSON %s, want %s", gb, wb)
	}
}
