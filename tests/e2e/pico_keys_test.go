package e2e

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

// keyedJSONBatch holds every way a JSON batch carries keys and headers: a
// text key with text and byte headers, a byte key, the empty key and none.
const keyedJSONBatch = `{"records":[
	{"key":"order-9","headers":{"h":"v"},"headers_b64":{"raw":"/wA="},"body":"a"},
	{"key_b64":"gA==","body":"b"},
	{"key":"","body":"c"},
	{"body":"d"}]}`

// keyedRecords is keyedJSONBatch as stored records, then what the binary
// batch of the same test adds.
var keyedRecords = []domain.Record{
	{Key: []byte("order-9"), Headers: []domain.Header{{Key: "h", Value: "v"}, {Key: "raw", Value: "\xff\x00"}}, Body: []byte("a")},
	{Key: []byte{0x80}, Body: []byte("b")},
	{Key: []byte{}, Body: []byte("c")},
	{Body: []byte("d")},
	{Key: []byte("bin"), Headers: []domain.Header{{Key: "x", Value: "\xfe\x01"}}, Body: []byte("e")},
}

// testKeys: keys and byte-valued headers go in through both batch formats
// and come back in every read format; members the format does not have are
// refused, never dropped (keys and headers_b64 once were).
func testKeys(t *testing.T, base string) {
	u := base + "/s"
	mustCreate(t, u, "application/octet-stream")
	for _, bad := range []string{
		`{"records":[{"body":"x","partition":3}]}`,
		`{"records":[{"body":"x"}],"producer":"p"}`,
	} {
		e := send(t, "POST", u, hdr("Content-Type", picowire.BatchJSONContentType), []byte(bad)).wantError(t, 400, "bad_request")
		if !strings.Contains(e.Message, "is not part of the format") {
			t.Errorf("%s: message %q does not name the unknown member", bad, e.Message)
		}
	}
	wantRange(t, "keyed JSON batch", mustAppend(t, u, picowire.BatchJSONContentType, []byte(keyedJSONBatch)), 0, 4)
	wantRange(t, "keyed binary batch", mustAppend(t, u, picowire.BatchContentType, picowire.EncodeBatch(keyedRecords[4:])), 4, 5)

	page := send(t, "GET", u+"?seq=0&format=json", nil, nil).wantStatus(t, 200)
	var got []map[string]any
	if err := json.Unmarshal(page.body, &got); err != nil {
		t.Fatalf("JSON page %s: %v", clipBody(page.body), err)
	}
	want := []map[string]any{
		{"key": "order-9", "headers": map[string]any{"h": "v"}, "headers_b64": map[string]any{"raw": "/wA="}, "body": "a"},
		{"key_b64": "gA==", "body": "b"},
		{"key": "", "body": "c"},
		{"body": "d"},
		{"key": "bin", "headers_b64": map[string]any{"x": "/gE="}, "body": "e"},
	}
	for i := range got {
		delete(got[i], "seq")
		delete(got[i], "timestamp")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("JSON page:\n got %v\nwant %v", got, want)
	}

	bin := send(t, "GET", u+"?seq=0&format=binary", nil, nil).wantStatus(t, 200)
	recs, err := picowire.DecodeBatchResponse(bin.body, picowire.BatchLimits{MaxRecords: 10, MaxHeaders: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].TimestampMs = 0
		if recs[i].Seq != uint64(i) || !reflect.DeepEqual(recs[i].Record, keyedRecords[i]) {
			t.Errorf("binary record %d: %+v, want %+v", i, recs[i], keyedRecords[i])
		}
	}

	events, _ := openEvents(t, u+"?seq=0&live=sse", nil)
	if ev := nextEvent(t, events, 2*time.Second); !strings.Contains(ev.data, `"key":"order-9"`) || !strings.Contains(ev.data, `"headers_b64":{"raw":"/wA="}`) {
		t.Errorf("SSE data %q lacks the key or the byte header", ev.data)
	}
}
