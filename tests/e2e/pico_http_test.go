package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

// maxBodyForTests is the node's --max-body-size in the protocol tests.
const maxBodyForTests = 64 << 10

// TestPicoProtocol runs every protocol check against one node; each subtest
// owns the streams under its own path prefix, so they run in parallel.
func TestPicoProtocol(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--max-body-size", strconv.Itoa(maxBodyForTests)}})
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, base string)
	}{
		{"create", testCreate},
		{"create-options", testCreateOptions},
		{"append-formats", testAppendFormats},
		{"keys", testKeys},
		{"schemas", testSchemas},
		{"groups", testGroups},
		{"groups-goclient", testGroupsGoClient},
		{"append-errors", testAppendErrors},
		{"malformed-batches", testMalformedBatches},
		{"too-large", testTooLarge},
		{"producer", testIdempotentProducer},
		{"match-seq", testMatchSeq},
		{"close", testClose},
		{"trim", testTrim},
		{"read-params", testReadParameters},
		{"etag", testETag},
		{"long-poll", testLongPoll},
		{"sse", testSSE},
		{"sse-resume", testSSEResume},
		{"sse-max-duration", testSSEMaxDuration},
		{"head", testHead},
		{"delete", testDelete},
		{"list", testList},
		{"cors-methods", testCORSAndMethods},
		{"timestamps", testTimestamps},
		{"expiry", testExpiry},
		{"retention", testRecordTTL},
		{"ttl", testIdleTTL},
		{"h2c", testH2C},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, n.URL+"/"+tc.name)
		})
	}
	t.Run("openapi", func(t *testing.T) {
		r := send(t, "GET", n.AdminURL+"/openapi.yaml", nil, nil).wantStatus(t, 200)
		if !strings.Contains(string(r.body), "openapi:") || !strings.Contains(string(r.body), "Pico-Next-Seq") {
			t.Errorf("openapi.yaml does not describe the protocol: %s", clipBody(r.body))
		}
	})
}

// --- small request helpers -------------------------------------------------

func mustCreate(t *testing.T, u, contentType string) {
	t.Helper()
	send(t, "PUT", u, hdr("Content-Type", contentType), nil).wantStatus(t, 201)
}

func mustAppend(t *testing.T, u, contentType string, body []byte, extra ...string) reply {
	t.Helper()
	return send(t, "POST", u, hdr(append([]string{"Content-Type", contentType}, extra...)...), body).wantStatus(t, 200)
}

// batchItem is one record of a JSON batch request, written by hand so the
// test does not share the server's encoder.
type batchItem struct {
	Body    string            `json:"body,omitempty"`
	BodyB64 string            `json:"body_b64,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

func jsonBatch(items ...batchItem) []byte {
	b, err := json.Marshal(map[string][]batchItem{"records": items})
	if err != nil {
		panic(err)
	}
	return b
}

func textBatch(bodies ...string) []byte {
	items := make([]batchItem, len(bodies))
	for i, b := range bodies {
		items[i].Body = b
	}
	return jsonBatch(items...)
}

// readAll reads a stream from its start to its tail, page by page: a page
// may end before the tail (Pico-Up-To-Date absent), and the reader goes on
// from its Pico-Next-Seq.
func readAll(t *testing.T, u string) []jsonRecord {
	t.Helper()
	var all []jsonRecord
	for seq := "0"; ; {
		r := send(t, "GET", u+"?seq="+seq, nil, nil).wantStatus(t, 200)
		all = append(all, r.records(t)...)
		if r.header.Get("Pico-Up-To-Date") == "true" {
			return all
		}
		if next := r.header.Get("Pico-Next-Seq"); next != seq {
			seq = next
		} else {
			t.Fatalf("%s: Pico-Next-Seq %s does not advance and the page is not up to date", r.what, next)
		}
	}
}

func wantRange(t *testing.T, what string, r reply, start, next uint64) {
	t.Helper()
	r.wantHeaders(t, "Pico-Start-Seq", fmt.Sprint(start), "Pico-Next-Seq", fmt.Sprint(next))
}

// --- create ----------------------------------------------------------------

func testCreate(t *testing.T, base string) {
	u := base + "/a"
	r := send(t, "PUT", u, hdr("Content-Type", "text/plain"), nil).wantStatus(t, 201).
		wantHeaders(t, "Pico-Next-Seq", "0", "Content-Type", "text/plain", "Cache-Control", "no-store", "Pico-Closed", "")
	wantLocation(t, r, u)
	send(t, "PUT", u, hdr("Content-Type", "text/plain"), nil).wantStatus(t, 200).
		wantHeaders(t, "Pico-Next-Seq", "0", "Content-Type", "text/plain", "Cache-Control", "no-store")

	mustAppend(t, u, "text/plain", []byte("x"))
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"content type", hdr("Content-Type", "application/json")},
		{"ttl", hdr("Content-Type", "text/plain", "Pico-TTL", "60")},
		{"expiry", hdr("Content-Type", "text/plain", "Pico-Expires-At", "2099-01-01T00:00:00Z")},
	} {
		e := send(t, "PUT", u, tc.h, nil).wantError(t, 409, "conflict")
		e.wantNextSeq(t, "conflicting "+tc.name, 1)
	}

	send(t, "PUT", rootURL(base)+"/", hdr("Content-Type", "text/plain"), nil).wantError(t, 400, "bad_request")
}

func wantLocation(t *testing.T, r reply, streamURL string) {
	t.Helper()
	loc := r.header.Get("Location")
	base, _ := url.Parse(streamURL)
	resolved, err := base.Parse(loc)
	if loc == "" || err != nil || resolved.String() != streamURL {
		t.Errorf("%s: Location %q, want one resolving to %s", r.what, loc, streamURL)
	}
}

func testCreateOptions(t *testing.T, base string) {
	t.Run("default content type and first record", func(t *testing.T) {
		u := base + "/first"
		send(t, "PUT", u, nil, []byte("first")).wantStatus(t, 201).
			wantHeaders(t, "Pico-Next-Seq", "1", "Content-Type", "application/octet-stream")
		wantBodies(t, "read", readAll(t, u), 0, "first")
	})
	t.Run("ttl and expiry are kept", func(t *testing.T) {
		for _, tc := range []struct {
			name, header, value, headName, want string
		}{
			{"ttl", "Pico-TTL", "3600", "Pico-TTL", "3600"},
			{"rfc3339", "Pico-Expires-At", "2099-01-02T03:04:05Z", "Pico-Expires-At", "2099-01-02T03:04:05Z"},
			{"offset", "Pico-Expires-At", "2099-01-02T05:04:05+02:00", "Pico-Expires-At", "2099-01-02T03:04:05Z"},
			{"unix-ms", "Pico-Expires-At", "4102444800000", "Pico-Expires-At", "2100-01-01T00:00:00Z"},
		} {
			u := base + "/" + tc.name
			send(t, "PUT", u, hdr("Content-Type", "text/plain", tc.header, tc.value), nil).wantStatus(t, 201)
			send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantHeaders(t, tc.headName, tc.want)
			// The same options again are the same stream.
			send(t, "PUT", u, hdr("Content-Type", "text/plain", tc.header, tc.value), nil).wantStatus(t, 200)
		}
	})
	t.Run("bad options are 400", func(t *testing.T) {
		for _, tc := range []struct{ header, value string }{
			{"Pico-Expires-At", "2001-01-01T00:00:00Z"},
			{"Pico-Expires-At", "1000"},
			{"Pico-Expires-At", "tomorrow"},
			{"Pico-TTL", "-5"},
			{"Pico-TTL", "ten"},
			{"Pico-Closed", "maybe"},
		} {
			u := base + "/bad-" + strings.ToLower(tc.header)
			send(t, "PUT", u, hdr(tc.header, tc.value), nil).wantError(t, 400, "bad_request")
			send(t, "HEAD", u, nil, nil).wantStatus(t, 404) // nothing was created
		}
	})
	t.Run("created closed", func(t *testing.T) {
		u := base + "/sealed"
		send(t, "PUT", u, hdr("Content-Type", "text/plain", "Pico-Closed", "true"), []byte("only")).wantStatus(t, 201).
			wantHeaders(t, "Pico-Closed", "true", "Pico-Next-Seq", "1")
		send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Closed", "true", "Pico-Next-Seq", "1")
		send(t, "POST", u, hdr("Content-Type", "text/plain"), []byte("more")).wantError(t, 409, "closed")
		wantBodies(t, "read", readAll(t, u), 0, "only")
	})
}

// --- append ----------------------------------------------------------------

func testAppendFormats(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	before := time.Now().UnixMilli()
	single := mustAppend(t, u, "text/plain", []byte("one")).wantHeaders(t, "Cache-Control", "no-store")
	wantRange(t, "single", single, 0, 1)
	jsonRes := mustAppend(t, u, picowire.BatchJSONContentType, jsonBatch(
		batchItem{Body: "two", Headers: map[string]string{"k": "v", "trace": "abc"}},
		batchItem{BodyB64: base64.StdEncoding.EncodeToString([]byte{0xff, 0x00, 'b'})},
	))
	wantRange(t, "json batch", jsonRes, 1, 3)
	binRes := mustAppend(t, u, picowire.BatchContentType, picowire.EncodeBatch([]domain.Record{
		{Body: []byte("four"), Headers: []domain.Header{{Key: "h1", Value: "x"}, {Key: "h2", Value: "y"}}},
		{Body: []byte("five")},
	}))
	wantRange(t, "binary batch", binRes, 3, 5)
	after := time.Now().UnixMilli()

	stamps := []int64{appendTimestamp(t, single), appendTimestamp(t, jsonRes), appendTimestamp(t, jsonRes),
		appendTimestamp(t, binRes), appendTimestamp(t, binRes)}
	for _, ts := range stamps {
		if ts < before-2000 || ts > after+2000 {
			t.Errorf("Pico-Timestamp %d is not the server's clock (test saw %d..%d)", ts, before, after)
		}
	}
	want := []struct {
		body    string
		headers map[string]string
	}{
		{"one", nil}, {"two", map[string]string{"k": "v", "trace": "abc"}}, {"\xff\x00b", nil},
		{"four", map[string]string{"h1": "x", "h2": "y"}}, {"five", nil},
	}

	page := send(t, "GET", u+"?seq=0", nil, nil).wantStatus(t, 200).
		wantHeaders(t, "Content-Type", "application/json", "Pico-Next-Seq", "5", "Pico-Up-To-Date", "true", "Pico-Cursor", "5")
	recs := page.records(t)
	if len(recs) != len(want) {
		t.Fatalf("json read: %d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if r.Seq != uint64(i) || string(r.bytes(t)) != want[i].body || !sameHeaders(r.Headers, want[i].headers) || r.Timestamp != stamps[i] {
			t.Errorf("json record %d = seq %d body %q headers %v ts %d; want seq %d body %q headers %v ts %d",
				i, r.Seq, r.bytes(t), r.Headers, r.Timestamp, i, want[i].body, want[i].headers, stamps[i])
		}
	}
	if recs[2].BodyB64 == nil || recs[2].Body != nil {
		t.Errorf("a non-UTF-8 body must come back as body_b64 only: %+v", recs[2])
	}
	if recs[0].Body == nil || recs[0].BodyB64 != nil {
		t.Errorf("a UTF-8 body must come back as body: %+v", recs[0])
	}

	bin := send(t, "GET", u+"?seq=0&format=binary", nil, nil).wantStatus(t, 200).
		wantHeaders(t, "Content-Type", picowire.BatchContentType, "Pico-Next-Seq", "5")
	decoded, err := picowire.DecodeBatchResponse(bin.body, picowire.BatchLimits{MaxRecords: 100, MaxHeaders: 10})
	if err != nil {
		t.Fatalf("binary read does not decode: %v", err)
	}
	if len(decoded) != len(want) {
		t.Fatalf("binary read: %d records, want %d", len(decoded), len(want))
	}
	for i, r := range decoded {
		if r.Seq != uint64(i) || string(r.Body) != want[i].body || !sameHeaders(headerMap(r.Headers), want[i].headers) || r.TimestampMs != stamps[i] {
			t.Errorf("binary record %d = %+v; want body %q headers %v ts %d", i, r, want[i].body, want[i].headers, stamps[i])
		}
	}

	send(t, "GET", u+"?seq=0&format=raw", nil, nil).wantStatus(t, 200).
		wantHeaders(t, "Content-Type", "text/plain", "Pico-Next-Seq", "5").wantBody(t, "onetwo\xff\x00bfourfive")
}

func appendTimestamp(t *testing.T, r reply) int64 {
	t.Helper()
	ts, err := strconv.ParseInt(r.header.Get("Pico-Timestamp"), 10, 64)
	if err != nil {
		t.Fatalf("%s: Pico-Timestamp %q: %v", r.what, r.header.Get("Pico-Timestamp"), err)
	}
	return ts
}

func headerMap(hs []domain.Header) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, h := range hs {
		m[h.Key] = h.Value
	}
	return m
}

func sameHeaders(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func testAppendErrors(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	send(t, "POST", u, hdr("Content-Type", "text/plain"), nil).wantError(t, 400, "bad_request")
	send(t, "POST", u, hdr("Content-Type", "text/plain"), []byte{}).wantError(t, 400, "bad_request")
	e := send(t, "POST", base+"/missing", hdr("Content-Type", "text/plain"), []byte("x")).wantError(t, 404, "not_found")
	if e.NextSeq != nil {
		t.Errorf("a missing stream has no next_seq, got %d", *e.NextSeq)
	}
	send(t, "HEAD", u, nil, nil).wantHeaders(t, "Pico-Next-Seq", "0")
}

func testMalformedBatches(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "application/octet-stream")
	for _, tc := range []struct {
		name, contentType string
		body              []byte
	}{
		{"binary count past the end", picowire.BatchContentType, []byte{1, 0xff, 0xff, 0xff, 0xff}},
		{"binary unknown version", picowire.BatchContentType, []byte{2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 'x'}},
		{"binary empty batch", picowire.BatchContentType, []byte{1, 0, 0, 0, 0}},
		{"binary truncated body", picowire.BatchContentType, []byte{1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9, 'x'}},
		{"binary trailing bytes", picowire.BatchContentType, append(picowire.EncodeBatch([]domain.Record{{Body: []byte("x")}}), 0)},
		{"json garbage", picowire.BatchJSONContentType, []byte(`{"records":[`)},
		{"json not an object", picowire.BatchJSONContentType, []byte(`[1,2]`)},
		{"json empty records", picowire.BatchJSONContentType, []byte(`{"records":[]}`)},
		{"json bad base64", picowire.BatchJSONContentType, []byte(`{"records":[{"body_b64":"!!"}]}`)},
		{"json header not a string", picowire.BatchJSONContentType, []byte(`{"records":[{"body":"x","headers":{"k":1}}]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send(t, "POST", u, hdr("Content-Type", tc.contentType), tc.body).wantError(t, 400, "bad_request")
		})
	}
	// Nothing was written, and the node still serves.
	wantRange(t, "append after bad input", mustAppend(t, u, "application/octet-stream", []byte("ok")), 0, 1)
	wantBodies(t, "read after bad input", readAll(t, u), 0, "ok")
}

func testTooLarge(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "application/octet-stream")
	big := make([]byte, maxBodyForTests+1)
	send(t, "POST", u, hdr("Content-Type", "application/octet-stream"), big).wantError(t, 413, "too_large")
	send(t, "PUT", base+"/created-too-large", nil, big).wantError(t, 413, "too_large")
	chunked := sendChunked(t, "POST", u, hdr("Content-Type", "application/octet-stream"), big)
	chunked.wantError(t, 413, "too_large")
	// Exactly the limit is allowed.
	wantRange(t, "append at the limit", mustAppend(t, u, "application/octet-stream", big[:maxBodyForTests]), 0, 1)
	send(t, "HEAD", base+"/created-too-large", nil, nil).wantStatus(t, 404)
}

// sendChunked sends body without a Content-Length, so the server finds its
// size only by reading it.
func sendChunked(t *testing.T, method, u string, h http.Header, body []byte) reply {
	t.Helper()
	req, err := http.NewRequest(method, u, io.MultiReader(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := plainClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s (chunked): %v", method, u, err)
	}
	return readReply(t, method+" "+u+" (chunked)", resp)
}

func testIdempotentProducer(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	stamp := func(id, epoch, seq string) []string {
		return []string{"Pico-Producer-Id", id, "Pico-Producer-Epoch", epoch, "Pico-Producer-Seq", seq}
	}
	post := func(body string, h ...string) reply {
		return send(t, "POST", u, hdr(append([]string{"Content-Type", "text/plain"}, h...)...), []byte(body))
	}

	for _, partial := range [][]string{
		{"Pico-Producer-Id", "p"},
		{"Pico-Producer-Id", "p", "Pico-Producer-Epoch", "1"},
		{"Pico-Producer-Epoch", "1", "Pico-Producer-Seq", "0"},
		stamp("p", "one", "0"),
	} {
		post("x", partial...).wantError(t, 400, "bad_request")
	}

	wantRange(t, "first", post("a0", stamp("p", "1", "0")...).wantStatus(t, 200).
		wantHeaders(t, "Pico-Producer-Id", "p", "Pico-Producer-Epoch", "1", "Pico-Producer-Seq", "0"), 0, 1)
	post("a0", stamp("p", "1", "0")...).wantStatus(t, 200).
		wantHeaders(t, "Pico-Start-Seq", "", "Pico-Next-Seq", "1", "Pico-Producer-Seq", "0")

	gap := post("a2", stamp("p", "1", "2")...)
	gap.wantError(t, 409, "sequence_gap")
	gap.wantHeaders(t, "Pico-Expected-Seq", "1", "Pico-Received-Seq", "2")

	wantRange(t, "next seq", post("a1", stamp("p", "1", "1")...).wantStatus(t, 200).wantHeaders(t, "Pico-Producer-Seq", "1"), 1, 2)
	wantRange(t, "new epoch", post("b0", stamp("p", "2", "0")...).wantStatus(t, 200), 2, 3)

	fenced := post("stale", stamp("p", "1", "2")...)
	fenced.wantError(t, 403, "fenced")
	fenced.wantHeaders(t, "Pico-Producer-Epoch", "2")

	newEpochGap := post("c5", stamp("p", "3", "5")...)
	newEpochGap.wantError(t, 409, "sequence_gap")
	newEpochGap.wantHeaders(t, "Pico-Expected-Seq", "0", "Pico-Received-Seq", "5")

	wantBodies(t, "read", readAll(t, u), 0, "a0", "a1", "b0")
}

func testMatchSeq(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	mustAppend(t, u, "text/plain", []byte("x"))
	wantRange(t, "match", mustAppend(t, u, "text/plain", []byte("y"), "Pico-Match-Seq", "1"), 1, 2)
	failed := send(t, "POST", u, hdr("Content-Type", "text/plain", "Pico-Match-Seq", "1"), []byte("z"))
	failed.wantError(t, 412, "match_failed").wantNextSeq(t, "match failed", 2)
	send(t, "POST", u, hdr("Content-Type", "text/plain", "Pico-Match-Seq", "x"), []byte("z")).wantError(t, 400, "bad_request")
	wantBodies(t, "read", readAll(t, u), 0, "x", "y")
}

func testClose(t *testing.T, base string) {
	t.Run("with a last record", func(t *testing.T) {
		u := base + "/with-body"
		mustCreate(t, u, "text/plain")
		mustAppend(t, u, "text/plain", []byte("a"))
		wantRange(t, "close", mustAppend(t, u, "text/plain", []byte("last"), "Pico-Closed", "true").
			wantHeaders(t, "Pico-Closed", "true"), 1, 2)
		send(t, "POST", u, hdr("Pico-Closed", "true"), nil).wantStatus(t, 200).
			wantHeaders(t, "Pico-Closed", "true", "Pico-Next-Seq", "2", "Pico-Start-Seq", "")
		refused := send(t, "POST", u, hdr("Content-Type", "text/plain"), []byte("more"))
		refused.wantError(t, 409, "closed").wantNextSeq(t, "closed", 2)
		refused.wantHeaders(t, "Pico-Closed", "true")
		send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Closed", "true", "Pico-Next-Seq", "2")
		tail := send(t, "GET", u+"?seq=0", nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Closed", "true", "Pico-Up-To-Date", "true")
		wantBodies(t, "read", tail.records(t), 0, "a", "last")
		// Short of the tail a page does not say closed: more records follow.
		send(t, "GET", u+"?seq=0&count=1", nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Closed", "", "Pico-Up-To-Date", "")
	})
	t.Run("without a body", func(t *testing.T) {
		u := base + "/bare"
		mustCreate(t, u, "text/plain")
		mustAppend(t, u, "text/plain", []byte("x"))
		send(t, "POST", u, hdr("Pico-Closed", "true"), nil).wantStatus(t, 200).
			wantHeaders(t, "Pico-Closed", "true", "Pico-Next-Seq", "1", "Pico-Start-Seq", "")
		send(t, "POST", u, hdr("Content-Type", "text/plain"), []byte("y")).wantError(t, 409, "closed")
		// Creating it again must say closed too: an open create is another config.
		send(t, "PUT", u, hdr("Content-Type", "text/plain", "Pico-Closed", "true"), nil).wantStatus(t, 200).
			wantHeaders(t, "Pico-Closed", "true", "Pico-Next-Seq", "1")
	})
}

func testTrim(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	mustAppend(t, u, picowire.BatchJSONContentType, textBatch("r0", "r1", "r2", "r3", "r4"))
	trim := func(seq string) reply { return send(t, "POST", u, hdr("Pico-Trim-Seq", seq), nil) }

	trim("2").wantStatus(t, 200).wantHeaders(t, "Pico-Start-Seq", "2", "Cache-Control", "no-store")
	send(t, "HEAD", u, nil, nil).wantHeaders(t, "Pico-Start-Seq", "2", "Pico-Next-Seq", "5")
	wantBodies(t, "read from 0 after trim", readAll(t, u), 2, "r2", "r3", "r4")
	trim("1").wantStatus(t, 200).wantHeaders(t, "Pico-Start-Seq", "2")  // never moves back
	trim("99").wantStatus(t, 200).wantHeaders(t, "Pico-Start-Seq", "5") // clamped to the tail
	send(t, "HEAD", u, nil, nil).wantHeaders(t, "Pico-Start-Seq", "5", "Pico-Next-Seq", "5")

	send(t, "POST", u, hdr("Pico-Trim-Seq", "5", "Content-Type", "text/plain"), []byte("body")).wantError(t, 400, "bad_request")
	trim("two").wantError(t, 400, "bad_request")
	send(t, "POST", base+"/missing", hdr("Pico-Trim-Seq", "1"), nil).wantError(t, 404, "not_found")
	wantRange(t, "append after trim", mustAppend(t, u, "text/plain", []byte("r5")), 5, 6)
	wantBodies(t, "read after trim", readAll(t, u), 5, "r5")
}

// --- read ------------------------------------------------------------------

func testReadParameters(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	mustAppend(t, u, picowire.BatchJSONContentType, textBatch("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"))

	for _, tc := range []struct {
		query    string
		first    uint64
		bodies   []string
		next     string
		upToDate string
	}{
		{"", 0, []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"}, "10", "true"},
		{"seq=3&count=2", 3, []string{"r3", "r4"}, "5", ""},
		{"seq=-1&count=1", 0, []string{"r0"}, "1", ""},
		{"seq=-9999&count=2", 0, []string{"r0", "r1"}, "2", ""},
		{"seq=8", 8, []string{"r8", "r9"}, "10", "true"},
		{"seq=10", 10, nil, "10", "true"},
		{"seq=now", 10, nil, "10", "true"},
		{"seq=0&bytes=1", 0, []string{"r0"}, "1", ""},
		{"seq=0&bytes=4", 0, []string{"r0", "r1"}, "2", ""},
		{"seq=0&count=3&format=json", 0, []string{"r0", "r1", "r2"}, "3", ""},
	} {
		t.Run("query "+orDefault(tc.query, "(none)"), func(t *testing.T) {
			r := send(t, "GET", u+"?"+tc.query, nil, nil).wantStatus(t, 200).
				wantHeaders(t, "Pico-Next-Seq", tc.next, "Pico-Cursor", tc.next, "Pico-Up-To-Date", tc.upToDate)
			if r.header.Get("ETag") == "" {
				t.Errorf("%s: no ETag", r.what)
			}
			wantBodies(t, r.what, r.records(t), tc.first, tc.bodies...)
		})
	}
	send(t, "GET", u+"?seq=2&count=3&format=raw", nil, nil).wantStatus(t, 200).
		wantHeaders(t, "Content-Type", "text/plain", "Pico-Next-Seq", "5").wantBody(t, "r2r3r4")
	for _, bad := range []string{"seq=11", "seq=abc", "format=xml", "live=forever", "count=many", "bytes=-1"} {
		send(t, "GET", u+"?"+bad, nil, nil).wantError(t, 400, "bad_request")
	}
	send(t, "GET", base+"/missing", nil, nil).wantError(t, 404, "not_found")
	send(t, "GET", base+"/missing?live=long-poll", nil, nil).wantError(t, 404, "not_found")
}

func testETag(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	mustAppend(t, u, picowire.BatchJSONContentType, textBatch("a", "b"))
	first := send(t, "GET", u+"?seq=0", nil, nil).wantStatus(t, 200)
	tag := first.header.Get("ETag")
	if tag == "" {
		t.Fatalf("%s: no ETag", first.what)
	}
	send(t, "GET", u+"?seq=0", hdr("If-None-Match", tag), nil).wantStatus(t, 304).wantBody(t, "")
	send(t, "GET", u+"?seq=0&format=raw", hdr("If-None-Match", tag), nil).wantStatus(t, 200).wantBody(t, "ab")
	mustAppend(t, u, "text/plain", []byte("c"))
	changed := send(t, "GET", u+"?seq=0", hdr("If-None-Match", tag), nil).wantStatus(t, 200)
	if changed.header.Get("ETag") == tag {
		t.Errorf("the page grew but kept ETag %s", tag)
	}
	wantBodies(t, "read after append", changed.records(t), 0, "a", "b", "c")

	// Deleted and made again, the name holds other records at the same
	// offsets: a page of the old stream must not revalidate.
	send(t, "DELETE", u, nil, nil).wantStatus(t, 204)
	mustCreate(t, u, "text/plain")
	mustAppend(t, u, picowire.BatchJSONContentType, textBatch("x", "y"))
	again := send(t, "GET", u+"?seq=0", hdr("If-None-Match", tag), nil).wantStatus(t, 200)
	wantBodies(t, "read after delete and create", again.records(t), 0, "x", "y")
}

func testLongPoll(t *testing.T, base string) {
	t.Run("wakes on append", func(t *testing.T) {
		u := base + "/wake"
		mustCreate(t, u, "text/plain")
		start := time.Now()
		poll := sendAsync("GET", u+"?seq=0&live=long-poll", nil, nil)
		time.Sleep(300 * time.Millisecond)
		mustAppend(t, u, "text/plain", []byte("woke"))
		got := <-poll
		if got.err != nil {
			t.Fatal(got.err)
		}
		r := got.reply
		// A timed-out poll answers 204: a 200 with the record is the wake-up.
		r.wantStatus(t, 200).wantHeaders(t, "Pico-Next-Seq", "1", "Pico-Up-To-Date", "true")
		wantBodies(t, "woken poll", r.records(t), 0, "woke")
		if elapsed := time.Since(start); elapsed > 900*time.Millisecond {
			t.Errorf("woken poll took %v; the append came after 300ms", elapsed)
		}
	})
	t.Run("from now sees only new records", func(t *testing.T) {
		u := base + "/now"
		mustCreate(t, u, "text/plain")
		mustAppend(t, u, picowire.BatchJSONContentType, textBatch("old0", "old1"))
		poll := sendAsync("GET", u+"?seq=now&live=long-poll", nil, nil)
		time.Sleep(300 * time.Millisecond)
		mustAppend(t, u, "text/plain", []byte("new"))
		got := <-poll
		if got.err != nil {
			t.Fatal(got.err)
		}
		wantBodies(t, "poll from now", got.wantStatus(t, 200).records(t), 2, "new")
	})
	t.Run("times out with 204", func(t *testing.T) {
		u := base + "/idle"
		mustCreate(t, u, "text/plain")
		mustAppend(t, u, "text/plain", []byte("x"))
		start := time.Now()
		send(t, "GET", u+"?seq=1&live=long-poll", nil, nil).wantStatus(t, 204).
			wantHeaders(t, "Pico-Next-Seq", "1", "Pico-Up-To-Date", "true", "Pico-Cursor", "1", "Pico-Closed", "").wantBody(t, "")
		if elapsed := time.Since(start); elapsed < 900*time.Millisecond || elapsed > 5*time.Second {
			t.Errorf("idle poll answered after %v; --long-poll-timeout-sec is 1", elapsed)
		}
	})
	t.Run("answers at once when records exist", func(t *testing.T) {
		u := base + "/ready"
		mustCreate(t, u, "text/plain")
		mustAppend(t, u, "text/plain", []byte("x"))
		start := time.Now()
		r := send(t, "GET", u+"?seq=0&live=long-poll&format=raw", nil, nil).wantStatus(t, 200).wantBody(t, "x")
		r.wantHeaders(t, "Content-Type", "text/plain")
		if elapsed := time.Since(start); elapsed > 700*time.Millisecond {
			t.Errorf("poll with records waiting took %v", elapsed)
		}
	})
	t.Run("wakes on close", func(t *testing.T) {
		u := base + "/close-wake"
		mustCreate(t, u, "text/plain")
		mustAppend(t, u, "text/plain", []byte("x"))
		start := time.Now()
		poll := sendAsync("GET", u+"?seq=1&live=long-poll", nil, nil)
		time.Sleep(300 * time.Millisecond)
		send(t, "POST", u, hdr("Pico-Closed", "true"), nil).wantStatus(t, 200)
		got := <-poll
		if got.err != nil {
			t.Fatal(got.err)
		}
		got.wantStatus(t, 204).wantHeaders(t, "Pico-Closed", "true", "Pico-Next-Seq", "1", "Pico-Up-To-Date", "true")
		if elapsed := time.Since(start); elapsed > 900*time.Millisecond {
			t.Errorf("poll took %v; the close came after 300ms", elapsed)
		}
	})
	t.Run("closed stream ends the wait", func(t *testing.T) {
		u := base + "/closed"
		mustCreate(t, u, "text/plain")
		mustAppend(t, u, "text/plain", []byte("x"), "Pico-Closed", "true")
		start := time.Now()
		send(t, "GET", u+"?seq=1&live=long-poll", nil, nil).wantStatus(t, 204).
			wantHeaders(t, "Pico-Closed", "true", "Pico-Next-Seq", "1", "Pico-Up-To-Date", "true")
		if elapsed := time.Since(start); elapsed > 700*time.Millisecond {
			t.Errorf("poll on a closed stream waited %v", elapsed)
		}
	})
}

// --- server-sent events ----------------------------------------------------

// wantDataEvent checks a data event in the original's form: the records
// from first on as a JSON array, the id the offset after them.
func wantDataEvent(t *testing.T, ev sseEvent, first uint64, bodies ...string) {
	t.Helper()
	next := first + uint64(len(bodies))
	if ev.event != "data" || ev.id != fmt.Sprint(next) {
		t.Fatalf("event %+v, want a data event with id %d", ev, next)
	}
	var page []jsonRecord
	if err := json.Unmarshal([]byte(ev.data), &page); err != nil {
		t.Fatalf("data event %q is not a JSON array of records: %v", ev.data, err)
	}
	wantBodies(t, "data event", page, first, bodies...)
	for _, r := range page {
		if r.Timestamp <= 0 {
			t.Errorf("data event record %+v has no timestamp", r)
		}
	}
}

func wantControlEvent(t *testing.T, ev sseEvent, want map[string]any) {
	t.Helper()
	var got map[string]any
	if ev.event != "control" || json.Unmarshal([]byte(ev.data), &got) != nil {
		t.Fatalf("event %+v, want a control event", ev)
	}
	if ev.id != fmt.Sprint(want["next_seq"]) {
		t.Errorf("control event id %q, want the next seq %v", ev.id, want["next_seq"])
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("control event %s, want %s", gotJSON, wantJSON)
	}
}

func openEvents(t *testing.T, u string, h http.Header) (<-chan sseEvent, <-chan error) {
	t.Helper()
	resp := open(t, "GET", u, h, nil)
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: status %d content type %q, want 200 text/event-stream", u, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET %s: no nosniff", u)
	}
	return readEvents(resp.Body)
}

// wantCleanEnd waits for the event stream to end without an error.
func wantCleanEnd(t *testing.T, events <-chan sseEvent, done <-chan error, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-events:
			if ok {
				t.Fatalf("unexpected event %+v before the end", ev)
			}
			if err := <-done; err != nil {
				t.Fatalf("event stream ended with %v, want a clean end", err)
			}
			return
		case <-deadline:
			t.Fatalf("event stream still open after %v", within)
		}
	}
}

func testSSE(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	mustAppend(t, u, picowire.BatchJSONContentType, textBatch("a", "b"))
	events, done := openEvents(t, u+"?seq=0&live=sse", nil)
	wantDataEvent(t, nextEvent(t, events, 2*time.Second), 0, "a", "b")
	wantControlEvent(t, nextEvent(t, events, 2*time.Second), map[string]any{"next_seq": 2, "up_to_date": true})

	mustAppend(t, u, "text/plain", []byte("c"))
	wantDataEvent(t, nextEvent(t, events, 2*time.Second), 2, "c")
	wantControlEvent(t, nextEvent(t, events, 2*time.Second), map[string]any{"next_seq": 3, "up_to_date": true})

	send(t, "POST", u, hdr("Pico-Closed", "true"), nil).wantStatus(t, 200)
	wantControlEvent(t, nextEvent(t, events, 2*time.Second), map[string]any{"next_seq": 3, "up_to_date": true, "closed": true})
	wantCleanEnd(t, events, done, 2*time.Second)

	send(t, "GET", base+"/missing?live=sse", nil, nil).wantError(t, 404, "not_found")
}

func testSSEResume(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	mustAppend(t, u, picowire.BatchJSONContentType, textBatch("a", "b", "c"), "Pico-Closed", "true")
	events, done := openEvents(t, u+"?live=sse", hdr("Last-Event-ID", "1"))
	wantDataEvent(t, nextEvent(t, events, 2*time.Second), 1, "b", "c")
	wantControlEvent(t, nextEvent(t, events, 2*time.Second), map[string]any{"next_seq": 3, "up_to_date": true, "closed": true})
	wantCleanEnd(t, events, done, 2*time.Second)
}

func testSSEMaxDuration(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	start := time.Now()
	events, done := openEvents(t, u+"?seq=0&live=sse", nil)
	wantControlEvent(t, nextEvent(t, events, 2*time.Second), map[string]any{"next_seq": 0, "up_to_date": true})
	wantCleanEnd(t, events, done, 8*time.Second)
	if elapsed := time.Since(start); elapsed < 2500*time.Millisecond {
		t.Errorf("event stream ended after %v; --sse-max-duration-sec is 3", elapsed)
	}
}

// --- head, delete, list ----------------------------------------------------

func testHead(t *testing.T, base string) {
	u := base + "/s"
	send(t, "PUT", u, hdr("Content-Type", "application/json", "Pico-TTL", "600"), nil).wantStatus(t, 201)
	mustAppend(t, u, picowire.BatchJSONContentType, textBatch(`{"a":1}`, `{"a":2}`, `{"a":3}`))
	send(t, "POST", u, hdr("Pico-Trim-Seq", "1"), nil).wantStatus(t, 200)
	send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantBody(t, "").
		wantHeaders(t, "Content-Type", "application/json", "Pico-Next-Seq", "3", "Pico-Start-Seq", "1",
			"Pico-TTL", "600", "Pico-Expires-At", "", "Pico-Closed", "", "Cache-Control", "no-store")
	send(t, "HEAD", base+"/missing", nil, nil).wantStatus(t, 404).wantBody(t, "").wantHeaders(t, "X-Content-Type-Options", "nosniff")
}

func testDelete(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	mustAppend(t, u, "text/plain", []byte("old"))
	send(t, "DELETE", u, nil, nil).wantStatus(t, 204).wantBody(t, "")
	send(t, "GET", u, nil, nil).wantError(t, 404, "not_found")
	send(t, "HEAD", u, nil, nil).wantStatus(t, 404)
	send(t, "POST", u, hdr("Content-Type", "text/plain"), []byte("x")).wantError(t, 404, "not_found")
	send(t, "DELETE", u, nil, nil).wantError(t, 404, "not_found")
	// The name is free at once, for another configuration too.
	send(t, "PUT", u, hdr("Content-Type", "application/json"), nil).wantStatus(t, 201).
		wantHeaders(t, "Pico-Next-Seq", "0", "Content-Type", "application/json")
	wantBodies(t, "read the new stream", readAll(t, u), 0)
	wantRange(t, "append to the new stream", mustAppend(t, u, "application/json", []byte(`{}`)), 0, 1)
}

// listEntry is one stream of GET /.
type listEntry struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	StartSeq    uint64 `json:"start_seq"`
	NextSeq     uint64 `json:"next_seq"`
	Closed      bool   `json:"closed"`
}

type listPage struct {
	Streams []listEntry `json:"streams"`
	HasMore *bool       `json:"has_more"`
}

func testList(t *testing.T, base string) {
	root, prefix := rootURL(base), "/list/"
	mustCreate(t, base+"/a", "text/plain")
	mustAppend(t, base+"/a", picowire.BatchJSONContentType, textBatch("1", "2", "3"))
	send(t, "POST", base+"/a", hdr("Pico-Trim-Seq", "1"), nil).wantStatus(t, 200)
	send(t, "PUT", base+"/b", hdr("Pico-Closed", "true"), []byte("x")).wantStatus(t, 201)
	mustCreate(t, base+"/c", "application/json")
	mustCreate(t, base+"x/not-under-prefix", "text/plain")

	a := listEntry{"/list/a", "text/plain", 1, 3, false}
	b := listEntry{"/list/b", "application/octet-stream", 0, 1, true}
	c := listEntry{"/list/c", "application/json", 0, 0, false}
	for _, tc := range []struct {
		query   string
		want    []listEntry
		hasMore bool
	}{
		{"prefix=" + prefix, []listEntry{a, b, c}, false},
		{"prefix=" + prefix + "&limit=2", []listEntry{a, b}, true},
		{"prefix=" + prefix + "&start_after=/list/b", []listEntry{c}, false},
		{"prefix=" + prefix + "&start_after=/list/a&limit=1", []listEntry{b}, true},
		{"prefix=/list/zzz", []listEntry{}, false},
	} {
		r := send(t, "GET", root+"/?"+tc.query, nil, nil).wantStatus(t, 200).
			wantHeaders(t, "Content-Type", "application/json", "Cache-Control", "no-store")
		var page listPage
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatalf("%s: %s: %v", r.what, clipBody(r.body), err)
		}
		if page.HasMore == nil || *page.HasMore != tc.hasMore || fmt.Sprint(page.Streams) != fmt.Sprint(tc.want) {
			t.Errorf("%s: streams %+v has_more %v; want %+v has_more %v", r.what, page.Streams, ptrBool(page.HasMore), tc.want, tc.hasMore)
		}
		if page.Streams == nil {
			t.Errorf("%s: streams must be an array, even empty: %s", r.what, clipBody(r.body))
		}
	}
	send(t, "GET", root+"/?limit=lots", nil, nil).wantError(t, 400, "bad_request")
}

func ptrBool(p *bool) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}

// --- CORS, methods, common headers -----------------------------------------

func testCORSAndMethods(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	pre := send(t, "OPTIONS", u, hdr("Origin", "https://example.com", "Access-Control-Request-Method", "POST"), nil).
		wantStatus(t, 204).wantHeaders(t, "Access-Control-Allow-Origin", "*")
	for _, m := range []string{"GET", "PUT", "POST", "DELETE", "HEAD"} {
		if !strings.Contains(pre.header.Get("Access-Control-Allow-Methods"), m) {
			t.Errorf("preflight allows %q, missing %s", pre.header.Get("Access-Control-Allow-Methods"), m)
		}
	}
	for _, h := range []string{"Content-Type", "Pico-Producer-Id", "Pico-Match-Seq", "Last-Event-ID"} {
		if !strings.Contains(strings.ToLower(pre.header.Get("Access-Control-Allow-Headers")), strings.ToLower(h)) {
			t.Errorf("preflight allows headers %q, missing %s", pre.header.Get("Access-Control-Allow-Headers"), h)
		}
	}
	if !strings.Contains(pre.header.Get("Access-Control-Expose-Headers"), "Pico-Next-Seq") {
		t.Errorf("Pico-Next-Seq is not exposed to scripts: %q", pre.header.Get("Access-Control-Expose-Headers"))
	}
	for _, m := range []string{"PATCH", "TRACE"} {
		r := send(t, m, u, nil, nil).wantStatus(t, 405)
		r.wantHeaders(t, "X-Content-Type-Options", "nosniff")
	}

	// Every answer, success or failure, carries nosniff.
	for _, tc := range []struct {
		method, path string
		h            http.Header
		body         string
	}{
		{"PUT", "/s", hdr("Content-Type", "text/plain"), ""},
		{"PUT", "/s", hdr("Content-Type", "image/png"), ""},
		{"POST", "/s", hdr("Content-Type", "text/plain"), "x"},
		{"POST", "/s", nil, ""},
		{"GET", "/s", nil, ""},
		{"GET", "/s?format=raw", nil, ""},
		{"GET", "/missing", nil, ""},
		{"HEAD", "/s", nil, ""},
		{"OPTIONS", "/s", nil, ""},
		{"DELETE", "/gone", nil, ""},
	} {
		var body []byte
		if tc.body != "" {
			body = []byte(tc.body)
		}
		send(t, tc.method, base+tc.path, tc.h, body).wantHeaders(t, "X-Content-Type-Options", "nosniff")
	}
	send(t, "GET", rootURL(base)+"/", nil, nil).wantStatus(t, 200).wantHeaders(t, "X-Content-Type-Options", "nosniff")
}

func testTimestamps(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "text/plain")
	var stamps []int64
	for i := range 6 {
		r := mustAppend(t, u, "text/plain", []byte(fmt.Sprint(i)))
		stamps = append(stamps, appendTimestamp(t, r))
		if i%2 == 1 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	recs := readAll(t, u)
	wantBodies(t, "read", recs, 0, "0", "1", "2", "3", "4", "5")
	for i, r := range recs {
		if r.Timestamp != stamps[i] {
			t.Errorf("record %d timestamp %d, but its append said %d", i, r.Timestamp, stamps[i])
		}
		if i > 0 && r.Timestamp < recs[i-1].Timestamp {
			t.Errorf("record %d timestamp %d is before record %d's %d", i, r.Timestamp, i-1, recs[i-1].Timestamp)
		}
	}
	if stamps[5] <= stamps[0] {
		t.Errorf("timestamps did not advance over 15ms of appends: %v", stamps)
	}
}

// --- expiry and retention --------------------------------------------------

func testExpiry(t *testing.T, base string) {
	u := base + "/soon"
	expiresAt := time.Now().Add(1500 * time.Millisecond).UnixMilli()
	if expiresAt%1000 == 0 {
		expiresAt++ // HEAD writes milliseconds only when there are some
	}
	send(t, "PUT", u, hdr("Content-Type", "text/plain", "Pico-Expires-At", strconv.FormatInt(expiresAt, 10)), []byte("x")).wantStatus(t, 201)
	send(t, "HEAD", u, nil, nil).wantStatus(t, 200).
		wantHeaders(t, "Pico-Expires-At", time.UnixMilli(expiresAt).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	time.Sleep(time.Until(time.UnixMilli(expiresAt)) + 100*time.Millisecond)
	// Once expired the stream is gone at once, whether swept yet or not.
	send(t, "GET", u, nil, nil).wantError(t, 404, "not_found")
	send(t, "HEAD", u, nil, nil).wantStatus(t, 404)
	send(t, "POST", u, hdr("Content-Type", "text/plain"), []byte("y")).wantError(t, 404, "not_found")
	var page listPage
	if err := json.Unmarshal(send(t, "GET", rootURL(base)+"/?prefix=/expiry/", nil, nil).wantStatus(t, 200).body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Streams) != 0 {
		t.Errorf("an expired stream is still listed: %+v", page.Streams)
	}
	send(t, "PUT", u, hdr("Content-Type", "application/json"), nil).wantStatus(t, 201).wantHeaders(t, "Pico-Next-Seq", "0")
}

// testRecordTTL: records older than Pico-TTL seconds are trimmed by the
// node's retention sweep (every 2s), younger ones stay.
func testRecordTTL(t *testing.T, base string) {
	u := base + "/s"
	send(t, "PUT", u, hdr("Content-Type", "text/plain", "Pico-Retention", "3"), nil).wantStatus(t, 201)
	mustAppend(t, u, "text/plain", []byte("old"))
	time.Sleep(3200 * time.Millisecond)
	young := mustAppend(t, u, "text/plain", []byte("young"))
	youngAt := time.UnixMilli(appendTimestamp(t, young))
	for deadline := time.Now().Add(4 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		start := send(t, "HEAD", u, nil, nil).wantStatus(t, 200).header.Get("Pico-Start-Seq")
		if start == "1" {
			break
		}
		if start != "0" || time.Now().After(deadline) {
			t.Fatalf("Pico-Start-Seq %s %v after the young append; want the old record (only) trimmed", start, time.Since(youngAt))
		}
	}
	if time.Since(youngAt) < 3*time.Second {
		wantBodies(t, "read after retention", readAll(t, u), 1, "young")
	}
}

// testIdleTTL: Pico-TTL is the original's sliding lifetime of the stream.
// Reads and appends renew it, HEAD does not; once idle for longer the
// stream is gone, and its name makes a new one.
func testIdleTTL(t *testing.T, base string) {
	u := base + "/s"
	send(t, "PUT", u, hdr("Content-Type", "text/plain", "Pico-TTL", "2"), nil).wantStatus(t, 201)
	send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-TTL", "2", "Pico-Retention", "")
	for i := range 8 { // 4 s of use, twice the TTL
		time.Sleep(500 * time.Millisecond)
		if i%2 == 0 {
			mustAppend(t, u, "text/plain", []byte("x"))
		} else {
			send(t, "GET", u+"?seq=0", nil, nil).wantStatus(t, 200)
		}
	}
	send(t, "HEAD", u, nil, nil).wantStatus(t, 200)
	time.Sleep(2500 * time.Millisecond)
	send(t, "HEAD", u, nil, nil).wantStatus(t, 404)
	send(t, "PUT", u, hdr("Content-Type", "text/plain"), nil).wantStatus(t, 201).wantHeaders(t, "Pico-Next-Seq", "0")
}

// testH2C speaks HTTP/2 without TLS (prior knowledge) to the same port.
func testH2C(t *testing.T, base string) {
	protocols := &http.Protocols{}
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: protocols}, Timeout: 10 * time.Second}
	for _, req := range []struct{ method, body string }{{"PUT", ""}, {"POST", "over h2"}} {
		r, _ := http.NewRequest(req.method, base+"/s", strings.NewReader(req.body))
		r.Header.Set("Content-Type", "text/plain")
		resp, err := client.Do(r)
		if err != nil {
			t.Fatalf("%s over h2c: %v", req.method, err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode >= 300 {
			t.Fatalf("%s over h2c: %s %d", req.method, resp.Proto, resp.StatusCode)
		}
	}
	send(t, "GET", base+"/s?format=raw", nil, nil).wantStatus(t, 200).wantBody(t, "over h2")
}
